"""The DAG on a real Airflow deployment, not `dag.test()`: `bin/airflow-dev up --celery`.

Postgres metadata database and Celery result backend, the local Redis as broker, a real
scheduler, dag-processor, api-server and triggerer, one Celery worker on `default` and one on
`nli`. The scenario runs once (module fixture) and the tests check what it left:

1. Three sample days D1..D3 (D3 = yesterday) are loaded; a CLI `citecheck backfill` of the same
   days into a second warehouse is the reference.
2. Unpausing makes the scheduled run of D3; `airflow dags trigger --conf '{"day": D1}'` the manual
   run of D1. While a `judge_shard` of that run waits on the warehouse (the test holds a lock on
   the staging table), the NLI worker is killed with SIGKILL, then restarted: the task is retried
   by the scheduler on the new worker.
3. `airflow backfill create` of D1..D3 (`--reprocess-behavior completed`) reruns all three.
   (Before unpausing, the same command is refused: a paused DAG's backfill runs would stay queued.)
4. Two manual runs of D2 triggered together: one run per day at a time, the second one's
   `open_run` fails on the day's lock, retries, and runs after the first has finished.
5. A batch of reader events of D2 arrives late (`citecheck load-events`): D2 is stale. Unpausing
   `citation_metrics_restate` makes its scheduled run find D2 and trigger `citation_metrics_daily`
   with `conf={"day": D2}`; that run republishes D2 with the late events, as a CLI `backfill` of the
   reference warehouse after the same late load does.
6. A backfill is created and `down` follows at once: `down` cancels it (it would block every later
   `backfill create` of the DAG with AlreadyRunningBackfill).

Then: each day's published rows equal the CLI's (D1 by the manual run and by the backfill, D3 by
the scheduled run and by the backfill; the deployment cut each day into the DAG's 4 shards, the
CLI ran it as one); the shards ran on the NLI worker and every other task on
the default one, by the workers' own logs; no answer or passage text and no secret in any task log
or XCom; one XCom per task; no error line in the task logs of the clean (backfill) runs; the
the dag-processor parses the DAG without errors; `down` stops every process `up` started.

A missing PostgreSQL or Redis fails the module loudly. The whole module stays under 4 minutes
on an idle 2-core machine (it prints its phases' wall times).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.util
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from citecheck.job import STEP_NAMES
from helpers.published import published_rows

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "bin" / "airflow-dev"
DAG_ID = "citation_metrics_daily"
RESTATE_DAG_ID = "citation_metrics_restate"
TURNS_PER_DAY = 40
PHASE_TIMEOUT_S = 360

_spec = importlib.util.spec_from_file_location("airflow_dev", REPO / "bin" / "airflow_dev.py")
airflow_dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(airflow_dev)

pytestmark = pytest.mark.slow


# --- the scenario ----------------------------------------------------------------------------

class Stack:
    """The deployment under test: its environment, databases and what the scenario observed."""

    def __init__(self, base: Path, pg_url: str) -> None:
        self.base = base
        self.home = base / "airflow_home"
        tag = uuid.uuid4().hex[:10]
        url = sa.engine.make_url(pg_url)
        self.admin_url = pg_url
        self.dbs = {"meta": f"citecheck_af_{tag}", "wh": f"citecheck_wh_{tag}", "ref": f"citecheck_ref_{tag}"}
        # trust auth ignores the password; it is there to prove it never reaches a log or XCom
        self.wh_password = "pw-" + secrets.token_hex(12)
        self.urls = {k: url.set(database=v).render_as_string(hide_password=False) for k, v in self.dbs.items()}
        self.wh_url = url.set(database=self.dbs["wh"], password=self.wh_password).render_as_string(
            hide_password=False)
        self.anthropic_key = "sk-ant-api03-E2ESECRET-" + secrets.token_hex(12)
        yesterday = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
        self.days = [yesterday - dt.timedelta(days=2 - i) for i in range(3)]
        self.judge = base / "sample-judge.json"
        self.timings: dict[str, float] = {}
        self.observed: dict[str, Any] = {}

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "AIRFLOW_DEV_PYTHON": sys.executable, "AIRFLOW_HOME": str(self.home),
            "AIRFLOW_DEV_DB_URL": self.urls["meta"], "CITECHECK_WAREHOUSE_URL": self.wh_url,
            "CITECHECK_JUDGE": str(self.judge), "ANTHROPIC_API_KEY": self.anthropic_key,
            "CITECHECK_NLI_WORKER_CONCURRENCY": "2", "CITECHECK_NLI_POOL_SLOTS": "4",
            "PYTHONPATH": str(REPO / "include"),
            # a dead worker's task is found within seconds, and retried at once (defaults: 300 s each)
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "20",
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "3",
            "AIRFLOW__CORE__DEFAULT_TASK_RETRY_DELAY": "2",
            "AIRFLOW__DAG_PROCESSOR__PRINT_STATS_INTERVAL": "5",
        })
        env.pop("CITECHECK_WAREHOUSE_CONN_ID", None)
        env.pop("CITECHECK_NLI_QUEUE", None)
        return env

    def dev(self, *args: str, timeout: float = 400) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([str(DEV), *args], env=self.env(), capture_output=True, text=True, timeout=timeout)
        if out.returncode != 0:
            raise AssertionError(f"bin/airflow-dev {' '.join(args)} failed ({out.returncode}):\n"
                                 f"{out.stdout[-3000:]}\n{out.stderr[-5000:]}")
        return out

    def citecheck(self, url: str, *args: str) -> str:
        env = {**self.env(), "CITECHECK_WAREHOUSE_URL": url}
        out = subprocess.run([sys.executable, "-m", "citecheck", *args], env=env, capture_output=True, text=True,
                             timeout=400, cwd=self.base)
        assert out.returncode == 0, f"citecheck {' '.join(args)}: {out.stdout[-2000:]}{out.stderr[-3000:]}"
        return out.stdout

    def meta(self) -> sa.Engine:
        return sa.create_engine(self.urls["meta"])


def _require_services(pg_url: str) -> None:
    try:
        airflow_dev.ensure_broker(airflow_dev.DEFAULT_BROKER_URL)
    except airflow_dev.DevError as exc:
        pytest.fail(f"Redis is required for the CeleryExecutor test: {exc}")
    engine = sa.create_engine(pg_url)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("select 1"))
    except Exception as exc:  # the failure is the point
        pytest.fail(f"PostgreSQL is required at {pg_url}: {exc}")
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    pg_url = os.environ.get("CITECHECK_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    _require_services(pg_url)
    s = Stack(tmp_path_factory.mktemp("airflow_e2e"), pg_url)
    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for name in s.dbs.values():
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    started = time.monotonic()
    up = None
    try:
        # the deployment starts while the warehouses are loaded and the CLI reference runs
        up = subprocess.Popen([str(DEV), "up", "--celery"], env=s.env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        first, last = s.days[0].isoformat(), s.days[-1].isoformat()
        for url in (s.wh_url, s.urls["ref"]):
            s.citecheck(url, "init-warehouse")
            s.citecheck(url, "load-sample", "--start", first, "--days", "3", "--turns-per-day", str(TURNS_PER_DAY),
                        "--write-judge", str(s.judge))
        # the reference: every day as one task per step (one shard); the deployment's runs take the
        # DAG's default of 4 shards
        s.citecheck(s.urls["ref"], "backfill", "--from", first, "--to", last, "--shards", "1")
        output, _ = up.communicate(timeout=airflow_dev.READY_TIMEOUT_S + 200)
        assert up.returncode == 0, f"bin/airflow-dev up --celery failed:\n{output[-5000:]}"
        s.observed["up_output"] = output
        s.timings["up (with the CLI reference alongside)"] = time.monotonic() - started
        _run_scenario(s)
        yield s
    finally:
        if up is not None and up.poll() is None:
            up.kill()
        if "down" not in s.observed:  # the scenario failed before its own `down`
            _down(s)
        s.timings["total"] = time.monotonic() - started
        print("\nwall times: " + ", ".join(f"{k} {v:.0f}s" for k, v in s.timings.items()))
        with admin.connect() as conn:
            for name in s.dbs.values():
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def _down(s: Stack) -> None:
    """`bin/airflow-dev down`, and which of the processes it had to stop (and their children,
    listed before) still run after it."""
    state = _state_or_none(s.home)
    if not state:
        s.observed["down"], s.observed["left_running"] = "no state file", []
        return
    tree = [p for pid in state["pids"].values() for p in (pid, *airflow_dev.descendants(pid))]
    down = subprocess.run([str(DEV), "down"], env=s.env(), capture_output=True, text=True, timeout=120)
    s.observed["down"] = down.stdout + down.stderr
    s.observed["stopped_tree"] = tree
    s.observed["left_running"] = [p for p in tree if airflow_dev.alive(p)]


def _state_or_none(home: Path) -> dict[str, Any] | None:
    path = airflow_dev.state_path(home)
    return json.loads(path.read_text()) if path.exists() else None


def _run_scenario(s: Stack) -> None:
    d1, d3 = s.days[0].isoformat(), s.days[-1].isoformat()
    started = time.monotonic()
    paused = subprocess.run([str(DEV), "airflow", "backfill", "create", "--dag-id", DAG_ID, "--from-date", d1,
                             "--to-date", d1], env=s.env(), capture_output=True, text=True, timeout=120)
    s.observed["paused_backfill"] = (paused.returncode, paused.stdout + paused.stderr)
    unpause = subprocess.Popen([str(DEV), "airflow", "dags", "unpause", DAG_ID], env=s.env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    s.dev("airflow", "dags", "trigger", DAG_ID, "--run-id", "manual_d1", "--conf", json.dumps({"day": d1}))
    assert unpause.wait(timeout=300) == 0, unpause.stdout.read()
    _kill_the_nli_worker_mid_shard(s, "manual_d1")
    runs = _wait_for_runs(s, {"scheduled": 1, "manual": 1}, phase="scheduled + manual")
    assert {r["run_type"] for r in runs} == {"scheduled", "manual"}, runs
    s.observed["phase1_runs"] = runs
    s.observed["phase1"] = {day: _published(s.wh_url, day) for day in (d1, d3)}
    s.timings["scheduled + manual run (worker killed)"] = time.monotonic() - started

    started = time.monotonic()
    s.dev("airflow", "backfill", "create", "--dag-id", DAG_ID, "--from-date", d1, "--to-date", d3,
          "--reprocess-behavior", "completed")
    # the run of D3 that already ran is cleared and rerun as one of the backfill's (run type backfill)
    runs = _wait_for_runs(s, {"manual": 1, "backfill": 3}, phase="backfill")
    s.observed["backfill_runs"] = [r for r in runs if r["run_type"] == "backfill"]
    backfill_ids = {r["run_id"] for r in s.observed["backfill_runs"]}  # their logs now: a later backfill reuses the ids
    s.observed["backfill_logs"] = {path: text for path, text in _task_logs(s.home).items()
                                   if any(f"run_id={run_id}" in path for run_id in backfill_ids)}
    s.observed["phase2"] = {day.isoformat(): _published(s.wh_url, day.isoformat()) for day in s.days}
    s.observed["reference"] = {day.isoformat(): _published(s.urls["ref"], day.isoformat()) for day in s.days}
    s.observed["phase2_run_ids"] = {day.isoformat(): _published_run_ids(s.wh_url, day.isoformat()) for day in s.days}
    s.timings["three-day backfill"] = time.monotonic() - started

    started = time.monotonic()
    d2 = s.days[1].isoformat()
    for run_id in ("lock_a_d2", "lock_b_d2"):
        s.dev("airflow", "dags", "trigger", DAG_ID, "--run-id", run_id, "--conf", json.dumps({"day": d2}))
    _wait_for_runs(s, {"manual": 3, "backfill": 3}, phase="two runs of one day")
    s.observed["lock_runs"] = _ledger(s.wh_url, d2, ("lock_a_d2", "lock_b_d2"))
    s.observed["lock_phase"] = _published(s.wh_url, d2)
    s.observed["lock_phase_run_ids"] = _published_run_ids(s.wh_url, d2)  # before the restate republishes D2
    s.timings["two runs of one day"] = time.monotonic() - started
    with s.meta().connect() as conn:
        s.observed["xcom"] = [dict(r) for r in conn.execute(sa.text(
            "SELECT run_id, task_id, map_index, key, value::text AS value FROM xcom WHERE dag_id = :d"),
            {"d": DAG_ID}).mappings()]
        s.observed["connection_type"] = conn.execute(sa.text(
            "SELECT conn_type FROM connection WHERE conn_id = 'citecheck_warehouse'")).scalar()
        s.observed["task_instances"] = [dict(r) for r in conn.execute(sa.text(
            "SELECT run_id, task_id, map_index, state, try_number, queue FROM task_instance WHERE dag_id = :d"),
            {"d": DAG_ID}).mappings()]
    s.observed["state"] = _state_or_none(s.home)
    started = time.monotonic()
    _restate_after_late_events(s)
    s.timings["restate after a late event batch"] = time.monotonic() - started
    s.dev("airflow", "backfill", "create", "--dag-id", DAG_ID, "--from-date", d1, "--to-date", d3,
          "--reprocess-behavior", "completed")
    started = time.monotonic()
    _down(s)
    s.timings["down"] = time.monotonic() - started
    with s.meta().connect() as conn:
        s.observed["backfills_after_down"] = [dict(r) for r in conn.execute(sa.text(
            "SELECT id, completed_at FROM backfill WHERE dag_id = :d"), {"d": DAG_ID}).mappings()]


def _ledger(url: str, day: str, prefixes: tuple[str, ...]) -> list[dict[str, Any]]:
    """The warehouse's `runs` rows of the day whose run id starts with one of `prefixes`."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = [dict(r) for r in conn.execute(sa.text(
                "SELECT run_id, status, started_at, finished_at FROM runs WHERE day = :d ORDER BY started_at"),
                {"d": dt.date.fromisoformat(day)}).mappings()]
    finally:
        engine.dispose()
    return [r for r in rows if r["run_id"].startswith(prefixes)]


