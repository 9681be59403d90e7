"""One run per day at a time: the per-day lock (`citecheck.warehouse.locks`), on SQLite and
PostgreSQL, and through real concurrent `citecheck run` processes.

A second run of a held day refuses at once with exit code 4 and a one-line message naming the
holder's run id, or waits (`--lock-wait`) and runs after it; a run that lost its day never
publishes; a dead holder process or a run-out lease frees the day.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import EXIT_DAY_LOCKED, EXIT_OK
from citecheck.warehouse import locks
from citecheck.warehouse import tables as T
from helpers import orbit_settings, orbit_warehouse_turns, run_steps_until
from helpers.faults import run_status, staged_rows
from helpers.sample_cli import citecheck as _citecheck
from helpers.sample_cli import sample_env

DAY = dt.date(2026, 11, 30)
SAMPLE_DAY = "2026-11-23"
REPO = Path(__file__).resolve().parents[2]


def _holder(engine: sa.Engine, day: dt.date) -> locks.Holder | None:
    with engine.connect() as conn:
        return locks.holder(conn, day)


def test_a_held_day_refuses_another_run_and_is_renewed_by_its_holder(engine):
    assert locks.try_acquire(engine, DAY, "run-a") is None
    assert locks.try_acquire(engine, DAY, "run-a") is None  # its holder renews it
    refused = locks.try_acquire(engine, DAY, "run-b")
    assert refused is not None and refused.run_id == "run-a"
    with pytest.raises(locks.DayLocked, match="day 2026-11-30 is locked by run run-a; run run-b did not start"):
        locks.acquire(engine, DAY, "run-b")
    with pytest.raises(locks.DayLocked, match="run run-b lost the day's lock to run run-a"):
        locks.renew(engine, DAY, "run-b", None)
    assert locks.try_acquire(engine, DAY + dt.timedelta(days=1), "run-b") is None  # another day is free
    assert not locks.release(engine, DAY, "run-b") and locks.release(engine, DAY, "run-a")
    assert locks.try_acquire(engine, DAY, "run-b") is None


def test_a_run_out_lease_or_a_dead_holder_process_frees_the_day(engine):
    assert locks.try_acquire(engine, DAY, "leased", lease_s=0.2) is None
    time.sleep(0.3)
    assert locks.try_acquire(engine, DAY, "next") is None and _holder(engine, DAY).run_id == "next"
    # a holder process on this host that is gone frees the day at once, lease or not
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with engine.begin() as conn:
        conn.execute(T.day_locks.update().where(T.day_locks.c.day == DAY).values(pid=dead.pid))
    assert locks.is_stale(_holder(engine, DAY))
    assert locks.try_acquire(engine, DAY, "after-the-dead") is None


def test_waiting_for_a_held_day_is_bounded_and_names_the_holder(engine):
    assert locks.try_acquire(engine, DAY, "holder") is None
    started = time.monotonic()
    with pytest.raises(locks.DayLocked, match=r"locked by run holder after waiting"):
        locks.acquire(engine, DAY, "waiter", wait_s=0.5, poll_s=0.1)
    assert time.monotonic() - started >= 0.5


def test_a_run_that_lost_its_day_publishes_nothing(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    settings = orbit_settings()
    run = job.DayRun(engine, DAY, job.new_run_id(DAY), settings)
    run_steps_until(run, "validate")
    with engine.begin() as conn:  # its lease ran out and another run took the day
        conn.execute(T.day_locks.update().where(T.day_locks.c.day == DAY).values(run_id="the-other-run"))
    with pytest.raises(locks.DayLocked, match="lost the day's lock to run the-other-run"):
        job.publish(run)
    with pytest.raises(locks.DayLocked):  # nor does the publish transaction itself
        W.publish_day(engine, DAY, run.run_id, 1)
    assert run_status(engine, run.run_id) == "validated" and W.published_run_id(engine, DAY) is None


# --- real processes ----------------------------------------------------------------------------

def _wait_for_holder(engine: sa.Engine, day: dt.date, first: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (held := _holder(engine, day)) is not None:
            return held.run_id
        assert first.poll() is None, first.communicate()
        time.sleep(0.05)
    pytest.fail("the first run never took the day's lock")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_concurrent_cli_runs_of_one_day_one_refuses_one_waits(request, tmp_path, backend):
    url = f"sqlite:///{tmp_path}/w.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_warehouse_url")
    env = sample_env(tmp_path, url, SAMPLE_DAY)
    engine = W.make_engine(url)
    day = dt.date.fromisoformat(SAMPLE_DAY)
    first = _citecheck(env, "run", "--day", SAMPLE_DAY)
    holder = _wait_for_holder(engine, day, first)
    refused = subprocess.run([sys.executable, "-m", "citecheck", "run", "--day", SAMPLE_DAY, "--force"], env=env,
                             capture_output=True, text=True, timeout=120)
    waiter = _citecheck(env, "run", "--day", SAMPLE_DAY, "--force", "--lock-wait", "300")
    out, err = first.communicate(timeout=300)
    assert first.returncode == EXIT_OK, err[-3000:]
    waited_out, waited_err = waiter.communicate(timeout=300)
    assert waiter.returncode == EXIT_OK, waited_err[-3000:]

    assert refused.returncode == EXIT_DAY_LOCKED, refused.stderr[-3000:]
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and f"locked by run {holder}" in lines[0] and "Traceback" not in refused.stderr, lines
    assert f"run {holder} published" in out
    published_by_waiter = waited_out.split(" run ")[1].split()[0]
    assert published_by_waiter != holder and W.published_run_id(engine, day) == published_by_waiter
    with engine.connect() as conn:
        statuses = dict(conn.execute(sa.select(T.runs.c.run_id, T.runs.c.status).where(T.runs.c.day == day)).all())
    assert statuses == {holder: "published", published_by_waiter: "published"}, statuses  # the refused run: no row
    assert staged_rows(engine) == 0 and _holder(engine, day) is None
    engine.dispose()


def test_the_lock_settings_come_from_the_job_section_and_are_checked(tmp_path, monkeypatch):
    from citecheck.core.config import ConfigError

    config = tmp_path / "c.toml"
    config.write_text("[job]\nlock_wait_s = 30\nlock_lease_s = 120\n")
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    settings = job.settings_from_env()
    assert (settings.lock_wait_s, settings.lock_lease_s) == (30.0, 120.0)
    assert job.settings_from_env({"lock_wait_s": 5}).lock_wait_s == 5  # --lock-wait wins
    config.write_text('[job]\nlock_wait_s = "soon"\n')
    with pytest.raises(ConfigError, match=r"job\.lock_wait_s must be a number of seconds"):
        job.settings_from_env()
