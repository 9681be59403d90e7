"""The daily job: settings, the steps of a day and the one sequence they run in, backfills.

- `settings`: `JobSettings` (what a run depends on; its hash goes with every output row),
  `settings_from_env`, `build_judge`
- `steps`: `DayRun`, the steps (extract → structural → judge_shard → escalate → aggregate →
  validate → publish → monitor → report → record_run) and `run_steps`, THE sequence; the DAG wires the same steps

No SQL lives here: storage is `citecheck.warehouse`'s, scoring `citecheck.core.pipeline`'s.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from citecheck.job.settings import (
    DEFAULT_JUDGE_SPEC,
    JobSettings,
    build_judge,
    settings_from_env,
)
from citecheck.job.steps import (
    STEP_NAMES,
    DayRun,
    ValidationFailed,
    aggregate,
    escalate,
    extract,
    judge_shard,
    merge_judge_stats,
    monitor,
    monitor_day,
    publish,
    publish_report,
    record_run,
    report,
    run_steps,
    structural,
    validate,
)
from citecheck.warehouse.published import day_metrics, published_config_hash

__all__ = [
    "DEFAULT_JUDGE_SPEC", "STEP_NAMES", "BackfillReport", "DayRun", "JobSettings", "ValidationFailed", "aggregate",
    "backfill", "build_judge", "day_metrics", "escalate", "extract", "judge_shard", "merge_judge_stats",
    "monitor", "monitor_day", "new_run_id", "publish", "publish_report", "published_config_hash", "record_run",
    "report", "run_day", "run_steps", "settings_from_env", "structural", "validate",
]


def new_run_id(day: dt.date) -> str:
    """A fresh run id for a day (the CLI's; Airflow runs use their DAG run id)."""
    return f"{day.isoformat()}-{uuid.uuid4().hex[:12]}"


def run_day(engine: Engine, day: dt.date, settings: JobSettings, run_id: str | None = None, *,
            anthropic_api_key: str | None = None) -> dict[str, Any]:
    """Every step for one day, in order (the CLI's `run` and `backfill`)."""
    return run_steps(DayRun(engine, day, run_id or new_run_id(day), settings, anthropic_api_key))


@dataclass
class BackfillReport:
    """What a backfill did, day by day (ISO dates)."""

    published: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)
    failed_validation: list[str] = field(default_factory=list)


def backfill(engine: Engine, days: Iterable[dt.date], settings: JobSettings, *, force: bool = False,
             on_failure: Callable[[dt.date, ValidationFailed], None] | None = None) -> BackfillReport:
    """Run each day that is not yet published with these settings (all of them with `force`);
    a day that fails validation is reported and the backfill goes on."""
    report = BackfillReport()
    for day in days:
        if not force and published_config_hash(engine, day) == settings.run_config_hash:
            report.up_to_date.append(day.isoformat())
            continue
        try:
            run_day(engine, day, settings)
        except ValidationFailed as exc:
            report.failed_validation.append(day.isoformat())
            if on_failure is not None:
                on_failure(day, exc)
            continue
        report.published.append(day.isoformat())
    return report
