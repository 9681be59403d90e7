"""A day with answers in a language without shipped rules (issue 38) through the daily job: each
turn's `language_rules_generic` on `sentence_verdicts`, the day's `language_rules_generic_share`
in `daily_metrics`, and the report's line naming the language with its share of the day's answers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck import demo, job
from citecheck import warehouse as W
from citecheck.core.config import Config
from citecheck.job import JobSettings
from citecheck.report import write_report
from citecheck.warehouse import tables as T

DAY = dt.date(2026, 11, 3)
SWAHILI = "Unaweza kurudisha bidhaa ndani ya siku 30 [{label}]. Je, unataka nikutumie fomu?"


@pytest.fixture(scope="module")
def sample() -> demo.Sample:
    return demo.generate(DAY, 1, 30, language_turns=6)


def _with_swahili(turns: list[dict]) -> list[dict]:
    """Two of the day's English turns answered in Swahili (logged `sw`), citing their first passage."""
    out = [dict(t) for t in turns]
    english = [t for t in out if not t["turn_id"].startswith("lang-") and t.get("context")][:2]
    for turn in english:
        label = turn["context"][0]["label"]
        turn["answer"] = SWAHILI.format(label=label)
        turn["attributes"] = {**(turn.get("attributes") or {}), "language": "sw"}
    assert len(english) == 2
    return out


def test_a_language_without_rules_is_counted_per_turn_per_day_and_named_in_the_report(engine, sample,
                                                                                       tmp_path: Path):
    turns = _with_swahili(sample.turns)
    W.load_turns(engine, turns)
    job.run_day(engine, DAY, JobSettings(judge_spec=demo.judge_spec(sample), config=Config()))
    with engine.connect() as conn:
        rows = conn.execute(sa.select(T.sentence_verdicts.c.language, T.sentence_verdicts.c.language_rules_generic,
                                      T.sentence_verdicts.c.non_claim_reason)).all()
    assert {(lang, generic) for lang, generic, _ in rows} >= {("sw", True), ("en", False)}
    assert all(generic == (lang == "sw") for lang, generic, _ in rows if lang in {"sw", "en", "de", "fr"})
    assert [reason for lang, _, reason in rows if lang == "sw"].count("question") == 2  # the generic rules read it
    micro = {(r["slice_name"], r["slice_value"], r["metric"]): r for r in job.day_metrics(engine, DAY)
             if r["averaging"] == "micro"}
    share = micro[("all", "all", "language_rules_generic_share")]
    answers = share["denominator"]
    assert share["numerator"] == 2 and share["value"] == pytest.approx(2 / answers)
    assert micro[("language", "sw", "language_rules_generic_share")]["numerator"] == 2
    report = write_report(engine, DAY, tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'id="generic-rules"' in report and 'data-language="sw"' in report
    assert f"{100 * 2 / answers:.1f}% of the day's answers" in report


def test_score_json_says_which_turns_the_generic_rules_read(tmp_path):
    import json

    from citecheck.cli import main

    context = [{"label": "S1", "text": "Bidhaa zinaweza kurudishwa ndani ya siku 30."}]
    turns = [{"turn_id": "sw1", "question": "q", "answer": SWAHILI.format(label="S1"), "context": context,
              "attributes": {"language": "sw"}},
             {"turn_id": "ru1", "question": "q", "answer": "Товар можно вернуть, напр. обувь, в течение 30 дней [S1].",
              "context": context, "attributes": {"language": "ru"}}]
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    (tmp_path / "judge.json").write_text(json.dumps({"kind": "recorded", "judgments": []}), encoding="utf-8")
    assert main(["score", "--turns", str(tmp_path / "turns.jsonl"), "--judge", str(tmp_path / "judge.json"),
                 "--out", str(tmp_path / "out.json")]) == 0
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert {t["turn_id"]: (t["language"], t["language_rules_generic"]) for t in out["turns"]} == {
        "sw1": ("sw", True), "ru1": ("ru", False)}
    assert {t["turn_id"]: len(t["sentences"]) for t in out["turns"]} == {"sw1": 2, "ru1": 1}
