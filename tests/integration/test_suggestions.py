"""Re-cite suggestions (issue 13 §2): the pure builder, the job staging and publishing them with the
day on SQLite and PostgreSQL, and `citecheck suggestions`."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import main
from citecheck.core.model import Judgment, Passage, Sentence
from citecheck.core.verdicts import decide
from citecheck.features.suggestions import build_suggestions
from citecheck.warehouse import tables as T
from citecheck.warehouse.read_model import day_suggestions as suggestions_for
from helpers import orbit_settings, orbit_warehouse_turns

DAY = dt.date(2026, 11, 30)
CONTEXT = (Passage("S1", "Hotels are capped at 220 euros a night.", "Travel policy > Lodging", "doc-7", "v4"),
           Passage("S2", "Trains are booked in second class.", "Travel policy > Rail", "doc-8", "v2"),
           Passage("S3", "Taxis need a receipt.", "", None, None))


def _sentence(text="Hotels have a nightly cap.", labels=("S2",), index=3):
    return Sentence(index=index, text=text, start=0, end=len(text), labels=labels)


def _nli_judgment(**kw):
    detail = {"passage_scores": {"S1": 0.93, "S2": 0.04, "S3": 0.01}, "best_windows": {}, "threshold": 0.5}
    return Judgment(cited=False, alone={"S2": False}, rest={"S2": False}, elsewhere=("S1",), faithful=True,
                    score=0.04, judge="nli", judge_version="m@1", detail=detail, **kw)


def test_a_miscited_sentence_found_by_nli_only_is_not_auto_applied():
    verdict = decide(_sentence(), _nli_judgment())
    assert verdict.verdict == "miscited"
    [row] = build_suggestions("t1", verdict, CONTEXT)
    assert row == {
        "turn_id": "t1", "sentence_index": 3, "kind": "miscited", "sentence": "Hotels have a nightly cap.",
        "cited_labels": ["S2"], "suggested_labels": ["S1"], "source": "Travel policy > Lodging",
        "document_id": "doc-7", "version": "v4", "judge": "nli", "score": 0.93, "quote": None,
        "auto_apply": False, "caution": "first_stage_only",
    }


def test_an_uncited_supported_sentence_with_a_number_gets_the_citation_to_add_and_a_caution():
    judgment = Judgment(elsewhere=("S1",), faithful=True, judge="recorded", judge_version="1")
    verdict = decide(_sentence("Hotels are capped at 220 euros.", labels=()), judgment)
    assert verdict.verdict == "uncited_supported"
    [row] = build_suggestions("t2", verdict, CONTEXT)
    assert (row["kind"], row["cited_labels"], row["suggested_labels"]) == ("uncited", [], ["S1"])
    assert row["judge"] == "recorded" and row["score"] is None
    assert (row["auto_apply"], row["caution"]) == (False, "has_numbers")


def test_a_recorded_judgment_without_numbers_is_auto_appliable():
    judgment = Judgment(alone={"S2": False}, rest={"S2": False}, elsewhere=("S1",), faithful=True,
                        judge="recorded", judge_version="1")
    [row] = build_suggestions("t3", decide(_sentence(), judgment), CONTEXT)
    assert (row["auto_apply"], row["caution"]) == (True, None)


def test_a_verified_llm_quote_from_the_suggested_passage_confirms_it():
    llm = {"status": "ok", "verdict": "not_supported", "quotes": [
        {"label": "S2", "quote": "second class", "verified": True},
        {"label": "S1", "quote": "capped at 220 euros a night", "verified": False},
    ]}
    judgment = _nli_judgment()
    judgment = Judgment(**{**{f: getattr(judgment, f) for f in ("cited", "alone", "rest", "elsewhere", "faithful",
                                                                  "score", "judge", "judge_version")},
                           "detail": {**judgment.detail, "llm": llm}})
    [row] = build_suggestions("t4", decide(_sentence(), judgment), CONTEXT)
    assert row["quote"] is None and "first_stage_only" in row["caution"], "an unverified quote confirms nothing"
    llm["quotes"][1]["verified"] = True
    [row] = build_suggestions("t4", decide(_sentence(), judgment), CONTEXT)
    assert row["quote"] == "capped at 220 euros a night" and row["auto_apply"] is True


def test_jointly_supported_sentences_name_every_passage_and_a_caution():
    judgment = Judgment(elsewhere=("S1", "S3"), faithful=True, judge="recorded", judge_version="1")
    [row] = build_suggestions("t5", decide(_sentence(labels=()), judgment), CONTEXT)
    assert row["suggested_labels"] == ["S1", "S3"] and row["caution"] == "several_passages"


@pytest.mark.parametrize("judgment", [
    Judgment(cited=True, alone={"S2": True}, rest={"S2": False}, elsewhere=("S2",), faithful=True, judge="nli"),
    Judgment(judge="nli"),  # unsupported: nothing to re-cite to
    Judgment(judge="nli", unjudged_reason="timeout"),
])
def test_no_suggestion_for_other_verdicts(judgment):
    assert build_suggestions("t", decide(_sentence(), judgment), CONTEXT) == []
    assert build_suggestions("t", decide(_sentence(), judgment, selected=False), CONTEXT) == []


# --- in the job, on SQLite and PostgreSQL ---------------------------------------------------------



def _orbit_with_document_ids():
    turns = orbit_warehouse_turns()
    for turn in turns:
        for i, passage in enumerate(turn.get("context") or []):
            passage["document_id"] = f"{passage['label']}-doc"
            passage["version"] = f"v{i + 1}"
    return turns


EXPECTED = [  # the Orbit day: two miscited sentences and one uncited but supported (recorded judge)
    ("orbit-1@2026-11-30", 2, "miscited", ["S2"], ["S1"]),
    ("orbit-1@2026-11-30", 4, "miscited", ["S3"], ["S4"]),
    ("orbit-1@2026-11-30", 5, "uncited", [], ["S3"]),
]


def test_the_job_publishes_the_days_suggestions_and_a_rerun_replaces_them(engine):
    turns = _orbit_with_document_ids()
    W.load_turns(engine, turns)
    first = job.run_day(engine, DAY, orbit_settings())
    rows = suggestions_for(engine, DAY)
    assert [(r["turn_id"], r["sentence_index"], r["kind"], r["cited_labels"], r["suggested_labels"])
            for r in rows] == EXPECTED
    context = {p["label"]: p for p in turns[0]["context"]}
    for row in rows:
        passage = context[row["suggested_labels"][0]]
        assert (row["source"], row["document_id"], row["version"]) == (
            passage["source"], passage["document_id"], passage["version"])
        assert row["judge"] == "recorded" and row["day"] == DAY.isoformat() and row["run_id"] == first["run_id"]
        assert row["auto_apply"] is (row["caution"] is None)
        assert ("has_numbers" in (row["caution"] or "")) == any(ch.isdigit() for ch in row["sentence"])
    sentences = {(r["turn_id"], r["sentence_index"]): r["text"] for r in _sentence_rows(engine)}
    assert all(sentences[(r["turn_id"], r["sentence_index"])] == r["sentence"] for r in rows)
    second = job.run_day(engine, DAY, orbit_settings())
    again = suggestions_for(engine, DAY)
    assert len(again) == 3 and {r["run_id"] for r in again} == {second["run_id"]}
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(T.stage_recite_suggestions)).scalar_one() == 0


def _sentence_rows(engine):
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(T.sentence_verdicts)).mappings()]


def test_cli_suggestions_json_and_csv(engine, capsys):
    W.load_turns(engine, _orbit_with_document_ids())
    job.run_day(engine, DAY, orbit_settings())
    assert main(["suggestions", "--day", DAY.isoformat(), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["sentence_index"], r["kind"]) for r in rows] == [(2, "miscited"), (4, "miscited"), (5, "uncited")]
    assert {"day", "run_id", "turn_id", "sentence_index", "kind", "sentence", "cited_labels", "suggested_labels",
            "source", "document_id", "version", "judge", "score", "quote", "auto_apply", "caution"} == set(rows[0])
    assert main(["suggestions", "--day", DAY.isoformat(), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [json.loads(r["suggested_labels"]) for r in table] == [["S1"], ["S4"], ["S3"]]
    assert table[0]["sentence"] == rows[0]["sentence"] and table[0]["kind"] == "miscited"
    assert main(["suggestions", "--day", "2026-01-01", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
