"""
### citation_metrics_daily

Every day, for yesterday's logged assistant turns: are the cited passages saying what the
sentences say? Structural checks on 100% of turns, the NLI judge on the configured share
(mapped over shards, pool `nli`, queue `CITECHECK_NLI_QUEUE` so GPU workers take it), the LLM
judge on NLI rejections plus a random sample, a Great Expectations gate, and a one-transaction
publish of the day into `daily_metrics`, `sentence_verdicts` and `citation_verdicts`.

The steps are `citecheck.job`'s, wired here in the order of `citecheck.job.run_steps`: `extract`
returns the day and run id every later task takes; XCom carries ids and counts only;
intermediate data is staged in the warehouse under the run id. Backfill with
`airflow backfill create --dag-id citation_metrics_daily --from-date 2026-11-01 --to-date 2026-11-07`.
"""

from __future__ import annotations

import datetime as dt
import os

from airflow.sdk import Asset, CronDataIntervalTimetable, Param, chain, dag, task

WAREHOUSE_CONN_ID = os.environ.get("CITECHECK_WAREHOUSE_CONN_ID", "citecheck_warehouse")
ANTHROPIC_CONN_ID = os.environ.get("CITECHECK_ANTHROPIC_CONN_ID", "citecheck_anthropic")
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


def _day_run(extracted: dict | None = None, *, with_anthropic_key: bool = False):
    """The `citecheck.job.DayRun` of this DAG run: the day and run id `extract` returned (or, for
    `extract` itself, the data interval and DAG run id), the settings from the DAG params and
    environment, the warehouse from the Airflow connection (else CITECHECK_WAREHOUSE_URL), and
    for the LLM step the Anthropic key from its connection (Airflow masks it in task logs)."""
    from airflow.sdk import get_current_context

    from citecheck.job import DayRun, settings_from_env
    from citecheck.warehouse import engine_for

    ctx = get_current_context()
    settings = settings_from_env(ctx["params"])
    if extracted is None:
        start = ctx["data_interval_start"]
        day = start.in_timezone(settings.config.timezone).date() if hasattr(start, "in_timezone") else start.date()
        run_id = "".join(ch if ch.isalnum() or ch in "-_.:" else "_" for ch in ctx["dag_run"].run_id)[:64]
    else:
        day, run_id = dt.date.fromisoformat(extracted["day"]), extracted["run_id"]
    warehouse = _connection(WAREHOUSE_CONN_ID)
    anthropic = _connection(ANTHROPIC_CONN_ID) if with_anthropic_key else None
    return DayRun(engine_for(settings.config, warehouse.get_uri() if warehouse else None), day, run_id, settings,
                  anthropic_api_key=anthropic.password if anthropic and anthropic.password else None)


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
        """Opens the run; returns the day and run id every later task works on."""
        from citecheck.job import extract

        return extract(_day_run())

    @task
    def structural(extracted: dict) -> list[int]:
        """Runs the structural checks; returns the shards that hold turns to judge."""
        from citecheck.job import structural

        return structural(_day_run(extracted))["shards"]

    @task(pool="nli", queue=NLI_QUEUE, max_active_tis_per_dagrun=8)
    def judge_shard(extracted: dict, shard: int) -> dict:
        from citecheck.job import judge_shard

        return judge_shard(_day_run(extracted), shard)

    # Message Batches may take up to 24 h to end; the judge reattaches to its batch on retry.
    @task(execution_timeout=dt.timedelta(hours=25))
    def escalate(extracted: dict) -> dict:
        from citecheck.job import escalate

        return escalate(_day_run(extracted, with_anthropic_key=True))

    @task(trigger_rule="none_failed")
    def aggregate(extracted: dict, shard_results: list[dict], escalation: dict) -> dict:
        from citecheck.job import aggregate

        return aggregate(_day_run(extracted), list(shard_results or []), escalation)

    @task
    def validate(extracted: dict) -> dict:
        from airflow.sdk.exceptions import AirflowFailException

        from citecheck.job import ValidationFailed, validate

        try:
            return validate(_day_run(extracted))
        except ValidationFailed as exc:  # the same data fails the same way: fail now, no retries
            raise AirflowFailException(str(exc)) from exc

    @task(outlets=[DAILY_METRICS])
    def publish(extracted: dict) -> dict:
        from airflow.sdk import get_current_context

        from citecheck.job import publish

        counts = publish(_day_run(extracted))
        get_current_context()["outlet_events"][DAILY_METRICS].extra = {**extracted, **counts}
        return counts

    @task
    def record_run(extracted: dict, published: dict) -> dict:
        from citecheck.job import record_run

        return record_run(_day_run(extracted), published)

    extracted = extract()
    shard_results = judge_shard.partial(extracted=extracted).expand(shard=structural(extracted))
    escalation = escalate(extracted)
    aggregated = aggregate(extracted, shard_results, escalation)
    validated = validate(extracted)
    published = publish(extracted)
    chain(shard_results, escalation, aggregated, validated, published, record_run(extracted, published))


citation_metrics_daily()
