"""What runs that stopped without finishing leave behind, closed (`citecheck gc`, `runs --clean`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Engine


def clean_debris(engine: Engine, days: Sequence[dt.date] | None, *, by: str = "citecheck gc") -> dict[str, Any]:
    """Close the debris of runs that no longer hold their day (abandoned, staging removed) on the
    given days (default: every day with an open run or staged rows), plus orphaned staging.

    Returns `abandoned` (ISO day → run ids closed), `orphaned_staged_rows` (rows removed) and
    `busy` ((day, run id) of the live runs left alone)."""
    from citecheck.warehouse import locks, runs

    closed: dict[str, list[str]] = {}
    busy = []
    for day in days if days is not None else runs.open_run_days(engine):
        with engine.connect() as conn:
            holder = locks.holder(conn, day)
        if holder is not None and not locks.is_stale(holder):
            busy.append((day, holder.run_id))  # a live run: its day is left alone
            keep = holder.run_id
        else:
            keep = None
            if holder is not None:
                locks.release(engine, day, holder.run_id)
        if ids := runs.close_open_runs(engine, day, keep=keep, status="abandoned",
                                       reason=f"abandoned: stopped without finishing; closed by {by}"):
            closed[day.isoformat()] = ids
    return {"abandoned": closed, "orphaned_staged_rows": runs.orphan_staging(engine), "busy": busy}
