"""Fenced day locks: a run whose lease lapsed while it was stopped never gets its day back.

Every take of a day's lock gets a new generation (the run's fencing token); renewals extend only
that take, never re-take a lost lock nor re-create a released one; the publish transaction checks
the token, the run's status and that its staging is complete. The scenario of issue 31 runs with
real processes: run A stops itself (SIGSTOP) just before a step, its lease lapses, run B takes
the day and publishes, then A is resumed (SIGCONT): A publishes nothing and the day keeps B's rows.
"""

from __future__ import annotations

import datetime as dt
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import EXIT_DAY_LOCKED, EXIT_OK, EXIT_USAGE
from citecheck.warehouse import locks, runs
from citecheck.warehouse import tables as T
from helpers import orbit_settings, orbit_warehouse_turns, run_steps_until
from helpers.faults import staged_rows
from helpers.sample_cli import citecheck, sample_env

DAY = dt.date(2026, 11, 30)
SAMPLE_DAY = "2026-11-23"
PAUSED_RUN = Path(__file__).resolve().parents[1] / "helpers" / "paused_run.py"


def _holder(engine: sa.Engine, day: dt.date) -> locks.Holder | None:
    with engine.connect() as conn:
        return locks.holder(conn, day)


def test_renewal_never_takes_back_a_lost_lock_nor_recreates_a_released_one(engine):
    first = locks.acquire(engine, DAY, "run-a", lease_s=0.2)
    locks.renew(engine, DAY, "run-a", first, lease_s=0.2)  # its own take: extended
    time.sleep(0.3)
    second = locks.acquire(engine, DAY, "run-b")  # run-a's lease lapsed: taken over
    assert second > first
    with pytest.raises(locks.DayLocked, match="lost the day's lock to run run-b"):
        locks.renew(engine, DAY, "run-a", first)
    assert _holder(engine, DAY).run_id == "run-b"
    assert locks.release(engine, DAY, "run-b")
    with pytest.raises(locks.DayLocked, match="lost the day's lock"):  # released: not re-created
        locks.renew(engine, DAY, "run-a", first)
    assert _holder(engine, DAY) is None
    # the same run taking the day again is a new take: an older token of it is fenced off too
    again = locks.acquire(engine, DAY, "run-b")
    assert locks.acquire(engine, DAY, "run-b") == again + 1
    with pytest.raises(locks.DayLocked):
        locks.renew(engine, DAY, "run-b", again)


def test_the_generation_grows_across_releases_through_the_ledger(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    done = job.run_day(engine, DAY, orbit_settings())  # takes, records and releases generation 1
    assert runs.lock_generation(engine, done["run_id"]) == 1 and _holder(engine, DAY) is None
    assert locks.acquire(engine, DAY, "next") == 2


def _validated_run(engine: sa.Engine) -> job.DayRun:
    W.load_turns(engine, orbit_warehouse_turns())
    settings = orbit_settings()
    run = job.DayRun(engine, DAY, job.new_run_id(DAY), settings)
    run_steps_until(run, "validate")
    return run


def test_the_publish_refuses_a_run_whose_staging_is_incomplete_or_that_was_closed(engine):
    run = _validated_run(engine)
    generation = runs.lock_generation(engine, run.run_id)
    with engine.begin() as conn:  # what another run's cleanup does to a run it found stopped
        conn.execute(T.stage_turns.delete().where(T.stage_turns.c.run_id == run.run_id))
    with pytest.raises(locks.DayLocked, match=r"staged turn\(s\) where its validation counted"):
        W.publish_day(engine, DAY, run.run_id, generation)
    runs.close_open_runs(engine, DAY, keep=None, status="abandoned", reason="test")
    with pytest.raises(locks.DayLocked, match="is abandoned, not validated"):
        W.publish_day(engine, DAY, run.run_id, generation)
    # and a closed run's late validation does not reopen it
    assert not runs.record_validation(engine, run.run_id, success=True, results={}, error=None,
                                      turn_counts={"turns_read": 0, "turns_scored": 0, "turns_skipped": 0})
    assert runs.run_status(engine, run.run_id) == "abandoned"
    assert W.published_run_id(engine, DAY) is None
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(T.daily_metrics)).scalar_one() == 0


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "0.5"])
def test_a_lease_below_the_floor_or_not_finite_is_a_config_error(tmp_path, value):
    config = tmp_path / "c.toml"
    config.write_text(f"[job]\nlock_lease_s = {value}\n")
    env_run = subprocess.run([sys.executable, "-m", "citecheck", "run", "--day", SAMPLE_DAY], capture_output=True,
                             text=True, timeout=120, env={**_env_without_warehouse(), "CITECHECK_CONFIG": str(config)})
    assert env_run.returncode == EXIT_USAGE, env_run.stderr[-2000:]
    assert "Traceback" not in env_run.stderr
    assert f"job.lock_lease_s must be a number of seconds, finite and at least {locks.MIN_LEASE_S:g}" in env_run.stderr


