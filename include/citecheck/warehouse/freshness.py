"""Which published days are stale: inputs loaded after the run that published the day began.

A day's published rows come from one run (`daily_metrics.run_id`); turns of that day
(`source_turns.loaded_at`) or reader events of its turns (`reader_events.loaded_at`) loaded after
the run's `started_at` are input the published day has not seen (late-logged turns, reports
filed the next morning). `backfill` and the restate DAG rerun such days.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.warehouse import tables as T
from citecheck.warehouse.read_model import published_config_hash, published_run
from citecheck.warehouse.source import day_bounds


@dataclass(frozen=True)
class PublishedDay:
    """A published day, its run, and what was loaded for it after that run began."""

    day: dt.date
    run_id: str
    config_hash: str
    started_at: dt.datetime | None
    late_turns: int
    late_events: int

    @property
    def stale(self) -> bool:
        return bool(self.late_turns or self.late_events)

    def as_dict(self) -> dict[str, Any]:
        return {"day": self.day.isoformat(), "run_id": self.run_id, "config_hash": self.config_hash,
                "run_started_at": self.started_at.isoformat() if self.started_at else None,
                "late_turns": self.late_turns, "late_events": self.late_events, "stale": self.stale}


def published_days(engine: Engine, days: Iterable[dt.date], timezone: str = "UTC") -> dict[dt.date, PublishedDay]:
    """day → `PublishedDay` for each of the given days that is published (others are absent);
    the published run is `published.published_run`'s."""
    out: dict[dt.date, PublishedDay] = {}
    for day in sorted(set(days)):
        run = published_run(engine, day)
        if run is None:
            continue
        config_hash = run["config_hash"] or published_config_hash(engine, day) or ""
        with engine.connect() as conn:
            turns, events = _late_counts(conn, day, timezone, run["started_at"])
        out[day] = PublishedDay(day, run["run_id"], config_hash, run["started_at"], turns, events)
    return out


def _late_counts(conn: Connection, day: dt.date, timezone: str, since: dt.datetime | None) -> tuple[int, int]:
    """(turns, reader events) of the day loaded after `since`; a run without a start time (an
    older ledger) counts nothing as late."""
    if since is None:
        return 0, 0
    start, end = day_bounds(day, timezone)
    t, e = T.source_turns.c, T.reader_events.c
    on_day = sa.and_(t.answered_at >= start, t.answered_at < end)
    turns = conn.execute(sa.select(sa.func.count()).where(on_day, t.loaded_at > since)).scalar_one()
    events = conn.execute(sa.select(sa.func.count()).select_from(
        T.reader_events.join(T.source_turns, e.turn_id == t.turn_id)).where(on_day, e.loaded_at > since)
    ).scalar_one()
    return int(turns), int(events)