def _late_events(url: str, day: str) -> list[dict[str, Any]]:
    """Reader events for judged sentences of `day`: shown, some opened, a few reported."""
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT turn_id, sentence_index, labels FROM sentence_verdicts WHERE day = :d AND check_worthy "
            "ORDER BY turn_id, sentence_index"), {"d": dt.date.fromisoformat(day)}).all()
    engine.dispose()
    events = []
    cited = [(t, i, json.loads(labels) if isinstance(labels, str) else labels) for t, i, labels in rows]
    for k, (turn_id, index, labels) in enumerate([c for c in cited if c[2]][:12]):
        kinds = ["citation_shown"] + (["citation_opened"] if k % 2 == 0 else []) + (
            ["source_reported"] if k % 4 == 0 else [])
        events += [{"event_id": f"late-{turn_id}-{index}-{kind}", "turn_id": turn_id, "event": kind,
                    "label": labels[0], "sentence_index": index, "occurred_at": f"{day}T23:30:00Z"} for kind in kinds]
    return events


def _restate_after_late_events(s: Stack) -> None:
    d1, d2, d3 = (d.isoformat() for d in s.days)
    events = _late_events(s.wh_url, d2)
    path = s.base / "late_events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    before = {url: _published(url, d2) for url in (s.wh_url, s.urls["ref"])}
    for url in (s.wh_url, s.urls["ref"]):
        s.citecheck(url, "load-events", "--file", str(path))
    stale = json.loads(s.citecheck(s.wh_url, "stale", "--from", d1, "--to", d3, "--json"))
    s.citecheck(s.urls["ref"], "backfill", "--from", d2, "--to", d2)  # the reference restates by the CLI
    meta = s.meta()
    s.dev("airflow", "dags", "unpause", RESTATE_DAG_ID)

    def restated() -> bool:
        runs = _runs(meta, RESTATE_DAG_ID)
        triggered = [r for r in _runs(meta) if r["run_id"].startswith("restate_")]
        if any(r["state"] == "failed" for r in runs + triggered):
            pytest.fail(f"a restate run failed: {runs + triggered}")
        return bool(runs) and all(r["state"] == "success" for r in runs) and bool(triggered) and all(
            r["state"] == "success" for r in triggered)

    _wait(restated, PHASE_TIMEOUT_S, "the restate DAG and the run it triggered", meta)
    s.observed["restate"] = {
        "late_events": len(events), "stale_before": stale, "published_before": before[s.wh_url],
        "restate_runs": _runs(meta, RESTATE_DAG_ID), "triggered": [r for r in _runs(meta)
                                                                   if r["run_id"].startswith("restate_")],
        "stale_after": json.loads(s.citecheck(s.wh_url, "stale", "--from", d1, "--to", d3, "--json")),
        "published": _published(s.wh_url, d2), "reference": _published(s.urls["ref"], d2),
        "run_ids": _published_run_ids(s.wh_url, d2),
        "others": {day: _published_run_ids(s.wh_url, day) for day in (d1, d3)},
    }


