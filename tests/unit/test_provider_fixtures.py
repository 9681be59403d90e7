"""The provider fixtures (`tests/fixtures/{anthropic_locations,openai,cohere_v2,gemini}.json`):
every worked number reproduced, and every fixture valid for the provider's own SDK types."""

from __future__ import annotations

import pytest

from helpers import load_fixture, score_dicts

PROVIDER_FIXTURES = ("anthropic_locations.json", "openai.json", "cohere_v2.json", "gemini.json")


def _summary(out: dict) -> dict:
    counts = {k: v for k, v in out["counts"].items()
              if k in ("citations", "unknown_labels", "pointer_problem_citations", "no_source_text_sentences")
              or (k.startswith("pointer_problem_citations_") and v)}
    return {
        "turns": [{"turn_id": t["turn_id"],
                   "sentences": [{"text": s["text"], "labels": s["labels"], "unknown_labels": s["unknown_labels"],
                                  "verdict": s["verdict"],
                                  **({"unjudged_reason": s["unjudged_reason"]} if s.get("unjudged_reason") else {})}
                                 for s in t["sentences"]],
                   "pointer_problems": sorted(p["kind"] for p in t["pointer_problems"])} for t in out["turns"]],
        "counts": counts,
    }


@pytest.mark.parametrize("name", PROVIDER_FIXTURES)
def test_provider_fixture_reproduces_its_worked_numbers(name):
    data = load_fixture(name)
    assert "as read" in data["about"] and data["bugs"]
    out = score_dicts(data["turns"], data["judge"])
    expected = data["expected"]
    got = _summary(out)
    assert got["turns"] == expected["turns"]
    assert got["counts"] == expected["counts"]
    for metric, value in expected["metrics_micro"].items():
        assert out["metrics"]["micro"][metric] == (None if value is None else pytest.approx(value, abs=1e-6)), metric
    assert out["invariant_violations"] == []
    # every injected bug is one pointer problem of its turn, counted like an unknown label
    assert {t["turn_id"] for t in expected["turns"] if t["pointer_problems"]} == set(data["bugs"])
    assert out["counts"]["pointer_problem_citations"] <= out["counts"]["unknown_labels"]


def test_anthropic_locations_validate_as_sdk_text_citations():
    import anthropic.types as at

    data = load_fixture("anthropic_locations.json")
    kinds = set()
    for turn in data["turns"]:
        for block in turn["answer_blocks"]:
            parsed = at.TextBlock.model_validate(block)
            kinds.update(type(c).__name__ for c in parsed.citations or [])
    assert kinds == {"CitationPageLocation", "CitationContentBlockLocation", "CitationsSearchResultLocation",
                     "CitationsWebSearchResultLocation"}
    native = load_fixture("anthropic_native.json")
    assert {type(at.TextBlock.model_validate(b).citations[0]).__name__
            for b in native["response_content"] if b.get("citations")} == {"CitationCharLocation"}


def test_openai_fixture_validates_as_sdk_response_and_chat_message():
    from openai.types.chat import ChatCompletionMessage
    from openai.types.responses import Response

    data = load_fixture("openai.json")
    by_format = {}
    for turn in data["turns"]:
        if turn["answer_format"] == "openai_responses":
            response = Response.model_validate(turn["response"])
            parts = [c for item in response.output if item.type == "message" for c in item.content]
            by_format.setdefault("responses", set()).update(type(a).__name__ for p in parts for a in p.annotations)
        else:
            message = ChatCompletionMessage.model_validate(turn["response"])
            by_format["chat"] = {a.type for a in message.annotations}
    assert by_format == {"responses": {"AnnotationURLCitation", "AnnotationFileCitation"}, "chat": {"url_citation"}}


def test_cohere_fixture_validates_as_sdk_v2_message():
    import cohere

    for turn in load_fixture("cohere_v2.json")["turns"]:
        message = cohere.AssistantMessageResponse.model_validate(turn["response"])
        assert {type(c).__name__ for c in message.content} == {"TextAssistantMessageResponseContentItem"}
        assert all(type(s).__name__ == "DocumentSource" for c in message.citations for s in c.sources)
        text = message.content[0].text
        assert sum(c.text == text[c.start:c.end] for c in message.citations) >= len(message.citations) - 1


def test_gemini_fixture_validates_as_sdk_candidate():
    from google.genai import types

    for turn in load_fixture("gemini.json")["turns"]:
        candidate = types.Candidate.model_validate(turn["response"])
        metadata = candidate.grounding_metadata
        assert metadata.grounding_supports and metadata.grounding_chunks
        raw = turn["response"]["groundingMetadata"]["groundingSupports"]
        for support, logged in zip(metadata.grounding_supports, raw, strict=True):
            assert support.segment.end_index == logged["segment"]["endIndex"]
            assert support.segment.start_index == logged["segment"].get("startIndex")  # omitted zero stays unset


@pytest.mark.parametrize("answer_format", ["anthropic_blocks", "openai_responses", "openai_chat", "cohere_v2",
                                           "gemini"])
def test_the_sample_writer_writes_what_the_sdks_accept(answer_format):
    """The bundled sample's native turns (citecheck.demo.formats) are in the SDKs' shapes too."""
    from citecheck.demo.formats import Claim, Source, native_turn

    sources = [Source("Ü-Richtlinie", "https://x.example/a", ("Hotels in 東京 cost €220.", "Approval 📝 is needed."))]
    claims = [Claim("東京 hotels cost €220", (0,)), Claim("Approval is needed", (0,), quotes={0: 1})]
    turn = native_turn(answer_format, claims, sources)
    if answer_format == "anthropic_blocks":
        import anthropic.types as at

        assert all(at.TextBlock.model_validate(b) for b in turn["answer_blocks"])
    elif answer_format == "openai_responses":
        from openai.types.responses import Response

        assert Response.model_validate(turn["response"]).output_text.startswith("東京")
    elif answer_format == "openai_chat":
        from openai.types.chat import ChatCompletionMessage

        assert ChatCompletionMessage.model_validate(turn["response"]).annotations
    elif answer_format == "cohere_v2":
        import cohere

        assert cohere.AssistantMessageResponse.model_validate(turn["response"]).citations
    else:
        from google.genai import types

        assert types.Candidate.model_validate(turn["response"]).grounding_metadata.grounding_supports
