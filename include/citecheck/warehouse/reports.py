"""The rendered daily report in the warehouse (`reports`, one row per day): what the Airflow
plugin serves. Storing a day replaces that day's report in one transaction (reads are
`citecheck.warehouse.read_model.report_html` and `report_index`)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.engine import Engine

from citecheck.warehouse import tables as T
from citecheck.warehouse.locks import fenced


def store_report(engine: Engine, day: dt.date, html: str, *, trend_days: int, run_id: str | None = None) -> None:
    """Replace the day's stored report with `html`; a run's (`run_id`) write is fenced: a run
    that lost its day stores nothing (`locks.DayLocked`)."""
    with fenced(engine, run_id) as conn:
        conn.execute(T.reports.delete().where(T.reports.c.day == day))
        conn.execute(T.reports.insert().values(day=day, run_id=run_id, trend_days=trend_days, html=html,
                                               rendered_at=dt.datetime.now(dt.UTC)))
