"""
### citation_metrics_daily

Every day, for yesterday's logged assistant turns: are the cited passages saying what the
sentences say? Structural checks on 100% of turns, the NLI judge on the configured share
(mapped over shards, pool `nli`, queue `nli` so GPU workers take it), the LLM judge on NLI
rejections plus a random sample, a Great Expectations gate, and a one-transaction publish of
the day into `daily_metrics`, `sentence_verdicts` and `citation_verdicts`.

The logic lives in `citecheck.job`; this file only wires it. XCom carries ids and counts;
intermediate data is staged in the warehouse under the run id. Backfill with
`airflow backfill create --dag-id citation_metrics_daily --from-date 2026-11-01 --to-date 2026-11-07`.
"""

from __future__ import annotations

import datetime as dt
import os

from airflow.providers.smtp.notifications.smtp import SmtpNotifier
from airflow.sdk import Asset, CronDataIntervalTimetable, Param, dag, task

WAREHOUSE_CONN_ID = os.environ.get("CITECHECK_WAREHOUSE_CONN_ID", "citecheck_warehouse")
ANTHROPIC_CONN_ID = os.environ.get("CITECHECK_ANTHROPIC_CONN_ID", "citecheck_anthropic")
ALERTS_SMTP_CONN_ID = os.environ.get("CITECHECK_ALERTS_SMTP_CONN_ID", "citecheck_alerts_smtp")
NLI_QUEUE = os.environ.get("CITECHECK_NLI_QUEUE", "default")
DAILY_METRICS = Asset("citecheck://warehouse/daily_metrics")


def _connection(conn_id: str):
    """The Airflow connection, or None when it is not defined (it is optional)."""
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        return BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return None


def _engine(settings):
    """The warehouse engine: the Airflow connection if defined, else CITECHECK_WAREHOUSE_URL;
    schemas from the `[warehouse]` section of the run's config."""
    from citecheck.warehouse import engine_for

    conn = _connection(WAREHOUSE_CONN_ID)
    return engine_for(settings.config, conn.get_uri() if conn else None)


def _anthropic_key_from_connection() -> None:
    """The Anthropic key from the Airflow connection, when one is defined (its password), else
    ANTHROPIC_API_KEY stays as the environment set it. Airflow masks it in task logs."""
    conn = _connection(ANTHROPIC_CONN_ID)
    if conn and conn.password:
        os.environ["ANTHROPIC_API_KEY"] = conn.password


def _context(ctx=None):
    """(day, run id, settings) of the running DAG run (or of the context a callback is given)."""
    from airflow.sdk import get_current_context

    from citecheck.job import settings_from_env

    ctx = ctx or get_current_context()
    start = ctx["data_interval_start"]
    settings = settings_from_env(ctx["params"])
    day = start.in_timezone(settings.config.timezone).date() if hasattr(start, "in_timezone") else start.date()
    run_id = "".join(ch if ch.isalnum() or ch in "-_.:" else "_" for ch in ctx["dag_run"].run_id)[:64]
    return day, run_id, settings


class AlertNotifier(SmtpNotifier):
    """The monitor task's success callback: e-mails the day's step-change alerts through the
    `citecheck_alerts_smtp` connection (SmtpNotifier), to `[monitor] notify_to` of the config.
    Off while that connection is not defined; nothing is sent for a day without alerts. The
    message holds metric names and numbers and the report link, no answer or passage text."""

    def __init__(self, **kwargs):
        super().__init__(to=[], smtp_conn_id=ALERTS_SMTP_CONN_ID, **kwargs)

    def notify(self, context):
        from citecheck.monitor import alert_message, alerts_between, monitor_settings

        if _connection(self.smtp_conn_id) is None:
            self.log.info("alert e-mail is off: no connection %r", self.smtp_conn_id)
            return
        day, _run_id, settings = _context(context)
        alerts = alerts_between(_engine(settings), day, day)
        if not alerts:
            return
        monitor = monitor_settings(settings.config)
        if not monitor.notify_to:
            raise ValueError(f"connection {self.smtp_conn_id!r} is defined but [monitor] notify_to is empty")
        self.to = list(monitor.notify_to)
        self.subject, self.html_content = alert_message(alerts, day, monitor.report_link(day))
        super().notify(context)


