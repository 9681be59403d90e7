"""No debris: `citecheck run` processes SIGKILLed at random points leave open ledger rows and
staged rows; the next run of the day marks them `abandoned` and removes their staging, `citecheck
runs --day` shows the ledger, and `citecheck gc` cleans what no run has come back for.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck import warehouse as W
from citecheck.warehouse import runs
from citecheck.warehouse import tables as T
from helpers.faults import staged_rows

REPO = Path(__file__).resolve().parents[2]
DAY = "2026-11-23"


def _env(tmp_path: Path, url: str) -> dict[str, str]:
    from citecheck.cli import main

    sample = tmp_path / "sample"
    assert main(["sample", "--start", DAY, "--days", "1", "--turns-per-day", "150", "--out", str(sample)]) == 0
    env = {**os.environ, "CITECHECK_WAREHOUSE_URL": url, "CITECHECK_JUDGE": str(sample / "judge.json"),
           "CITECHECK_CONFIG": str(sample / "config.toml"), "PYTHONPATH": os.pathsep.join(
               [str(REPO / "include"), str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])}
    assert _cli(env, "load-sample", "--start", DAY, "--days", "1", "--turns-per-day", "150").returncode == 0
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "citecheck", *args], env=env, capture_output=True, text=True,
                          timeout=300)


def _kill_a_run_once_it_staged(env: dict[str, str], engine: sa.Engine, rng: random.Random) -> None:
    """Start `citecheck run --force` and SIGKILL it at a random moment after it began staging."""
    before = {r["run_id"] for r in runs.day_ledger(engine, dt.date.fromisoformat(DAY))}
    child = subprocess.Popen([sys.executable, "-m", "citecheck", "run", "--day", DAY, "--force"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        ledger = [r for r in runs.day_ledger(engine, dt.date.fromisoformat(DAY)) if r["run_id"] not in before]
        if ledger and ledger[0]["staged_rows"]:
            break
        time.sleep(0.05)
    time.sleep(rng.uniform(0.0, 1.5))  # somewhere in structural, judging, aggregate or validate
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_runs_killed_at_random_points_leave_nothing_after_the_next_run(request, tmp_path, backend):
    url = f"sqlite:///{tmp_path}/w.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_warehouse_url")
    env = _env(tmp_path, url)
    engine = W.make_engine(url)
    day = dt.date.fromisoformat(DAY)
    rng = random.Random(21)
    for _ in range(3):
        _kill_a_run_once_it_staged(env, engine, rng)
    ledger = runs.day_ledger(engine, day)
    killed = [r["run_id"] for r in ledger if r["status"] in runs.OPEN_STATUSES]
    assert killed and staged_rows(engine) > 0, ledger  # debris, as the operator found it

    shown = _cli(env, "runs", "--day", DAY)
    assert shown.returncode == 0 and all(run_id in shown.stdout for run_id in killed), shown.stdout

    done = _cli(env, "run", "--day", DAY, "--force")
    assert done.returncode == 0, done.stderr[-3000:]
    assert staged_rows(engine) == 0
    statuses = {r["run_id"]: r["status"] for r in runs.day_ledger(engine, day)}
    assert all(statuses[run_id] == "abandoned" for run_id in killed), statuses
    assert not [s for s in statuses.values() if s in runs.OPEN_STATUSES], statuses
    shown = _cli(env, "runs", "--day", DAY)
    assert "abandoned" in shown.stdout and "staged rows 0" in shown.stdout
    engine.dispose()


def test_gc_cleans_what_killed_runs_left_and_spares_a_live_run(engine, tmp_path):
    """`gc` (and `runs --clean`) with no run coming back: killed runs are closed as abandoned and their
    staging goes; a day a live run holds keeps that run's rows."""
    from citecheck import job
    from citecheck.cli import main
    from citecheck.warehouse import locks
    from helpers import orbit_settings, orbit_warehouse_turns, run_steps_until

    W.load_turns(engine, orbit_warehouse_turns())
    day = dt.date(2026, 11, 30)
    dead = job.DayRun(engine, day, "killed-run", orbit_settings())
    run_steps_until(dead, "structural")
    with engine.begin() as conn:  # its process is gone: the lease ran out
        conn.execute(T.day_locks.update().values(expires_at=dt.datetime(2000, 1, 1, tzinfo=dt.UTC)))
    assert staged_rows(engine) > 0
    assert main(["gc"]) == 0
    assert runs.run_status(engine, "killed-run") == "abandoned" and staged_rows(engine) == 0
    with engine.connect() as conn:
        assert locks.holder(conn, day) is None

    live = job.DayRun(engine, day, "live-run", orbit_settings())
    run_steps_until(live, "structural")
    assert main(["runs", "--day", day.isoformat(), "--clean"]) == 0
    assert runs.run_status(engine, "live-run") == "running" and staged_rows(engine) > 0


def test_gc_leaves_a_day_whose_holder_renewed_after_gc_read_it_as_stale(engine, monkeypatch):
    """A paused run whose lease ran out wakes up and renews between gc's read of the day's lock and
    gc's write: gc takes the day as any run does (compare and set), so the run keeps its day, its
    ledger row and its staged rows, and gc reports the day busy."""
    from citecheck import job
    from citecheck.warehouse import locks
    from helpers import orbit_settings, orbit_warehouse_turns, run_steps_until

    W.load_turns(engine, orbit_warehouse_turns())
    day = dt.date(2026, 11, 30)
    paused = job.DayRun(engine, day, "paused-run", orbit_settings())
    run_steps_until(paused, "structural")
    with engine.begin() as conn:  # paused past its lease
        conn.execute(T.day_locks.update().values(expires_at=dt.datetime(2000, 1, 1, tzinfo=dt.UTC)))
    staged = staged_rows(engine)
    read_holder, woke = locks.holder, []

    def read_then_the_run_renews(conn: sa.Connection, at: dt.date) -> locks.Holder | None:
        read = read_holder(conn, at)
        if read is not None and read.run_id == "paused-run" and not woke:
            woke.append(read.expires_at)  # the lease gc read is stale; the run renews right after
            conn.execute(T.day_locks.update().where(T.day_locks.c.day == at).values(
                expires_at=dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)))
        return read

    monkeypatch.setattr(locks, "holder", read_then_the_run_renews)
    cleaned = job.clean_debris(engine, [day])
    monkeypatch.undo()
    assert woke, "gc never read the paused run's stale lock"
    assert cleaned["busy"] == [(day, "paused-run")] and cleaned["abandoned"] == {}
    assert runs.run_status(engine, "paused-run") == "running" and staged_rows(engine) == staged > 0
    with engine.connect() as conn:
        assert locks.holder(conn, day).run_id == "paused-run"
