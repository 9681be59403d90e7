"""The DAG: integrity, parse cost, and end-to-end `dag.test()` runs through Airflow itself."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time

import pytest

from helpers import REPO, load_fixture, orbit_warehouse_turns
from helpers.dags import airflow_env, dag_test

HEAVY = ("torch", "sentence_transformers", "great_expectations", "anthropic", "transformers", "pandas")


def test_dag_imports_cleanly_without_heavy_modules(tmp_path):
    code = (
        "import sys, time; t = time.perf_counter();"
        "from airflow.dag_processing.dagbag import DagBag;"
        f"bag = DagBag(dag_folder={str(REPO / 'dags')!r});"
        "dag = bag.dags['citation_metrics_daily'];"
        "print(repr(bag.import_errors)); print(sorted(t.task_id for t in dag.tasks));"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    env = airflow_env(tmp_path, f"sqlite:///{tmp_path}/wh.sqlite")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    print(f"DAG parse incl. Airflow import: {time.perf_counter() - started:.2f}s")
    errors, tasks, heavy = out.stdout.strip().splitlines()[-3:]
    assert errors == "{}"
    assert tasks == str(sorted(["open_run", "structural", "split_claims", "judge_shard", "escalate", "fold_shard",
                                "combine", "validate", "publish", "monitor", "report", "record_run"]))
    assert heavy == "[]", f"heavy modules imported at parse time: {heavy}"


def test_dag_properties():
    from airflow.dag_processing.dagbag import DagBag

    dag = DagBag(dag_folder=str(REPO / "dags")).dags["citation_metrics_daily"]
    assert dag.catchup is False
    assert dag.max_active_runs >= 1 and dag.doc_md and "citecheck" in dag.tags
    assert type(dag.timetable).__name__ == "CronDataIntervalTimetable"
    shard = dag.get_task("judge_shard")
    assert shard.pool == "nli"
    assert dag.get_task("open_run").retries >= 1
    assert dag.get_task("open_run").execution_timeout is not None
    assert {a.uri for a in dag.get_task("publish").outlets} == {"citecheck://warehouse/daily_metrics"}
    assert {"nli_share", "shards", "llm_sample_rate", "llm_budget_usd"} <= set(dag.params)


def test_dag_deployment_properties(monkeypatch):
    """What a real deployment meets (issue 14): a description, the shards on the `nli` queue by
    default, one XCom per task (no dict split into keys), the `day` and `min_turns` params, the
    retry delay left to Airflow's config, escalate's timeout under the broker's visibility timeout."""
    import importlib.util

    from airflow.dag_processing.dagbag import DagBag

    monkeypatch.delenv("CITECHECK_NLI_QUEUE", raising=False)
    dag = DagBag(dag_folder=str(REPO / "dags")).dags["citation_metrics_daily"]
    assert dag.description and "citation" in dag.description.lower()
    assert dag.get_task("judge_shard").queue == "nli"
    assert {t.task_id for t in dag.tasks if t.queue != "nli"} == {t.task_id for t in dag.tasks} - {"judge_shard"}
    assert [t.task_id for t in dag.tasks if getattr(t, "multiple_outputs", False)] == []
    day = dag.params.get_param("day")
    assert day.value is None and day.schema["format"] == "date"
    assert dag.params.get_param("min_turns").schema["minimum"] == 1
    assert "retry_delay" not in dag.default_args  # [core] default_task_retry_delay (300 s) applies
    spec = importlib.util.spec_from_file_location("airflow_dev", REPO / "bin" / "airflow_dev.py")
    airflow_dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(airflow_dev)
    longest = max(t.execution_timeout for t in dag.tasks if t.execution_timeout)
    assert longest == dag.get_task("escalate").execution_timeout
    assert longest.total_seconds() < airflow_dev.VISIBILITY_TIMEOUT_S


def test_dag_wires_the_job_step_sequence_with_data_flow():
    from airflow.dag_processing.dagbag import DagBag

    from citecheck.job import STEP_NAMES

    dag = DagBag(dag_folder=str(REPO / "dags")).dags["citation_metrics_daily"]
    assert {t.task_id for t in dag.tasks} == set(STEP_NAMES)
    for earlier, later in itertools.pairwise(STEP_NAMES):
        assert earlier in dag.get_task(later).get_flat_relative_ids(upstream=True), f"{earlier} before {later}"
    for name in STEP_NAMES[1:]:  # every task takes the day and run id that open_run returned
        assert "open_run" in dag.get_task(name).upstream_task_ids, name


