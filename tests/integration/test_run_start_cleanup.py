"""Small edges of issue 31: a killed run's debris is closed by the next run of its day even when
the day is up to date (not only by forced runs), and `citecheck runs | head` ends quietly."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from citecheck import job
from citecheck import warehouse as W
from citecheck.warehouse import locks
from citecheck.warehouse import tables as T
from citecheck.warehouse.freshness import published_days
from helpers import orbit_settings, orbit_warehouse_turns, run_steps_until
from helpers.faults import run_status, staged_rows

DAY = dt.date(2026, 11, 30)
REPO = Path(__file__).resolve().parents[2]


def test_an_up_to_date_run_start_closes_a_killed_runs_debris(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    settings = orbit_settings()
    published = job.run_day(engine, DAY, settings)["run_id"]
    killed = job.DayRun(engine, DAY, job.new_run_id(DAY), settings, process_lock=True)
    run_steps_until(killed, "structural")  # then SIGKILLed: its row stays `running`, its staging and lock stay
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with engine.begin() as conn:
        conn.execute(T.day_locks.update().where(T.day_locks.c.day == DAY).values(pid=dead.pid))
    assert staged_rows(engine) > 0
    assert job.rerun_reason(published_days(engine, [DAY]).get(DAY), settings.run_config_hash) is None
    job.complete_day(engine, DAY, settings)  # what `citecheck run` of the up-to-date day does first
    assert run_status(engine, killed.run_id) == "abandoned" and staged_rows(engine) == 0
    assert run_status(engine, published) == "published" and W.published_run_id(engine, DAY) == published
    with engine.connect() as conn:
        assert locks.holder(conn, DAY) is None


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    url = f"sqlite:///{tmp_path}/w.sqlite"
    W.init_warehouse(W.make_engine(url))
    env = {**os.environ, "CITECHECK_WAREHOUSE_URL": url, "PYTHONPATH": str(REPO / "include")}
    for args in (["runs", "--day", str(DAY)], ["ddl"]):
        child = subprocess.Popen([sys.executable, "-m", "citecheck", *args], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        child.stdout.close()  # `| head` that already read what it wanted
        err = child.stderr.read().decode()
        assert child.wait(timeout=120) == 0, err
        assert "BrokenPipeError" not in err and "Traceback" not in err, err
