"""The daily HTML report (`citecheck report`, the DAG's report task, the Airflow plugin): one
self-contained file, charts by Vega-Altair with the Vega runtime inlined, texts autoescaped."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy.engine import Engine

from citecheck.core.config import Config, ConfigError, layer_section, register_section
from citecheck.core.metrics.display import format_value
from citecheck.report.data import ReportError, gather

__all__ = [
    "DEFAULT_TREND_DAYS",
    "ReportError",
    "build_report",
    "configured_trend_days",
    "format_value",
    "write_report",
]

DEFAULT_TREND_DAYS = 28
register_section("report", ("days",))


def configured_trend_days(config: Config) -> int:
    """Days of history the job's report charts: `[report] days` of the config (default 28)."""
    section = layer_section(config, "report")
    days = section.get("days", DEFAULT_TREND_DAYS)
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ConfigError(f"config: report.days must be a whole number of at least 1 (got {days!r})")
    return days


def build_report(engine: Engine, day: dt.date, trend_days: int = DEFAULT_TREND_DAYS) -> str:
    """The report of a published day as HTML; ReportError when the day has no published metrics."""
    from citecheck.report.render import render

    return render(gather(engine, day, trend_days))


def write_report(engine: Engine, day: dt.date, out: str | Path, trend_days: int = DEFAULT_TREND_DAYS) -> Path:
    """Write the day's report to `out` (its folder is created); the path written."""
    html = build_report(engine, day, trend_days)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
