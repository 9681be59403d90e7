"""
### citation_metrics_daily

Every day, for yesterday's logged assistant turns: are the cited passages saying what the
sentences say? Structural checks on 100% of turns, the NLI judge on the configured share
(mapped over shards, pool `nli`, queue `CITECHECK_NLI_QUEUE` so GPU workers take it), the LLM
judge on NLI rejections plus a random sample, a Great Expectations gate, and a one-transaction
publish of the day into `daily_metrics`, `sentence_verdicts`, `citation_verdicts` and
`recite_suggestions`, then the `monitor` step's step-change alerts (e-mailed by `AlertNotifier`
when the `citecheck_alerts_smtp` connection is defined), then the day's HTML report (`report`,
served in the Airflow UI by the `citecheck_report` plugin under "Citation report").

The steps are `citecheck.job`'s, wired here in the order of `citecheck.job.run_steps`: `extract`
returns the day and run id every later task takes; XCom carries ids and counts only;
intermediate data is staged in the warehouse under the run id.

**Which day a run scores** (`citecheck.job.metric_day`): the `day` param when given, else the run's
logical date, else its data interval (a manual run without either scores yesterday). Run one day:
`airflow dags trigger citation_metrics_daily --conf '{"day": "2026-11-25"}'` (or the `day` field
of the trigger form); backfill a range (logical dates are the days themselves):
`airflow backfill create --dag-id citation_metrics_daily --from-date 2026-11-01 --to-date 2026-11-07`
(add `--reprocess-behavior completed` to rerun days that already ran). A day with fewer than
`min_turns` scored turns (default 1) fails validation: an empty day is never published.

Needs the pool `nli` (`airflow pools set nli 2 "NLI judging"`): without it the shards wait in
`scheduled` forever.
"""

from __future__ import annotations

import datetime as dt
import os

from airflow.providers.smtp.notifications.smtp import SmtpNotifier
from airflow.sdk import Asset, CronDataIntervalTimetable, Param, chain, dag, task

WAREHOUSE_CONN_ID = os.environ.get("CITECHECK_WAREHOUSE_CONN_ID", "citecheck_warehouse")
ANTHROPIC_CONN_ID = os.environ.get("CITECHECK_ANTHROPIC_CONN_ID", "citecheck_anthropic")
ALERTS_SMTP_CONN_ID = os.environ.get("CITECHECK_ALERTS_SMTP_CONN_ID", "citecheck_alerts_smtp")
NLI_QUEUE = os.environ.get("CITECHECK_NLI_QUEUE", "nli")
DAILY_METRICS = Asset("citecheck://warehouse/daily_metrics")
# Message Batches may take up to 24 h to end; a Celery broker's visibility timeout must be longer
# (bin/airflow-dev, docker-compose.yml and docs/airflow.md set 26 h).
ESCALATE_TIMEOUT = dt.timedelta(hours=25)


def _connection(conn_id: str):
    """The Airflow connection, or None when it is not defined (it is optional)."""
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        return BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return None


def _day_run(extracted: dict | None = None, *, with_anthropic_key: bool = False, context=None):
    """The `citecheck.job.DayRun` of this DAG run: the day and run id `extract` returned (or, for
    `extract` itself, the day `citecheck.job.metric_day` picks and the DAG run id), the settings from
    the DAG params and environment, the warehouse from the Airflow connection (else CITECHECK_WAREHOUSE_URL), and
    for the LLM step the Anthropic key from its connection (Airflow masks it in task logs).
    `context`: the one a callback is handed (default: the running task's)."""
    from airflow.sdk import get_current_context
    from airflow.sdk.exceptions import AirflowFailException

    from citecheck.job import DayRun, settings_from_env
    from citecheck.job.metric_day import AmbiguousDay, metric_day
    from citecheck.warehouse import engine_for

    ctx = context or get_current_context()
    settings = settings_from_env(ctx["params"])
    if extracted is None:
        try:
            day = metric_day(ctx["params"].get("day"), ctx.get("data_interval_start"),
                             timezone=settings.config.timezone, manual=ctx["dag_run"].run_type == "manual",
                             logical_date=ctx.get("logical_date"))
        except AmbiguousDay as exc:  # the same run asks the same way again: fail now, no retries
            raise AirflowFailException(str(exc)) from exc
        run_id = "".join(ch if ch.isalnum() or ch in "-_.:" else "_" for ch in ctx["dag_run"].run_id)[:64]
    else:
        day, run_id = dt.date.fromisoformat(extracted["day"]), extracted["run_id"]
    warehouse = _connection(WAREHOUSE_CONN_ID)
    anthropic = _connection(ANTHROPIC_CONN_ID) if with_anthropic_key else None
    return DayRun(engine_for(settings.config, warehouse.get_uri() if warehouse else None), day, run_id, settings,
                  anthropic_api_key=anthropic.password if anthropic and anthropic.password else None)


