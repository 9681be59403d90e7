"""Wall time of the daily job on a real Airflow deployment beside the CLI, and where the extra goes.

For the LocalExecutor and the CeleryExecutor (`bin/airflow-dev up [--celery]`, each on a fresh
metadata database and warehouse): one day by a manual run (`day` param, triggered through the REST
API) and a three-day backfill (`POST /api/v2/backfills`), from the request to the last run's end.
Beside them, in a fresh warehouse each, `citecheck run --day D` and `citecheck backfill` of the
same days. Then, per Airflow run, where the time goes:

- steps: the job's own step time (what `runs.timings` records: structural, shards, escalate,
  aggregate, validate) on the run's critical path;
- task overhead: the rest of the critical path's task durations (a task process per task: fork,
  DAG parse, imports, warehouse connection, XCom);
- orchestration: the run's wall time minus its critical path (the scheduler's loop, queueing,
  a worker picking the task up; with Celery also the broker round trip).

Needs the local PostgreSQL (and Redis for Celery). Usage:
  PYTHONPATH=include .venv/bin/python bench/bench_airflow.py [--turns-per-day 300] [--executors local,celery]
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import sqlalchemy as sa

REPO = Path(__file__).resolve().parents[1]
DAG_ID = "citation_metrics_daily"
CHAIN = ("open_run", "structural", "split_claims", "judge_shard", "escalate", "fold_shard", "combine", "validate",
         "publish", "record_run")
_spec = importlib.util.spec_from_file_location("airflow_dev", REPO / "bin" / "airflow_dev.py")
airflow_dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(airflow_dev)


def sh(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    out = subprocess.run(args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return time.perf_counter() - started


def wait_runs(meta: sa.Engine, run_ids: set[str] | None, count: int, since: dt.datetime) -> list[dict[str, Any]]:
    while True:
        with meta.connect() as conn:
            runs = [dict(r) for r in conn.execute(sa.text(
                "SELECT run_id, state, start_date, end_date FROM dag_run WHERE dag_id = :d AND queued_at >= :s"),
                {"d": DAG_ID, "s": since}).mappings()]
        if run_ids is not None:
            runs = [r for r in runs if r["run_id"] in run_ids]
        if any(r["state"] == "failed" for r in runs):
            raise SystemExit(f"a run failed: {runs}")
        if len(runs) >= count and all(r["state"] == "success" for r in runs):
            return runs
        time.sleep(0.5)


def breakdown(meta: sa.Engine, wh: sa.Engine, run: dict[str, Any]) -> dict[str, float]:
    """Seconds of the run's wall time in job steps, task overhead and orchestration."""
    with meta.connect() as conn:
        tis = [dict(r) for r in conn.execute(sa.text(
            "SELECT task_id, map_index, duration FROM task_instance WHERE dag_id = :d AND run_id = :r"),
            {"d": DAG_ID, "r": run["run_id"]}).mappings()]
    wh_run_id = "".join(ch if ch.isalnum() or ch in "-_.:" else "_" for ch in run["run_id"])[:64]
    with wh.connect() as conn:
        timings = conn.execute(sa.text("SELECT timings FROM runs WHERE run_id = :r"), {"r": wh_run_id}).scalar()
    timings = json.loads(timings) if isinstance(timings, str) else dict(timings or {})
    critical = sum(max((t["duration"] or 0) for t in tis if t["task_id"] == task) for task in CHAIN
                   if any(t["task_id"] == task for t in tis))
    shard_steps = [v for k, v in timings.items() if k.startswith("judge_shard")]
    steps = sum(v for k, v in timings.items() if not k.startswith("judge_shard")) + max(shard_steps, default=0)
    wall = (run["end_date"] - run["start_date"]).total_seconds()
    return {"wall": wall, "steps": steps, "task_overhead": critical - steps, "orchestration": wall - critical,
            "tasks": len(tis)}