def _kill_the_nli_worker_mid_shard(s: Stack, run_id: str) -> None:
    """Hold the staging table once the run's `open_run` is done, wait until every task slot of the
    NLI worker holds a `judge_shard` blocked on the warehouse, SIGKILL the worker and everything below
    it, let go, restart the worker.

    A shard blocked on the held table has fenced its write first (`locks.fence`: FOR SHARE on the
    day's lock row, kept while it waits), so another shard of the same run waits at its start, in
    the day lock's renewal (`UPDATE day_locks`) behind it: it counts as blocked when what blocks it
    is a shard waiting on the held table.

    Every slot busy matters: with late acks and a prefetch of one per slot, the worker then holds
    no message it has not started. (A message it had received but not started would stay with the
    dead worker until the broker's visibility timeout, and its task `queued` until the scheduler's
    `task_queued_timeout`, 10 minutes by default; docs/airflow.md.)"""
    meta, wh = s.meta(), sa.create_engine(s.wh_url)
    slots = int(s.env()["CITECHECK_NLI_WORKER_CONCURRENCY"])
    _wait(lambda: _ti_states(meta, run_id, "open_run") == ["success"], 150, f"open_run of {run_id}", meta)
    with wh.connect() as hold:
        hold.exec_driver_sql("LOCK TABLE stage_judgments IN ACCESS EXCLUSIVE MODE")
        held = "query ILIKE 'DELETE FROM stage_judgments%%'"
        waiting = f"""SELECT count(*) FROM pg_stat_activity a WHERE datname = '{s.dbs["wh"]}'
                      AND wait_event_type = 'Lock' AND (a.{held} OR (a.query ILIKE 'UPDATE day_locks%%'
                      AND EXISTS (SELECT 1 FROM pg_stat_activity b
                                  WHERE b.pid = ANY(pg_blocking_pids(a.pid)) AND b.{held})))"""
        _wait(lambda: _scalar(wh, waiting) >= slots, 150, f"{slots} shards blocked on the warehouse", meta)
        state = airflow_dev.read_state(s.home)
        worker = state["pids"]["worker-nli"]
        tree = [worker, *airflow_dev.descendants(worker)]
        with meta.connect() as conn:
            running = [dict(r) for r in conn.execute(sa.text(
                "SELECT run_id, task_id, map_index, state FROM task_instance WHERE dag_id = :d "
                "AND task_id = 'judge_shard' AND state = 'running'"), {"d": DAG_ID}).mappings()]
        for pid in tree:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _wait(lambda: not any(airflow_dev.alive(p) for p in tree), 30, "the killed worker to be gone", meta)
        hold.rollback()
    s.observed["killed"] = {"pids": tree, "shards_running": running}
    s.dev("restart", "worker-nli")
    wh.dispose()


