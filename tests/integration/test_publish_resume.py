"""A publish that finishes what it starts: a run cut off after its publish commit (killed, or its
connection dropped, at each point after the commit) leaves the ledger saying which of monitor,
report and record_run it completed; the next `run` or `backfill` of the day completes the rest,
so the stored report and the alerts are never older than the published rows.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.job.steps import AFTER_PUBLISH
from citecheck.warehouse import locks, runs
from citecheck.warehouse import tables as T
from helpers import orbit_settings
from helpers.faults import DropConnection, published_run_ids, published_then_late, run_steps, staged_rows, wait_for

DAY = dt.date(2026, 11, 30)
TESTS = Path(__file__).resolve().parents[1]


def _report_run(engine: sa.Engine) -> str | None:
    with engine.connect() as conn:
        return conn.execute(sa.select(T.reports.c.run_id).where(T.reports.c.day == DAY)).scalar()


def _ledger(engine: sa.Engine, run_id: str) -> dict:
    return runs.run_row(engine, run_id) or {}


def _assert_repaired(engine: sa.Engine, new: str) -> None:
    """Everything of the day is the new run's: rows, report, monitor counts, a closed ledger row,
    no staging left, the day free."""
    assert all(set(v) == {new} for v in published_run_ids(engine, DAY).values())
    assert _report_run(engine) == new
    row = _ledger(engine, new)
    assert row["status"] == "published" and row["finished_at"] is not None
    assert row["completed_steps"] == list(AFTER_PUBLISH) or set(row["completed_steps"]) == set(AFTER_PUBLISH)
    assert "monitor" in row["stats"] and "published_rows" in row["stats"]
    assert staged_rows(engine) == 0
    with engine.connect() as conn:
        assert locks.holder(conn, DAY) is None


# where the run is cut off: (stopped before this step | the connection drops in this step)
CUTS = {
    "killed before monitor": ("monitor", None),
    "killed before report": ("report", None),
    "killed before record_run": ("record_run", None),
    "disconnected while cleaning staging after the commit": ("publish", r"DELETE FROM stage_turns"),
    "disconnected in monitor": ("monitor", r"DELETE FROM alerts"),
    "disconnected in report": ("report", r"DELETE FROM reports"),
    "disconnected in record_run": ("record_run", r"UPDATE runs SET"),
}


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("cut", list(CUTS))
def test_a_run_cut_off_after_its_publish_commit_is_completed_by_the_next_backfill(pg_warehouse_url, cut):
    step, pattern = CUTS[cut]
    engine, old = published_then_late(pg_warehouse_url, DAY)
    new = job.new_run_id(DAY)
    if pattern is None:  # the process ends before `step`: the steps before it are the last it ran
        previous = job.STEP_NAMES[job.STEP_NAMES.index(step) - 1]
        run_steps(pg_warehouse_url, DAY, orbit_settings(), new, until=previous)
    else:
        fault = DropConnection(step, f"(?s){pattern}")
        failed = run_steps(pg_warehouse_url, DAY, orbit_settings(), new, fault=fault, retry_failed=False)
        assert fault.fired and failed == [step], (fault, failed)
    assert all(set(v) == {new} for v in published_run_ids(engine, DAY).values()), "the publish committed"
    missing = runs.missing_after_publish(engine, new, AFTER_PUBLISH)
    assert missing and missing[-1] == "record_run", missing
    if "report" in missing:
        assert _report_run(engine) == old, "the stored report is still the old run's: what the repair fixes"

    report = job.backfill(engine, [DAY], orbit_settings())  # not forced: the day is up to date
    assert report.up_to_date == [DAY.isoformat()] and report.completed == {DAY.isoformat(): missing}
    _assert_repaired(engine, new)
    assert job.backfill(engine, [DAY], orbit_settings()).completed == {}  # nothing left to complete
    engine.dispose()


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_sigkill_right_after_the_publish_commit_then_cli_run_completes_the_day(request, tmp_path, monkeypatch,
                                                                               backend, capsys):
    """The publish child is SIGKILLed after its commit, while it removes its staging; `citecheck
    run` (no --force) then says what it completed, and the report follows the rows."""
    from citecheck.cli import main

    url = request.getfixturevalue("pg_warehouse_url") if backend == "postgresql" else f"sqlite:///{tmp_path}/w.db"
    engine, old = published_then_late(url, DAY)
    new = job.new_run_id(DAY)
    run_steps(url, DAY, orbit_settings(), new, until="validate")
    marker = tmp_path / "held"
    env = {**os.environ, "CITECHECK_FAULT_HOLD_AFTER": "DELETE FROM stage_turns", "CITECHECK_FAULT_MARKER": str(marker)}
    child = subprocess.Popen([sys.executable, str(TESTS / "helpers" / "faults.py"), url, DAY.isoformat(), new],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: marker.exists() or child.poll() is not None, "the publish to pass its commit")
        assert marker.exists(), child.stderr.read()[-2000:]
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        child.stderr.close()
    assert W.published_run_id(engine, DAY) == new and _report_run(engine) == old

    import json

    from helpers import load_fixture

    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(load_fixture("orbit_labs.json")["judge"]))
    config = tmp_path / "config.toml"
    refusal = json.dumps(load_fixture("orbit_labs.json")["refusal_text"])
    config.write_text(f"[check_worthiness]\nrefusals = [{refusal}]\n")
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", url)
    monkeypatch.setenv("CITECHECK_JUDGE", str(judge))
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    assert job.settings_from_env().run_config_hash == orbit_settings().run_config_hash
    if backend == "postgresql":  # the killed child's backend (holding its lock row update) ends first
        wait_for(lambda: not _child_backends(engine), "the killed child's backend to end", timeout=15)
    capsys.readouterr()
    assert main(["run", "--day", DAY.isoformat()]) == 0
    out = capsys.readouterr().out
    assert "stopped after the publish commit: completed monitor, report, record_run" in out, out
    _assert_repaired(engine, new)
    engine.dispose()


def _child_backends(engine: sa.Engine) -> list[int]:
    with engine.connect() as conn:
        return list(conn.execute(sa.text(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND state = 'idle in transaction'")).scalars())