def _run_dag(tmp_path, url: str, **env_overrides: str) -> subprocess.CompletedProcess[str]:
    """Load the Orbit day into the warehouse at `url` and run the DAG for it with `dag.test()`."""
    from citecheck import warehouse as W

    engine = W.make_engine(url)
    W.init_warehouse(engine)
    W.load_turns(engine, orbit_warehouse_turns())
    engine.dispose()
    out = dag_test(tmp_path, url, "2026-11-30", **env_overrides)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_dag_test_end_to_end(tmp_path, request, backend):
    from citecheck import warehouse as W
    from citecheck.job import day_metrics

    url = f"sqlite:///{tmp_path}/wh.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_warehouse_url")
    out = _run_dag(tmp_path, url)
    engine = W.make_engine(url)
    assert "citation_recall" in out.stdout
    micro = {r["metric"]: r["value"] for r in day_metrics(engine, __import__("datetime").date(2026, 11, 30))
             if r["slice_name"] == "all" and r["averaging"] == "micro"}
    assert micro["citation_recall"] == pytest.approx(0.375)
    assert micro["attachment_rate"] == pytest.approx(0.75)
    from citecheck.warehouse.read_model import report_index  # the report task stored the day's report

    (run_id,) = {r["run_id"] for r in day_metrics(engine, __import__("datetime").date(2026, 11, 30))}
    assert [(r["day"].isoformat(), r["run_id"]) for r in report_index(engine)] == [("2026-11-30", run_id)]
    logs = out.stdout + out.stderr
    for text in ("nightly hotel cap is 220 euros", "Approved reports are paid within 5 business days"):
        assert text not in logs, "answer or passage text leaked into the task logs"


@pytest.mark.slow
def test_dag_test_with_a_tiny_local_nli_model(tmp_path):
    """The NLI judge inside the mapped shards: real CrossEncoder loading from a local path."""
    import datetime as dt

    import sqlalchemy as sa

    from citecheck import warehouse as W
    from citecheck.warehouse import tables as T
    from helpers.tiny_models import save_tiny_nli

    model = save_tiny_nli(tmp_path / "tiny_nli")
    judge = tmp_path / "nli_judge.json"
    judge.write_text(json.dumps({"kind": "nli", "model": str(model), "batch_size": 8}))
    url = f"sqlite:///{tmp_path}/wh.sqlite"
    _run_dag(tmp_path, url, CITECHECK_JUDGE=str(judge))
    engine = W.make_engine(url)
    with engine.connect() as conn:
        judges = conn.execute(sa.select(T.sentence_verdicts.c.judge, sa.func.count()).group_by(
            T.sentence_verdicts.c.judge)).all()
        run = conn.execute(sa.select(T.runs).where(T.runs.c.day == dt.date(2026, 11, 30))).mappings().one()
        cached = conn.execute(sa.select(sa.func.count()).select_from(sa.table("judgment_cache"))).scalar_one()
    assert dict(judges).get("nli", 0) >= 1, judges
    assert run["status"] == "published" and str(model) in run["judge_versions"]
    assert cached >= 1, "NLI pair scores are cached in the warehouse"


@pytest.mark.slow
def test_no_text_or_api_key_in_the_logs_of_a_cascade_run(tmp_path, monkeypatch):
    """The real SDK against the fake Messages API, inside `dag.test()`, with a failing call and the
    key from an Airflow connection: the captured logs and XCom hold no answer text, passage text
    or API key."""
    import datetime as dt

    import sqlalchemy as sa

    from citecheck import warehouse as W
    from citecheck.warehouse import tables as T
    from helpers.fake_anthropic import FakeAnthropic

    secret = "sk-ant-api03-TESTSECRET-" + "x" * 24
    orbit = load_fixture("orbit_labs.json")
    spec = {"kind": "cascade", "first": orbit["judge"],
            "escalate": {"kind": "anthropic", "backoff_base_s": 0.001, "max_retries": 2, "sample_rate": 1.0}}
    judge = tmp_path / "cascade.json"
    judge.write_text(json.dumps(spec))
    server = FakeAnthropic().start()
    server.script.append({"status": 500})  # one server error, retried
    try:
        url = f"sqlite:///{tmp_path}/wh.sqlite"
        connection = json.dumps({"conn_type": "generic", "password": secret})
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        out = _run_dag(tmp_path, url, CITECHECK_JUDGE=str(judge), AIRFLOW_CONN_CITECHECK_ANTHROPIC=connection,
                       ANTHROPIC_BASE_URL=server.url)
    finally:
        server.stop()
    assert server.message_requests(), "the escalation reached the (fake) Anthropic API"
    sent = {r["headers"].get("x-api-key") or r["headers"].get("authorization", "").removeprefix("Bearer ")
            for r in server.message_requests()}
    assert sent == {secret}, "the key comes from the Airflow connection"
    logs = out.stdout + out.stderr
    texts = [secret, secret[-24:], "nightly hotel cap is 220 euros",
             "Approved reports are paid within 5 business days"]
    texts += [p["text"][:60] for t in orbit["turns"] for p in t["context"]]
    texts += [t["answer"][:60] for t in orbit["turns"]]
    leaked = [t for t in texts if t in logs]
    assert not leaked, f"leaked into the task logs: {leaked}"
    xcom = sa.create_engine(f"sqlite:///{tmp_path}/airflow.db")
    with xcom.connect() as conn:
        values = [str(v) for (v,) in conn.execute(sa.text("SELECT value FROM xcom"))]
    assert values, "the run's XCom was recorded"
    leaked = [t for t in texts if any(t in v for v in values)]
    assert not leaked, f"leaked into XCom: {leaked}"
    engine = W.make_engine(url)
    with engine.connect() as conn:
        run = conn.execute(sa.select(T.runs).where(T.runs.c.day == dt.date(2026, 11, 30))).mappings().one()
        llm_rows = conn.execute(sa.select(sa.func.count()).select_from(T.sentence_verdicts).where(
            T.sentence_verdicts.c.llm.is_not(None))).scalar_one()
    assert run["status"] == "published" and llm_rows >= 1
    assert secret not in json.dumps(run, default=str)
