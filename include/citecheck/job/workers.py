"""`--workers N`: a day's shards, or a backfill's days, in N processes on one machine.

A worker process gets what a step needs as plain values (the warehouse URL and schemas, the day,
the run id, the settings) and opens its own engine; a step function is named, not sent. The day
locks are as they are: the parent process takes a day (`open_run`) and its workers renew that
lock with the run's fencing token like any step; a backfill's day in a worker takes its own day.
Processes are spawned (not forked), so no connection or thread of the parent is shared.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine

from citecheck.job.settings import JobSettings


@dataclass(frozen=True)
class Warehouse:
    """An engine as plain values a worker process rebuilds it from."""

    url: str
    names: Any

    @classmethod
    def of(cls, engine: Engine) -> Warehouse:
        from citecheck.warehouse.engine import engine_names

        return cls(engine.url.render_as_string(hide_password=False), engine_names(engine))

    def engine(self) -> Engine:
        from citecheck.warehouse.engine import make_engine

        return make_engine(self.url, self.names)


def _pool(workers: int) -> ProcessPoolExecutor:
    import multiprocessing

    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def _shard_step(warehouse: Warehouse, day: dt.date, run_id: str, settings: JobSettings, api_key: str | None,
                name: str, shard: int) -> Any:
    """In a worker: one per-shard step (`steps.SHARD_STEPS`) of the run, on the worker's own engine."""
    from citecheck.job import steps

    if name not in steps.SHARD_STEPS:
        raise ValueError(f"{name!r} is not a per-shard step")
    engine = warehouse.engine()
    try:
        run = steps.DayRun(engine, day, run_id, settings, api_key, process_lock=True)
        return getattr(steps, name)(run, shard)
    finally:
        engine.dispose()


@contextmanager
def shards_in_processes(workers: int) -> Iterator[Callable[..., list[Any]]]:
    """An `each_shard` for `steps.run_steps` that runs a per-shard step's shards in `workers`
    processes (one pool for the whole day); the step is still one `call`, so a bench or the CLI
    sees it once, and its results come back in shard order."""
    with _pool(workers) as pool:
        def each_shard(run: Any, call: Callable[..., Any], name: str, _step: Any, shards: Sequence[int]) -> list[Any]:
            warehouse = Warehouse.of(run.engine)

            def in_pool(run: Any, shards: Sequence[int]) -> list[Any]:
                futures = [pool.submit(_shard_step, warehouse, run.day, run.run_id, run.settings,
                                       run.anthropic_api_key, name, shard) for shard in shards]
                return [f.result() for f in futures]

            return call(name, in_pool, run, shards)

        yield each_shard


def _run_day(warehouse: Warehouse, day: dt.date, settings: JobSettings) -> tuple[str, Any]:
    """In a worker: every step of one day (`run_day`, its shards one after another); ("published",
    run id), ("failed_validation", the message), ("locked" or "failed", the error)."""
    from citecheck.job import DayLocked, ValidationFailed, run_day

    engine = warehouse.engine()
    try:
        return "published", run_day(engine, day, settings)["run_id"]
    except ValidationFailed as exc:
        return "failed_validation", str(exc)
    except DayLocked as exc:
        return "locked", exc
    except Exception as exc:  # reported with the day; the backfill goes on
        return "failed", RuntimeError(f"{type(exc).__name__}: {exc}")
    finally:
        engine.dispose()


def days_in_processes(engine: Engine, days: Sequence[dt.date], settings: JobSettings, workers: int
                      ) -> Iterator[tuple[dt.date, str, Any]]:
    """Run the days in `workers` processes, a day per process at a time: (day, outcome, run id,
    message or error) as each day ends."""
    warehouse = Warehouse.of(engine)
    with _pool(workers) as pool:
        futures = {pool.submit(_run_day, warehouse, day, settings): day for day in days}
        for future in as_completed(futures):
            outcome, detail = future.result()
            yield futures[future], outcome, detail
