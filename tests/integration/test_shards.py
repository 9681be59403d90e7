"""A day in shards (issue 36): one shard key in Python, SQLite and PostgreSQL; a day run with 1, 4
and 16 shards publishes the same rows in every published table (integers and text equal, floats
to 1e-9 relative: the macro sums are float sums added in another order); a missing shard's state
stops `combine`; a retried shard restages only its own rows."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace

import pytest
import sqlalchemy as sa

from citecheck import demo, job
from citecheck import warehouse as W
from citecheck.core.selection import SHARD_KEY_FUNCTION, shard_key, shard_of
from citecheck.warehouse import tables as T
from helpers import run_steps_until

START = dt.date(2026, 11, 23)
DAY = START + dt.timedelta(days=1)
IDS = ["", "a", "conv-1", "conv-2", "Ünïcødé-会话-🙂", "x" * 190, "0", "ca0ee1b2-3c4d", "tab\tand newline\n"]
# every published table with its columns as compared (run ids, timestamps and the row's hash left out)
PUBLISHED = {**{name: tables[0] for name, tables in T.OUTPUT_TABLES.items()}, "skipped_turns": T.skipped_turns}
LEFT_OUT = {"run_id", "computed_at", "published_at"}


def test_the_shard_key_is_the_same_in_python_and_in_the_warehouse(engine):
    with engine.connect() as conn:
        for cid in IDS:
            key = conn.execute(sa.text(f"SELECT {SHARD_KEY_FUNCTION}(:c)"), {"c": cid}).scalar_one()
            assert int(key) == shard_key(cid), cid
            assert int(conn.execute(sa.text(f"SELECT {SHARD_KEY_FUNCTION}(:c) % 7"), {"c": cid}).scalar_one()) \
                == shard_of(cid, 7)
        null = conn.execute(sa.text(f"SELECT {SHARD_KEY_FUNCTION}(NULL)")).scalar_one()
    assert int(null) == shard_key(None) == shard_key("")
    assert 0 <= shard_key("conv-1") < 2**32


def _settings(data: demo.Sample, shards: int) -> job.JobSettings:
    """The sample's settings (its config's [[criteria]] decide the day) in `shards` shards."""
    return job.JobSettings(judge_spec=demo.judge_spec(data), config=demo.sample_config(), nli_share=0.6,
                           shards=shards)


def _published(engine: sa.Engine) -> dict[str, list[dict]]:
    out = {}
    with engine.connect() as conn:
        for name, table in PUBLISHED.items():
            cols = [c for c in table.columns if c.name not in LEFT_OUT]
            rows = [dict(r) for r in conn.execute(sa.select(*cols).where(table.c.day == DAY)).mappings()]
            out[name] = sorted(rows, key=lambda r: repr([(k, v) for k, v in r.items() if not isinstance(v, float)]))
    return out


def _differences(a, b, path=""):
    if isinstance(a, float) and isinstance(b, float):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys differ"]
        return [d for k in a for d in _differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} != {len(b)} rows"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} != {b!r}"]


def test_one_four_and_sixteen_shards_publish_the_same_day(engine):
    data = demo.generate(START, 2, 200, seed=5)
    broken = [dict(t, turn_id=f"broken-{i}", answer=None) for i, t in enumerate(data.turns)
              if t["answered_at"].startswith(DAY.isoformat())][:3]  # skipped turns, in their shards
    W.load_turns(engine, data.turns + broken)
    published = {}
    for shards in (1, 4, 16):
        result = job.run_day(engine, DAY, _settings(data, shards))
        assert result["open_run"]["shards"] == list(range(shards))
        published[shards] = _published(engine)
    one = published[1]
    assert len(one["daily_metrics"]) > 100 and one["criteria_results"] and one["skipped_turns"]
    assert any(r["ci_low"] is not None for r in one["daily_metrics"])
    for shards in (4, 16):
        assert _differences(published[shards], one) == [], f"{shards} shards"


def test_combine_refuses_a_day_with_a_shard_missing_and_a_retried_shard_keeps_the_others(engine):
    data = demo.generate(START, 2, 60, seed=6)
    W.load_turns(engine, data.turns)
    run = job.DayRun(engine, DAY, job.new_run_id(DAY), _settings(data, 3))
    done = run_steps_until(run, "fold_shard")
    with engine.connect() as conn:
        before = conn.execute(sa.select(sa.func.count()).select_from(T.stage_sentence_verdicts)).scalar_one()
    assert job.fold_shard(run, 1)["answers"] == done["fold_shard"][1]["answers"]  # a retried shard
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(T.stage_sentence_verdicts)).scalar_one() == before
    wider = replace(run, settings=replace(run.settings, shards=4))
    with pytest.raises(RuntimeError, match=r"staged no state for shard\(s\) \[3\] of 4"):
        job.combine(wider, done["judge_shard"], done["escalate"])


def _every_day(engine: sa.Engine, days) -> dict:
    out = {}
    with engine.connect() as conn:
        for name, table in PUBLISHED.items():
            cols = [c for c in table.columns if c.name not in LEFT_OUT]
            rows = [dict(r) for r in conn.execute(sa.select(*cols).where(table.c.day.in_(days))).mappings()]
            out[name] = sorted(rows, key=repr)
    return out


def test_workers_run_days_and_shards_in_processes_and_publish_the_same_rows(engine):
    """`backfill --workers 3`: three days in three processes; `run --workers 2`: one day's shards in
    two processes. Both publish what one process does, row for row."""
    data = demo.generate(START, 3, 60, seed=8)
    W.load_turns(engine, data.turns)
    days = [START + dt.timedelta(days=i) for i in range(3)]
    settings = _settings(data, 3)
    assert job.backfill(engine, days, settings).published == [d.isoformat() for d in days]
    one_process = _every_day(engine, days)
    report = job.backfill(engine, days, settings, force=True, workers=3)
    assert sorted(report.published) == [d.isoformat() for d in days]
    assert _every_day(engine, days) == one_process
    result = job.run_day(engine, days[1], settings, workers=2)
    assert result["fold_shard"]["answers"] == result["combine"]["answers"] > 0
    assert _every_day(engine, days) == one_process
    with engine.connect() as conn:  # every day freed, no staging left
        assert conn.execute(sa.select(sa.func.count()).select_from(T.day_locks)).scalar_one() == 0
        assert conn.execute(sa.select(sa.func.count()).select_from(T.stage_partials)).scalar_one() == 0
