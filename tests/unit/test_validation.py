"""The Great Expectations gate: a real pipeline day passes; each rule broken alone fails by name."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from citecheck.core.config import config_from_mapping
from citecheck.core.metrics import JUDGED_METRICS, RATE_METRICS
from citecheck.job.validation import RULES, min_turns_setting, validate_day
from helpers import load_fixture, score_dicts

ORBIT = load_fixture("orbit_labs.json")


@pytest.fixture(scope="module")
def day() -> dict[str, Any]:
    config = config_from_mapping({"check_worthiness": {"refusals": [ORBIT["refusal_text"]]}})
    out = score_dicts(ORBIT["turns"], ORBIT["judge"], config)
    assert out["invariant_violations"] == []
    return {"rows": out["rows"], "counts": {**out["run"], **out["counts"]}}


def _rows(day: dict[str, Any]) -> list[dict[str, Any]]:
    return copy.deepcopy(day["rows"])


def _row(rows: list[dict[str, Any]], metric: str, slice_name: str = "all", averaging: str = "micro") -> dict:
    return next(r for r in rows if r["metric"] == metric and r["slice_name"] == slice_name
                and r["averaging"] == averaging)


def _fails_only(result, rule: str, *fragments: str) -> str:
    """The result failed on `rule` alone, with a message naming the rule and the fragments."""
    assert not result.success
    assert result.failed_rules == [rule], result.summary()
    message = "\n".join(result.failures)
    assert message.startswith(f"{rule}: ")
    for fragment in fragments:
        assert fragment in message, message
    assert f"FAIL {rule}" in result.summary()
    return message


def test_good_day_passes_with_a_json_summary(day):
    result = validate_day(day["rows"], day["counts"])
    assert result.success, result.summary()
    assert result.failures == []
    assert result.summary().startswith("Great Expectations validation PASSED")
    stored = json.loads(json.dumps(result.results))
    assert stored["success"] is True and stored["failed_rules"] == []
    assert stored["metric_rows"] == len(day["rows"])
    assert {e["rule"] for e in stored["expectations"]} == set(RULES)
    kinds = {e["expectation"] for e in stored["expectations"]}
    assert {"expect_column_pair_values_a_to_be_greater_than_b", "expect_compound_columns_to_be_unique",
            "expect_column_values_to_be_between", "expect_column_pair_values_to_be_equal"} <= kinds
    # the bounds of every pipeline row were actually compared, not skipped as missing
    pair = next(e for e in stored["expectations"] if e["rule"] == "recall_le_faithfulness")
    assert pair["element_count"] == stored["pair_rows"] > 0


def test_warehouse_rows_with_day_and_run_columns_pass(day):
    rows = [{**r, "day": "2024-05-01", "run_id": "r1", "config_hash": "abc"} for r in day["rows"]]
    result = validate_day(rows, day["counts"])
    assert result.success, result.summary()
    assert any(e["target"].startswith("unique day, slice_name") for e in result.results["expectations"])


def test_rate_above_one_fails(day):
    rows = _rows(day)
    row = _row(rows, "refusal_rate")
    row["numerator"], row["value"] = 6, 2.0
    message = _fails_only(validate_day(rows, day["counts"]), "rate_in_unit_interval",
                          "metric=refusal_rate", "value=2")
    assert "averaging=micro" in message


def test_negative_rate_fails(day):
    rows = _rows(day)
    row = next(r for r in rows if r["metric"] == "stale_label_rate" and r["slice_name"] == "answer_length"
               and r["averaging"] == "macro" and r["value"] is not None)
    row["value"] = -0.1
    _fails_only(validate_day(rows, day["counts"]), "rate_in_unit_interval",
                "metric=stale_label_rate", "value=-0.1")


def test_count_metric_is_not_a_rate(day):
    assert "unknown_labels_per_1000_answers" not in RATE_METRICS
    assert _row(day["rows"], "unknown_labels_per_1000_answers")["value"] > 1
    assert validate_day(day["rows"], day["counts"]).success


def test_recall_above_faithfulness_fails(day):
    rows = _rows(day)
    row = _row(rows, "faithfulness")
    assert _row(rows, "citation_recall")["value"] == pytest.approx(0.375)
    row["numerator"], row["value"] = 2, 0.25
    _fails_only(validate_day(rows, day["counts"]), "recall_le_faithfulness",
                "slice_name=all slice_value=all averaging=micro", "citation_recall=0.375 faithfulness=0.25")


def test_recall_above_judged_attachment_fails(day):
    rows = _rows(day)
    row = _row(rows, "judged_attachment_rate", averaging="macro")
    row["value"] = 0.1
    _fails_only(validate_day(rows, day["counts"]), "recall_le_judged_attachment",
                "averaging=macro", "judged_attachment_rate=0.1")


def test_duplicate_key_fails(day):
    rows = _rows(day)
    rows.append(dict(_row(rows, "citation_precision")))
    _fails_only(validate_day(rows, day["counts"]), "unique_metric_key", "2 of", "metric=citation_precision")


def test_same_slice_on_two_days_is_not_a_duplicate_but_twice_on_one_day_is(day):
    rows = [{**r, "day": d} for d in ("2024-05-01", "2024-05-02") for r in day["rows"]]
    assert validate_day(rows, day["counts"]).success
    twice = [{**r, "day": "2024-05-01"} for r in day["rows"]] * 2
    assert "unique_metric_key" in validate_day(twice, day["counts"]).failed_rules


@pytest.mark.parametrize("key", ["slice_value", "metric", "averaging"])
def test_null_key_fails(day, key):
    rows = _rows(day)
    _row(rows, "attachment_rate", "answer_length")[key] = None
    _fails_only(validate_day(rows, day["counts"]), "key_not_null", f"not_be_null({key})", f"{key}=null")


def test_value_with_zero_denominator_fails(day):
    rows = _rows(day)
    row = next(r for r in rows if r["denominator"] == 0 and r["metric"] in RATE_METRICS)
    row["value"] = 0.0
    _fails_only(validate_day(rows, day["counts"]), "null_iff_zero_denominator",
                "where denominator == 0", f"metric={row['metric']}", "denominator=0")


def test_null_value_with_a_denominator_fails(day):
    rows = _rows(day)
    row = _row(rows, "refusal_rate")
    row["value"] = None
    _fails_only(validate_day(rows, day["counts"]), "null_iff_zero_denominator",
                "where denominator != 0", "metric=refusal_rate", "value=null")


def test_counts_not_reconciling_fail(day):
    counts = {**day["counts"], "turns_read": day["counts"]["turns_read"] + 2}
    _fails_only(validate_day(day["rows"], counts), "turns_reconcile",
                "turns_read=5 turns_scored_plus_skipped=3 turns_scored=3 turns_skipped=0")


def test_missing_count_fails(day):
    counts = {k: v for k, v in day["counts"].items() if k != "turns_skipped"}
    _fails_only(validate_day(day["rows"], counts), "counts_present", "not_be_null(turns_skipped)")


def test_metrics_not_covering_the_scored_turns_fail(day):
    counts = {**day["counts"], "turns_read": 5, "turns_scored": 4, "turns_skipped": 1}
    _fails_only(validate_day(day["rows"], counts), "metrics_cover_scored_turns",
                "turns_scored=4 answers_in_metrics=3")
    no_rows = validate_day([], day["counts"])
    assert no_rows.failed_rules == ["metrics_cover_scored_turns"]


def test_unjudged_share_over_the_limit_fails(day):
    counts = {**day["counts"], "selected_sentences": 10, "unjudged_sentences": 3}
    _fails_only(validate_day(day["rows"], counts), "unjudged_share_within_limit",
                "unjudged_share=0.3 unjudged_sentences=3 selected_sentences=10")
    assert validate_day(day["rows"], counts, unjudged_limit=0.3).success
    assert validate_day(day["rows"], {**counts, "unjudged_sentences": 2}).success


def test_unjudged_share_falls_back_to_the_overall_row(day):
    rows = _rows(day)
    row = _row(rows, "unjudged_rate")
    row["numerator"], row["value"] = 4, 0.5
    counts = {k: v for k, v in day["counts"].items() if k not in ("selected_sentences", "unjudged_sentences")}
    _fails_only(validate_day(rows, counts), "unjudged_share_within_limit", "unjudged_share=0.5")


def test_an_empty_day_fails_with_a_readable_reason_even_when_it_reconciles():
    result = validate_day([], {"turns_read": 2, "turns_scored": 0, "turns_skipped": 2}, day="2024-05-03")
    message = _fails_only(result, "enough_turns", "turns_scored in [1", "turns_scored=0", "turns_read=2",
                          "turns_skipped=2")
    assert result.results["metric_rows"] == 0 and result.results["min_turns"] == 1
    assert "minimum of turns 1" in result.summary(), message
    nothing = validate_day([], {"turns_read": 0, "turns_scored": 0, "turns_skipped": 0}, day="2024-05-03")
    _fails_only(nothing, "enough_turns", "turns_scored=0")


def test_the_minimum_of_turns_is_configurable(day, monkeypatch):
    scored = day["counts"]["turns_scored"]
    assert validate_day(day["rows"], day["counts"], min_turns=scored).success
    _fails_only(validate_day(day["rows"], day["counts"], min_turns=scored + 1), "enough_turns",
                f"turns_scored in [{scored + 1}", f"turns_scored={scored}")
    monkeypatch.setenv("CITECHECK_MIN_TURNS", str(scored + 1))
    assert min_turns_setting() == scored + 1
    assert min_turns_setting(3) == 3, "an explicit setting wins over the environment"


@pytest.mark.parametrize("bad", [0, -1, "many", "1.5", ""])
def test_a_minimum_below_one_or_not_a_whole_number_is_an_error(bad, monkeypatch):
    with pytest.raises(ValueError, match="at least 1"):
        min_turns_setting(bad)
    monkeypatch.setenv("CITECHECK_MIN_TURNS", str(bad) or " ")
    with pytest.raises(ValueError, match="CITECHECK_MIN_TURNS"):
        min_turns_setting()


def test_several_failures_are_all_reported(day):
    rows = _rows(day)
    rows.append(dict(rows[0]))
    _row(rows, "refusal_rate")["value"] = 1.5
    result = validate_day(rows, {**day["counts"], "turns_read": 9})
    assert result.failed_rules == ["rate_in_unit_interval", "turns_reconcile", "unique_metric_key"]
    assert len(result.failures) == 3
    assert result.summary().count("FAIL ") == 3


def test_an_interval_that_misses_its_value_fails(day):
    rows = _rows(day)
    row = _row(rows, "citation_recall", averaging="macro")
    assert row["ci_low"] is not None
    row["ci_low"] = row["value"] + 0.01
    _fails_only(validate_day(rows, day["counts"]), "interval_contains_value", "metric=citation_recall",
                "averaging=macro")


def test_an_interval_on_a_null_value_fails(day):
    rows = _rows(day)
    row = next(r for r in rows if r["denominator"] == 0 and r["metric"] in JUDGED_METRICS)
    row["ci_low"], row["ci_high"] = 0.1, 0.9
    _fails_only(validate_day(rows, day["counts"]), "no_interval_without_value", f"metric={row['metric']}")
