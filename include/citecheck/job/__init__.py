"""The daily job: settings, the steps of a day and the one sequence they run in, backfills.

- `settings`: `JobSettings` (what a run depends on; its hash goes with every output row),
  `settings_from_env`, `build_judge`
- `steps`: `DayRun`, the steps (open_run → structural ×shards → split_claims → judge_shard ×shards →
  escalate → fold_shard ×shards → combine → validate → publish → monitor → report → record_run) and
  `run_steps`, THE sequence; the DAG wires the same steps

No SQL lives here: storage is `citecheck.warehouse`'s, scoring `citecheck.core.pipeline`'s.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from citecheck.job.debris import clean_debris
from citecheck.job.settings import (
    DEFAULT_JUDGE_SPEC,
    JobSettings,
    build_judge,
    settings_from_env,
)
from citecheck.job.steps import (
    SHARD_STEPS,
    STEP_NAMES,
    DayRun,
    ValidationFailed,
    combine,
    complete_published,
    escalate,
    fold_shard,
    judge_shard,
    merge_judge_stats,
    monitor,
    monitor_day,
    open_run,
    publish,
    publish_report,
    record_run,
    report,
    run_steps,
    split_claims,
    structural,
    validate,
)
from citecheck.warehouse.freshness import PublishedDay, published_days
from citecheck.warehouse.locks import DayLocked
from citecheck.warehouse.read_model import day_metrics, published_config_hash

__all__ = [
    "DEFAULT_JUDGE_SPEC",
    "SHARD_STEPS",
    "STEP_NAMES",
    "BackfillReport",
    "DayLocked",
    "DayOutcome",
    "DayRun",
    "JobSettings",
    "RunFailed",
    "ValidationFailed",
    "backfill",
    "build_judge",
    "clean_debris",
    "combine",
    "complete_day",
    "complete_published",
    "day_metrics",
    "escalate",
    "fold_shard",
    "judge_shard",
    "merge_judge_stats",
    "monitor",
    "monitor_day",
    "new_run_id",
    "open_run",
    "publish",
    "publish_report",
    "published_config_hash",
    "record_run",
    "report",
    "rerun_reason",
    "restate_window",
    "run_day",
    "run_steps",
    "settings_from_env",
    "split_claims",
    "stale_days",
    "structural",
    "validate",
]


def new_run_id(day: dt.date) -> str:
    """A fresh run id for a day (the CLI's; Airflow runs use their DAG run id)."""
    return f"{day.isoformat()}-{uuid.uuid4().hex[:12]}"


class RunFailed(RuntimeError):
    """A run stopped on a warehouse error: which step, which run, what to do (one line)."""

    def __init__(self, day: dt.date, run_id: str, step: str | None, cause: BaseException) -> None:
        self.day, self.run_id, self.step = day, run_id, step
        first = str(getattr(cause, "orig", None) or cause).strip().splitlines()[0][:300] if str(cause).strip() else (
            type(cause).__name__)
        super().__init__(
            f"day {day}: run {run_id} failed in {step or 'its start'} on a warehouse error ({first}); nothing "
            f"of it is published unless the publish committed. Check the warehouse is reachable "
            f"(CITECHECK_WAREHOUSE_URL), then rerun the day: the next run completes or cleans up this one")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as it reads (a `--workers` process raises it in the parent)."""
        return _run_failed, (self.day, self.run_id, self.step, str(self))


def _run_failed(day: dt.date, run_id: str, step: str | None, text: str) -> RunFailed:
    exc = RunFailed.__new__(RunFailed)
    RuntimeError.__init__(exc, text)
    exc.day, exc.run_id, exc.step = day, run_id, step
    return exc


def run_day(engine: Engine, day: dt.date, settings: JobSettings, run_id: str | None = None, *,
            anthropic_api_key: str | None = None, workers: int = 1) -> dict[str, Any]:
    """Every step for one day, in order (the CLI's `run` and `backfill`), as one process holding
    the day: `DayLocked` when another run holds it, `RunFailed` on a warehouse error (the run is
    closed as `failed` where the warehouse still answers, and the day freed). `workers` > 1: the
    per-shard steps run their shards in that many processes (`citecheck.job.workers`)."""
    import contextlib

    import sqlalchemy as sa

    from citecheck.job.workers import shards_in_processes

    run = DayRun(engine, day, run_id or new_run_id(day), settings, anthropic_api_key, process_lock=True)
    current: list[str] = []

    def call(name: str, step: Callable[..., Any], *args: Any) -> Any:
        current.append(name)
        return step(*args)

    try:
        with shards_in_processes(workers) if workers > 1 else contextlib.nullcontext() as each_shard:
            return run_steps(run, call, **({"each_shard": each_shard} if each_shard else {}))
    except DayLocked:
        raise
    except sa.exc.SQLAlchemyError as exc:
        failed = RunFailed(day, run.run_id, current[-1] if current else None, exc)
        _close(run, str(failed))
        raise failed from exc
    except BaseException as exc:
        _close(run, f"{type(exc).__name__}: {exc}")
        raise


def _close(run: DayRun, reason: str) -> None:
    """Best effort after a failed run: close its ledger row as `failed` (unless it published), drop
    its staging and free the day; a warehouse that does not answer leaves that to the next run."""
    import contextlib

    from citecheck.warehouse import locks, runs, staging

    with contextlib.suppress(Exception):
        if runs.run_status(run.engine, run.run_id) in runs.OPEN_STATUSES:
            runs.close_failed(run.engine, run.run_id, reason)
            staging.clean_staging(run.engine, run.run_id)
        locks.release(run.engine, run.day, run.run_id)


def complete_day(engine: Engine, day: dt.date, settings: JobSettings) -> list[str]:
    """For a day that is up to date: close what killed runs of the day left (`clean_debris`: open
    ledger rows become `abandoned`, their staging goes; a live run is left alone), then complete
    the steps after the publish commit its published run did not (a run cut off after its commit),
    as one process holding the day; the steps it ran."""
    from citecheck.warehouse import published_run_id

    clean_debris(engine, [day], by="a run of the day")
    run_id = published_run_id(engine, day)
    if run_id is None:
        return []
    return list(complete_published(DayRun(engine, day, run_id, settings, process_lock=True))["completed"])


@dataclass
class BackfillReport:
    """What a backfill did, day by day (ISO dates); `reasons`: day → why it ran or was skipped."""

    published: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)
    failed_validation: list[str] = field(default_factory=list)
    locked: list[str] = field(default_factory=list)  # days another run held: skipped, the backfill went on
    failed: list[str] = field(default_factory=list)  # days whose run failed (warehouse or unexpected error)
    errors: dict[str, BaseException] = field(default_factory=dict)  # a failed day → its error
    completed: dict[str, list[str]] = field(default_factory=dict)  # up-to-date days whose cut-off run was finished
    reasons: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DayOutcome:
    """What a backfill did with one day: `outcome` is "published" (it ran and published, as
    `run_id`), "failed_validation" (it ran; nothing of it was published), "locked" (another run
    held the day: not run), "failed" (its run failed: `error` says why) or "up_to_date" (it did not
    run; `run_id` is the run the day stays published with); `reason`: why it ran (`rerun_reason`)
    or why it did not."""

    day: dt.date
    outcome: str
    reason: str
    run_id: str | None
    error: str | None = None

    def line(self) -> str:
        """The outcome as one line a person reads."""
        if self.outcome == "published":
            return f"{self.day}  published by run {self.run_id} · ran because: {self.reason}"
        if self.outcome == "failed_validation":
            return f"{self.day}  failed validation, nothing of it published · ran because: {self.reason}"
        if self.outcome == "locked":
            return f"{self.day}  locked, not run: {self.error} · would have run because: {self.reason}"
        if self.outcome == "failed":
            return f"{self.day}  failed, nothing of it published unless its publish committed: {self.error}"
        return f"{self.day}  skipped: {self.reason}"


def rerun_reason(published_day: PublishedDay | None, config_hash: str, *, force: bool = False) -> str | None:
    """Why a day must be (re)published with a run of `config_hash`, or None when it is up to
    date: not published, published with another configuration, or stale (turns or reader events
    loaded after its published run began reading, turns it counted moved to another day)."""
    if force:
        return "forced"
    if published_day is None:
        return "not published yet"
    if published_day.config_hash != config_hash:
        return f"published with config {published_day.config_hash}, this run's is {config_hash}"
    if published_day.stale:
        return f"stale: {published_day.late_inputs()}"
    return None


def stale_days(engine: Engine, days: Iterable[dt.date], timezone: str = "UTC") -> list[PublishedDay]:
    """The published days among `days` whose inputs changed after their published run began."""
    return [p for p in published_days(engine, days, timezone).values() if p.stale]


def restate_window(last_day: dt.date, restate_days: int) -> list[dt.date]:
    """The `restate_days` days ending with `last_day` (oldest first): where the restate DAG looks."""
    if restate_days < 1:
        raise ValueError(f"restate_days must be at least 1, got {restate_days}")
    return [last_day - dt.timedelta(days=restate_days - 1 - i) for i in range(restate_days)]


def backfill(engine: Engine, days: Iterable[dt.date], settings: JobSettings, *, force: bool = False,
             on_failure: Callable[[dt.date, ValidationFailed], None] | None = None,
             on_day: Callable[[DayOutcome], None] | None = None, workers: int = 1) -> BackfillReport:
    """Run each day that is not published with these settings, or is stale (`rerun_reason`; all
    of them with `force`); a day that fails validation, that another run holds (`DayLocked`, after
    `lock_wait_s`) or whose run fails on any other error is reported and the backfill goes on to
    the next day. `on_day(DayOutcome)` hears what happened to each day as soon as it is decided.
    `workers` > 1: the days to run go in that many processes, a day to a process (as many days as
    workers or more), else one day after another with its shards in the processes."""
    report = BackfillReport()
    pending: list[tuple[dt.date, str]] = []
    for day in days:
        try:
            reason = _decide_day(engine, day, settings, report, force=force, on_day=on_day)
            if reason is None:
                continue
            if workers > 1:  # run below, in processes
                pending.append((day, reason))
                continue
            _record_day(report, day, reason, _run_one_day(engine, day, settings), on_failure, on_day)
        except Exception as exc:  # one day's failure is reported; the later days still run
            _record_day(report, day, report.reasons.get(day.isoformat(), ""), _failure(exc), on_failure, on_day)
    if len(pending) >= max(workers, 2):
        from citecheck.job.workers import days_in_processes

        reasons = dict(pending)
        for day, outcome, detail in days_in_processes(engine, [d for d, _ in pending], settings, workers):
            _record_day(report, day, reasons[day], (outcome, detail), on_failure, on_day)
    else:
        for day, reason in pending:
            try:
                done = _run_one_day(engine, day, settings, workers)
            except Exception as exc:
                done = _failure(exc)
            _record_day(report, day, reason, done, on_failure, on_day)
    return report


def _decide_day(engine: Engine, day: dt.date, settings: JobSettings, report: BackfillReport, *, force: bool,
                on_day: Callable[[DayOutcome], None] | None) -> str | None:
    """Why a backfill's day must run (recorded in `report.reasons`), or None for a day up to date
    (reported, and a run of it cut off after its publish commit completed)."""
    state = published_days(engine, [day], settings.config.timezone).get(day)
    reason = rerun_reason(state, settings.run_config_hash, force=force)
    if reason is None:
        reason = f"up to date: published by run {state.run_id} with config {state.config_hash}, " \
                 "nothing loaded since it began" if state else "up to date"
        if steps := complete_day(engine, day, settings):
            report.completed[day.isoformat()] = steps
            reason += f"; its run had stopped after the publish commit: completed {', '.join(steps)}"
        report.up_to_date.append(day.isoformat())
        report.reasons[day.isoformat()] = reason
        if on_day is not None:
            on_day(DayOutcome(day, "up_to_date", reason, state.run_id if state else None))
        return None
    report.reasons[day.isoformat()] = reason
    return reason


def _run_one_day(engine: Engine, day: dt.date, settings: JobSettings, workers: int = 1) -> tuple[str, Any]:
    """("published", run id) or ("failed_validation", the message) of one day's run."""
    try:
        return "published", run_day(engine, day, settings, workers=workers)["run_id"]
    except ValidationFailed as exc:
        return "failed_validation", str(exc)


def _failure(exc: BaseException) -> tuple[str, Any]:
    """A day's run that did not end in a publish or a validation failure: ("locked", the error)
    when another run held the day, else ("failed", the error)."""
    return ("locked" if isinstance(exc, DayLocked) else "failed"), exc


def _record_day(report: BackfillReport, day: dt.date, reason: str, done: tuple[str, Any],
                on_failure: Callable[[dt.date, ValidationFailed], None] | None,
                on_day: Callable[[DayOutcome], None] | None) -> None:
    """Record what a backfill's run of a day did (`_run_one_day`, `_failure`, a worker's outcome)."""
    outcome, detail = done
    iso = day.isoformat()
    if outcome == "published":
        report.published.append(iso)
        event = DayOutcome(day, "published", reason, detail)
    elif outcome == "failed_validation":
        report.failed_validation.append(iso)
        if on_failure is not None:
            on_failure(day, ValidationFailed(detail))
        event = DayOutcome(day, "failed_validation", reason, None)
    elif outcome == "locked":
        report.locked.append(iso)
        event = DayOutcome(day, "locked", reason, None, str(detail))
    else:
        report.failed.append(iso)
        error = detail if isinstance(detail, BaseException) else RuntimeError(str(detail))
        report.errors[iso] = error
        text = str(error) if isinstance(error, RunFailed) else f"{type(error).__name__}: {error}"
        event = DayOutcome(day, "failed", reason, None, text)
    if on_day is not None:
        on_day(event)
