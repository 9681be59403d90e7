"""Acceptance criteria decided for every published day (SPEC 5.1), on SQLite and PostgreSQL:
`criteria_results` and `answer_decisions` published in the day's transaction, pass / fail /
no_data, the interval rule, failing answers, a failed validation publishes no decision, a rerun
replaces it, and the untraced figures of the day."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.core.criteria import parse_criteria
from citecheck.warehouse import tables as T
from citecheck.warehouse.read_model import day_decision, untraced_figure_sentences
from helpers import orbit_settings, orbit_warehouse_turns

DAY = dt.date(2026, 11, 30)
CRITERIA = [
    {"name": "attached", "metric": "attachment_rate", "min": 0.5},
    {"name": "recall", "metric": "citation_recall", "min": 0.9, "answers": True},
    {"name": "recall on its interval", "metric": "citation_recall", "min": 0.4, "on": "interval"},
    {"name": "pay answers", "metric": "citation_recall", "min": 0.5, "where": {"topic": "pay"}},
]


# the Orbit day skips one malformed row of its five turns: these tests allow it explicitly
ALLOW_THE_MALFORMED_ROW = {"max_skipped_share": 0.5}


def settings(entries=CRITERIA, gate=ALLOW_THE_MALFORMED_ROW, **overrides):
    return orbit_settings(criteria=parse_criteria(entries, "test", gate), **overrides)


def test_a_day_is_decided_with_its_publish(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    result = job.run_day(engine, DAY, settings())
    decision = day_decision(engine, DAY)
    assert decision["decision"] == "fail"
    by_name = {r["criterion"]: r for r in decision["criteria"]}
    assert by_name["attached"]["decision"] == "pass"
    assert by_name["recall"]["decision"] == "fail" and by_name["recall"]["bound_kind"] == "min"
    recall = by_name["recall"]
    assert recall["value"] == pytest.approx(recall["numerator"] / recall["denominator"])
    interval = by_name["recall on its interval"]
    assert interval["value"] < 0.4 and interval["ci_high"] > 0.4 and interval["decision"] == "pass"
    pay = by_name["pay answers"]  # no turn has a topic attribute: no_data, not an error
    assert pay["decision"] == "no_data" and pay["answers"] == 0 and pay["scope"] == "topic=pay"
    assert decision["criteria"][0]["criterion"] == "recall"  # failing criteria first
    assert {r["run_id"] for r in decision["criteria"]} == {result["run_id"]}
    assert len({r["criteria_hash"] for r in decision["criteria"]}) == 1
    failing = {a["turn_id"]: a for a in decision["answers_failing"]}
    assert set(failing) == {f"orbit-1@{DAY}", f"orbit-2@{DAY}"}
    assert failing[f"orbit-1@{DAY}"]["criteria_failed"] == ["recall"]
    assert any("5 business days" in s["text"] for s in failing[f"orbit-1@{DAY}"]["sentences"])


def test_a_failed_validation_publishes_no_decision_and_a_rerun_replaces_it(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    job.run_day(engine, DAY, settings())
    before = day_decision(engine, DAY)
    broken = settings(judge_spec={"kind": "recorded", "judgments": []})
    with pytest.raises(job.ValidationFailed):
        job.run_day(engine, DAY, broken)
    assert day_decision(engine, DAY) == before
    lenient = [{"name": "attached", "metric": "attachment_rate", "min": 0.5}]
    job.run_day(engine, DAY, settings(lenient))
    after = day_decision(engine, DAY)
    assert after["decision"] == "pass" and [r["criterion"] for r in after["criteria"]] == ["attached",
                                                                                           "turns skipped"]
    assert after["criteria_hash"] != before["criteria_hash"] and after["answers_failing"] == []
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(T.answer_decisions)).scalar_one() == 0


def test_a_day_that_skipped_more_than_its_criteria_allow_never_passes(engine):
    """The daily job bounds the day's skipped share (`[gate] max_skipped_share`, default 1%)."""
    W.load_turns(engine, orbit_warehouse_turns())
    lenient = [{"name": "attached", "metric": "attachment_rate", "min": 0.5}]
    job.run_day(engine, DAY, settings(lenient, gate=None))
    decision = day_decision(engine, DAY)
    by_name = {r["criterion"]: r for r in decision["criteria"]}
    assert by_name["attached"]["decision"] == "pass" and decision["decision"] == "fail"
    skipped = by_name["turns skipped"]
    assert (skipped["metric"], skipped["numerator"], skipped["bound"], skipped["decision"]) == (
        "skipped_share", 1, 0.01, "fail")
    assert skipped["value"] == pytest.approx(1 / skipped["denominator"])
    job.run_day(engine, DAY, settings(lenient, gate={"max_skipped_share": 0.25}))
    assert day_decision(engine, DAY)["decision"] == "pass"


def test_a_day_without_criteria_has_no_decision(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    job.run_day(engine, DAY, orbit_settings())
    assert day_decision(engine, DAY) is None


def test_figures_are_published_with_each_sentence(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    job.run_day(engine, DAY, orbit_settings())
    untraced = untraced_figure_sentences(engine, DAY, 50)
    assert [r["text"] for r in untraced] == ["Approved reports are paid within 5 business days."]
    assert untraced[0]["figures"] == [{"text": "5", "kind": "number", "value": "5", "traced": False}]


def test_a_failing_day_raises_an_alert_and_metrics_shows_the_decision(engine, capsys):
    from citecheck.cli import main
    from citecheck.warehouse.read_model import alerts_between

    W.load_turns(engine, orbit_warehouse_turns())
    job.run_day(engine, DAY, settings())
    alerts = [a for a in alerts_between(engine, DAY, DAY) if a["slice_name"] == "criterion"]
    assert [(a["slice_value"], a["metric"], a["direction"]) for a in alerts] == [
        ("recall", "citation_recall", "down")]
    alert = alerts[0]
    assert alert["baseline"] == 0.9 and "acceptance criterion 'recall' failed" in alert["rule"]
    assert alert["group_id"] and alert["folded"] is False  # grouped like the step-change alerts
    capsys.readouterr()
    assert main(["metrics", "--day", DAY.isoformat()]) == 0
    out = capsys.readouterr().out
    assert "decision of 2026-11-30: fail" in out
    assert out.index("FAIL    recall: citation_recall") < out.index("decision of 2026-11-30")


def test_bi_reads_both_decision_tables():
    import yaml

    from citecheck.bi.dbt import dbt_files
    from citecheck.bi.superset import bundle
    from helpers import REPO

    datasets = bundle("sqlite:////tmp/never-opened.sqlite")
    assert {"datasets/citecheck_warehouse/criteria_results.yaml",
            "datasets/citecheck_warehouse/answer_decisions.yaml"} <= set(datasets)
    files = dict(dbt_files((REPO / "docs" / "metrics.md").read_text(encoding="utf-8")))
    sources = yaml.safe_load(files["models/sources.yml"])
    tables = {t["name"]: t for s in sources["sources"] for t in s["tables"]}
    assert {"criteria_results", "answer_decisions"} <= set(tables)
    assert "acceptance criterion" in tables["criteria_results"]["description"]
    from citecheck.warehouse.grants import BI_READABLE

    assert {"criteria_results", "answer_decisions"} <= set(BI_READABLE)
