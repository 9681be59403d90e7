"""One run per day at a time: the per-day lock, a row of `day_locks` held by a run id.

A run takes the day's lock before it stages anything (the job's `open_run`); every take gives the
lock a new `generation`, the run's fencing token (kept in its ledger row). Every later step
renews the lease with that token (`renew`): a renewal only extends the row it took, so a run
whose lease lapsed and whose day was taken (or released) never gets it back, however late it
wakes up (a long GC pause, a stopped process, a starved worker). Every write a run makes after
taking its day (staging, its ledger row, the publish, the alerts, the report) goes through ONE
helper, `fenced`: its transaction first checks the same token (`fence`), so a run that lost its
day writes nothing anywhere (the judgment and split caches excepted: shared by every run, keyed by
content, never wrong). `record_run` releases it. The row is the same on SQLite and PostgreSQL:
taking it is one conditional UPDATE or one INSERT on the day's primary key, atomic on both (the
row lock on PostgreSQL, the database write lock on SQLite).

Taking the day never waits on another transaction's lock past the wait it was given
(`lock_wait_s`): PostgreSQL's `lock_timeout`, SQLite's busy timeout, for the take's transaction
(`waiting_at_most`); a take that runs out of it names the day's holder.

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
MIN_LEASE_S = 1.0  # the shortest lease `[job] lock_lease_s` accepts: renewals every third of it must keep up
# SQLite locks the whole database for one writer of any day: a take there waits at least this long
# for another transaction (another day's run writing a chunk) before it gives up
SQLITE_MIN_LOCK_WAIT_S = 2.0


class DayLocked(RuntimeError):
    """Another run holds the day's lock (or took it from this run), or this run no longer owns
    the day (`reason` says why)."""

    def __init__(self, day: dt.date, run_id: str, holder: str | None, *, lost: bool = False,
                 waited_s: float = 0.0, reason: str | None = None) -> None:
        self.day, self.run_id, self.holder, self.lost = day, run_id, holder, lost or reason is not None
        if reason is not None:
            text = f"day {day}: run {run_id} {reason}; nothing of it is published"
        elif lost and holder is None:
            text = (f"day {day}: run {run_id} lost the day's lock (its lease ran out and the day was taken and "
                    "released since); nothing more of it is published (rerun the day)")
        elif lost:
            text = (f"day {day}: run {run_id} lost the day's lock to run {holder}; nothing more of it is "
                    f"published (rerun the day when {holder} has finished)")
        else:
            waited = f" after waiting {waited_s:g} s" if waited_s else ""
            text = (f"day {day} is locked by run {holder}{waited}; run {run_id} did not start (wait for it to "
                    f"finish, or pass --lock-wait SECONDS)")
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as it reads (a `--workers` process raises it in the parent)."""
        return _day_locked, (self.day, self.run_id, self.holder, self.lost, str(self))


def _day_locked(day: dt.date, run_id: str, holder: str | None, lost: bool, text: str) -> DayLocked:
    exc = DayLocked.__new__(DayLocked)
    RuntimeError.__init__(exc, text)
    exc.day, exc.run_id, exc.holder, exc.lost = day, run_id, holder, lost
    return exc


@dataclass(frozen=True)
class Holder:
    """Who holds a day: the run id, where, and until when."""

    run_id: str
    host: str | None
    pid: int | None
    acquired_at: dt.datetime
    expires_at: dt.datetime
    generation: int | None = None


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
    row = conn.execute(sa.select(c.run_id, c.host, c.pid, c.acquired_at, c.expires_at, c.generation).where(
        c.day == day)).first()
    return Holder(*row) if row else None


def _next_generation(conn: Connection, day: dt.date, current: Holder | None) -> int:
    """A generation above every earlier take of the day: the lock row's, and every run's of the day
    in the ledger (the row itself goes when a run releases the day)."""
    ledger = conn.execute(sa.select(sa.func.max(T.runs.c.lock_generation)).where(T.runs.c.day == day)).scalar()
    return max(current.generation or 0 if current else 0, ledger or 0) + 1


