"""The DAG: integrity, parse cost, and end-to-end `dag.test()` runs through Airflow itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import REPO, load_fixture, orbit_warehouse_turns

HEAVY = ("torch", "sentence_transformers", "great_expectations", "anthropic", "transformers", "pandas")


def _airflow_env(tmp_path, warehouse_url: str) -> dict[str, str]:
    data = load_fixture("orbit_labs.json")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(data["judge"]))
    config = tmp_path / "config.toml"
    config.write_text(f'[check_worthiness]\nrefusals = ["{data["refusal_text"]}"]\n')
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


def test_dag_imports_cleanly_without_heavy_modules(tmp_path):
    code = (
        "import sys, time; t = time.perf_counter();"
        "from airflow.dag_processing.dagbag import DagBag;"
        f"bag = DagBag(dag_folder={str(REPO / 'dags')!r});"
        "dag = bag.dags['citation_metrics_daily'];"
        "print(repr(bag.import_errors)); print(sorted(t.task_id for t in dag.tasks));"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    env = _airflow_env(tmp_path, f"sqlite:///{tmp_path}/wh.sqlite")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    print(f"DAG parse incl. Airflow import: {time.perf_counter() - started:.2f}s")
    errors, tasks, heavy = out.stdout.strip().splitlines()[-3:]
    assert errors == "{}"
    assert tasks == str(sorted(["extract", "structural", "judge_shard", "escalate", "aggregate", "validate",
                                "publish", "record_run"]))
    assert heavy == "[]", f"heavy modules imported at parse time: {heavy}"


def test_dag_properties():
    from airflow.dag_processing.dagbag import DagBag

    dag = DagBag(dag_folder=str(REPO / "dags")).dags["citation_metrics_daily"]
    assert dag.catchup is False
    assert dag.max_active_runs >= 1 and dag.doc_md and "citecheck" in dag.tags
    assert type(dag.timetable).__name__ == "CronDataIntervalTimetable"
    shard = dag.get_task("judge_shard")
    assert shard.pool == "nli"
    assert dag.get_task("extract").retries >= 1
    assert dag.get_task("extract").execution_timeout is not None
    assert {a.uri for a in dag.get_task("publish").outlets} == {"citecheck://warehouse/daily_metrics"}
    assert {"nli_share", "shards", "llm_sample_rate", "llm_budget_usd"} <= set(dag.params)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_dag_test_end_to_end(tmp_path, request, backend):
    from citecheck import warehouse as W
    from citecheck.job import day_metrics

    url = f"sqlite:///{tmp_path}/wh.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_warehouse_url")
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    W.load_turns(engine, orbit_warehouse_turns())
    env = _airflow_env(tmp_path, url)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, str(REPO / "bin" / "run_dag.py"), "2026-11-30"], env=env,
                         capture_output=True, text=True, timeout=500)
    print(f"dag.test wall time: {time.perf_counter() - started:.1f}s")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    assert "citation_recall" in out.stdout
    micro = {r["metric"]: r["value"] for r in day_metrics(engine, __import__("datetime").date(2026, 11, 30))
             if r["slice_name"] == "all" and r["averaging"] == "micro"}
    assert micro["citation_recall"] == pytest.approx(0.375)
    assert micro["attachment_rate"] == pytest.approx(0.75)
    logs = out.stdout + out.stderr
    for text in ("nightly hotel cap is 220 euros", "Approved reports are paid within 5 business days"):
        assert text not in logs, "answer or passage text leaked into the task logs"
