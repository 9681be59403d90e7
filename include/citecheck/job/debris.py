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
    import uuid

    from citecheck.warehouse import locks, runs

    cleaner = f"{by} {uuid.uuid4().hex[:8]}"  # holds each day while it closes the day's debris
    reason = f"abandoned: stopped without finishing; closed by {by}"
    closed: dict[str, list[str]] = {}
    busy = []
    for day in days if days is not None else runs.open_run_days(engine):
        # the day taken as any run takes it: only when free or stale, compared and set, so a
        # holder that renews its lease meanwhile (a paused process that woke up) keeps it
        taken = locks.take(engine, day, cleaner, process=True)
        if isinstance(taken, locks.Holder):
            busy.append((day, taken.run_id))  # a live run: its day and its rows are left alone
            ids = runs.close_open_runs(engine, day, keep=taken.run_id, status="abandoned", reason=reason)
        else:
            try:
                ids = runs.close_open_runs(engine, day, keep=cleaner, generation=taken, status="abandoned",
                                           reason=reason)
            finally:
                locks.release(engine, day, cleaner)
        if ids:
            closed[day.isoformat()] = ids
    return {"abandoned": closed, "orphaned_staged_rows": runs.orphan_staging(engine), "busy": busy}
