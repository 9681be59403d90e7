"""One run per day at a time: the per-day lock, a row of `day_locks` held by a run id.

A run takes the day's lock before it stages anything (the job's `extract`) and every later
step renews it (`hold`), so the holder's lease never runs out while it works; `record_run`
releases it, and the publish transaction checks it still holds it (`assert_held`), so a run
that lost its day never publishes. The row is the same on SQLite and PostgreSQL: taking it is
one conditional UPDATE or one INSERT on the day's primary key, atomic on both (the row lock
on PostgreSQL, the database write lock on SQLite).

A lock is free again when its holder's lease has run out (`expires_at`), or at once when the
holder was a process on this host (`citecheck run`, `backfill`: `pid` is set) and that process
is gone. A DAG run's tasks are separate processes, so its lock is a lease only (`pid` null)
that each task renews.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.warehouse import tables as T

DEFAULT_LEASE_S = 600.0


class DayLocked(RuntimeError):
    """Another run holds the day's lock (or took it from this run)."""

    def __init__(self, day: dt.date, run_id: str, holder: str | None, *, lost: bool = False,
                 waited_s: float = 0.0) -> None:
        self.day, self.run_id, self.holder, self.lost = day, run_id, holder, lost
        if lost:
            text = (f"day {day}: run {run_id} lost the day's lock to run {holder}; nothing more of it is "
                    f"published (rerun the day when {holder} has finished)")
        else:
            waited = f" after waiting {waited_s:g} s" if waited_s else ""
            text = (f"day {day} is locked by run {holder}{waited}; run {run_id} did not start (wait for it to "
                    f"finish, or pass --lock-wait SECONDS)")
        super().__init__(text)


@dataclass(frozen=True)
class Holder:
    """Who holds a day: the run id, where, and until when."""

    run_id: str
    host: str | None
    pid: int | None
    acquired_at: dt.datetime
    expires_at: dt.datetime


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale(holder: Holder, now: dt.datetime | None = None) -> bool:
    """Whether the holder no longer holds the day: its lease ran out, or it was a process on
    this host that is gone."""
    if holder.expires_at <= (now or _now()):
        return True
    return holder.pid is not None and holder.host == socket.gethostname() and not _process_alive(holder.pid)


def holder(conn: Connection, day: dt.date) -> Holder | None:
    """The day's lock row, stale or not; None when nobody took it."""
    c = T.day_locks.c
    row = conn.execute(sa.select(c.run_id, c.host, c.pid, c.acquired_at, c.expires_at).where(c.day == day)).first()
    return Holder(*row) if row else None


def try_acquire(engine: Engine, day: dt.date, run_id: str, *, lease_s: float = DEFAULT_LEASE_S,
                process: bool = False) -> Holder | None:
    """Take (or renew) the day's lock for `run_id`. None when it holds it now; else the live holder.

    `process`: this process holds it (its pid is recorded: a dead process frees the day at once)."""
    c = T.day_locks.c
    for _ in range(5):  # only a race between two takers of a free or stale lock loops
        now = _now()
        values: dict[str, Any] = {"run_id": run_id, "expires_at": now + dt.timedelta(seconds=lease_s)}
        taken = {"host": socket.gethostname(), "pid": os.getpid() if process else None, "acquired_at": now}
        with engine.begin() as conn:
            current = holder(conn, day)
            if current is None:
                try:
                    with conn.begin_nested():
                        conn.execute(T.day_locks.insert().values(day=day, **values, **taken))
                    return None
                except sa.exc.IntegrityError:
                    continue
            if current.run_id != run_id and not is_stale(current, now):
                return current
            if current.run_id != run_id:  # a stale holder: taken over
                values.update(taken)
            elif process:
                values.update(host=taken["host"], pid=taken["pid"])
            # compare-and-set on what was read: a concurrent taker makes this match nothing
            done = conn.execute(T.day_locks.update().where(
                c.day == day, c.run_id == current.run_id, c.expires_at == current.expires_at).values(**values))
            if done.rowcount == 1:
                return None
    raise RuntimeError(f"day {day}: could not take the day's lock for run {run_id} (too much contention)")


def acquire(engine: Engine, day: dt.date, run_id: str, *, wait_s: float = 0.0, lease_s: float = DEFAULT_LEASE_S,
            process: bool = False, poll_s: float = 0.5) -> None:
    """`try_acquire`, waiting up to `wait_s` seconds for a live holder; `DayLocked` after that."""
    started = time.monotonic()
    while True:
        current = try_acquire(engine, day, run_id, lease_s=lease_s, process=process)
        if current is None:
            return
        waited = time.monotonic() - started
        if waited >= wait_s:
            raise DayLocked(day, run_id, current.run_id, waited_s=round(waited, 1) if wait_s else 0.0)
        time.sleep(min(poll_s, max(wait_s - waited, 0.01)))


def renew(engine: Engine, day: dt.date, run_id: str, *, lease_s: float = DEFAULT_LEASE_S) -> None:
    """Renew the lock a later step of the run still holds; `DayLocked(lost=True)` when another run
    holds it now (this run's lease ran out and the day was taken)."""
    current = try_acquire(engine, day, run_id, lease_s=lease_s)
    if current is not None:
        raise DayLocked(day, run_id, current.run_id, lost=True)


def assert_held(conn: Connection, day: dt.date, run_id: str) -> None:
    """Inside a transaction (the publish): fail unless `run_id` holds the day's lock."""
    c = T.day_locks.c  # a write to the lock row: the row lock (PostgreSQL) or write lock (SQLite) until commit
    if conn.execute(T.day_locks.update().where(c.day == day, c.run_id == run_id).values(run_id=run_id)).rowcount != 1:
        current = holder(conn, day)
        raise DayLocked(day, run_id, current.run_id if current else None, lost=True)


def release(engine: Engine, day: dt.date, run_id: str) -> bool:
    """Free the day when `run_id` holds it; whether it did."""
    c = T.day_locks.c
    with engine.begin() as conn:
        return conn.execute(T.day_locks.delete().where(c.day == day, c.run_id == run_id)).rowcount == 1


@contextlib.contextmanager
def renewing(engine: Engine, day: dt.date, run_id: str, *, lease_s: float = DEFAULT_LEASE_S) -> Iterator[None]:
    """Renew the lease every third of it while the body runs (a long step keeps its day)."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(lease_s / 3):
            with contextlib.suppress(Exception):  # the step's own statements report a dead warehouse
                try_acquire(engine, day, run_id, lease_s=lease_s)

    thread = threading.Thread(target=beat, name=f"day-lock-{day}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