class AlertNotifier(SmtpNotifier):
    """The monitor task's success callback: e-mails the day's step-change alerts through the
    `citecheck_alerts_smtp` connection (SmtpNotifier), to `[monitor] notify_to` of the config.
    Off while that connection is not defined; nothing is sent for a day without alerts. The
    message holds metric names, slices, numbers and the report link, no answer or passage text."""

    def __init__(self, **kwargs):
        super().__init__(to=[], smtp_conn_id=ALERTS_SMTP_CONN_ID, **kwargs)

    def notify(self, context):
        from citecheck.features.monitor import alert_message, monitor_settings
        from citecheck.warehouse.published import alerts_between

        if _connection(self.smtp_conn_id) is None:
            self.log.info("alert e-mail is off: no connection %r", self.smtp_conn_id)
            return
        run = _day_run(context=context)
        alerts = alerts_between(run.engine, run.day, run.day)
        if not alerts:
            return
        monitor = monitor_settings(run.settings.config)
        if not monitor.notify_to:
            raise ValueError(f"connection {self.smtp_conn_id!r} is defined but [monitor] notify_to is empty")
        self.to = list(monitor.notify_to)
        self.subject, self.html_content = alert_message(alerts, run.day, monitor.report_link(run.day))
        super().notify(context)


@dag(
    dag_id="citation_metrics_daily",
    description="Citation metrics of a day of assistant turns: structural checks, NLI and LLM judges, "
                "a Great Expectations gate, one-transaction publish",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=3,
    tags=["citecheck", "metrics"],
    doc_md=__doc__,
    # retry delay: Airflow's `[core] default_task_retry_delay` (300 s unless configured)
    default_args={"retries": 2, "execution_timeout": dt.timedelta(hours=2)},
    params={
        "day": Param(None, type=["null", "string"], format="date",
                     description="the metric day to score (YYYY-MM-DD) on a manual run; empty: the run's "
                                 "logical date, else yesterday"),
        "nli_share": Param(1.0, type="number", minimum=0, maximum=1, description="share of turns NLI-judged"),
        "shards": Param(4, type="integer", minimum=1, description="NLI shards (mapped tasks)"),
        "llm_sample_rate": Param(None, type=["null", "number"], description="LLM random sample rate"),
        "llm_budget_usd": Param(None, type=["null", "number"], description="daily LLM budget (USD)"),
        "min_turns": Param(None, type=["null", "integer"], minimum=1,
                           description="fewest scored turns to publish the day (empty: CITECHECK_MIN_TURNS, else 1)"),
    },
)
def citation_metrics_daily():
    @task(multiple_outputs=False)
    def extract() -> dict:
        """Opens the run; returns the day and run id every later task works on."""
        from citecheck.job import extract

        return extract(_day_run())

    @task
    def structural(extracted: dict) -> list[int]:
        """Runs the structural checks; returns the shards that hold turns to judge."""
        from citecheck.job import structural

        return structural(_day_run(extracted))["shards"]

    @task(pool="nli", queue=NLI_QUEUE, max_active_tis_per_dagrun=8, multiple_outputs=False)
    def judge_shard(extracted: dict, shard: int) -> dict:
        from citecheck.job import judge_shard

        return judge_shard(_day_run(extracted), shard)

    # Message Batches may take up to 24 h to end; the judge reattaches to its batch on retry.
    @task(execution_timeout=ESCALATE_TIMEOUT, multiple_outputs=False)
    def escalate(extracted: dict) -> dict:
        from citecheck.job import escalate

        return escalate(_day_run(extracted, with_anthropic_key=True))

    @task(trigger_rule="none_failed", multiple_outputs=False)
    def aggregate(extracted: dict, shard_results: list[dict], escalation: dict) -> dict:
        from citecheck.job import aggregate

        # one slice read: iterating the lazy sequence asks for one item past its end (an error line)
        return aggregate(_day_run(extracted), list(shard_results[:]), escalation)

    @task(multiple_outputs=False)
    def validate(extracted: dict) -> dict:
        from airflow.sdk.exceptions import AirflowFailException

        from citecheck.job import ValidationFailed, validate

        try:
            return validate(_day_run(extracted))
        except ValidationFailed as exc:  # the same data fails the same way: fail now, no retries
            raise AirflowFailException(str(exc)) from exc

    @task(outlets=[DAILY_METRICS], multiple_outputs=False)
    def publish(extracted: dict) -> dict:
        from airflow.sdk import get_current_context

        from citecheck.job import publish

        counts = publish(_day_run(extracted))
        get_current_context()["outlet_events"][DAILY_METRICS].extra = {**extracted, **counts}
        return counts

    @task(on_success_callback=AlertNotifier(), multiple_outputs=False)
    def monitor(extracted: dict) -> dict:
        """Step-change alerts of the published day against its history."""
        from citecheck.job import monitor

        return monitor(_day_run(extracted))

    @task(multiple_outputs=False)
    def report(extracted: dict) -> dict:
        """The day's HTML report, stored in the warehouse for the `citecheck_report` plugin."""
        from citecheck.job import report

        return report(_day_run(extracted))

    @task(multiple_outputs=False)
    def record_run(extracted: dict, published: dict) -> dict:
        from citecheck.job import record_run

        return record_run(_day_run(extracted), published)

    extracted = extract()
    shard_results = judge_shard.partial(extracted=extracted).expand(shard=structural(extracted))
    escalation = escalate(extracted)
    aggregated = aggregate(extracted, shard_results, escalation)
    validated = validate(extracted)
    published = publish(extracted)
    chain(shard_results, escalation, aggregated, validated, published, monitor(extracted), report(extracted),
          record_run(extracted, published))


citation_metrics_daily()
