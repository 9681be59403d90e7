"""Acceptance criteria (SPEC §5.1): validation, pass / fail / no_data, the interval rule, scopes,
answers, and the claims fixture's release decision."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from citecheck.core.config import Config
from citecheck.core.criteria import (
    FAIL,
    NO_DATA,
    PASS,
    CriteriaError,
    Criterion,
    decide,
    evaluate,
    load_criteria_file,
    overall_decision,
    parse_criteria,
)
from citecheck.core.pipeline import score
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from helpers import load_fixture


def scored_turns(turns, judge_spec, config=None):
    return score([turn_from_dict(t) for t in turns], judge_from_spec(judge_spec), config or Config()).scored


# --- validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("entry", "message"), [
    ({"name": "", "metric": "citation_recall", "min": 0.8}, "non-empty name"),
    ({"name": "  ", "metric": "citation_recall", "min": 0.8}, "non-empty name"),
    ({"metric": "citation_recall", "min": 0.8}, "non-empty name"),
    ({"name": "r", "metric": "citation_recal", "min": 0.8}, "unknown metric 'citation_recal'"),
    ({"name": "r", "metric": "citation_recall", "min": 0.8, "max": 0.9}, "not both"),
    ({"name": "r", "metric": "citation_recall"}, "needs a bound"),
    ({"name": "r", "metric": "citation_recall", "min": "high"}, "min must be a number"),
    ({"name": "r", "metric": "citation_recall", "min": 0.8, "on": "mean"}, "on must be"),
    ({"name": "r", "metric": "citation_recall", "min": 0.8, "answers": "yes"}, "answers must be"),
    ({"name": "r", "metric": "citation_recall", "min": 0.8, "where": "topic=pay"}, "where must be a table"),
    ({"name": "r", "metric": "citation_recall", "min": 0.8, "where": {"topic": []}}, "non-empty list"),
    ({"name": "r", "metric": "citation_recall", "min": 0.8, "where": {"has_number": "maybe"}}, "built-in slice"),
    ({"name": "r", "metric": "citation_recall", "min": 0.8, "bound": 1}, "unknown key(s) bound"),
    ({"name": "r", "metric": "citation_recall", "max_drop": -0.1}, "max_drop must be zero or more"),
])
def test_invalid_criteria_are_clear_errors(entry, message):
    with pytest.raises(CriteriaError, match="criterion 1") as err:
        parse_criteria([entry])
    assert message in str(err.value)


def test_duplicate_names_and_non_arrays_are_errors():
    entry = {"name": "r", "metric": "citation_recall", "min": 0.8}
    with pytest.raises(CriteriaError, match="used twice"):
        parse_criteria([entry, entry])
    with pytest.raises(CriteriaError, match=r"array of tables"):
        parse_criteria(entry)


def test_a_criteria_file_that_is_not_toml(tmp_path):
    path = tmp_path / "criteria.toml"
    path.write_text("[[criteria]\nname = 'x'\n", encoding="utf-8")
    with pytest.raises(CriteriaError, match="not valid TOML"):
        load_criteria_file(path)
    with pytest.raises(CriteriaError, match="not found"):
        load_criteria_file(tmp_path / "missing.toml")
    path.write_text("[other]\nx = 1\n", encoding="utf-8")
    with pytest.raises(CriteriaError, match="unknown section"):
        load_criteria_file(path)


def test_the_hash_follows_the_criteria(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[[criteria]]\nname = "recall"\nmetric = "citation_recall"\nmin = 0.8\n', encoding="utf-8")
    first = load_criteria_file(path)
    assert first.hash == parse_criteria([{"name": "recall", "metric": "citation_recall", "min": 0.8}]).hash
    assert first.hash != parse_criteria([{"name": "recall", "metric": "citation_recall", "min": 0.7}]).hash


# --- decisions --------------------------------------------------------------------------------------


def test_value_and_interval_rules():
    at_least = Criterion(name="r", metric="citation_recall", min=0.8)
    assert decide(at_least, 0.79, 0.70, 0.88) == FAIL
    assert decide(at_least, 0.80, 0.70, 0.88) == PASS
    assert decide(at_least, None, None, None) == NO_DATA
    on_interval = Criterion(name="r", metric="citation_recall", min=0.8, on="interval")
    assert decide(on_interval, 0.79, 0.70, 0.88) == PASS  # the interval still reaches the bound
    assert decide(on_interval, 0.70, 0.62, 0.78) == FAIL  # the whole interval lies below it
    at_most = Criterion(name="u", metric="unsupported_rate", max=0.1, on="interval")
    assert decide(at_most, 0.12, 0.05, 0.2) == PASS
    assert decide(at_most, 0.30, 0.15, 0.4) == FAIL
    assert decide(at_most, 0.30, None, None) == FAIL  # no interval: read on the value


def test_the_overall_decision():
    assert overall_decision([PASS, PASS]) == PASS
    assert overall_decision([PASS, NO_DATA]) == NO_DATA  # no_data is never a pass
    assert overall_decision([NO_DATA, FAIL]) == FAIL
    assert overall_decision([]) == NO_DATA


def orbit():
    fixture = load_fixture("orbit_labs.json")
    return scored_turns(fixture["turns"], fixture["judge"])


def test_pass_fail_no_data_and_answers_on_the_orbit_day():
    criteria = parse_criteria([
        {"name": "attached", "metric": "attachment_rate", "min": 0.5},
        {"name": "recall", "metric": "citation_recall", "min": 0.9, "answers": True},
        {"name": "model b only", "metric": "citation_recall", "min": 0.5, "where": {"model": "assistant-b"}},
        {"name": "no such attribute", "metric": "citation_recall", "min": 0.5, "where": {"topic": "pay"}},
    ])
    results, failing = evaluate(orbit(), criteria)
    by_name = {r.criterion.name: r for r in results}
    assert by_name["attached"].decision == PASS
    assert by_name["recall"].decision == FAIL
    assert by_name["model b only"].decision == NO_DATA
    assert by_name["no such attribute"].decision == NO_DATA and by_name["no such attribute"].answers == 0
    assert overall_decision(r.decision for r in results) == FAIL
    # answers: each answer in scope with a value below 0.9 fails; the refusal has no value
    assert set(failing) == {"orbit-1", "orbit-2"}
    assert all(names == ["recall"] for names in failing.values())
    recall = by_name["recall"]
    assert (recall.numerator, recall.denominator) == pytest.approx(
        (recall.value * recall.denominator, recall.denominator))


def test_a_sentence_slice_scope():
    criteria = parse_criteria([
        {"name": "numbers attached", "metric": "attachment_rate", "min": 1.0, "where": {"has_number": "yes"}},
        {"name": "words attached", "metric": "attachment_rate", "min": 1.0, "where": {"has_number": "no"}},
    ])
    results, _ = evaluate(orbit(), criteria)
    numbers, words = results
    # "Reports submitted after the 20th are paid a month later." has a number and no citation
    assert numbers.decision == FAIL and numbers.value < 1.0
    assert words.denominator is not None and words.denominator > 0


def test_interval_criterion_uses_the_metrics_own_interval():
    criteria = parse_criteria([
        {"name": "value", "metric": "citation_recall", "min": 0.4},
        {"name": "interval", "metric": "citation_recall", "min": 0.4, "on": "interval"},
    ])
    results, _ = evaluate(orbit(), criteria)
    value, interval = results
    assert value.decision == FAIL
    assert interval.ci_low is not None and interval.ci_low < value.value < interval.ci_high
    assert interval.decision == PASS  # the interval reaches 0.4


# --- the claims fixture's release decision (SPEC §8) -------------------------------------------------


def hardware_decision(config=None, metric_override: str | None = None):
    fixture = load_fixture("claims.json")
    entries = [dict(c, metric=metric_override or c["metric"]) for c in fixture["criteria"]]
    scored = scored_turns([fixture["turns"]["hardware"]], fixture["judge"], config)
    results, failing = evaluate(scored, parse_criteria(entries))
    return fixture["expected"]["hardware"], results, failing


def test_claims_fixture_release_decision(tmp_path):
    # the recorded claims mode of the fixture: 1 of 3 claims fully supported by its own citations
    table = tmp_path / "claims.json"
    table.write_text(json.dumps(load_fixture("claims.json")["claims"]), encoding="utf-8")
    config = replace(Config(), claims_mode="recorded", claims_recorded=str(table))
    expected, results, failing = hardware_decision(config)
    (result,) = results
    assert (result.numerator, result.denominator) == tuple(expected["recorded_mode"]["claim_recall"])
    assert overall_decision(r.decision for r in results) == expected["decision"] == FAIL
    assert sorted(failing) == expected["answers_failing"]


def test_a_claim_metric_outside_a_claims_mode_is_no_data():
    _, results, failing = hardware_decision()
    assert [r.decision for r in results] == [NO_DATA] and not failing


def test_claims_fixture_release_decision_in_sentence_mode():
    # in the default sentence mode each sentence is its own single claim (SPEC §2.1): the same
    # criterion on citation recall, 1 of 3 sentences fully supported
    expected, results, failing = hardware_decision(metric_override="citation_recall")
    (result,) = results
    assert (result.numerator, result.denominator) == (1, 3)
    assert overall_decision(r.decision for r in results) == expected["decision"]
    assert sorted(failing) == expected["answers_failing"]


# --- criteria in the job's settings ----------------------------------------------------------------


def test_config_criteria_are_validated_when_the_settings_are_built():
    from citecheck.core.config import config_from_mapping
    from citecheck.job import JobSettings

    good = config_from_mapping({"criteria": [{"name": "recall", "metric": "citation_recall", "min": 0.5}]})
    settings = JobSettings(config=good)
    assert [c.name for c in settings.criteria] == ["recall"] and settings.criteria.hash
    assert settings.run_config_hash == JobSettings().run_config_hash  # criteria do not change metric rows
    bad = config_from_mapping({"criteria": [{"name": "recall", "metric": "recal", "min": 0.5}]})
    with pytest.raises(CriteriaError, match="unknown metric 'recal'"):
        JobSettings(config=bad)
    from citecheck.core.config import ConfigError

    with pytest.raises(ConfigError, match="array of tables"):
        config_from_mapping({"criteria": {"name": "x"}})


def test_a_criteria_file_and_config_criteria_are_not_both_allowed(tmp_path, monkeypatch):
    from citecheck.job import settings_from_env

    path = tmp_path / "criteria.toml"
    path.write_text('[[criteria]]\nname = "recall"\nmetric = "citation_recall"\nmin = 0.5\n', encoding="utf-8")
    monkeypatch.setenv("CITECHECK_CRITERIA", str(path))
    monkeypatch.delenv("CITECHECK_CONFIG", raising=False)
    assert [c.name for c in settings_from_env().criteria] == ["recall"]
    config = tmp_path / "config.toml"
    config.write_text('[[criteria]]\nname = "attached"\nmetric = "attachment_rate"\nmin = 0.5\n', encoding="utf-8")
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    with pytest.raises(CriteriaError, match="given twice"):
        settings_from_env()


def test_the_cli_run_refuses_invalid_criteria_before_touching_the_warehouse(tmp_path, monkeypatch):
    from citecheck.cli import main

    config = tmp_path / "bad.toml"
    config.write_text('[[criteria]]\nname = ""\nmetric = "citation_recall"\nmin = 0.5\n', encoding="utf-8")
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", f"sqlite:///{tmp_path}/never.sqlite")
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    assert main(["run", "--day", "2026-11-24"]) == 2
    assert not (tmp_path / "never.sqlite").exists()
