"""Publishing a day: its staged rows replace the published day in one transaction (reads of what
is published are `citecheck.warehouse.read_model`'s)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.warehouse import locks
from citecheck.warehouse import tables as T
from citecheck.warehouse.read_model import published_row_counts


def publish_day(engine: Engine, day: dt.date, run_id: str, generation: int | None) -> dict[str, int]:
    """Replace the day's rows in every output table with this run's staged rows, in ONE
    transaction: readers see the old version or the new one, never a mix.

    Inside it, the run must still own the day: its lock with the generation it took (the fencing
    token), its ledger row `validated` (or `published`: a retry), and its staging complete (as
    many staged turns as its validation counted); else `DayLocked` and nothing changes."""
    with engine.begin() as conn:
        locks.fence(conn, run_id, day=day, generation=generation)  # a run that lost its day publishes nothing
        _assert_publishable(conn, day, run_id)
        for published, staged_table in T.OUTPUT_TABLES.values():
            conn.execute(published.delete().where(published.c.day == day))
            cols = [c.name for c in published.columns]
            src = sa.select(*[_staged_column(staged_table, c, run_id, day) for c in cols]).where(
                staged_table.c.run_id == run_id)
            conn.execute(published.insert().from_select(cols, src))
        conn.execute(T.skipped_turns.delete().where(T.skipped_turns.c.day == day))
        run = conn.execute(sa.select(T.runs.c.config_hash, T.runs.c.judge_versions).where(
            T.runs.c.run_id == run_id)).one()
        skipped_cols = ["day", "turn_id", "reason", "run_id", "config_hash", "judge_versions"]
        conn.execute(T.skipped_turns.insert().from_select(skipped_cols, sa.select(
            sa.literal(day, sa.Date), T.stage_skipped.c.turn_id, T.stage_skipped.c.reason,
            sa.literal(run_id), sa.literal(run.config_hash), sa.literal(run.judge_versions),
        ).where(T.stage_skipped.c.run_id == run_id)))
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id, T.runs.c.status.in_(
            ("validated", "published"))).values(status="published", completed_steps=[]))
        return published_row_counts(conn, day)


def _assert_publishable(conn: Connection, day: dt.date, run_id: str) -> None:
    """The run's ledger row is `validated` (or `published`) for this day and its staged turns are
    all there: what a run that was stopped while another took its day and removed its staging is not."""
    run = conn.execute(sa.select(T.runs.c.status, T.runs.c.day, T.runs.c.turns_read).where(
        T.runs.c.run_id == run_id)).first()
    if run is None or run.day != day or run.status not in ("validated", "published"):
        status = "not in the ledger" if run is None else f"{run.status}, not validated"
        raise locks.DayLocked(day, run_id, None, reason=f"is {status}")
    staged = sum(conn.execute(sa.select(sa.func.count()).select_from(t).where(t.c.run_id == run_id)).scalar_one()
                 for t in (T.stage_turns, T.stage_skipped))
    if staged != (run.turns_read or 0):
        raise locks.DayLocked(day, run_id, None, reason=(
            f"has {staged} staged turn(s) where its validation counted {run.turns_read} (its staging was removed "
            "or is incomplete)"))


def _staged_column(staged_table: sa.Table, name: str, run_id: str, day: dt.date) -> Any:
    if name in staged_table.c:
        return staged_table.c[name]
    if name in ("config_hash", "judge_versions"):
        return sa.select(T.runs.c[name]).where(T.runs.c.run_id == run_id).scalar_subquery()
    raise KeyError(name)
