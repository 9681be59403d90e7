"""Reading traces into turns (`citecheck.core.traces`), on traces recorded the way an app records
them: the real OpenAI and Anthropic SDKs under the OpenInference and the official OpenTelemetry
GenAI instrumentations, against the local fake servers, with a retriever span written through the
OpenTelemetry API, exported as the Collector's OTLP JSON (tests/helpers/traced_app.py). No
warehouse here: tests/integration/test_load_traces.py loads them."""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest

from citecheck.core.config import load_config
from citecheck.core.traces import MAX_ATTRIBUTE_CHARS, REASONS, read_traces
from citecheck.core.traces.spans import hex_ids_to_base64
from helpers.traced_app import BROKEN_KINDS, TracedApp, broken_lines, langfuse_export

MARKERS = load_config(None).marker_re
DAY = "2026-11-23"


def _turn(n: int, *, labels=("S1", "S2"), ids=True, answer="Leave is 28 days. [S2]") -> dict:
    texts = ["Bereavement leave is 5 days for a close family member.", "Annual leave is 28 days a year."]
    return {"turn_id": f"t{n}", "conversation_id": f"c{n // 2}", "answered_at": f"{DAY}T10:{n:02d}:00Z",
            "question": "How much annual leave do I get?", "answer": answer, "answer_format": "markers",
            "context": [{"label": label, "text": text, "source": "HR handbook", "version": "7",
                         "document_id": f"doc-{label.lower()}" if ids else None}
                        for label, text in zip(labels, texts, strict=True)],
            "attributes": {"model": "assistant-a"}}


@pytest.fixture(scope="module")
def recorded() -> dict[str, list[str]]:
    """OTLP JSON lines of: two OpenInference turns with a source list in the prompt, one GenAI
    turn (retrieval ids only, the list in the prompt), two turns whose prompt shows the passages
    without markers (OpenInference: document ids; one without ids: positions), one GenAI turn
    with ids only and no list in the prompt (no passage text), and an Anthropic-native turn."""
    anthropic = {"turn_id": "t9", "conversation_id": "c9", "answered_at": f"{DAY}T11:00:00Z",
                 "question": "Can I work remotely?", "answer": "", "answer_format": "anthropic_blocks",
                 "answer_blocks": [{"type": "text", "text": "Remote work is allowed on 3 days a week", "citations": [
                     {"type": "char_location", "cited_text": "You can work remotely up to 3 days a week.",
                      "document_index": 0, "document_title": "Guide", "start_char_index": 0, "end_char_index": 42}]}],
                 "request_documents": [{"title": "Guide", "text": "You can work remotely up to 3 days a week."}],
                 "attributes": {"model": "assistant-b"}}
    out = {}
    with TracedApp() as app:
        app.play([_turn(0), _turn(1), anthropic], lambda t: "openinference")
        app.play([_turn(2)], lambda t: "otel-genai")
        out["labelled"] = app.otlp_lines()
    with TracedApp() as app:
        app.play([_turn(3)], lambda t: "openinference", markers_in_prompt=False)
        app.play([_turn(4, answer="Leave is 28 days. [2]")], lambda t: "openinference", markers_in_prompt=False,
                 document_ids=False)
        app.play([_turn(5)], lambda t: "otel-genai", markers_in_prompt=False)
        out["unlabelled"] = app.otlp_lines()
    out["langfuse"] = langfuse_export([_turn(6), _turn(7)])
    return out


def _read(lines: list[str], convention: str = "auto"):
    return read_traces([line.encode() for line in lines], MARKERS, convention)


def test_the_prompt_labels_the_passages_and_the_native_turn_keeps_its_blocks(recorded):
    read = _read(recorded["labelled"])
    assert not read.rejected and not read.assembled.skipped
    turns = {t.turn["question"]: t.turn for t in read.assembled.turns}
    assert len(read.assembled.turns) == 4
    assert read.assembled.label_sources_by_day() == {DAY: {"prompt": 4}}
    by_convention = {}
    for t in read.assembled.turns:
        by_convention.setdefault(t.turn["attributes"]["convention"], []).append(t.turn)
    assert sorted(by_convention) == ["openinference", "otel-genai"]
    for turn in by_convention["openinference"]:
        if turn["answer_format"] == "markers":  # the retriever span's documents, under the prompt's labels
            assert [(p["label"], p["document_id"], p["source"]) for p in turn["context"]] == [
                ("S1", "doc-s1", "HR handbook"), ("S2", "doc-s2", "HR handbook")]
            assert turn["answer"] == "Leave is 28 days. [S2]"
            assert turn["conversation_id"] in ("c0",) and turn["attributes"]["provider"] == "openai"
    (genai,) = by_convention["otel-genai"]  # ids only on the retriever: the text is the prompt's list
    assert [(p["label"], p["text"]) for p in genai["context"]] == [
        ("S1", "Bereavement leave is 5 days for a close family member."), ("S2", "Annual leave is 28 days a year.")]
    assert genai["conversation_id"] == "c1" and genai["attributes"]["model"] == "assistant-a"
    native = turns["Can I work remotely?"]
    assert native["answer_format"] == "anthropic_blocks" and native["conversation_id"] == "c9"
    assert native["request_documents"] == [{"title": "Guide", "text": "You can work remotely up to 3 days a week."}]
    assert native["answer_blocks"][0]["citations"][0]["cited_text"].startswith("You can work remotely")
    assert native["answered_at"] == f"{DAY}T11:00:00+00:00"
    assert native["attributes"]["service"] == "policy-assistant"


