"""The daily job on real warehouses (embedded SQLite and the local PostgreSQL)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.warehouse import tables as T
from citecheck.warehouse.ddl import ddl, wide_view_sql
from helpers import REPO, load_fixture, orbit_settings, orbit_warehouse_turns

DAY = dt.date(2026, 11, 30)
ORBIT = load_fixture("orbit_labs.json")


def _micro(engine, day=DAY):
    return {r["metric"]: r for r in job.day_metrics(engine, day)
            if r["slice_name"] == "all" and r["averaging"] == "micro"}


def test_a_day_end_to_end_reproduces_the_orbit_numbers(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    result = job.run_day(engine, DAY, orbit_settings())
    assert result["structural"]["turns_read"] == 4
    assert result["structural"]["turns_skipped"] == 1
    micro = _micro(engine)
    for metric, value in ORBIT["expected"]["day_micro"].items():
        if metric != "note":
            assert micro[metric]["value"] == pytest.approx(value, abs=5e-4), metric
    with engine.connect() as conn:
        run = conn.execute(sa.select(T.runs).where(T.runs.c.run_id == result["run_id"])).mappings().one()
        skipped = conn.execute(sa.select(T.skipped_turns)).mappings().all()
        stale = conn.execute(sa.select(T.citation_verdicts).where(T.citation_verdicts.c.status == "stale")).all()
        staged = sum(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one() for t in T.STAGING_TABLES)
    assert run["status"] == "published"
    assert run["turns_read"] == run["turns_scored"] + run["turns_skipped"] == 4
    assert run["validation"]["success"] is True
    assert [(s["turn_id"], s["reason"]) for s in skipped] == [("bad@2026-11-30", "answer is missing")]
    assert len(stale) == 1
    assert staged == 0, "staging is cleaned after publish"
    assert all(r["run_id"] == result["run_id"] and r["config_hash"] for r in job.day_metrics(engine, DAY))


def test_a_rerun_gives_identical_metric_rows(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    job.run_day(engine, DAY, orbit_settings())
    first = [{k: v for k, v in r.items() if k != "run_id"} for r in job.day_metrics(engine, DAY)]
    job.run_day(engine, DAY, orbit_settings())
    second = [{k: v for k, v in r.items() if k != "run_id"} for r in job.day_metrics(engine, DAY)]
    assert first == second and len(first) > 100


def test_a_failed_validation_publishes_nothing_and_keeps_the_old_version(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    good = job.run_day(engine, DAY, orbit_settings())
    before = job.day_metrics(engine, DAY)
    # a judge that knows no statement leaves every sentence unjudged: over the unjudged limit
    broken = orbit_settings(judge_spec={"kind": "recorded", "judgments": []})
    with pytest.raises(job.ValidationFailed, match="unjudged"):
        job.run_day(engine, DAY, broken)
    assert job.day_metrics(engine, DAY) == before
    with engine.connect() as conn:
        runs = {r.run_id: r for r in conn.execute(sa.select(T.runs))}
    failed = [r for rid, r in runs.items() if rid != good["run_id"]]
    assert failed[0].status == "failed_validation" and "unjudged" in failed[0].error


def test_stale_labels_look_back_across_midnight(engine):
    turns = orbit_warehouse_turns()
    first, second = turns[0], turns[2]
    first["answered_at"] = "2026-11-29T23:59:00Z"
    second["answered_at"] = "2026-11-30T00:01:00Z"
    W.load_turns(engine, [first, second])
    job.run_day(engine, DAY, orbit_settings())
    with engine.connect() as conn:
        statuses = dict(conn.execute(sa.select(T.citation_verdicts.c.label, T.citation_verdicts.c.status)).all())
    assert statuses == {"S1": "resolved", "S4": "stale"}


def test_late_turns_are_picked_up_by_a_rerun(engine):
    turns = orbit_warehouse_turns()
    W.load_turns(engine, turns[:1])
    job.run_day(engine, DAY, orbit_settings())
    assert _micro(engine)["attachment_rate"]["denominator"] == 6
    W.load_turns(engine, turns[1:])
    job.run_day(engine, DAY, orbit_settings())
    assert _micro(engine)["attachment_rate"]["denominator"] == 8


def test_nli_share_selects_a_deterministic_subset(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    result = job.run_day(engine, DAY, orbit_settings(nli_share=0.0))
    assert result["structural"]["turns_selected"] == 0
    micro = _micro(engine)
    assert micro["attachment_rate"]["value"] == pytest.approx(0.75)
    assert micro["citation_recall"]["value"] is None


def test_cli_three_day_backfill_and_metrics_json(tmp_path, monkeypatch, capsys):
    from citecheck.cli import main

    url = f"sqlite:///{tmp_path}/wh.sqlite"
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(ORBIT["judge"]))
    config = tmp_path / "config.toml"
    config.write_text(f'[check_worthiness]\nrefusals = ["{ORBIT["refusal_text"]}"]\n')
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", url)
    monkeypatch.setenv("CITECHECK_JUDGE", str(judge))
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    turns = tmp_path / "turns.jsonl"
    with turns.open("w") as f:
        for day in ("2026-11-28", "2026-11-29", "2026-11-30"):
            for t in orbit_warehouse_turns(day):
                f.write(json.dumps(t) + "\n")
        f.write("{not json\n")
    assert main(["load-turns", "--file", str(turns)]) == 1  # one malformed line reported
    loaded = json.loads(capsys.readouterr().out)
    assert loaded["loaded"] == 12 and loaded["malformed"][0]["line"] == 13
    assert main(["backfill", "--from", "2026-11-28", "--to", "2026-11-30"]) == 0
    assert "3 published" in capsys.readouterr().out
    assert main(["backfill", "--from", "2026-11-28", "--to", "2026-11-30"]) == 0
    assert "3 already up to date" in capsys.readouterr().out
    assert main(["metrics", "--day", "2026-11-29", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    recall = next(r for r in rows if r["metric"] == "citation_recall" and r["slice_name"] == "all"
                  and r["averaging"] == "micro")
    assert {k: recall[k] for k in ("numerator", "denominator", "value")} == {
        "numerator": 3.0, "denominator": 8.0, "value": 0.375}
    assert {"metric", "averaging", "slice_name", "slice_value", "numerator", "denominator", "value"} <= set(recall)


def test_checked_in_schema_matches_the_table_definitions():
    assert (REPO / "include" / "citecheck" / "sql" / "schema.sql").read_text() == ddl("postgresql")


def test_checked_in_views_match_the_headline_metric_list():
    assert (REPO / "include" / "citecheck" / "sql" / "views.sql").read_text() == wide_view_sql()