def airflow_side(executor: str, days: list[dt.date], base: Path, pg: str, turns: int,
                 judge: Path) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    url = sa.engine.make_url(pg)
    dbs = {"meta": f"bench_af_{tag}", "wh": f"bench_wh_{tag}"}
    admin = sa.create_engine(pg, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for name in dbs.values():
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    urls = {k: url.set(database=v).render_as_string(hide_password=False) for k, v in dbs.items()}
    env = {**os.environ, "AIRFLOW_DEV_PYTHON": sys.executable, "AIRFLOW_HOME": str(base / f"home_{executor}"),
           "AIRFLOW_DEV_DB_URL": urls["meta"], "CITECHECK_WAREHOUSE_URL": urls["wh"], "CITECHECK_JUDGE": str(judge),
           "PYTHONPATH": str(REPO / "include")}
    out: dict[str, Any] = {}
    try:
        cli = [sys.executable, "-m", "citecheck"]
        sh([*cli, "init-warehouse"], env)
        sh([*cli, "load-sample", "--start", days[0].isoformat(), "--days", str(len(days)),
            "--turns-per-day", str(turns)], env)
        out["up"] = sh([str(REPO / "bin" / "airflow-dev"), "up", *(["--celery"] if executor == "celery" else [])],
                       env)
        state = airflow_dev.read_state(Path(env["AIRFLOW_HOME"]))
        api = airflow_dev.Api(state)
        meta, wh = sa.create_engine(urls["meta"]), sa.create_engine(urls["wh"])
        since = dt.datetime.now(dt.UTC)
        api("PATCH", f"/api/v2/dags/{DAG_ID}", {"is_paused": False})
        wait_runs(meta, None, 1, since)  # unpausing runs yesterday (catchup=False): measured apart from it
        since = dt.datetime.now(dt.UTC)
        started = time.perf_counter()
        api("POST", f"/api/v2/dags/{DAG_ID}/dagRuns",
            {"dag_run_id": "bench_one_day", "logical_date": None, "conf": {"day": days[1].isoformat()}})
        one = wait_runs(meta, {"bench_one_day"}, 1, since)
        out["one_day"] = time.perf_counter() - started
        out["one_day_parts"] = breakdown(meta, wh, one[0])
        since = dt.datetime.now(dt.UTC)
        started = time.perf_counter()
        api("POST", "/api/v2/backfills", {"dag_id": DAG_ID, "from_date": f"{days[0]}T00:00:00Z",
                                          "to_date": f"{days[-1]}T00:00:00Z", "reprocess_behavior": "completed",
                                          "max_active_runs": 3})
        runs = wait_runs(meta, None, len(days), since)
        out["backfill"] = time.perf_counter() - started
        parts = [breakdown(meta, wh, r) for r in runs]
        out["backfill_parts"] = {k: sum(p[k] for p in parts) / len(parts) for k in parts[0]}
    finally:
        if airflow_dev.state_path(Path(env["AIRFLOW_HOME"])).exists():
            subprocess.run([str(REPO / "bin" / "airflow-dev"), "down"], env=env, capture_output=True)
        with admin.connect() as conn:
            for name in dbs.values():
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return out


def cli_side(days: list[dt.date], pg: str, turns: int, judge: Path) -> dict[str, float]:
    tag = uuid.uuid4().hex[:8]
    name = f"bench_cli_{tag}"
    admin = sa.create_engine(pg, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    env = {**os.environ, "CITECHECK_WAREHOUSE_URL": sa.engine.make_url(pg).set(database=name).render_as_string(
        hide_password=False), "CITECHECK_JUDGE": str(judge), "PYTHONPATH": str(REPO / "include")}
    cli = [sys.executable, "-m", "citecheck"]
    try:
        sh([*cli, "init-warehouse"], env)
        sh([*cli, "load-sample", "--start", days[0].isoformat(), "--days", str(len(days)), "--turns-per-day",
            str(turns), "--write-judge", str(judge)], env)
        return {"one_day": sh([*cli, "run", "--day", days[1].isoformat()], env),
                "backfill": sh([*cli, "backfill", "--from", days[0].isoformat(), "--to", days[-1].isoformat(),
                                "--force"], env)}
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns-per-day", type=int, default=300)
    parser.add_argument("--executors", default="local,celery")
    args = parser.parse_args()
    pg = os.environ.get("CITECHECK_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    yesterday = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    days = [yesterday - dt.timedelta(days=2 - i) for i in range(3)]
    with tempfile.TemporaryDirectory(prefix="bench_airflow_") as tmp:
        base = Path(tmp)
        judge = base / "judge.json"
        results = {"cli": cli_side(days, pg, args.turns_per_day, judge)}
        for executor in args.executors.split(","):
            results[executor] = airflow_side(executor, days, base, pg, args.turns_per_day, judge)
    print(f"\n{args.turns_per_day} turns a day, days {days[0]}..{days[-1]}, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'':<28}{'one day':>10}{'3-day backfill':>16}{'up':>8}")
    for name, r in results.items():
        label = {"cli": "citecheck run / backfill"}.get(name, f"Airflow {name.capitalize()}Executor")
        print(f"{label:<28}{r['one_day']:>9.1f}s{r['backfill']:>15.1f}s" + (f"{r['up']:>7.0f}s" if "up" in r else ""))
    for name, r in results.items():
        if name == "cli":
            continue
        for what in ("one_day_parts", "backfill_parts"):
            p = r[what]
            print(f"{name} {what.replace('_parts', '')} (per run): wall {p['wall']:.1f}s = steps {p['steps']:.1f}s"
                  f" + task overhead {p['task_overhead']:.1f}s + orchestration {p['orchestration']:.1f}s"
                  f" ({p['tasks']:.0f} task instances)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
