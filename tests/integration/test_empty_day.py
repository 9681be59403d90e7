"""An empty or missing day is never a healthy published day (issue 14, item 2): it fails validation
with a readable reason, publishes nothing and leaves a day that had data as it was. SQLite and
PostgreSQL (the `engine` fixture), through the job and through the CLI."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.warehouse import tables as T
from helpers import REPO, orbit_settings, orbit_warehouse_turns

DAY = dt.date(2026, 11, 30)


def _runs(engine) -> dict[str, dict]:
    with engine.connect() as conn:
        return {r["run_id"]: dict(r) for r in conn.execute(sa.select(T.runs)).mappings()}


def test_a_day_without_turns_fails_and_publishes_nothing(engine):
    with pytest.raises(job.ValidationFailed) as err:
        job.run_day(engine, DAY, orbit_settings())
    assert "enough_turns" in str(err.value) and "turns_scored=0" in str(err.value)
    assert job.day_metrics(engine, DAY) == []
    (run,) = _runs(engine).values()
    assert run["status"] == "failed_validation" and "enough_turns" in run["error"]
    with engine.connect() as conn:
        staged = sum(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one() for t in T.STAGING_TABLES)
    assert staged == 0


def test_a_day_that_lost_its_turns_never_replaces_the_published_one(engine):
    W.load_turns(engine, orbit_warehouse_turns())
    good = job.run_day(engine, DAY, orbit_settings())
    before = job.day_metrics(engine, DAY)
    with engine.begin() as conn:  # the day's logs are gone (a failed load upstream)
        for table in ("source_passages", "source_turns"):
            conn.execute(sa.text(f"DELETE FROM {table}"))
    with pytest.raises(job.ValidationFailed, match="enough_turns"):
        job.run_day(engine, DAY, orbit_settings())
    assert job.day_metrics(engine, DAY) == before
    assert {r["run_id"] for r in job.day_metrics(engine, DAY)} == {good["run_id"]}


def test_the_minimum_of_turns_catches_a_half_loaded_day(engine):
    W.load_turns(engine, orbit_warehouse_turns())  # 3 scorable turns and one malformed
    with pytest.raises(job.ValidationFailed, match=r"enough_turns.*turns_scored=3"):
        job.run_day(engine, DAY, orbit_settings(min_turns=4))
    assert job.day_metrics(engine, DAY) == []
    job.run_day(engine, DAY, orbit_settings(min_turns=3))
    assert job.day_metrics(engine, DAY)


def test_the_min_turns_setting_does_not_change_the_config_hash():
    assert orbit_settings(min_turns=50).run_config_hash == orbit_settings().run_config_hash


def test_cli_run_of_an_empty_day_exits_3_and_a_bad_minimum_exits_2(engine, tmp_path):
    import json

    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"kind": "recorded", "judgments": []}))
    env = {"PYTHONPATH": str(REPO / "include"), "CITECHECK_JUDGE": str(judge)}
    base = [sys.executable, "-m", "citecheck", "run", "--day", DAY.isoformat()]

    def run(*extra: str, **more: str) -> subprocess.CompletedProcess[str]:
        import os

        return subprocess.run([*base, *extra], env={**os.environ, **env, **more}, capture_output=True, text=True,
                              timeout=300)

    empty = run()
    assert empty.returncode == 3 and "enough_turns" in empty.stderr, empty.stderr[-2000:]
    bad = run("--min-turns", "0")
    assert bad.returncode == 2 and "at least 1" in bad.stderr and "Traceback" not in bad.stderr
    bad_env = run(CITECHECK_MIN_TURNS="lots")
    assert bad_env.returncode == 2 and "CITECHECK_MIN_TURNS" in bad_env.stderr
