"""Run `citation_metrics_daily` for one metric day through Airflow itself (`dag.test()`).

Uses a local AIRFLOW_HOME (SQLite metadata DB, migrated first) and the warehouse of
CITECHECK_WAREHOUSE_URL (default: the embedded SQLite file). Prints the day's headline metrics.
Usage: .venv/bin/python bin/run_dag.py 2026-11-23
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _metadata_db_is_current() -> bool:
    """Whether the metadata database is already migrated to this Airflow's heads (then `airflow db
    migrate`, a subprocess that imports all of Airflow again, is skipped)."""
    from airflow.utils.db import check_migrations

    try:
        check_migrations(timeout=1)
    except Exception:  # not migrated, a missing file, an older schema: migrate
        return False
    return True


def main(argv: list[str]) -> int:
    day = dt.date.fromisoformat(argv[0])
    home = Path(os.environ.setdefault("AIRFLOW_HOME", str(REPO / "airflow_home")))
    home.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    os.environ.setdefault("AIRFLOW__CORE__DAGS_FOLDER", str(REPO / "dags"))
    os.environ.setdefault("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", f"sqlite:///{home}/airflow.db")
    if not _metadata_db_is_current():
        subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "dags"))
    if bag.import_errors:
        print(bag.import_errors, file=sys.stderr)
        return 2
    dag = bag.dags["citation_metrics_daily"]
    # a manual run of the day, as `airflow dags trigger --conf '{"day": ...}'` makes it
    run = dag.test(logical_date=None, run_conf={"day": day.isoformat()})
    print(f"DAG run {run.run_id}: {run.state}")
    if str(run.state) not in ("success", "DagRunState.SUCCESS"):
        return 1
    from citecheck.core.metrics import HEADLINE_METRICS
    from citecheck.core.metrics.display import metric_line
    from citecheck.warehouse import day_metrics, engine_for

    rows = {r["metric"]: r for r in day_metrics(engine_for(), day) if r["slice_name"] == "all"
            and r["averaging"] == "micro"}
    print(f"\nheadline metrics for {day} (micro: pooled over sentences)")
    for name in HEADLINE_METRICS:
        if name in rows:
            print("  " + metric_line(rows[name], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