def _env_without_warehouse() -> dict[str, str]:
    import os

    repo = Path(__file__).resolve().parents[2]
    return {**os.environ, "CITECHECK_WAREHOUSE_URL": "sqlite:////nonexistent/never-opened.sqlite",
            "PYTHONPATH": os.pathsep.join([str(repo / "include"), os.environ.get("PYTHONPATH", "")])}


def _stopped(process: subprocess.Popen[str]) -> bool:
    with open(f"/proc/{process.pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t")


def _day_rows(engine: sa.Engine, day: dt.date) -> dict[str, int]:
    with engine.connect() as conn:
        return {t.name: conn.execute(sa.select(sa.func.count()).select_from(t).where(t.c.day == day)).scalar_one()
                for t in (T.daily_metrics, T.sentence_verdicts, T.citation_verdicts)}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("pause_before", ["citecheck.warehouse.runs.record_validation", "citecheck.job.steps.publish"])
def test_a_stopped_run_resumed_after_its_lease_lapsed_publishes_nothing(request, tmp_path, backend, pause_before):
    url = f"sqlite:///{tmp_path}/w.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_warehouse_url")
    env = sample_env(tmp_path, url, SAMPLE_DAY, config_extra="[job]\nlock_lease_s = 2\n")
    engine = W.make_engine(url)
    day = dt.date.fromisoformat(SAMPLE_DAY)
    stalled = subprocess.Popen([sys.executable, str(PAUSED_RUN), pause_before, "run", "--day", SAMPLE_DAY], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not _stopped(stalled):
            assert stalled.poll() is None, stalled.communicate()
            assert time.monotonic() < deadline, "run A never reached its pause"
            time.sleep(0.05)
        stalled_id = _holder(engine, day).run_id
        time.sleep(2.5)  # A's lease lapses while it is stopped
        taker = citecheck(env, "run", "--day", SAMPLE_DAY)
        _out, err = taker.communicate(timeout=300)
        assert taker.returncode == EXIT_OK, err[-3000:]
        taker_id = W.published_run_id(engine, day)
        published = _day_rows(engine, day)
        assert taker_id != stalled_id and published["sentence_verdicts"] > 0 and published["daily_metrics"] > 0
    finally:
        stalled.send_signal(signal.SIGCONT)
    stalled_out, stalled_err = stalled.communicate(timeout=300)
    assert stalled.returncode == EXIT_DAY_LOCKED, (stalled_out, stalled_err[-3000:])
    assert "Traceback" not in stalled_err and f"run {stalled_id}" in stalled_err
    assert W.published_run_id(engine, day) == taker_id and _day_rows(engine, day) == published
    with engine.connect() as conn:
        statuses = dict(conn.execute(sa.select(T.runs.c.run_id, T.runs.c.status).where(T.runs.c.day == day)).all())
    assert statuses == {stalled_id: "abandoned", taker_id: "published"}, statuses
    assert _holder(engine, day) is None and staged_rows(engine) == 0
    stale = subprocess.run([sys.executable, "-m", "citecheck", "stale", "--from", SAMPLE_DAY, "--to", SAMPLE_DAY],
                           env=env, capture_output=True, text=True, timeout=120)
    assert stale.returncode == EXIT_OK and "0 stale" in stale.stdout, stale.stdout + stale.stderr
    engine.dispose()