def _scalar(engine: sa.Engine, sql: str) -> Any:
    """One value, read on a connection of its own (pg_stat_activity is a snapshot per transaction)."""
    with engine.connect() as conn:
        return conn.exec_driver_sql(sql).scalar_one()


def _tis(meta: sa.Engine, run_id: str) -> list[dict[str, Any]]:
    with meta.connect() as conn:
        return [dict(r) for r in conn.execute(sa.text(
            "SELECT task_id, map_index, state, try_number FROM task_instance WHERE dag_id = :d AND run_id = :r"),
            {"d": DAG_ID, "r": run_id}).mappings()]


def _ti_states(meta: sa.Engine, run_id: str, task_id: str) -> list[str | None]:
    return [r["state"] for r in _tis(meta, run_id) if r["task_id"] == task_id]


def _runs(meta: sa.Engine, dag_id: str = DAG_ID) -> list[dict[str, Any]]:
    with meta.connect() as conn:
        return [dict(r) for r in conn.execute(sa.text(
            "SELECT run_id, run_type, state, conf::text AS conf, data_interval_start, logical_date FROM dag_run "
            "WHERE dag_id = :d ORDER BY id"), {"d": dag_id}).mappings()]


def _wait(check, timeout: float, what: str, meta: sa.Engine) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    pytest.fail(f"waited {timeout:.0f}s for {what}; runs: {_runs(meta)}")


