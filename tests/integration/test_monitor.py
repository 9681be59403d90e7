"""Step-change alerts (issue 13 §1): the rule, its configuration, storage on SQLite and PostgreSQL,
the monitor step inside the job, and `citecheck alerts`."""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import main
from citecheck.core.config import ConfigError, config_from_mapping
from citecheck.features.monitor import (
    DEFAULT_METRICS,
    MonitorSettings,
    Threshold,
    alert_message,
    check_series,
    monitor_settings,
)
from citecheck.job import monitor_day
from citecheck.stats.change_detection import level_shift_p
from citecheck.warehouse import tables as T
from citecheck.warehouse.read_model import alerts_between
from helpers import orbit_settings, orbit_warehouse_turns

START = dt.date(2026, 10, 1)
SETTINGS = MonitorSettings()




# --- the rule --------------------------------------------------------------------------------

def _noisy(n=28, level=0.005, sd=0.0004, seed=1):
    rng = random.Random(seed)
    return [level + rng.gauss(0, sd) for _ in range(n)]


def test_a_step_that_matters_with_evidence_alerts_with_its_rule():
    outcome, alert = check_series(_noisy(), {"value": 0.03, "denominator": 3000},
                                  Threshold(abs=0.01, rel=0.5), SETTINGS)
    assert outcome == "alert"
    assert alert["direction"] == "up" and alert["value"] == 0.03
    assert alert["baseline"] == pytest.approx(0.005, abs=5e-4)
    assert alert["size"] == pytest.approx(0.03 - alert["baseline"])
    assert "abs 0.01" in alert["rule"] and "level-shift test" in alert["rule"] and "p=" in alert["rule"]


def test_a_drop_alerts_down():
    history = _noisy(level=0.8, sd=0.01)
    outcome, alert = check_series(history, {"value": 0.6, "denominator": 500}, Threshold(abs=0.05), SETTINGS)
    assert outcome == "alert" and alert["direction"] == "down" and alert["size"] < 0


@pytest.mark.parametrize(("history", "row", "expected"), [
    (_noisy(n=5), {"value": 0.03, "denominator": 3000}, "short_history"),
    (_noisy(), {"value": None, "denominator": 0}, "null_value"),
    (_noisy(), {"value": 0.03, "denominator": 20}, "small_denominator"),
    (_noisy(), {"value": 0.0052, "denominator": 3000}, "small_change"),
    # big enough in size, but the history itself swings that much: noise
    ([*(0.005 if i % 2 else 0.025 for i in range(25)), 0.005, 0.006, 0.005], {"value": 0.027, "denominator": 3000},
     "no_evidence"),
    # yesterday already stood at the new level: the step alerted then, not again
    ([*_noisy(n=27), 0.03], {"value": 0.031, "denominator": 3000}, "ongoing"),
])
def test_no_alert_outcomes(history, row, expected):
    outcome, alert = check_series(history, row, Threshold(abs=0.01, rel=0.5), SETTINGS)
    assert (outcome, alert) == (expected, None)


def test_the_day_interval_is_the_sampling_evidence_when_the_row_has_one():
    """Both kinds of evidence: the history's day-to-day swing (level-shift test) and the day's own
    interval, which stands in for the count test where the metric row has one."""
    t = Threshold(abs=0.01)
    quiet = _noisy(level=0.02, sd=0.002)
    wide = {"value": 0.05, "denominator": 100, "numerator": 5, "ci_low": 0.01, "ci_high": 0.09}
    narrow = {"value": 0.05, "denominator": 3000, "numerator": 150, "ci_low": 0.045, "ci_high": 0.055}
    outcome, alert = check_series(quiet, narrow, t, SETTINGS)
    assert outcome == "alert"
    assert "level-shift test" in alert["rule"] and "outside the day's interval [0.045, 0.055]" in alert["rule"]
    assert check_series(quiet, wide, t, SETTINGS) == ("no_evidence", None), "the day's own noise covers it"
    swings = [*(0.005 if i % 2 else 0.035 for i in range(25)), 0.005, 0.005, 0.005]
    assert check_series(swings, narrow, t, SETTINGS) == ("no_evidence", None), "the history swings that much"
    pooled = {"count": 5, "trials": 100, "rate": 0.02, "per_unit": False}
    assert check_series(quiet, narrow, t, SETTINGS, pooled)[0] == "alert", "the interval replaces the count test"


def test_ongoing_looks_back_a_few_days():
    from citecheck.features.monitor import ONGOING_DAYS

    t = Threshold(abs=0.01, rel=0.5)
    row = {"value": 0.031, "denominator": 3000}
    for back in range(1, ONGOING_DAYS + 1):
        history = _noisy(n=28)
        history[-back] = 0.03
        assert check_series(history, row, t, SETTINGS)[0] == "ongoing"
    history = _noisy(n=28)
    history[-(ONGOING_DAYS + 1)] = 0.03
    assert check_series(history, row, t, SETTINGS)[0] == "alert"


