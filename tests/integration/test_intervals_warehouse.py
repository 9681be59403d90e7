"""Intervals in the warehouse (issue 11): `daily_metrics.ci_low/ci_high`, the wide view, `metrics --json`,
and an older warehouse gaining the columns, on embedded SQLite and the local PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest
import sqlalchemy as sa

from citecheck import demo, job
from citecheck import warehouse as W
from citecheck.core.metrics import JUDGED_METRICS
from citecheck.core.metrics.definitions import STRUCTURAL_INTERVAL_METRICS
from citecheck.warehouse import tables as T

DAY = dt.date(2026, 11, 24)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/warehouse.sqlite"
    return request.getfixturevalue("pg_warehouse_url")


@pytest.fixture
def published(url):
    """One generated sample day (150 turns), a quarter of it judged, run and published."""
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    data = demo.generate(DAY, 1, 150, seed=3)
    W.load_turns(engine, data.turns)
    settings = job.JobSettings(judge_spec=demo.judge_spec(data), nli_share=0.5, config=demo.sample_config())
    result = job.run_day(engine, DAY, settings)
    yield engine, settings, result
    engine.dispose()


def test_published_rows_carry_intervals_around_their_values(published):
    engine, _, result = published
    rows = job.day_metrics(engine, DAY)
    judged = [r for r in rows if r["metric"] in JUDGED_METRICS and r["value"] is not None]
    assert judged and all(r["ci_low"] is not None for r in judged if r["answers"] >= 2 and r["slice_name"] == "all")
    for row in rows:
        with_interval = row["metric"] in JUDGED_METRICS or row["metric"] in STRUCTURAL_INTERVAL_METRICS
        if not with_interval or row["value"] is None:
            assert row["ci_low"] is None and row["ci_high"] is None, row
        elif row["ci_low"] is not None:
            assert 0 <= row["ci_low"] <= row["value"] <= row["ci_high"] <= 1, row
    covered = {(r["slice_name"], r["averaging"]) for r in judged if r["ci_low"] is not None}
    assert {("all", "micro"), ("all", "macro"), ("answer_length", "micro"), ("has_number", "macro")} <= covered
    with engine.connect() as conn:
        run = conn.execute(sa.select(T.runs).where(T.runs.c.run_id == result["run_id"])).mappings().one()
    assert run["status"] == "published" and 0 < run["share_nli"] < 1
    rules = {e["rule"] for e in run["validation"]["expectations"]}
    assert {"interval_contains_value", "no_interval_without_value"} <= rules


def test_the_wide_view_shows_the_intervals(published):
    engine, _, _ = published
    rows = {r["metric"]: r for r in job.day_metrics(engine, DAY)
            if r["slice_name"] == "all" and r["averaging"] == "micro"}
    with engine.connect() as conn:
        wide = conn.execute(sa.text("SELECT * FROM daily_metrics_wide")).mappings().one()
    for metric in ("citation_recall", "citation_precision", "citation_f1", "faithfulness"):
        assert wide[f"{metric}_ci_low"] == pytest.approx(rows[metric]["ci_low"])
        assert wide[f"{metric}_ci_high"] == pytest.approx(rows[metric]["ci_high"])
        assert wide[f"{metric}_ci_low"] <= wide[metric] <= wide[f"{metric}_ci_high"]


def test_a_rerun_gives_the_same_intervals(published):
    engine, settings, _ = published
    first = [(r["metric"], r["slice_value"], r["averaging"], r["ci_low"], r["ci_high"])
             for r in job.day_metrics(engine, DAY)]
    job.run_day(engine, DAY, replace(settings))
    assert first == [(r["metric"], r["slice_value"], r["averaging"], r["ci_low"], r["ci_high"])
                     for r in job.day_metrics(engine, DAY)]


def test_metrics_cli_prints_the_intervals(published, url, monkeypatch, capsys):
    from citecheck.cli import main

    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", url)
    assert main(["metrics", "--day", DAY.isoformat(), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    recall = next(r for r in rows if r["metric"] == "citation_recall" and r["slice_name"] == "all"
                  and r["averaging"] == "macro")
    assert recall["ci_low"] <= recall["value"] <= recall["ci_high"]
    assert main(["metrics", "--day", DAY.isoformat()]) == 0
    text = capsys.readouterr().out
    line = next(t for t in text.splitlines() if t.startswith("citation_recall "))
    assert "95% [" in line
    assert "95% [" not in next(t for t in text.splitlines() if t.startswith("attachment_rate "))


def test_an_older_warehouse_gains_the_interval_columns(url):
    """A warehouse created before the intervals: init adds the columns, older days keep null there."""
    engine = W.make_engine(url)
    old = sa.MetaData()
    columns = [sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable)
               for c in T.daily_metrics.columns if c.name not in ("ci_low", "ci_high")]
    sa.Table("daily_metrics", old, *columns).create(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO daily_metrics (day, slice_name, slice_value, metric, averaging, value, "
                             "run_id, config_hash) "
                             "VALUES (:day, 'all', 'all', 'citation_recall', 'micro', 0.5, 'r0', 'h')"), {"day": DAY})
    W.init_warehouse(engine)
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT value, ci_low, ci_high FROM daily_metrics")).one()
        conn.execute(sa.text("SELECT citation_recall_ci_low FROM daily_metrics_wide")).all()
    assert tuple(row) == (0.5, None, None)
    assert W.add_missing_columns(engine) == []  # idempotent
    engine.dispose()
