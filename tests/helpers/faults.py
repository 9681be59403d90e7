"""Fault injection for the crash-safety tests: warehouse connections dropped at a chosen
statement, the DAG's steps run task by task with Airflow-like retries, and a publish child
process that holds its transaction open so a test can SIGKILL it mid-publish.

Run as a script it is that child: `python tests/faults.py URL DAY RUN_ID`, holding after the
first statement that starts with $CITECHECK_FAULT_HOLD_AFTER, once it wrote $CITECHECK_FAULT_MARKER.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

VOLATILE = {"run_id", "computed_at"}  # what legitimately differs between two runs of the same data


def terminate_backends(url: str) -> list[int]:
    """Kill every other client backend of the warehouse database, waiting until each is gone.

    The call sits in the select list, evaluated only for the filtered rows: in the WHERE clause
    the planner may run it before the database filter, on other databases' sessions.
    """
    admin = sa.create_engine(url, poolclass=sa.pool.NullPool, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT pid, pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND backend_type = 'client backend'")).all()
            return [pid for pid, ended in rows if ended]
    finally:
        admin.dispose()


@dataclass
class DropConnection:
    """On the `nth` statement of `step` matching `pattern` (an executed statement or a bulk
    `COPY`; or at that step's `nth` commit when `pattern` is None), terminate the warehouse's
    backends, then let the statement run into the dead connection: the job sees what a warehouse
    restart or a network cut gives it."""

    step: str
    pattern: str | None
    nth: int = 1
    seen: int = 0
    killed: list[int] = field(default_factory=list)

    @property
    def fired(self) -> bool:
        return bool(self.killed)

    def attach(self, engine: Engine, url: str) -> None:
        def fire() -> None:
            self.seen += 1
            if self.seen == self.nth and not self.fired:
                self.killed = terminate_backends(url) or [-1]

        def before_execute(_conn, _cursor, statement, _params, _context, _many):  # type: ignore[no-untyped-def]
            if self.pattern is not None and re.match(self.pattern, statement):
                fire()

        def before_commit(_conn):  # type: ignore[no-untyped-def]
            if self.pattern is None:
                fire()

        def on_connect(dbapi_connection, _record):  # type: ignore[no-untyped-def]
            # the bulk path (`COPY … FROM STDIN`) goes to psycopg directly, past SQLAlchemy's events
            import psycopg

            pattern = self.pattern

            class Cursor(psycopg.Cursor):  # type: ignore[type-arg]
                def copy(self, statement, *args, **kwargs):  # type: ignore[no-untyped-def]
                    if pattern is not None and re.match(pattern, str(statement)):
                        fire()
                    return super().copy(statement, *args, **kwargs)

            dbapi_connection.cursor_factory = Cursor

        sa.event.listen(engine, "before_cursor_execute", before_execute)
        sa.event.listen(engine, "commit", before_commit)
        sa.event.listen(engine, "connect", on_connect)


class _Stopped(Exception):
    """Raised by the step hook past `until`: the rest of the day is not run."""


def run_steps(url: str, day: dt.date, settings: Any, run_id: str, *, fault: DropConnection | None = None,
              until: str = "record_run", after_failure: Callable[[str, Exception], None] | None = None,
              retry_failed: bool = True) -> list[str]:
    """The job's step sequence (`job.run_steps`), each step on a fresh engine as in its own Airflow
    process; a step that fails with a database error is retried once, same run id, on a new
    engine. Returns the failed steps; `after_failure` inspects the warehouse between a failure
    and its retry. `retry_failed=False`: a failed step ends the day there (the process was cut off)."""
    from dataclasses import replace

    from citecheck import job
    from citecheck import warehouse as W

    failures: list[str] = []
    last = job.STEP_NAMES.index(until)

    def call(name: str, step: Callable[..., Any], run: Any, *args: Any) -> Any:
        if job.STEP_NAMES.index(name) > last:
            raise _Stopped(name)
        engine = W.make_engine(url)
        if fault is not None and fault.step == name and not fault.fired:
            fault.attach(engine, url)
        try:
            return step(replace(run, engine=engine), *args)
        except sa.exc.OperationalError as exc:
            failures.append(name)
            if after_failure is not None:
                after_failure(name, exc)
            if not retry_failed:
                raise _Stopped(name) from exc
        finally:
            engine.dispose()
        retry = W.make_engine(url)
        try:
            return step(replace(run, engine=retry), *args)
        finally:
            retry.dispose()

    with contextlib.suppress(_Stopped):  # `until` ends the day early
        job.run_steps(job.DayRun(None, day, run_id, settings), call)  # type: ignore[arg-type]
    return failures


def published_then_late(url: str, day: dt.date) -> tuple[Engine, str]:
    """A warehouse where the day is published (report and all) from its first Orbit turn only, then
    the late turns arrive in the source: (engine, the old run id)."""
    from citecheck import job
    from citecheck import warehouse as W
    from helpers import orbit_settings, orbit_warehouse_turns

    engine = W.make_engine(url)
    W.init_warehouse(engine)
    turns = orbit_warehouse_turns(day.isoformat())
    W.load_turns(engine, turns[:1])
    old = job.run_day(engine, day, orbit_settings())["run_id"]
    W.load_turns(engine, turns[1:])
    return engine, old


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 60.0) -> None:
    """Poll `predicate` until it is true; a test failure naming `what` after `timeout` seconds."""
    import pytest

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def output_tables() -> dict[str, sa.Table]:
    from citecheck.warehouse import tables as T

    return {**{name: final for name, (final, _stage) in T.OUTPUT_TABLES.items()}, "skipped_turns": T.skipped_turns}


def published_run_ids(engine: Engine, day: dt.date) -> dict[str, dict[str, int]]:
    """Per output table with rows of the day (a day without criteria has no decision rows), how
    many of them each run id holds."""
    out: dict[str, dict[str, int]] = {}
    with engine.connect() as conn:
        for name, table in output_tables().items():
            rows = conn.execute(sa.select(table.c.run_id, sa.func.count()).where(table.c.day == day)
                                .group_by(table.c.run_id)).all()
            if rows:
                out[name] = {run_id: n for run_id, n in rows}
    return out


def published_rows(engine: Engine, day: dt.date, *, keep_run_id: bool = False) -> dict[str, list[tuple]]:
    """The day's rows of every output table, sorted (without the run id unless asked)."""
    out = {}
    with engine.connect() as conn:
        for name, table in output_tables().items():
            cols = [c for c in table.columns if (keep_run_id and c.name == "run_id") or c.name not in VOLATILE]
            rows = conn.execute(sa.select(*cols).where(table.c.day == day)).all()
            out[name] = sorted(tuple(repr(v) for v in r) for r in rows)
    return out


def staged_rows(engine: Engine) -> int:
    from citecheck.warehouse import tables as T

    with engine.connect() as conn:
        return sum(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one() for t in T.STAGING_TABLES)


def run_status(engine: Engine, run_id: str) -> str | None:
    from citecheck.warehouse import tables as T

    with engine.connect() as conn:
        return conn.execute(sa.select(T.runs.c.status).where(T.runs.c.run_id == run_id)).scalar()


# --- the publish child ------------------------------------------------------------------------

def hold_after(engine: Engine, prefix: str, marker: Path) -> None:
    """After the first statement starting with `prefix`, say so in `marker` (with the backend
    pid on PostgreSQL) and block forever, inside whatever transaction is open."""

    def after_execute(conn, cursor, statement, _params, _context, _many):  # type: ignore[no-untyped-def]
        if statement.startswith(prefix):
            pid = ""
            if conn.dialect.name == "postgresql":
                pid = str(conn.connection.dbapi_connection.info.backend_pid)
            marker.write_text(f"held {pid}".strip())
            while True:
                time.sleep(60)

    sa.event.listen(engine, "after_cursor_execute", after_execute)


def child_publish(url: str, day: str, run_id: str) -> None:
    from citecheck import job
    from citecheck import warehouse as W

    engine = W.make_engine(url)
    hold_after(engine, os.environ["CITECHECK_FAULT_HOLD_AFTER"], Path(os.environ["CITECHECK_FAULT_MARKER"]))
    job.publish(job.DayRun(engine, dt.date.fromisoformat(day), run_id, job.JobSettings()))
    print("published without holding", file=sys.stderr)
    raise SystemExit(3)


if __name__ == "__main__":
    child_publish(*sys.argv[1:4])
