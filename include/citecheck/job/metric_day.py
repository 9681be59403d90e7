"""Which metric day a run of the daily DAG scores: one rule for scheduled, backfill and manual runs.

1. The `day` param, when given: `airflow dags trigger citation_metrics_daily --conf '{"day":
   "2026-11-25"}'`, or the `day` field of the UI's trigger form.
2. Else the start of the run's data interval: a scheduled or backfill run's own day (its logical
   date); for a manual run Airflow infers the interval from when it was triggered, so it is the
   day before.

One trap is refused instead of guessed: a manual run whose logical date is a midnight of another
day (`airflow dags trigger --logical-date 2026-11-25T00:00:00+00:00`). Its data interval is still
inferred from "now", so it would silently score another day than the one named; it fails with the
command that does what was meant. (The UI's trigger form fills in the current time, never a
midnight, so a plain UI trigger scores yesterday.) Dates are read in the config's timezone, as
the job reads `answered_at`.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo

ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


class AmbiguousDay(ValueError):
    """The run's `day` param is not a date, or the run names one day and would score another."""


def metric_day(requested: Any, data_interval_start: dt.datetime | None, *, timezone: str = "UTC",
               manual: bool = False, logical_date: dt.datetime | None = None) -> dt.date:
    """The day the run scores, by the rule above; `AmbiguousDay` with a readable reason if none."""
    zone = ZoneInfo(timezone)
    if requested not in (None, ""):
        return _parse_day(requested)
    if data_interval_start is None:
        raise AmbiguousDay("the run has neither a `day` param nor a data interval: no day to score")
    day = data_interval_start.astimezone(zone).date()
    if manual and logical_date is not None:
        local = logical_date.astimezone(zone)
        if local.time() == dt.time(0) and local.date() != day:
            raise AmbiguousDay(
                f"this manual run's logical date {logical_date.isoformat()} names day {local.date()}, but Airflow "
                f"infers a manual run's data interval from when it is triggered (day {day}); nothing was scored. "
                f"Run day {local.date()} with: airflow dags trigger citation_metrics_daily "
                f"--conf '{{\"day\": \"{local.date()}\"}}'")
    return day


def _parse_day(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        raise AmbiguousDay(f"the `day` param must be a date (YYYY-MM-DD), got the timestamp {value.isoformat()}")
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    try:
        if not ISO_DAY.fullmatch(text):
            raise ValueError(text)
        return dt.date.fromisoformat(text)
    except ValueError:
        raise AmbiguousDay(f"the `day` param must be a date (YYYY-MM-DD), got {value!r}") from None


__all__ = ["AmbiguousDay", "metric_day"]