def take(engine: Engine, day: dt.date, run_id: str, *, lease_s: float = DEFAULT_LEASE_S,
         process: bool = False, lock_wait_s: float = 0.0) -> int | Holder:
    """Take the day's lock for `run_id` when it is free, stale or already `run_id`'s: a new
    generation every time (the run's fencing token, returned). Else the live holder: also when
    another transaction kept the lock row (a stopped run inside its publish, a fenced write) past
    `lock_wait_s` (`waiting_at_most`).

    `process`: this process holds it (its pid is recorded: a dead process frees the day at once)."""
    c = T.day_locks.c
    for _ in range(5):  # only a race between two takers of a free or stale lock loops
        now = _now()
        try:
            with waiting_at_most(engine, lock_wait_s) as conn:
                current = holder(conn, day)
                if current is not None and current.run_id != run_id and not is_stale(current, now):
                    return current
                generation = _next_generation(conn, day, current)
                values: dict[str, Any] = {
                    "run_id": run_id, "expires_at": now + dt.timedelta(seconds=lease_s), "generation": generation,
                    "host": socket.gethostname(), "pid": os.getpid() if process else None, "acquired_at": now}
                if current is None:
                    try:
                        with conn.begin_nested():
                            conn.execute(T.day_locks.insert().values(day=day, **values))
                        return generation
                    except sa.exc.IntegrityError:
                        continue
                # compare-and-set on what was read: a concurrent taker makes this match nothing
                done = conn.execute(T.day_locks.update().where(
                    c.day == day, c.run_id == current.run_id, c.expires_at == current.expires_at,
                    _same_generation(current.generation)).values(**values))
                if done.rowcount == 1:
                    return generation
        except sa.exc.OperationalError as exc:
            if not lock_wait_ran_out(exc):
                raise
            with engine.connect() as conn:  # a plain read waits on nobody (MVCC, SQLite's WAL)
                busy = holder(conn, day)
            if busy is None:
                raise DayLocked(day, run_id, None, reason=(
                    f"could not take the day: another transaction kept the warehouse locked past the "
                    f"lock wait ({_lock_wait_ms(engine, lock_wait_s) / 1000:g} s)")) from exc
            return busy
    raise RuntimeError(f"day {day}: could not take the day's lock for run {run_id} (too much contention)")


def _lock_wait_ms(engine: Engine, seconds: float) -> int:
    floor = SQLITE_MIN_LOCK_WAIT_S if engine.dialect.name == "sqlite" else 0.0
    return max(1, round(max(seconds, floor) * 1000))


@contextlib.contextmanager
def waiting_at_most(engine: Engine, seconds: float) -> Iterator[Connection]:
    """A transaction whose statements wait on other transactions' locks at most `seconds`
    (PostgreSQL: `SET LOCAL lock_timeout`, 1 ms for 0: no wait; SQLite: the connection's busy
    timeout, at least `SQLITE_MIN_LOCK_WAIT_S`, set back afterwards); a wait that runs out raises
    the driver's error (`lock_wait_ran_out`)."""
    ms = _lock_wait_ms(engine, seconds)
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        if sqlite:
            previous = conn.exec_driver_sql("PRAGMA busy_timeout").scalar()
            conn.commit()
            conn.exec_driver_sql(f"PRAGMA busy_timeout = {ms}")
            conn.commit()
        try:
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    conn.exec_driver_sql(f"SET LOCAL lock_timeout = {ms}")
                yield conn
        finally:
            if sqlite:
                conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(previous)}")
                conn.commit()


def lock_wait_ran_out(exc: sa.exc.OperationalError) -> bool:
    """Whether a statement failed because another transaction's lock outlasted its wait
    (PostgreSQL's lock_not_available, 55P03; SQLite's "database is locked")."""
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None) == "55P03" or "database is locked" in str(orig)


def _same_generation(generation: int | None) -> Any:
    c = T.day_locks.c
    return c.generation.is_(None) if generation is None else c.generation == generation


def try_acquire(engine: Engine, day: dt.date, run_id: str, *, lease_s: float = DEFAULT_LEASE_S,
                process: bool = False) -> Holder | None:
    """`take` (no wait): None when `run_id` holds the day now; else the live holder."""
    taken = take(engine, day, run_id, lease_s=lease_s, process=process)
    return taken if isinstance(taken, Holder) else None


def acquire(engine: Engine, day: dt.date, run_id: str, *, wait_s: float = 0.0, lease_s: float = DEFAULT_LEASE_S,
            process: bool = False, poll_s: float = 0.5) -> int:
    """`take`, waiting up to `wait_s` seconds for a live holder (and for another transaction's
    lock on the day's row: `take`'s `lock_wait_s`); `DayLocked` naming the holder after that.
    Returns the generation taken (the run's fencing token)."""
    started = time.monotonic()
    while True:
        taken = take(engine, day, run_id, lease_s=lease_s, process=process,
                     lock_wait_s=max(wait_s - (time.monotonic() - started), 0.0))
        if not isinstance(taken, Holder):
            return taken
        waited = time.monotonic() - started
        if waited >= wait_s:
            raise DayLocked(day, run_id, taken.run_id, waited_s=round(waited, 1) if wait_s else 0.0)
        time.sleep(min(poll_s, max(wait_s - waited, 0.01)))


