"""Loads that runs can see, on SQLite and PostgreSQL (issue 31, items 2 and 3): whatever the
loader's clock says and whenever its batches commit, a published day that has not seen a turn
loaded for it is stale, and a day a reloaded turn moved away from is stale too; `backfill` reruns
them and every turn ends up counted once, on its own day."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.job import DayRun, new_run_id, run_steps
from citecheck.warehouse import tables as T
from citecheck.warehouse.freshness import published_days
from citecheck.warehouse.naming import WarehouseNames
from helpers import orbit_settings, orbit_warehouse_turns

D1, D2 = dt.date(2026, 11, 29), dt.date(2026, 11, 30)


def _late_turns(day: dt.date, n: int) -> list[dict]:
    """`n` more scoreable turns of the day (copies of the Orbit Labs turn, each its own conversation)."""
    first = orbit_warehouse_turns(day.isoformat())[0]
    return [dict(first, turn_id=f"late-{day}-{i}", conversation_id=f"late-conv-{day}-{i}") for i in range(n)]


def _published_turns(engine, day: dt.date) -> set[str]:
    v = T.sentence_verdicts.c
    with engine.connect() as conn:
        return set(conn.execute(sa.select(v.turn_id).where(v.day == day).distinct()).scalars())


def _day_of(engine, turn_id: str) -> list[dt.date]:
    v = T.sentence_verdicts.c
    with engine.connect() as conn:
        return sorted(set(conn.execute(sa.select(v.day).where(v.turn_id == turn_id)).scalars()))


def test_a_load_that_commits_while_the_run_reads_makes_the_day_stale(engine):
    """What `load-turns` does: every line is validated (and, before the fix, stamped with the
    loader's clock) first, then written in batches; here the batches commit after the run read the
    day, so the run publishes without them."""
    W.load_turns(engine, orbit_warehouse_turns(D1.isoformat()))
    late = _late_turns(D1, 3)
    parsed = [W.source_rows(turn) for turn in late]  # validated before the run starts

    def call(name, step, *args):
        out = step(*args)
        if name == "structural":  # the run has read the day: the load's batches commit now
            W.load_source_rows(engine, parsed)
        return out

    settings = orbit_settings()
    run_steps(DayRun(engine, D1, new_run_id(D1), settings), call)
    assert not _published_turns(engine, D1) & {t["turn_id"] for t in late}  # the run did not see them

    (stale,) = job.stale_days(engine, [D1])
    assert (stale.day, stale.late_turns, stale.late_events, stale.moved_turns) == (D1, 3, 0, 0)
    report = job.backfill(engine, [D1], settings)
    assert report.published == [D1.isoformat()]
    assert report.reasons[D1.isoformat()].startswith("stale: 3 turn(s) and 0 reader event(s) loaded after run ")
    assert {t["turn_id"] for t in late} <= _published_turns(engine, D1)
    assert job.stale_days(engine, [D1]) == []


def test_a_loader_whose_clock_is_an_hour_behind_still_makes_the_day_stale(engine, monkeypatch):
    W.load_turns(engine, orbit_warehouse_turns(D1.isoformat()))
    settings = orbit_settings()
    job.backfill(engine, [D1], settings)
    assert job.stale_days(engine, [D1]) == []

    class LoaderClock(dt.datetime):
        """The loading host's clock: an hour behind the host that ran the day."""

        @classmethod
        def now(cls, tz=None):
            return dt.datetime.now(tz) - dt.timedelta(hours=1)

    class LoaderDatetime:
        datetime, timedelta, date, UTC = LoaderClock, dt.timedelta, dt.date, dt.UTC

    from citecheck.warehouse.source import load, rows

    for module in (load, rows):  # whatever clock the loader reads, it reads this one
        monkeypatch.setattr(module, "dt", LoaderDatetime, raising=False)
    late = _late_turns(D1, 2)
    W.load_turns(engine, late)
    monkeypatch.undo()

    assert [(d.day, d.late_turns) for d in job.stale_days(engine, [D1])] == [(D1, 2)]
    report = job.backfill(engine, [D1], settings)
    assert report.published == [D1.isoformat()]
    assert {t["turn_id"] for t in late} <= _published_turns(engine, D1)
    assert job.stale_days(engine, [D1]) == []


def test_a_turn_reloaded_onto_another_day_makes_both_days_stale_and_counts_once(engine):
    for day in (D1, D2):
        W.load_turns(engine, orbit_warehouse_turns(day.isoformat()))
    settings = orbit_settings()
    job.backfill(engine, [D1, D2], settings)
    moved = orbit_warehouse_turns(D1.isoformat())[0]
    assert _day_of(engine, moved["turn_id"]) == [D1]

    report = W.load_turns_report(engine, [dict(moved, answered_at=f"{D2}T09:00:00Z")])
    assert report.replaced == [{"turn_id": moved["turn_id"], "previous_answered_at": f"{D1}T10:00:00+00:00",
                                "answered_at": f"{D2}T09:00:00+00:00"}]
    assert [d.day for d in job.stale_days(engine, [D1, D2])] == [D1, D2]
    stale = {d.day: (d.late_turns, d.moved_turns) for d in job.stale_days(engine, [D1, D2])}
    assert stale == {D1: (0, 1), D2: (1, 0)}  # the day it left still counts it; the day it joined lacks it
    (d1,) = job.stale_days(engine, [D1])
    assert d1.as_dict()["moved_turns"] == 1 and d1.as_dict()["stale"] is True
    assert "1 turn(s) it counted moved to another day since" in d1.late_inputs()

    report = job.backfill(engine, [D1, D2], settings)
    assert report.published == [D1.isoformat(), D2.isoformat()]
    assert _day_of(engine, moved["turn_id"]) == [D2]  # counted once, on its new day
    assert job.stale_days(engine, [D1, D2]) == []


def test_a_reload_within_the_day_is_no_move(engine):
    W.load_turns(engine, orbit_warehouse_turns(D1.isoformat()))
    job.backfill(engine, [D1], orbit_settings())
    turn = orbit_warehouse_turns(D1.isoformat())[0]
    W.load_turns(engine, [dict(turn, answered_at=f"{D1}T18:00:00Z")])
    assert [(d.late_turns, d.moved_turns) for d in job.stale_days(engine, [D1])] == [(1, 0)]


def test_every_run_records_the_load_batch_it_began_after(engine):
    """The ledger the rule rests on: one `source_loads` row per committed batch, ids growing, the
    run's mark the highest id committed when it opened."""
    first = orbit_warehouse_turns(D1.isoformat())
    W.load_turns(engine, first)
    W.load_turns(engine, _late_turns(D1, 5))
    with engine.connect() as conn:
        batches = conn.execute(sa.select(T.source_loads.c.load_id, T.source_loads.c.kind,
                                         T.source_loads.c.row_count).order_by(T.source_loads.c.load_id)).all()
        ids = set(conn.execute(sa.select(T.source_turns.c.load_id)).scalars())
    assert [(kind, n) for _, kind, n in batches] == [("turns", len(first)), ("turns", 5)]
    assert batches[0][0] < batches[1][0] and ids == {batches[0][0], batches[1][0]}
    job.backfill(engine, [D1], orbit_settings())
    (day,) = published_days(engine, [D1]).values()
    assert day.source_load_id == batches[1][0] and day.as_dict()["run_source_load_id"] == batches[1][0]


def test_an_older_warehouse_gains_the_ledger_on_init_and_its_published_days_stay_right(engine):
    """A warehouse of an older release: no `source_loads` / `source_turn_moves`, no `load_id`, no
    `runs.source_load_id`. `init-warehouse` adds them; a day its older run published is stale only
    when something is loaded after (every ledger batch comes after such a run), and rows another
    loader wrote (no `load_id`) still count by `loaded_at`."""
    W.load_turns(engine, orbit_warehouse_turns(D1.isoformat()))
    settings = orbit_settings()
    job.backfill(engine, [D1], settings)
    with engine.begin() as conn:  # what the older release left: no ledger, no marks
        conn.execute(T.runs.update().values(source_load_id=None))
        conn.execute(T.source_turns.update().values(load_id=None))
        for table in (T.source_turn_moves, T.source_loads):
            conn.exec_driver_sql(f"DROP TABLE {table.name}")
        for table, column in (("source_turns", "load_id"), ("reader_events", "load_id"), ("runs", "source_load_id")):
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")
    W.init_warehouse(engine)
    inspector = sa.inspect(engine)
    assert {"source_loads", "source_turn_moves"} <= set(inspector.get_table_names())
    for table, column in (("source_turns", "load_id"), ("reader_events", "load_id"), ("runs", "source_load_id")):
        assert column in {c["name"] for c in inspector.get_columns(table)}
    assert job.stale_days(engine, [D1]) == []  # nothing new since the older run

    W.load_turns(engine, _late_turns(D1, 1))
    assert [(d.late_turns, d.source_load_id) for d in job.stale_days(engine, [D1])] == [(1, None)]
    job.backfill(engine, [D1], settings)
    assert job.stale_days(engine, [D1]) == []

    other_loader = dict(W.source_rows(_late_turns(D1, 2)[1])[0], loaded_at=dt.datetime.now(dt.UTC))
    with engine.begin() as conn:  # a loader of your own: its clock, no load batch
        conn.execute(T.source_turns.insert(), [other_loader])
    assert [d.late_turns for d in job.stale_days(engine, [D1])] == [1]


def test_two_concurrent_loads_of_the_same_turns_both_succeed(engine, tmp_path):
    """Two real `load-turns` processes started together on one file (several batches each): load
    batches are serialised, so neither fails on a duplicate key and every turn is stored once."""
    import json
    import os
    import subprocess
    import sys

    n = 4000
    turn = orbit_warehouse_turns(D1.isoformat())[0]
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join(json.dumps(dict(turn, turn_id=f"t-{i}", conversation_id=f"c-{i}")) for i in range(n)))
    files = [(tmp_path / f"out{k}.json", tmp_path / f"err{k}.txt") for k in range(2)]
    procs = [subprocess.Popen([sys.executable, "-m", "citecheck", "load-turns", "--file", str(path)],
                              env=dict(os.environ), stdout=out.open("w"), stderr=err.open("w")) for out, err in files]
    assert [p.wait(timeout=600) for p in procs] == [0, 0], [err.read_text()[-2000:] for _, err in files]
    assert [json.loads(out.read_text())["loaded"] for out, _ in files] == [n, n]
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(T.source_turns)).scalar_one() == n
        assert conn.execute(sa.select(sa.func.count(sa.distinct(T.source_turns.c.load_id)))).scalar_one() >= 4


