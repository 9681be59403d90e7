"""Storage of the monitor step: the metric history it reads and the `alerts` table it writes.

`history_days` and `metric_rows` read published `daily_metrics`; `replace_alerts` replaces one
day's alerts in one transaction; `alerts_between` reads them back for the CLI, the notifier and
the report. (The monitor's counts go to the run ledger, `runs.record_monitor`.)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck.warehouse import tables as T

SeriesKey = tuple[str, str, str, str]  # (metric, slice_name, slice_value, averaging)
ALERT_COLUMNS = ("day", "metric", "slice_name", "slice_value", "averaging", "baseline", "value", "direction",
                 "size", "rule", "run_id", "created_at")


def history_days(engine: Engine, day: dt.date, limit: int) -> list[dt.date]:
    """The last `limit` published days before `day` (days with metric rows), oldest first."""
    m = T.daily_metrics.c
    with engine.connect() as conn:
        days = conn.execute(sa.select(m.day).where(m.day < day).group_by(m.day).order_by(m.day.desc()).limit(limit)
                            ).scalars().all()
    return sorted(days)


def metric_rows(engine: Engine, days: Sequence[dt.date], metrics: Sequence[str], averaging: Sequence[str]
                ) -> dict[dt.date, dict[SeriesKey, dict[str, Any]]]:
    """Published metric rows of the given days, metrics and averagings, by day then series key:
    numerator, denominator, value and the interval (`ci_low`, `ci_high`)."""
    m = T.daily_metrics.c
    fields = ("numerator", "denominator", "value", *T.METRIC_INTERVAL_COLUMNS)
    out: dict[dt.date, dict[SeriesKey, dict[str, Any]]] = {d: {} for d in days}
    if not days or not metrics:
        return out
    query = sa.select(m.day, m.metric, m.slice_name, m.slice_value, m.averaging, *(m[f] for f in fields)).where(
        m.day.in_(list(days)), m.metric.in_(list(metrics)), m.averaging.in_(list(averaging)))
    with engine.connect() as conn:
        for row in conn.execute(query).mappings():
            key = (row["metric"], row["slice_name"], row["slice_value"], row["averaging"])
            out[row["day"]][key] = {k: row[k] for k in fields}
    return out


def replace_alerts(engine: Engine, day: dt.date, run_id: str, alerts: Iterable[Mapping[str, Any]]) -> int:
    """Replace the day's alerts with these, in one transaction (a rerun of a day replaces them);
    the number written."""
    now = dt.datetime.now(dt.UTC)
    rows = [{**{k: a[k] for k in ALERT_COLUMNS if k in a}, "day": day, "run_id": run_id, "created_at": now}
            for a in alerts]
    with engine.begin() as conn:
        conn.execute(T.alerts.delete().where(T.alerts.c.day == day))
        if rows:
            conn.execute(T.alerts.insert(), rows)
    return len(rows)


def alerts_between(engine: Engine, day_from: dt.date, day_to: dt.date) -> list[dict[str, Any]]:
    """Alerts of the days from `day_from` to `day_to` (inclusive), by day, metric and slice;
    `day` as an ISO date, `created_at` as an ISO timestamp (JSON-ready)."""
    a = T.alerts.c
    query = sa.select(*[a[c] for c in ALERT_COLUMNS]).where(a.day >= day_from, a.day <= day_to).order_by(
        a.day, a.metric, a.slice_name, a.slice_value, a.averaging)
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
    for row in rows:
        row["day"] = row["day"].isoformat()
        row["created_at"] = row["created_at"].isoformat()
    return rows