@dag(
    dag_id="citation_metrics_daily",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=3,
    tags=["citecheck", "metrics"],
    doc_md=__doc__,
    default_args={"retries": 2, "retry_delay": dt.timedelta(minutes=5),
                  "execution_timeout": dt.timedelta(hours=2)},
    params={
        "nli_share": Param(1.0, type="number", minimum=0, maximum=1, description="share of turns NLI-judged"),
        "shards": Param(4, type="integer", minimum=1, description="NLI shards (mapped tasks)"),
        "llm_sample_rate": Param(None, type=["null", "number"], description="LLM random sample rate"),
        "llm_budget_usd": Param(None, type=["null", "number"], description="daily LLM budget (USD)"),
    },
)
def citation_metrics_daily():
    @task
    def extract() -> dict:
        from citecheck import job

        day, run_id, settings = _context()
        return job.extract(_engine(settings), day, run_id, settings)

    @task
    def structural(_extracted: dict) -> list[int]:
        """Runs the structural checks; returns the shards that hold turns to judge."""
        from citecheck import job

        day, run_id, settings = _context()
        return job.structural(_engine(settings), day, run_id, settings)["shards"]

    @task(pool="nli", queue=NLI_QUEUE, max_active_tis_per_dagrun=8)
    def judge_shard(shard: int) -> dict:
        from citecheck import job

        _day, run_id, settings = _context()
        return job.judge_shard(_engine(settings), run_id, shard, settings)

    # Message Batches may take up to 24 h to end; the judge reattaches to its batch on retry.
    @task(trigger_rule="none_failed", execution_timeout=dt.timedelta(hours=25))
    def escalate(shard_results: list[dict]) -> dict:
        from citecheck import job

        _day, run_id, settings = _context()
        _anthropic_key_from_connection()
        result = job.escalate(_engine(settings), run_id, settings)
        stats: dict = {}
        for r in shard_results or []:
            stats = job._merge_stats(stats, r.get("stats", {}))
        return {"escalated": result.get("escalated", 0), "first": stats, "llm": result.get("stats", {}).get("llm", {})}

    @task
    def aggregate(judge_stats: dict) -> dict:
        from citecheck import job

        day, run_id, settings = _context()
        return job.aggregate(_engine(settings), day, run_id, settings, judge_stats)

    @task
    def validate(_aggregated: dict) -> dict:
        from airflow.sdk.exceptions import AirflowFailException

        from citecheck import job

        day, run_id, settings = _context()
        try:
            return job.validate(_engine(settings), day, run_id, settings)
        except job.ValidationFailed as exc:  # the same data fails the same way: fail now, no retries
            raise AirflowFailException(str(exc)) from exc

    @task(outlets=[DAILY_METRICS])
    def publish(_validated: dict) -> dict:
        from airflow.sdk import get_current_context

        from citecheck import job

        day, run_id, settings = _context()
        counts = job.publish(_engine(settings), day, run_id)
        get_current_context()["outlet_events"][DAILY_METRICS].extra = {
            "day": day.isoformat(), "run_id": run_id, **counts}
        return counts

    @task(on_success_callback=AlertNotifier())
    def monitor(_published: dict) -> dict:
        """Step-change alerts of the published day; the notifier e-mails them."""
        from citecheck import job

        day, run_id, settings = _context()
        return job.monitor(_engine(settings), day, run_id, settings)

    @task
    def record_run(published: dict) -> dict:
        from citecheck import job

        _day, run_id, settings = _context()
        return job.finish(_engine(settings), run_id, published)

    shards = judge_shard.expand(shard=structural(extract()))
    published = publish(validate(aggregate(escalate(shards))))
    monitor(published) >> record_run(published)


citation_metrics_daily()
