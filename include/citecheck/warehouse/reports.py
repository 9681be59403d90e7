"""The rendered daily report in the warehouse (`reports`, one row per day): what the Airflow
plugin serves. Storing a day replaces that day's report in one transaction."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck.warehouse import tables as T


def store_report(engine: Engine, day: dt.date, html: str, *, trend_days: int, run_id: str | None = None) -> None:
    """Replace the day's stored report with `html`."""
    with engine.begin() as conn:
        conn.execute(T.reports.delete().where(T.reports.c.day == day))
        conn.execute(T.reports.insert().values(day=day, run_id=run_id, trend_days=trend_days, html=html,
                                               rendered_at=dt.datetime.now(dt.UTC)))


def report_html(engine: Engine, day: dt.date) -> str | None:
    """The stored report of a day, or None when none was rendered (or the warehouse has no
    `reports` table yet: the plugin reads a warehouse the job may not have initialised)."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(T.reports.name):
            return None
        return conn.execute(sa.select(T.reports.c.html).where(T.reports.c.day == day)).scalar()


def report_index(engine: Engine, limit: int = 366) -> list[dict]:
    """The stored reports, newest day first: day, run id, trend days and when each was rendered
    (none when the warehouse has no `reports` table yet)."""
    c = T.reports.c
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(T.reports.name):
            return []
        rows = conn.execute(sa.select(c.day, c.run_id, c.trend_days, c.rendered_at).order_by(c.day.desc())
                            .limit(limit)).mappings()
        return [dict(r) for r in rows]
