"""Bounded slices: `[slices] max_values_per_key` keeps the most frequent attribute values (by
answers) as slices and pools the rest under `other`; the cut is in `runs.stats`, the log and the
`score` output; the warehouse counts the values in SQL (SQLite and PostgreSQL) exactly as the
turns are sliced."""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from citecheck import job
from citecheck import warehouse as W
from citecheck.core.config import ConfigError, config_from_mapping
from citecheck.core.metrics import OTHER_SLICE_VALUE, MetricAccumulator, SliceCap
from citecheck.core.turns import turn_from_dict
from citecheck.warehouse import runs, source
from helpers import orbit_settings, orbit_warehouse_turns, score_dicts

DAY = dt.date(2026, 11, 30)


def test_the_most_frequent_values_keep_their_slices_ties_go_to_the_smaller_value():
    rows = [("plan", "free", 5), ("plan", "pro", 9), ("plan", "team", 2), ("plan", "edu", 2), ("region", "eu", 1)]
    cap = SliceCap.from_counts(rows, 2)
    assert cap.kept == {"plan": frozenset({"pro", "free"})} and "region" not in cap.kept
    assert cap.cut == {"plan": {"values": 4, "kept": 2, "other_values": 2, "other_answers": 4}}
    assert cap.value("plan", "pro") == "pro" and cap.value("plan", "edu") == OTHER_SLICE_VALUE
    assert cap.value("region", "anything") == "anything"  # a key under the cap is never cut
    tie = SliceCap.from_counts([("k", v, 1) for v in ("c", "a", "d", "b")], 2)
    assert tie.kept == {"k": frozenset({"a", "b"})}
    assert SliceCap.from_counts(rows, 0).kept == {}  # 0: no cap
    assert SliceCap.from_counts(rows, 1, keys=["region"]).kept == {}  # only the configured keys


def test_the_setting_is_read_and_checked():
    assert config_from_mapping({}).slice_max_values == 50
    assert config_from_mapping({"slices": {"max_values_per_key": 3}}).slice_max_values == 3
    with pytest.raises(ConfigError):
        config_from_mapping({"slices": {"max_values_per_key": -1}})


def _turns_with_users(n: int) -> list[dict]:
    base = orbit_warehouse_turns()[0]
    return [dict(base, turn_id=f"t{i}", conversation_id=f"c{i}",
                 attributes={"user_id": f"u{i % (n - 5)}", "plan": "pro" if i % 2 else "free"}) for i in range(n)]


def test_score_pools_the_rare_values_under_other_and_keeps_the_overall_slice(caplog):
    turns = _turns_with_users(20)  # 15 users, 5 of them twice
    judge = orbit_settings().judge_spec
    with caplog.at_level(logging.WARNING, logger="citecheck.slices"):
        capped = score_dicts(turns, judge, config_from_mapping({"slices": {"max_values_per_key": 5}}))
    free = score_dicts(turns, judge, config_from_mapping({"slices": {"max_values_per_key": 0}}))
    users = {r["slice_value"] for r in capped["rows"] if r["slice_name"] == "attribute:user_id"}
    assert users == {"u0", "u1", "u2", "u3", "u4", OTHER_SLICE_VALUE}  # the five users with two answers
    other = next(r for r in capped["rows"] if r["slice_value"] == OTHER_SLICE_VALUE and r["metric"] == "refusal_rate")
    assert other["denominator"] == 10
    assert capped["slices_cut"] == {"user_id": {"values": 15, "kept": 5, "other_values": 10, "other_answers": 10}}
    overall = [[r for r in out["rows"] if r["slice_name"] == "all"] for out in (capped, free)]
    assert overall[0] == overall[1]
    assert len([m for m in caplog.messages if "user_id" in m]) == 1 and "plan" not in " ".join(caplog.messages)


def test_memory_is_slices_kept_not_values_seen():
    config = config_from_mapping({"slices": {"max_values_per_key": 3}})
    turns = [turn_from_dict(t) for t in _turns_with_users(40)]
    acc = MetricAccumulator(config, cap=SliceCap.from_turns(turns, config))
    from citecheck.core.pipeline import decide_turn, structure_turns

    for st in structure_turns(turns, config):
        acc.add(decide_turn(st, {}, selected=False))
    names = {(r["slice_name"], r["slice_value"]) for r in acc.rows()}
    assert len([n for n in names if n[0] == "attribute:user_id"]) == 4  # 3 kept + other


def test_the_warehouse_counts_values_as_the_turns_are_sliced(engine):
    odd = [{"user_id": True}, {"user_id": 1.5}, {"user_id": {"nested": [1]}}, {"user_id": None}, {"user_id": "x"},
           {"user_id": "x"}, {"other key": "é\u00e9"}, None]
    base = orbit_warehouse_turns()[0]
    turns = [dict(base, turn_id=f"t{i}", conversation_id=f"c{i}", attributes=a) for i, a in enumerate(odd)]
    W.load_turns(engine, turns)
    with engine.connect() as conn:
        counted = sorted(source.attribute_value_counts(conn, DAY))
    stored = [turn_from_dict(t) for t in turns]
    expected: dict[tuple[str, str], int] = {}
    for t in stored:
        for kv in t.attributes.items():
            expected[kv] = expected.get(kv, 0) + 1
    assert counted == sorted((k, v, n) for (k, v), n in expected.items())


def test_the_job_records_the_cut_and_publishes_the_other_slice(engine, caplog):
    W.load_turns(engine, _turns_with_users(20))
    settings = orbit_settings()
    from dataclasses import replace

    settings = replace(settings, config=replace(settings.config, slice_max_values=5))
    with caplog.at_level(logging.WARNING, logger="citecheck.slices"):
        result = job.run_day(engine, DAY, settings)
    stats = runs.run_row(engine, result["run_id"])["stats"]
    assert stats["slices_cut"] == {"user_id": {"values": 15, "kept": 5, "other_values": 10, "other_answers": 10}}
    users = {r["slice_value"] for r in job.day_metrics(engine, DAY) if r["slice_name"] == "attribute:user_id"}
    assert len(users) == 6 and OTHER_SLICE_VALUE in users
    assert len([m for m in caplog.messages if "'user_id'" in m]) == 1
    from citecheck.warehouse.read_model import report_html

    html = report_html(engine, DAY)  # the stored report says so
    assert 'id="slices-cut"' in html and "<code>user_id</code> 15 values, 10 (10 answers) pooled under" in html
