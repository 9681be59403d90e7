"""
### citation_review_weekly

Every Monday, for the week before (Monday to Sunday): keeps the judges honest with people.

1. `export_sample` draws the week's stratified, blind review sample of judged sentences
   (`citecheck.review`), stores its items and inclusion probabilities in `review_items` and
   writes the file reviewers fill to `CITECHECK_REVIEW_DIR` (default `review_samples/`) as
   `review_FROM_TO.csv` (or `.jsonl`). A week already exported is left alone, so a rerun never
   overwrites a file being labelled.
2. `publish_quality` publishes the week's `judge_quality` and `calibrated_metrics` once labels
   are imported (`citecheck review import --file F --reviewer NAME`); with none yet it publishes
   nothing. Clear this task after an import (or run `citecheck review publish --from --to`):
   the publish replaces the week's rows in one transaction, so it is idempotent.

The logic lives in `citecheck.review.loop`; this file only wires it.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from airflow.sdk import CronDataIntervalTimetable, Param, dag, task


def _week() -> tuple[dt.date, dt.date, dict]:
    """(first day, last day, params) of the running DAG run's week."""
    from airflow.sdk import get_current_context

    ctx = get_current_context()
    start, end = ctx["data_interval_start"], ctx["data_interval_end"]
    return start.date(), end.date() - dt.timedelta(days=1), ctx["params"]


@dag(
    dag_id="citation_review_weekly",
    schedule=CronDataIntervalTimetable("0 0 * * 1", timezone="UTC"),
    start_date=dt.datetime(2026, 11, 2, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    tags=["citecheck", "review"],
    doc_md=__doc__,
    default_args={"retries": 2, "retry_delay": dt.timedelta(minutes=5),
                  "execution_timeout": dt.timedelta(hours=1)},
    params={
        "sample_size": Param(300, type="integer", minimum=1, description="review items per week"),
        "format": Param("csv", enum=["csv", "jsonl"], description="file reviewers fill"),
        "false_pass_target": Param(0.10, type="number", minimum=0, maximum=1,
                                   description="NLI false-pass rate the threshold sweep looks for"),
    },
)
def citation_review_weekly():
    @task
    def export_sample() -> dict:
        from citecheck.job.airflow import task_warehouse
        from citecheck.review import loop

        first, last, params = _week()
        engine = task_warehouse()
        existing = loop.exported_items(engine, first, last)
        if existing:
            return {"status": "already_exported", "items": existing}
        folder = Path(os.environ.get("CITECHECK_REVIEW_DIR", "review_samples"))
        out = folder / f"review_{first.isoformat()}_{last.isoformat()}.{params['format']}"
        result = loop.export_sample(engine, first, last, int(params["sample_size"]), out, params["format"])
        return {"status": "exported", "items": result["items"], "population": result["population"],
                "file": result["file"]}

    @task
    def publish_quality(exported: dict) -> dict:
        from citecheck.job.airflow import task_warehouse
        from citecheck.review import loop

        first, last, params = _week()
        engine = task_warehouse()
        if not exported.get("items"):
            return {"status": "nothing_to_review"}
        if not loop.labelled_count(engine, first, last):
            return {"status": "no_labels_yet"}
        return {"status": "published", **loop.publish(
            engine, first, last, false_pass_target=float(params["false_pass_target"]))}

    publish_quality(export_sample())


citation_review_weekly()