def _wait_for_runs(s: Stack, kinds: dict[str, int], *, phase: str) -> list[dict[str, Any]]:
    """Until the DAG has exactly `kinds` runs by run type, all successful; fails on a failed run."""
    meta = s.meta()
    deadline = time.monotonic() + PHASE_TIMEOUT_S
    while time.monotonic() < deadline:
        runs = _runs(meta)
        if any(r["state"] == "failed" for r in runs):
            break
        by_type = {t: sum(r["run_type"] == t for r in runs) for t in {r["run_type"] for r in runs}}
        if by_type == kinds and all(r["state"] == "success" for r in runs):
            return runs
        time.sleep(1)
    states = {r["run_id"]: [(t["task_id"], t["map_index"], t["state"], t["try_number"]) for t in _tis(meta, r["run_id"])
                            if t["state"] != "success"] for r in runs}
    pytest.fail(f"{phase}: runs did not all succeed in time: {runs}\nunfinished tasks: {states}")


def _published(url: str, day: str) -> dict[str, list[dict[str, Any]]]:
    engine = sa.create_engine(url)
    try:
        return {table: [r for r in published_rows(engine, table) if str(r["day"]) == day]
                for table in ("daily_metrics", "sentence_verdicts", "citation_verdicts")}
    finally:
        engine.dispose()