def test_without_markers_the_label_is_the_document_id_else_the_position_else_the_turn_is_skipped(recorded):
    read = _read(recorded["unlabelled"])
    assert read.assembled.label_sources_by_day() == {DAY: {"document_id": 1, "position": 1}}
    labels = sorted([p["label"] for p in t.turn["context"]] for t in read.assembled.turns)
    assert labels == [["1", "2"], ["doc-s1", "doc-s2"]]
    (skipped,) = read.assembled.skipped
    assert skipped.kind == "no_passage_text" and "ids only" in skipped.reason


def test_a_langfuse_export_reads_the_same_way(recorded):
    read = _read(recorded["langfuse"])
    assert read.file_kind == "langfuse" and read.spans == 4 and not read.assembled.skipped
    first, _ = sorted((t.turn for t in read.assembled.turns), key=lambda t: t["answered_at"])
    assert first["conversation_id"] == "c3" and first["attributes"]["convention"] == "langfuse"
    assert [p["label"] for p in first["context"]] == ["S1", "S2"] and first["attributes"]["user"] == "u-7"


def test_bad_input_is_counted_by_reason_and_the_rest_is_read(recorded):
    text, kept_trace = broken_lines(recorded["labelled"])
    read = _read(text)
    problems = read.rejected + read.assembled.skipped
    kinds = sorted(r.kind for r in problems)
    assert kinds == sorted(BROKEN_KINDS), [r.as_dict() for r in problems]
    assert all(kind in REASONS for kind in kinds)
    reasons = {r.kind: r.reason for r in problems}
    assert "session.id is int" in reasons["wrong_type"]
    assert f"{MAX_ATTRIBUTE_CHARS:,}" in reasons["attribute_too_long"] and "10,000,000" in reasons["attribute_too_long"]
    assert "never arrived" in reasons["parent_missing"] and "truncated" in reasons["not_json"]
    assert "traceId 'zz' is not 32 hex digits" in reasons["not_otlp"]
    # the trace that lost only its retriever span (no trace id) is still read: its passages from the prompt
    (kept,) = read.assembled.turns
    assert kept.trace_id == kept_trace and kept.label_source == "prompt"
    assert [p["label"] for p in kept.turn["context"]] == ["S1", "S2"]


def test_otlp_json_ids_are_hex_and_protobuf_reads_base64():
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "parentSpanId": ""}]}]}]}
    converted = hex_ids_to_base64(copy.deepcopy(request))["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert converted["traceId"] == "W47/95gDgQPSabYzgT/GDA==" and converted["parentSpanId"] == ""
    read = _read([json.dumps(request)])
    assert read.spans == 1 and read.assembled.skipped[0].kind == "no_convention"


def test_one_convention_reads_only_its_spans(recorded):
    read = _read(recorded["labelled"], convention="otel-genai")
    assert len(read.assembled.turns) == 1
    assert sorted(s.kind for s in read.assembled.skipped) == ["no_convention"] * 3


def _langfuse_trace(n: int, system: str, documents: list[dict], answer: str = "It is 28 days. [2]") -> list[str]:
    at = f"{DAY}T09:00:0{n}Z"
    return [json.dumps(line) for line in (
        {"id": f"t{n}", "sessionId": "s"},
        {"id": f"r{n}", "traceId": f"t{n}", "type": "RETRIEVER", "startTime": at, "endTime": at, "output": documents},
        {"id": f"g{n}", "traceId": f"t{n}", "type": "GENERATION", "startTime": at, "endTime": at, "model": "m",
         "input": [{"role": "system", "content": system}, {"role": "user", "content": "How long?"}],
         "output": {"role": "assistant", "content": answer}})]


def test_a_source_list_in_words_labels_the_passages_and_turns_are_numbered_in_their_conversation():
    from citecheck.core.traces import number_turns

    docs = [{"id": "a", "content": "Bereavement leave is 5 days."}, {"id": "b", "content": "Annual leave is 28 days."}]
    words = "Use these.\nSource 1: Bereavement leave is 5 days.\nSource 2: Annual leave is 28 days."
    read = _read(_langfuse_trace(1, words, docs) + _langfuse_trace(2, "Use these.", docs))
    by_question = sorted(read.assembled.turns, key=lambda t: t.turn["answered_at"])
    assert [(t.label_source, [p["label"] for p in t.turn["context"]]) for t in by_question] == [
        ("prompt", ["1", "2"]), ("document_id", ["a", "b"])]
    turns = [t.turn for t in by_question]
    number_turns(turns, {"s": [("earlier", dt.datetime(2026, 11, 22, tzinfo=dt.UTC))]})
    assert [t["turn_index"] for t in turns] == [2, 3]
