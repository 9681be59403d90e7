"""Which published days are stale: inputs the run that published the day may not have seen.

A day's published rows come from one run (`daily_metrics.run_id`). When it began reading, the run
recorded the highest committed batch of the loader's ledger (`runs.source_load_id`, see
`source.load.open_batch`); the day is stale when

- a turn of the day, or a reader event of one of its turns, was written by a later batch
  (`load_id` above the run's): late-logged turns, reports filed the next morning, a load that
  committed while the run was reading; or
- a turn the day counted was moved to another time by a later batch (`source_turn_moves` with its
  previous `answered_at` on the day): the published rows still count it there.

"A turn of the day" is the day as extract reads it: the turns `extract_turns.sql` selects
(`source.day_turn_ids`), so a view or another schema swapped in there is the day here too. The
moves ledger records the previous `answered_at` of a moved turn, compared with the day's bounds.

Batch ids are taken in commit order by the database, so neither the loader's clock nor clock skew
between hosts matters. Rows another loader wrote (no `load_id`) and runs of an older release (no
`source_load_id`) fall back to comparing `loaded_at` with the run's `started_at`.
`backfill` and the restate DAG rerun stale days.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.warehouse import tables as T
from citecheck.warehouse.read_model import published_config_hash, published_run
from citecheck.warehouse.source import day_bounds, day_turn_ids


@dataclass(frozen=True)
class PublishedDay:
    """A published day, its run, and what was loaded for it after that run began reading
    (`late_turns`, `late_events`) or moved away from it since (`moved_turns`)."""

    day: dt.date
    run_id: str
    config_hash: str
    started_at: dt.datetime | None
    late_turns: int
    late_events: int
    moved_turns: int = 0
    source_load_id: int | None = None

    @property
    def stale(self) -> bool:
        return bool(self.late_turns or self.late_events or self.moved_turns)

    def late_inputs(self) -> str:
        """What the published run has not seen, as a person reads it (`stale`, `backfill`, restate)."""
        text = f"{self.late_turns} turn(s) and {self.late_events} reader event(s) loaded after run {self.run_id} began"
        if self.moved_turns:
            text += f"; {self.moved_turns} turn(s) it counted moved to another day since"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"day": self.day.isoformat(), "run_id": self.run_id, "config_hash": self.config_hash,
                "run_started_at": self.started_at.isoformat() if self.started_at else None,
                "late_turns": self.late_turns, "late_events": self.late_events, "moved_turns": self.moved_turns,
                "run_source_load_id": self.source_load_id, "stale": self.stale}


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
            turns, events, moved = _late_counts(conn, day, timezone, run)
        out[day] = PublishedDay(day, run["run_id"], config_hash, run["started_at"], turns, events, moved,
                                run["source_load_id"])
    return out


def _late_counts(conn: Connection, day: dt.date, timezone: str, run: Mapping[str, Any]) -> tuple[int, int, int]:
    """(turns, reader events) of the day the run may not have seen, and turns moved off the day
    since it began reading; a run without a start time or load mark (an older ledger) counts
    nothing."""
    mark, since = run["source_load_id"], run["started_at"]
    if mark is None and since is None:
        return 0, 0, 0
    start, end = day_bounds(day, timezone)
    t, e, m = T.source_turns.c, T.reader_events.c, T.source_turn_moves.c

    def later(table: Any) -> Any:
        by_clock = table.loaded_at > since if since is not None else sa.false()
        if mark is None:  # a run of an older release: every batch of the ledger came after it
            return sa.or_(table.load_id.is_not(None), by_clock)
        return sa.or_(table.load_id > mark, sa.and_(table.load_id.is_(None), by_clock))

    day_turns = day_turn_ids(conn, day, timezone)  # the day as extract reads it (`extract_turns.sql`)
    turns = conn.execute(sa.select(sa.func.count()).where(t.turn_id.in_(day_turns), later(t))).scalar_one()
    events = conn.execute(sa.select(sa.func.count()).where(e.turn_id.in_(day_turns), later(e))).scalar_one()
    moved_since = m.load_id > mark if mark is not None else sa.true()
    moved = conn.execute(sa.select(sa.func.count(sa.distinct(m.turn_id))).where(
        m.left_answered_at >= start, m.left_answered_at < end, sa.or_(m.answered_at < start, m.answered_at >= end),
        moved_since)).scalar_one()
    return int(turns), int(events), int(moved)