def _published_run_ids(url: str, day: str) -> set[str]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        ids = {r[0] for r in conn.execute(sa.text("SELECT DISTINCT run_id FROM daily_metrics WHERE day = :d"),
                                          {"d": dt.date.fromisoformat(day)})}
    engine.dispose()
    return ids


def _task_logs(home: Path) -> dict[str, str]:
    return {str(p.relative_to(home / "logs")): p.read_text(errors="replace")
            for p in (home / "logs" / f"dag_id={DAG_ID}").rglob("*.log")}


def _executed(worker_log: str) -> list[tuple[str, str, int, int]]:
    """(run id, task id, map index, try number) of each task a worker's log says it executed."""
    found = []
    for line in worker_log.splitlines():
        if "Executing workload in Celery" in line and f"dag_id='{DAG_ID}'" in line:
            task = re.search(r"task_id='([^']+)'", line)
            run = re.search(r"run_id='([^']+)'", line)
            index = re.search(r"map_index=(-?\d+)", line)
            attempt = re.search(r"try_number=(\d+)", line)
            assert task and run and index and attempt, f"unreadable worker record: {line[:500]}"
            found.append((run.group(1), task.group(1), int(index.group(1)), int(attempt.group(1))))
    return found


# --- the checks ------------------------------------------------------------------------------

def test_up_answers_with_the_ui_address_and_the_stack_is_celery(stack):
    assert re.search(r"UI and REST API: http://127\.0\.0\.1:\d+", stack.observed["up_output"])
    state = stack.observed["state"]
    assert state["executor"] == "CeleryExecutor"
    assert set(state["pids"]) == {"api-server", "scheduler", "dag-processor", "triggerer", "worker-default",
                                  "worker-nli"}
    assert 8080 not in state["ports"].values() and 8793 not in state["ports"].values()
    env = state["env"]
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"].startswith("postgresql+asyncpg://")
    assert int(env["AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__VISIBILITY_TIMEOUT"]) > 25 * 3600
    # the tasks opened the warehouse through a connection of the Postgres provider's type
    assert stack.observed["connection_type"] == "postgres"


def test_every_day_publishes_the_cli_rows_whatever_kind_of_run_published_it(stack):
    d1, d2, d3 = (d.isoformat() for d in stack.days)
    ref, first, backfill = stack.observed["reference"], stack.observed["phase1"], stack.observed["phase2"]
    for day in (d1, d2, d3):
        assert ref[day]["daily_metrics"] and ref[day]["sentence_verdicts"], f"the CLI published nothing for {day}"
        assert backfill[day] == ref[day], f"the backfill of {day} differs from the CLI run"
    assert first[d1] == ref[d1], "the manual run (with the killed worker) differs from the CLI run"
    assert first[d3] == ref[d3], "the scheduled run differs from the CLI run"
    runs = {r["run_type"]: r for r in stack.observed["phase1_runs"]}
    assert json.loads(runs["manual"]["conf"]) == {"day": d1}
    assert runs["scheduled"]["data_interval_start"].date().isoformat() == d3
    backfill_ids = {r["run_id"] for r in stack.observed["backfill_runs"]}
    assert len(backfill_ids) == 3
    for day in (d1, d2, d3):  # the rows compared last are the backfill's own
        assert stack.observed["phase2_run_ids"][day] <= {i.replace("+", "_") for i in backfill_ids}


def test_every_run_of_the_deployment_ran_each_per_shard_step_as_four_mapped_tasks(stack):
    """The rows compared with the CLI's one-shard run above came from days cut into 4 shards on
    the Celery workers: `structural`, `judge_shard` and `fold_shard` ran once per shard."""
    by_run: dict[str, dict[str, set[int]]] = {}
    for t in stack.observed["task_instances"]:
        by_run.setdefault(t["run_id"], {}).setdefault(t["task_id"], set()).add(t["map_index"])
    assert len(by_run) >= 4  # scheduled, manual, the backfill's three (at the time they were read)
    for run_id, tasks in by_run.items():
        for step in ("structural", "judge_shard", "fold_shard"):
            assert tasks.get(step) == {0, 1, 2, 3}, (run_id, step, tasks.get(step))
        assert tasks.get("combine") == {-1}, (run_id, tasks.get("combine"))