def renew(engine: Engine, day: dt.date, run_id: str, generation: int | None, *,
          lease_s: float = DEFAULT_LEASE_S) -> None:
    """Extend the lease of the lock `run_id` took with `generation`; `DayLocked(lost=True)` when
    the row is no longer that take (the lease ran out and the day was taken, or released). It
    never takes the day back nor re-creates a released lock."""
    c = T.day_locks.c
    with engine.begin() as conn:
        done = conn.execute(T.day_locks.update().where(
            c.day == day, c.run_id == run_id, _same_generation(generation)).values(
            expires_at=_now() + dt.timedelta(seconds=lease_s)))
        if done.rowcount != 1:
            current = holder(conn, day)
            raise DayLocked(day, run_id, current.run_id if current else None, lost=True)


def fence(conn: Connection, run_id: str, *, day: dt.date | None = None, generation: int | None = None) -> bool:
    """Inside a transaction, before a run's write: fail (`DayLocked`, nothing written) unless
    `run_id` still holds its day's lock with the generation it took (its fencing token): `day`
    and `generation` as given (just taken), else the run's ledger row's (`runs.day`,
    `runs.lock_generation`). The check locks the lock row until commit (PostgreSQL: FOR SHARE,
    so a run's parallel writers do not wait on each other; SQLite: a write, the database's write
    lock), so nobody takes the day between the check and the write. False, with nothing locked,
    for a run id the ledger does not know (`day` not given): not a run's write (a person's
    `report --store`, a benchmark's monitor), nothing to fence."""
    c, r = T.day_locks.c, T.runs.c
    if day is None:
        day_of = sa.select(r.day).where(r.run_id == run_id).scalar_subquery()
        token = c.generation == sa.select(r.lock_generation).where(r.run_id == run_id).scalar_subquery()
    else:
        day_of, token = sa.literal(day, sa.Date), _same_generation(generation)
    held = sa.and_(c.day == day_of, c.run_id == run_id, token)
    if conn.dialect.name == "sqlite":  # a write begins SQLite's transaction (a read would not)
        held_now = conn.execute(T.day_locks.update().where(held).values(run_id=run_id)).rowcount == 1
    else:
        held_now = conn.execute(sa.select(c.day).where(held).with_for_update(read=True, of=T.day_locks)
                                ).first() is not None
    if held_now:
        return True
    if day is None:
        ledger = conn.execute(sa.select(r.day).where(r.run_id == run_id)).first()
        if ledger is None:
            return False
        day = ledger.day
    current = holder(conn, day)
    raise DayLocked(day, run_id, current.run_id if current else None, lost=True)


@contextlib.contextmanager
def fenced(engine: Engine, run_id: str | None, *, day: dt.date | None = None,
           generation: int | None = None) -> Iterator[Connection]:
    """THE way a run writes after taking its day: one transaction that first checks the run's
    fencing token (`fence`); `DayLocked` and nothing written when it lost the day. A write of no
    run (`run_id` None) is a plain transaction."""
    with engine.begin() as conn:
        if run_id is not None:
            fence(conn, run_id, day=day, generation=generation)
        yield conn


def release(engine: Engine, day: dt.date, run_id: str) -> bool:
    """Free the day when `run_id` holds it; whether it did."""
    c = T.day_locks.c
    with engine.begin() as conn:
        return conn.execute(T.day_locks.delete().where(c.day == day, c.run_id == run_id)).rowcount == 1


@contextlib.contextmanager
def renewing(engine: Engine, day: dt.date, run_id: str, generation: int | None, *,
             lease_s: float = DEFAULT_LEASE_S) -> Iterator[None]:
    """Renew the lease every third of it while the body runs (a long step keeps its day); a lost
    lock stops the renewals (the next step's `renew` and the publish refuse)."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(lease_s / 3):
            try:
                renew(engine, day, run_id, generation, lease_s=lease_s)
            except DayLocked:
                return
            except Exception:
                continue

    thread = threading.Thread(target=beat, name=f"day-lock-{day}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