def test_thresholds_absolute_and_relative():
    assert Threshold(abs=0.01).matters(0.5, 0.011) and not Threshold(abs=0.01).matters(0.5, 0.009)
    assert Threshold(rel=0.5).matters(0.02, 0.011) and not Threshold(rel=0.5).matters(0.02, 0.009)
    both = Threshold(abs=0.01, rel=0.5)
    assert not both.matters(0.5, 0.02), "both sizes must be met where both are set"
    assert both.matters(0.005, 0.025)
    assert Threshold(rel=0.5).matters(0.0, 0.001), "any change from a zero baseline is relatively large"
    assert not Threshold().matters(0.1, 0.0)


def test_level_shift_p():
    history = _noisy()
    assert level_shift_p(history, 0.005) > 0.5
    assert level_shift_p(history, 0.03) < 1e-6
    assert level_shift_p([0.1] * 10, 0.1) == 1.0 and level_shift_p([0.1] * 10, 0.2) == 0.0


# --- configuration ---------------------------------------------------------------------------

def test_monitor_section_of_the_toml_config(tmp_path):
    from citecheck.core.config import load_config

    path = tmp_path / "config.toml"
    path.write_text('[monitor]\nmetrics = ["attachment_rate", "rewrite_or_block_per_1000_answers"]\n'
                    'history_days = 14\nmin_history = 5\nalpha = 0.01\nnotify_to = ["team@example.com"]\n'
                    'report_url = "https://airflow.example/citecheck/{day}"\n'
                    '[monitor.thresholds.attachment_rate]\nrel = 0.1\n')
    ms = monitor_settings(load_config(path))
    assert ms.metrics == ("attachment_rate", "rewrite_or_block_per_1000_answers")
    assert (ms.history_days, ms.min_history, ms.alpha) == (14, 5, 0.01)
    assert ms.threshold("attachment_rate") == Threshold(rel=0.1)
    assert ms.threshold("citation_recall") == Threshold(abs=0.05), "defaults kept for the others"
    assert ms.report_link(dt.date(2026, 11, 30)) == "https://airflow.example/citecheck/2026-11-30"
    defaults = monitor_settings(config_from_mapping({}))
    assert defaults.history_days == 28 and defaults.metrics == DEFAULT_METRICS
    for needed in ("unknown_labels_per_1000_answers", "attachment_rate", "multi_citation_share",
                   "marker_after_stop_share", "unjudged_rate", "citation_recall", "citation_precision",
                   "first_stage_false_pass_rate", "refusal_rate", "rewrite_or_block_per_1000_answers"):
        assert needed in defaults.metrics


@pytest.mark.parametrize("section", [
    {"metrics": ["no_such_metric"]},
    {"metrics": "attachment_rate"},
    {"history_days": 0},
    {"alpha": 2},
    {"min_history": "7"},
    {"averaging": ["median"]},
    {"thresholds": {"attachment_rate": {"pct": 3}}},
    {"thresholds": {"nope": {"abs": 1}}},
    {"bogus": 1},
])
def test_bad_monitor_config_is_a_clear_error(section):
    with pytest.raises(ConfigError, match="monitor"):
        monitor_settings(config_from_mapping({"monitor": section}))


# --- the message ---------------------------------------------------------------------------------

def test_alert_message_names_metric_slice_baseline_value_and_link_only():
    alerts = [{"metric": "unknown_label_rate", "slice_name": "all", "slice_value": "all", "baseline": 0.005,
               "value": 0.03, "direction": "up", "rule": "step up: <details>"},
              {"metric": "multi_citation_share", "slice_name": "attribute:model", "slice_value": "m-<2>",
               "baseline": 0.02, "value": 0.12, "direction": "up", "rule": "..."}]
    subject, body = alert_message(alerts, dt.date(2026, 11, 30), "https://airflow.example/r/2026-11-30")
    assert "2026-11-30" in subject and "2 metric alert" in subject
    for text in ("unknown_label_rate", "overall", "<td>0.5%</td><td>3.0%</td>", "multi_citation_share",
                 "attribute:model=m-&lt;2&gt;", "<td>2.0%</td><td>12.0%</td>",
                 'href="https://airflow.example/r/2026-11-30"'):
        assert text in body


# --- storage and the step, on SQLite and PostgreSQL ---------------------------------------------