def test_the_killed_shards_were_retried_on_the_restarted_nli_worker(stack):
    killed = stack.observed["killed"]
    assert len(killed["shards_running"]) >= 2, "every slot of the NLI worker ran a shard when it was killed"
    assert not any(airflow_dev.alive(p) for p in killed["pids"])
    retried = {(t["run_id"], t["map_index"]) for t in killed["shards_running"]}
    first = {r["run_id"] for r in stack.observed["phase1_runs"]}
    tis = {(t["run_id"], t["map_index"]): t for t in stack.observed["task_instances"] if t["task_id"] == "judge_shard"}
    for key in retried:
        # the phase-1 runs are done; the backfill reran D3's run (cleared), so only manual_d1 keeps its tries
        assert key[0] in first
        if key[0] == "manual_d1":
            assert tis[key]["state"] == "success" and tis[key]["try_number"] >= 2, tis[key]
    # the first worker is dead (checked above): a second try can only have run on the restarted one
    executed = _executed((stack.home / "processes" / "worker-nli.log").read_text(errors="replace"))
    for run_id, map_index in retried:
        assert (run_id, "judge_shard", map_index, 2) in executed, (run_id, map_index)


def test_shards_ran_on_the_nli_worker_and_everything_else_on_the_default_one(stack):
    processes = stack.home / "processes"
    nli = _executed((processes / "worker-nli.log").read_text(errors="replace"))
    default = _executed((processes / "worker-default.log").read_text(errors="replace"))
    assert nli and default
    assert {task for _, task, _, _ in nli} == {"judge_shard"}
    assert "judge_shard" not in {task for _, task, _, _ in default}
    assert {task for _, task, _, _ in default} == set(STEP_NAMES) - {"judge_shard"}
    assert {t["queue"] for t in stack.observed["task_instances"] if t["task_id"] == "judge_shard"} == {"nli"}


def test_no_text_and_no_secret_in_any_task_log_or_xcom_and_one_xcom_per_task(stack):
    logs = _task_logs(stack.home)
    assert len(logs) >= 5 * 8, sorted(logs)
    engine = sa.create_engine(stack.wh_url)
    with engine.connect() as conn:
        answers = [r[0] for r in conn.execute(sa.text("SELECT answer FROM source_turns LIMIT 40"))]
        passages = [r[0] for r in conn.execute(sa.text("SELECT text FROM source_passages LIMIT 40"))]
    engine.dispose()
    state = stack.observed["state"]
    env = state["env"]
    secrets_ = {"warehouse password": stack.wh_password, "Anthropic key": stack.anthropic_key,
                "admin password": state["password"], "Fernet key": env["AIRFLOW__CORE__FERNET_KEY"],
                "JWT secret": env["AIRFLOW__API_AUTH__JWT_SECRET"], "API secret": env["AIRFLOW__API__SECRET_KEY"]}
    texts = {f"answer {i}": a[:60] for i, a in enumerate(answers) if a and len(a) >= 30}
    texts.update({f"passage {i}": p[:60] for i, p in enumerate(passages) if p and len(p) >= 30})
    assert len(texts) >= 40
    xcom = "\n".join(r["value"] or "" for r in stack.observed["xcom"])
    for where, blob in (*logs.items(), ("XCom", xcom)):
        leaked = [name for name, value in (*secrets_.items(), *texts.items()) if value in blob]
        assert not leaked, f"{where} holds {leaked}"
    keys = {(r["run_id"], r["task_id"], r["map_index"]): [] for r in stack.observed["xcom"]}
    for r in stack.observed["xcom"]:
        keys[(r["run_id"], r["task_id"], r["map_index"])].append(r["key"])
    assert all(k == ["return_value"] for k in keys.values()), {k: v for k, v in keys.items() if v != ["return_value"]}


def test_clean_runs_log_no_error_line_and_validate_logs_little(stack):
    logs = stack.observed["backfill_logs"]  # as the backfill left them (the last phase's backfill reuses its run ids)
    assert len(logs) >= 3 * 8
    errors = {}
    for path, text in logs.items():
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                record = {"level": "error" if re.search(r"\b(ERROR|CRITICAL)\b", line) else "info", "event": line}
            if str(record.get("level", "")).lower() in ("error", "critical", "exception"):
                errors.setdefault(path, []).append(str(record.get("event"))[:200])
    assert not errors, errors
    validate = [text for path, text in logs.items() if "task_id=validate" in path]
    assert validate and max(len(t.splitlines()) for t in validate) < 60, "the validate log stays short"
    assert not any("Skipping registering function" in t for t in validate)


