"""Every write a run makes after taking its day is fenced, and taking a day never waits without
bound (issue 37, items 1 and 4), with real processes on SQLite and PostgreSQL.

Run A stops itself (SIGSTOP, `helpers/paused_run.py`) just before it stores its report, or just
before it replaces the day's alerts; its lease lapses; run B reruns the day (`--force`) and
completes; A is resumed: A writes nothing (exit 4), and the day's report, alerts and A's ledger row
are what they were when B finished. Then: A stopped inside its publish transaction (holding the
day's lock row) makes the next `run` refuse at once (exit 4, the holder named) instead of waiting
on the row, and A, resumed, still publishes.
"""

from __future__ import annotations

import datetime as dt
import signal
import subprocess
import sys
import time
from typing import Any

import pytest
import sqlalchemy as sa

from citecheck import warehouse as W
from citecheck.cli import EXIT_DAY_LOCKED, EXIT_OK
from citecheck.warehouse import locks
from citecheck.warehouse import tables as T
from helpers.sample_cli import REPO, citecheck, sample_env

SAMPLE_DAY = "2026-11-23"
DAY = dt.date.fromisoformat(SAMPLE_DAY)
PAUSED_RUN = REPO / "tests" / "helpers" / "paused_run.py"
# a short lease, and a monitor that needs only 3 days of history: the history below makes the day alert
CONFIG = """
[job]
lock_lease_s = 2

[monitor]
metrics = ["attachment_rate"]
min_history = 3
"""
# generous: a loaded 2-core machine; the assertion is on the behaviour (exit 4, the holder named), not a time
PROCESS_TIMEOUT_S = 240


def _url(request: pytest.FixtureRequest, tmp_path: Any, backend: str) -> str:
    return f"sqlite:///{tmp_path}/w.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_warehouse_url")


def _history(engine: sa.Engine, days: int = 5) -> None:
    """Published attachment rates of the days before the sample day, far below its own (0.88)."""
    rows = [{"day": DAY - dt.timedelta(days=i + 1), "slice_name": "all", "slice_value": "all",
             "metric": "attachment_rate", "averaging": "micro", "numerator": 270.0 + i, "denominator": 900.0,
             "value": (270.0 + i) / 900.0, "answers": 300, "sentences": 900, "computed_at": dt.datetime.now(dt.UTC),
             "run_id": f"history-{i}", "config_hash": "h"} for i in range(days)]
    with engine.begin() as conn:
        conn.execute(T.daily_metrics.insert(), rows)


def _stopped(process: subprocess.Popen[str]) -> bool:
    with open(f"/proc/{process.pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t")


def _paused_run(env: dict[str, str], target: str, *args: str) -> subprocess.Popen[str]:
    """`citecheck run` that stops itself just before `target` runs, once it is stopped."""
    process = subprocess.Popen([sys.executable, str(PAUSED_RUN), target, "run", "--day", SAMPLE_DAY, *args], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + PROCESS_TIMEOUT_S
    while not _stopped(process):
        if process.poll() is not None:
            pytest.fail(f"run A ended before its pause: {process.communicate()}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("run A never reached its pause")
        time.sleep(0.05)
    return process


def _holder(engine: sa.Engine) -> locks.Holder | None:
    with engine.connect() as conn:
        return locks.holder(conn, DAY)


def _day_outputs(engine: sa.Engine, run_id: str) -> dict[str, Any]:
    """The day's stored report, its alerts, and run `run_id`'s ledger row as they stand."""
    a, r = T.alerts.c, T.runs.c
    with engine.connect() as conn:
        report = conn.execute(sa.select(T.reports.c.run_id, T.reports.c.html).where(T.reports.c.day == DAY)).all()
        alerts = sorted(conn.execute(sa.select(a.run_id, a.metric, a.slice_name, a.slice_value, a.direction)
                                     .where(a.day == DAY)).all())
        ledger = conn.execute(sa.select(r.status, r.stats, r.timings, r.completed_steps, r.finished_at, r.error)
                              .where(r.run_id == run_id)).one()
    return {"report": [tuple(x) for x in report], "alerts": [tuple(x) for x in alerts], "ledger": tuple(ledger)}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("pause_before", ["citecheck.warehouse.reports.store_report",
                                          "citecheck.warehouse.alerts.replace_alerts"])
def test_a_run_that_lost_its_day_writes_no_report_nor_alerts(request, tmp_path, backend, pause_before):
    url = _url(request, tmp_path, backend)
    env = sample_env(tmp_path, url, SAMPLE_DAY, config_extra=CONFIG)
    engine = W.make_engine(url)
    _history(engine)
    stalled = _paused_run(env, pause_before)
    try:
        stalled_id = _holder(engine).run_id
        time.sleep(2.5)  # A's lease lapses while it is stopped
        winner = citecheck(env, "run", "--day", SAMPLE_DAY, "--force")
        _out, err = winner.communicate(timeout=PROCESS_TIMEOUT_S)
        assert winner.returncode == EXIT_OK, err[-3000:]
        winner_id = W.published_run_id(engine, DAY)
        assert winner_id != stalled_id
        after_winner = _day_outputs(engine, stalled_id)
        assert after_winner["report"] and after_winner["report"][0][0] == winner_id
        assert after_winner["alerts"] and {x[0] for x in after_winner["alerts"]} == {winner_id}, after_winner["alerts"]
    finally:
        stalled.send_signal(signal.SIGCONT)
    stalled_out, stalled_err = stalled.communicate(timeout=PROCESS_TIMEOUT_S)
    assert stalled.returncode == EXIT_DAY_LOCKED, (stalled_out, stalled_err[-3000:])
    assert "Traceback" not in stalled_err and f"run {stalled_id} lost the day's lock" in stalled_err, stalled_err
    # the stored report and alerts are the winner's; A's ledger row is as the winner left it
    assert _day_outputs(engine, stalled_id) == after_winner
    assert W.published_run_id(engine, DAY) == winner_id and _holder(engine) is None
    engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_run_stopped_inside_its_publish_makes_the_next_run_refuse_at_once(request, tmp_path, backend):
    url = _url(request, tmp_path, backend)
    env = sample_env(tmp_path, url, SAMPLE_DAY, config_extra=CONFIG)
    engine = W.make_engine(url)
    # inside the publish transaction: its fence has locked the day's row (and SQLite's database)
    stalled = _paused_run(env, "citecheck.warehouse.publish._assert_publishable")
    try:
        stalled_id = _holder(engine).run_id
        time.sleep(2.5)  # its lease lapses: the day looks free, but its row is locked by the open transaction
        blocked = citecheck(env, "run", "--day", SAMPLE_DAY)  # lock_wait_s = 0 by default
        try:
            _out, err = blocked.communicate(timeout=PROCESS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            blocked.kill()
            blocked.communicate()
            pytest.fail(f"the next run waited on the day's lock for over {PROCESS_TIMEOUT_S} s")
        assert blocked.returncode == EXIT_DAY_LOCKED, err[-3000:]
        assert "Traceback" not in err and f"locked by run {stalled_id}" in err, err
    finally:
        stalled.send_signal(signal.SIGCONT)
    stalled_out, stalled_err = stalled.communicate(timeout=PROCESS_TIMEOUT_S)
    assert stalled.returncode == EXIT_OK, (stalled_out, stalled_err[-3000:])  # nobody took the day: A publishes
    assert W.published_run_id(engine, DAY) == stalled_id and _holder(engine) is None
    engine.dispose()
