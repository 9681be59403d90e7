"""The `alerts` table's writer: the monitor step's alerts of a day replace that day's, in one
transaction (reads are `citecheck.warehouse.read_model.alerts_between`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy.engine import Engine

from citecheck.warehouse import tables as T
from citecheck.warehouse.locks import fenced
from citecheck.warehouse.read_model import ALERT_COLUMNS


def replace_alerts(engine: Engine, day: dt.date, run_id: str, alerts: Iterable[Mapping[str, Any]]) -> int:
    """Replace the day's alerts with these, in one transaction (a rerun of a day replaces them),
    fenced: a run that lost its day writes none (`locks.DayLocked`); the number written."""
    now = dt.datetime.now(dt.UTC)
    rows = [{**{k: a[k] for k in ALERT_COLUMNS if k in a}, "day": day, "run_id": run_id, "created_at": now}
            for a in alerts]
    with fenced(engine, run_id) as conn:
        conn.execute(T.alerts.delete().where(T.alerts.c.day == day))
        if rows:
            conn.execute(T.alerts.insert(), rows)
    return len(rows)