def _parse_stats(log: str) -> list[tuple[int, int, float]]:
    """(DAGs, errors, last duration in s) of each row the dag-processor printed for the DAG file
    in its "DAG File Processing Stats" table (rows of a file not yet parsed are left out)."""
    rows = []
    for line in log.splitlines():
        tokens = line.split()
        if "citation_metrics_daily.py" in tokens and len(tokens) >= 5 and re.fullmatch(r"\d{4}-\d\d-\d\dT\S+",
                                                                                      tokens[-1]):
            rows.append((int(tokens[-4]), int(tokens[-3]), float(tokens[-2].rstrip("s"))))
    return rows


def test_a_backfill_of_the_paused_dag_is_refused_with_the_command_that_unpauses_it(stack):
    code, output = stack.observed["paused_backfill"]
    assert code != 0 and "is paused" in output and f"airflow dags unpause {DAG_ID}" in output, output


def test_two_runs_of_one_day_never_overlap_and_the_second_waits_on_the_lock(stack):
    first, second = stack.observed["lock_runs"]
    assert first["status"] == second["status"] == "published", stack.observed["lock_runs"]
    assert second["started_at"] >= first["finished_at"], "the two runs of one day overlapped"
    tries = {t["run_id"]: t["try_number"] for t in stack.observed["task_instances"] if t["task_id"] == "open_run"
             and t["run_id"].startswith("lock_")}
    assert sorted(tries.values())[-1] > 1, tries  # one of them retried on the lock
    d2 = stack.days[1].isoformat()
    assert stack.observed["lock_phase"] == stack.observed["reference"][d2]
    assert stack.observed["lock_phase_run_ids"] == {second["run_id"]}


def test_down_cancels_the_backfills_the_deployment_started(stack):
    backfills = stack.observed["backfills_after_down"]
    assert backfills and all(b["completed_at"] is not None for b in backfills), backfills
    assert "cancelled backfills" in stack.observed["down"]


def test_the_dag_processor_parses_the_dag_without_errors(stack):
    """Its parse time is printed (bench/bench_airflow.py measures it); what keeps it short is
    checked without a clock by tests/e2e/test_dag.py: parsing imports no heavy module."""
    rows = _parse_stats((stack.home / "processes" / "dag-processor.log").read_text(errors="replace"))
    assert rows, "the dag-processor printed its file processing stats"
    durations = [d for _, _, d in rows]
    print(f"dag-processor parse durations (s): {durations}")
    assert all(dags == 1 and errors == 0 for dags, errors, _ in rows), rows


def test_a_late_event_batch_makes_the_restate_dag_republish_the_stale_day(stack):
    d2 = stack.days[1].isoformat()
    r = stack.observed["restate"]
    assert r["late_events"] >= 12
    assert [(d["day"], d["late_events"], d["late_turns"]) for d in r["stale_before"]] == [(d2, r["late_events"], 0)]
    assert r["stale_after"] == [], "the republished day is no longer stale"
    assert r["restate_runs"] and {run["run_type"] for run in r["restate_runs"]} == {"scheduled"}
    (triggered,) = r["triggered"]  # one stale day, one triggered run of it
    assert json.loads(triggered["conf"]) == {"day": d2} and triggered["run_type"] == "operator_triggered"
    assert r["run_ids"] == {triggered["run_id"].replace("+", "_")}, "the triggered run published D2"
    for day, ids in r["others"].items():
        assert ids == stack.observed["phase2_run_ids"][day], f"{day} was not stale and stays as published"
    assert r["published"] == r["reference"], "the restated day equals the CLI's restatement"

    def overall(rows, metric):
        (row,) = [m for m in rows["daily_metrics"] if m["metric"] == metric and m["slice_name"] == "all"
                  and m["averaging"] == "micro"]
        return row

    for metric in ("citation_opens_per_1000_answers", "source_reports_per_1000_answers"):
        assert overall(r["published"], metric)["numerator"] > (overall(r["published_before"], metric)["numerator"]
                                                              or 0), metric


def test_down_stopped_every_process_up_started(stack):
    assert len(stack.observed["stopped_tree"]) >= 6
    assert stack.observed["left_running"] == [], stack.observed.get("down")
    assert "stopped:" in stack.observed["down"] and "worker-nli" in stack.observed["down"]