def _publish_metric_days(engine, days, value_of, metric="unknown_label_rate", denominator=3000.0):
    """Published daily_metrics rows (overall, micro) for each day, value from `value_of(i)`."""
    rows = []
    for i in range(days):
        value = value_of(i)
        rows.append({"day": START + dt.timedelta(days=i), "slice_name": "all", "slice_value": "all",
                     "metric": metric, "averaging": "micro", "numerator": value * denominator,
                     "denominator": denominator, "value": value, "answers": 1000, "sentences": 3000,
                     "computed_at": dt.datetime.now(dt.UTC), "run_id": f"r{i}", "config_hash": "h"})
    with engine.begin() as conn:
        conn.execute(T.daily_metrics.insert(), rows)


def test_too_little_history_means_no_alert_and_says_so(engine):
    _publish_metric_days(engine, 4, lambda i: 0.005 if i < 3 else 0.05)
    stats = monitor_day(engine, START + dt.timedelta(days=3), "r3", SETTINGS)
    assert stats["alerts"] == 0 and stats["history_days"] == 3
    assert "too little history" in stats["reason"] and "needs 14" in stats["reason"]
    assert stats["outcomes"] == {"short_history": 1}
    assert alerts_between(engine, START, START + dt.timedelta(days=10)) == []


def test_a_step_alerts_once_and_a_rerun_replaces_the_days_alerts(engine):
    rng = random.Random(3)
    step_day = 30
    _publish_metric_days(engine, 33, lambda i: (0.005 if i < step_day else 0.03) + rng.gauss(0, 0.0004))
    results = {i: monitor_day(engine, START + dt.timedelta(days=i), f"r{i}", SETTINGS) for i in range(33)}
    alerts = alerts_between(engine, START, START + dt.timedelta(days=40))
    assert [(a["day"], a["metric"], a["slice_name"], a["slice_value"], a["direction"]) for a in alerts] == [
        ((START + dt.timedelta(days=step_day)).isoformat(), "unknown_label_rate", "all", "all", "up")]
    assert alerts[0]["baseline"] == pytest.approx(0.005, abs=5e-4) and alerts[0]["value"] > 0.025
    assert alerts[0]["run_id"] == f"r{step_day}" and alerts[0]["averaging"] == "micro"
    assert results[step_day + 1]["outcomes"] == {"ongoing": 1}
    assert results[step_day]["history_days"] == 28 and results[step_day]["reason"] is None
    # a rerun with a config that no longer watches the metric: the day's alerts are replaced (none left)
    day = START + dt.timedelta(days=step_day)
    monitor_day(engine, day, "rerun", MonitorSettings(metrics=("attachment_rate",)))
    assert alerts_between(engine, day, day) == []
    monitor_day(engine, day, "rerun2", SETTINGS)
    assert [a["run_id"] for a in alerts_between(engine, day, day)] == ["rerun2"]


def test_the_job_runs_the_monitor_after_publish_and_stores_its_stats(engine):
    days = [dt.date(2026, 11, 27) + dt.timedelta(days=i) for i in range(4)]
    settings = orbit_settings()
    for day in days:
        W.load_turns(engine, orbit_warehouse_turns(day.isoformat()))
    results = [job.run_day(engine, day, settings) for day in days]
    last = results[-1]
    assert last["monitor"]["history_days"] == 3 and last["monitor"]["alerts"] == 0
    assert "too little history" in last["monitor"]["reason"]
    with engine.connect() as conn:
        stats = conn.execute(sa.select(T.runs.c.stats).where(T.runs.c.run_id == last["run_id"])).scalar_one()
    assert stats["monitor"] == last["monitor"] and stats["published_rows"]


