"""
### citation_metrics_restate

Every day after `citation_metrics_daily`: late data reaches the dashboards without a person.
Reader events (reports filed the next morning) and late-logged turns arrive after the day they
belong to was published. A published day whose turns or reader events were loaded after the run
that published it began is *stale* (`citecheck stale`); this DAG finds the stale days among the
last `restate_days` days (default 7, ending with the run's day) and triggers
`citation_metrics_daily` for each with `conf={"day": DAY}` (one mapped `TriggerDagRunOperator`
task per day; none on a day with nothing stale). The triggered runs republish the days as a
whole, as any run does.

The logic is `citecheck.job` (`restate_window`, `stale_days`); this file only wires it. The same
rerun from a shell: `citecheck backfill --from DAY --to DAY` (it also says why each day ran).
"""

from __future__ import annotations

import datetime as dt

from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import CronDataIntervalTimetable, Param, dag, task

DAILY_DAG_ID = "citation_metrics_daily"


@dag(
    dag_id="citation_metrics_restate",
    description="Reruns the published days of the last restate_days whose turns or reader events arrived late",
    schedule=CronDataIntervalTimetable("0 6 * * *", timezone="UTC"),
    start_date=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    tags=["citecheck", "metrics"],
    doc_md=__doc__,
    default_args={"retries": 2, "execution_timeout": dt.timedelta(minutes=30)},
    params={
        "restate_days": Param(7, type="integer", minimum=1, description="days looked at, ending with the run's day"),
    },
)
def citation_metrics_restate():
    @task
    def find_stale_days() -> list[dict]:
        """The stale days of the window, as the triggers' keyword arguments."""
        from airflow.sdk import get_current_context

        from citecheck.job import restate_window, settings_from_env, stale_days
        from citecheck.job.airflow import task_warehouse
        from citecheck.job.metric_day import metric_day

        ctx = get_current_context()
        settings = settings_from_env()
        last = metric_day(None, ctx.get("data_interval_start"), timezone=settings.config.timezone)
        window = restate_window(last, int(ctx["params"]["restate_days"]))
        stale = stale_days(task_warehouse(settings.config), window, settings.config.timezone)
        run = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in ctx["dag_run"].run_id)
        return [{"conf": {"day": d.day.isoformat()}, "trigger_run_id": f"restate_{d.day.isoformat()}_{run}"[:250],
                 "note": f"restated: {d.late_inputs()}"} for d in stale]

    TriggerDagRunOperator.partial(task_id="restate_day", trigger_dag_id=DAILY_DAG_ID).expand_kwargs(
        find_stale_days())


citation_metrics_restate()