def test_source_tables_of_your_own_schema_gain_the_load_columns_on_init(pg_warehouse_url):
    """`[warehouse] source_schema`: the source tables an older release had you create there gain
    `load_id` on `init-warehouse` (the output schema is not where they are)."""
    names = WarehouseNames(schema="out", source_schema="logs")
    admin = sa.create_engine(pg_warehouse_url)
    old = sa.MetaData(schema="logs")
    with admin.begin() as conn:
        conn.exec_driver_sql("CREATE SCHEMA logs")
        for table in (T.source_turns, T.source_passages, T.reader_events):
            sa.Table(table.name, old, *[sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable)
                                        for c in table.columns if c.name != "load_id"])
        old.create_all(conn)
    engine = W.make_engine(pg_warehouse_url, names)
    W.init_warehouse(engine)
    inspector = sa.inspect(admin)
    assert "load_id" in {c["name"] for c in inspector.get_columns("source_turns", schema="logs")}
    assert "load_id" in {c["name"] for c in inspector.get_columns("reader_events", schema="logs")}
    assert not inspector.has_table("source_turns", schema="out")
    W.load_turns(engine, orbit_warehouse_turns(D1.isoformat()))
    job.backfill(engine, [D1], orbit_settings())
    W.load_turns(engine, _late_turns(D1, 1))
    assert [d.late_turns for d in job.stale_days(engine, [D1])] == [1]
    engine.dispose()
    admin.dispose()
