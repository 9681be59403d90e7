"""Running the daily DAG through Airflow itself in tests: `dag.test()` in a subprocess, with a
private AIRFLOW_HOME and SQLite metadata database, against a given warehouse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from helpers import REPO, load_fixture
from helpers.airflow_db import copy_migrated_db


def airflow_env(tmp_path, warehouse_url: str) -> dict[str, str]:
    """The environment of an Airflow subprocess: the Orbit judge and config, the warehouse URL."""
    data = load_fixture("orbit_labs.json")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(data["judge"]))
    config = tmp_path / "config.toml"
    config.write_text(f'[check_worthiness]\nrefusals = ["{data["refusal_text"]}"]\n')
    copy_migrated_db(tmp_path / "airflow.db")
    env = dict(os.environ)
    env.update({
        "AIRFLOW_HOME": str(tmp_path / "airflow_home"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{tmp_path}/airflow.db",
        "CITECHECK_WAREHOUSE_URL": warehouse_url,
        "CITECHECK_JUDGE": str(judge),
        "CITECHECK_CONFIG": str(config),
    })
    return env


def dag_test(tmp_path, url: str, day: str, *, timeout: float = 500, **env_overrides: str
             ) -> subprocess.CompletedProcess[str]:
    """`bin/run_dag.py DAY` (`dag.test()` on a local AIRFLOW_HOME) against the warehouse at `url`."""
    env = {**airflow_env(tmp_path, url), **env_overrides}
    started = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, str(REPO / "bin" / "run_dag.py"), day], env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:  # e.g. a failed task waiting out its retry delay
        pytest.fail(f"dag.test did not end: {(exc.stdout or b'')[-3000:].decode(errors='replace')}")
    print(f"dag.test wall time: {time.perf_counter() - started:.1f}s")
    return out
