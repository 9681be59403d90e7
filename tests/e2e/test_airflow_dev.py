"""bin/airflow-dev's pieces that need no running deployment: URLs, the warehouse connection, the
environment, and the clear errors when a service is missing or nothing is up. (The deployment
itself: tests/e2e/test_airflow_deployment.py.)"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "bin" / "airflow-dev"
_spec = importlib.util.spec_from_file_location("airflow_dev", REPO / "bin" / "airflow_dev.py")
airflow_dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(airflow_dev)


def run_dev(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "AIRFLOW_DEV_PYTHON": sys.executable, "AIRFLOW_HOME": str(tmp_path / "home"), **env}
    return subprocess.run([str(DEV), *args], env=full, capture_output=True, text=True, timeout=120)


def test_the_async_metadata_url_is_the_same_database_with_asyncpg():
    assert airflow_dev.async_url("postgresql+psycopg://u:p@h:5433/airflow") == "postgresql+asyncpg://u:p@h:5433/airflow"
    assert airflow_dev.async_url("postgresql://u@h/airflow") == "postgresql+asyncpg://u@h/airflow"
    with pytest.raises(airflow_dev.DevError, match="must be PostgreSQL"):
        airflow_dev.async_url("sqlite:////tmp/airflow.db")


@pytest.mark.parametrize("url", [
    "postgresql+psycopg://citecheck:s3cr%40t@db.example:6543/warehouse",
    "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    "postgres://reader:pw@wh/analytics?sslmode=require",
])
def test_a_postgres_warehouse_becomes_a_postgres_connection_whose_uri_the_job_opens(url):
    """The connection `up` imports is of type `postgres` (the Postgres provider's), and the URI
    Airflow renders for it opens the same database with the job's driver."""
    from airflow.models.connection import Connection
    from sqlalchemy.engine import make_url

    from citecheck.warehouse import warehouse_url

    conn = airflow_dev.warehouse_connection(url)
    assert conn["conn_type"] == "postgres"
    extra = json.loads(conn.pop("extra", "{}"))
    rendered = Connection(conn_id="citecheck_warehouse", **conn, extra=json.dumps(extra) if extra else None).get_uri()
    got, want = make_url(warehouse_url(rendered)), make_url(url)
    assert got.drivername == "postgresql+psycopg"
    assert (got.username, got.password, got.host, got.port or 5432, got.database) == (
        want.username, want.password, want.host, want.port or 5432, want.database)
    assert dict(got.query) == dict(want.query)


def test_a_sqlite_warehouse_makes_no_connection():
    assert airflow_dev.warehouse_connection("sqlite:////tmp/wh.sqlite") is None


def test_the_environment_every_process_gets(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW__CORE__PARALLELISM", "3")
    monkeypatch.setenv("CITECHECK_JUDGE", "/srv/judge.json")
    monkeypatch.delenv("CITECHECK_NLI_QUEUE", raising=False)
    env = airflow_dev.deployment_env(
        tmp_path, celery=True, ports={"api-server": 41000, "log-server": 41001, "trigger-log-server": 41002},
        db_url="postgresql+psycopg://postgres@127.0.0.1:5432/meta", broker_url="redis://127.0.0.1:6379/0",
        secrets_={"fernet_key": "f", "api_secret_key": "a", "jwt_secret": "j"}, prefix="p:")
    assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:41000/execution/"
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"] == "postgresql+asyncpg://postgres@127.0.0.1:5432/meta"
    assert env["AIRFLOW__CELERY__RESULT_BACKEND"] == "db+postgresql+psycopg://postgres@127.0.0.1:5432/meta"
    assert int(env["AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__VISIBILITY_TIMEOUT"]) > 25 * 3600
    assert env["AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__GLOBAL_KEYPREFIX"] == "p:"
    assert env["AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT"] == "41001"
    assert env["AIRFLOW__CORE__PARALLELISM"] == "3", "the caller's AIRFLOW__* win"
    assert env["CITECHECK_JUDGE"] == "/srv/judge.json" and env["CITECHECK_NLI_QUEUE"] == "nli"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(REPO / "include")
    local = airflow_dev.deployment_env(
        tmp_path, celery=False, ports={"api-server": 1, "log-server": 2, "trigger-log-server": 3},
        db_url="postgresql+psycopg://h/meta", broker_url="", secrets_={"fernet_key": "f", "api_secret_key": "a",
                                                                      "jwt_secret": "j"}, prefix="")
    assert local["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert not any(k.startswith("AIRFLOW__CELERY") for k in local)
    procs = airflow_dev.components(True, "nli")
    assert procs["worker-nli"][procs["worker-nli"].index("--queues") + 1] == "nli"
    assert procs["worker-default"][procs["worker-default"].index("--queues") + 1] == "default"
    assert set(airflow_dev.components(False, "nli")) == {"api-server", "scheduler", "dag-processor", "triggerer"}


def test_up_fails_by_name_when_the_metadata_database_is_unreachable(tmp_path):
    out = run_dev(tmp_path, "up", AIRFLOW_DEV_DB_URL="postgresql+psycopg://postgres@127.0.0.1:1/airflow_dev")
    assert out.returncode == 1
    assert "metadata database server" in out.stderr and "127.0.0.1:1" in out.stderr
    assert not (tmp_path / "home" / "airflow-dev.json").exists()


def test_up_celery_fails_by_name_when_the_broker_is_unreachable(tmp_path, pg_url):
    out = run_dev(tmp_path, "up", "--celery", AIRFLOW_DEV_DB_URL=pg_url, AIRFLOW_DEV_BROKER_URL="redis://127.0.0.1:1/0")
    assert out.returncode == 1 and "Celery broker at redis://127.0.0.1:1/0 is not reachable" in out.stderr


@pytest.mark.parametrize("command", ["status", "down", "airflow", "restart"])
def test_commands_without_a_deployment_say_so(tmp_path, command):
    out = run_dev(tmp_path, command, *(["worker-nli"] if command == "restart" else []))
    assert out.returncode == 1 and "no deployment at" in out.stderr and "bin/airflow-dev up" in out.stderr


def test_each_deployment_has_its_own_metadata_database(tmp_path):
    one, two = airflow_dev.default_db_url(tmp_path / "a"), airflow_dev.default_db_url(tmp_path / "b")
    assert one != two and one.rsplit("/", 1)[1].startswith("airflow_dev_")
    assert airflow_dev.default_db_url(tmp_path / "a") == one


def test_a_backfill_of_a_paused_dag_is_refused_with_the_unpause_command(monkeypatch):
    monkeypatch.setattr(airflow_dev, "health", lambda _url: {"scheduler": {"status": "healthy"}})
    calls = []

    def api(_self, method, path, body=None):
        calls.append((method, path))
        return {"is_paused": True}

    monkeypatch.setattr(airflow_dev.Api, "__call__", api)
    state = {"ui_url": "http://127.0.0.1:1", "password": "x"}
    with pytest.raises(airflow_dev.DevError, match=r"is paused: a backfill's runs would stay queued for ever.*"
                                                   r"airflow dags unpause citation_metrics_daily"):
        airflow_dev.refuse_a_paused_backfill(state, ["backfill", "create", "--dag-id", "citation_metrics_daily",
                                                     "--from-date", "2026-11-23", "--to-date", "2026-11-25"])
    assert calls == [("GET", "/api/v2/dags/citation_metrics_daily")]
    airflow_dev.refuse_a_paused_backfill(state, ["dags", "list"])  # other commands pass untouched
    assert len(calls) == 1