def test_cli_alerts_json_and_text(engine, capsys):
    rng = random.Random(5)
    _publish_metric_days(engine, 31, lambda i: (0.005 if i < 30 else 0.04) + rng.gauss(0, 0.0004))
    day = START + dt.timedelta(days=30)
    monitor_day(engine, day, "r30", SETTINGS)
    assert main(["alerts", "--from", START.isoformat(), "--to", day.isoformat(), "--json"]) == 0
    alerts = json.loads(capsys.readouterr().out)
    assert len(alerts) == 1
    a = alerts[0]
    assert {"day", "metric", "slice_name", "slice_value", "baseline", "value", "direction"} <= set(a)
    assert (a["day"], a["metric"], a["slice_name"], a["slice_value"], a["direction"]) == (
        day.isoformat(), "unknown_label_rate", "all", "all", "up")
    assert isinstance(a["baseline"], float) and a["value"] > 0.035
    assert main(["alerts", "--from", day.isoformat(), "--to", day.isoformat()]) == 0
    text = capsys.readouterr().out
    assert "unknown_label_rate" in text and "overall" in text and "up" in text
    assert main(["alerts", "--from", START.isoformat(), "--to", START.isoformat(), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


# --- the new metric: answers a runtime checker would rewrite or block -------------------------------

@pytest.mark.parametrize("fixture", ["orbit_labs.json", "micro_macro.json"])
def test_rewrite_or_block_per_1000_answers_counts_the_answers_the_rule_names(fixture):
    from helpers import load_fixture, score_dicts

    data = load_fixture(fixture)
    out = score_dicts(data["turns"], data["judge"])
    flagged = [t["turn_id"] for t in out["turns"] if any(
        s["unknown_labels"] or (s["check_worthy"] and s["verdict"] in ("unsupported", "miscited"))
        for s in t["sentences"]) or any(p["document_index"] < 0 for p in t["pointer_problems"])]
    row = next(r for r in out["rows"] if r["metric"] == "rewrite_or_block_per_1000_answers"
               and r["slice_name"] == "all" and r["averaging"] == "micro")
    assert row["denominator"] == len(out["turns"])
    assert row["value"] == pytest.approx(1000 * len(flagged) / len(out["turns"]))
    assert out["invariant_violations"] == []
    for t in out["turns"]:
        assert t["metrics"]["rewrite_or_block_per_1000_answers"] == (1000.0 if t["turn_id"] in flagged else 0.0)
    assert not any(r["metric"] == "rewrite_or_block_per_1000_answers" for r in out["rows"]
                   if r["slice_name"] in ("has_number", "multi_citation")), "an answer-level metric"


def test_rewrite_or_block_flags_unknown_labels_and_bad_verdicts_only():
    from citecheck.core.config import Config
    from citecheck.core.pipeline import score
    from citecheck.core.turns import turn_from_dict
    from citecheck.judges import judge_from_spec

    context = [{"label": "S1", "text": "Hotels are capped at 220 euros."},
               {"label": "S2", "text": "Trains: second class."}]
    judge = judge_from_spec({"kind": "recorded", "judgments": [
        {"statement": "Hotels are capped at 220 euros.", "supported_by": ["S1"]},
        {"statement": "Trains are second class.", "supported_by": ["S2"]},
        {"statement": "Flights are business class.", "supported_by": []}]})

    def turn(turn_id, answer):
        return turn_from_dict({"turn_id": turn_id, "conversation_id": turn_id, "answer": answer, "context": context})

    turns = [turn("ok", "Hotels are capped at 220 euros. [S1]"),
             turn("unknown", "Hotels are capped at 220 euros. [S1][S9]"),
             turn("miscited", "Trains are second class. [S1]"),
             turn("unsupported", "Flights are business class. [S1]"),
             turn("unjudged", "Buses are free. [S1]")]
    report = score(turns, judge, Config())
    flags = {s.turn_id: s for s in report.scored}
    from citecheck.core.metrics import turn_counts

    assert {t: turn_counts(s)["answers_rewrite_or_block"] for t, s in flags.items()} == {
        "ok": 0, "unknown": 1, "miscited": 1, "unsupported": 1, "unjudged": 0}
    assert report.accumulator.summary()["micro"]["rewrite_or_block_per_1000_answers"] == pytest.approx(600.0)


def test_a_few_events_in_a_small_slice_are_no_step_by_the_sampling_test():
    """The history swings little, so the level-shift test alone would fire; 6 unknown labels of
    200 citations against a pooled 1% is not unlikely enough (binomial p ~ 0.02)."""
    from citecheck.features.monitor import pooled_counts
    from citecheck.stats.change_detection import sampling_p

    rates = [0.01, 0.005, 0.015, 0.01, 0.01, 0.005, 0.015, 0.01, 0.01, 0.01] * 2
    past = [{"value": r, "numerator": r * 200, "denominator": 200} for r in rates]
    row = {"value": 0.03, "numerator": 6, "denominator": 200}
    t = Threshold(abs=0.01, rel=0.5)
    assert check_series(rates, row, t, SETTINGS)[0] == "alert", "the level-shift test alone fires"
    pooled = pooled_counts("unknown_label_rate", "micro", row, past)
    assert pooled == {"count": 6, "trials": 200, "rate": pytest.approx(0.01), "per_unit": False}
    assert check_series(rates, row, t, SETTINGS, pooled) == ("no_evidence", None)
    big = {"value": 0.03, "numerator": 60, "denominator": 2000}
    outcome, alert = check_series(rates, big, t, SETTINGS, pooled_counts("unknown_label_rate", "micro", big, past))
    assert outcome == "alert" and "sampling test (binomial, 60 of 2000)" in alert["rule"]
    per_answer = pooled_counts("unknown_labels_per_1000_answers", "micro", {"numerator": 8000.0, "denominator": 210},
                               [{"numerator": 2400.0, "denominator": 200}] * 20)
    assert per_answer["per_unit"] and per_answer["count"] == 8 and per_answer["rate"] == pytest.approx(0.012)
    assert 1e-3 < sampling_p(8, 210, 0.012, per_unit=True) < 0.05
    assert pooled_counts("unknown_label_rate", "macro", row, past) is None
    assert pooled_counts("citation_f1", "micro", row, past) is None
