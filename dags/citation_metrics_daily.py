"""
### citation_metrics_daily

Every day, for yesterday's logged assistant turns: are the cited passages saying what the
sentences say? The day is cut into `shards` shards by conversation (THE shard key,
`citecheck.core.selection.shard_key`); structural checks on 100% of turns (mapped over shards),
the NLI judge on the configured share (mapped over shards, pool `nli`, queue
`CITECHECK_NLI_QUEUE` so GPU workers take it), the LLM
judge on NLI rejections plus a random sample, the answers folded per shard (`fold_shard`, mapped)
and the shards' partial states added (`combine`), a Great Expectations gate, and a one-transaction
publish of the day into every published table (`warehouse.tables.PUBLISHED_TABLES`):
`sentence_verdicts`, `citation_verdicts`, `daily_metrics`, `claim_verdicts`,
`claim_citation_verdicts`, `recite_suggestions`, `criteria_results`, `answer_decisions` and
`skipped_turns`, then the `monitor` step's step-change alerts (e-mailed by `AlertNotifier`
when the `citecheck_alerts_smtp` connection is defined), then the day's HTML report (`report`,
served in the Airflow UI by the `citecheck_report` plugin under "Citation report").

The steps are `citecheck.job`'s, wired here in the order of `citecheck.job.run_steps` (the run of
a task, the connections and the alert e-mail: `citecheck.job.airflow`, shared with the restate and
review DAGs): `open_run` returns the day and run id every later task takes, once per shard; XCom
carries ids and counts only;
intermediate data is staged in the warehouse under the run id.

**Which day a run scores** (`citecheck.job.metric_day`): the `day` param when given, else the run's
logical date, else its data interval (a manual run without either scores yesterday). Run one day:
`airflow dags trigger citation_metrics_daily --conf '{"day": "2026-11-25"}'` (or the `day` field
of the trigger form); backfill a range (logical dates are the days themselves):
`airflow backfill create --dag-id citation_metrics_daily --from-date 2026-11-01 --to-date 2026-11-07`
(add `--reprocess-behavior completed` to rerun days that already ran). A day with fewer than
`min_turns` scored turns (default 1) fails validation: an empty day is never published.
A backfill needs the DAG unpaused (a paused DAG's backfill runs stay queued). Two runs of one day
never overlap: `open_run` takes the day's lock in the warehouse; the second run's `open_run` fails
with the holder's run id and retries until the first run's `record_run` frees the day.

Needs the pool `nli` (`airflow pools set nli 2 "NLI judging"`): without it the shards wait in
`scheduled` forever.
"""

from __future__ import annotations

import datetime as dt
import os

from airflow.sdk import Asset, CronDataIntervalTimetable, Param, chain, dag, task

from citecheck.job.airflow import alert_notifier_class, day_run

NLI_QUEUE = os.environ.get("CITECHECK_NLI_QUEUE", "nli")
DAILY_METRICS = Asset("citecheck://warehouse/daily_metrics")
# Message Batches may take up to 24 h to end; a Celery broker's visibility timeout must be longer
# (bin/airflow-dev, docker-compose.yml and docs/airflow.md set 26 h).
ESCALATE_TIMEOUT = dt.timedelta(hours=25)
LOCK_RETRY_DELAY = dt.timedelta(seconds=30)  # open_run's first retry when another run holds the day


AlertNotifier = alert_notifier_class()  # the monitor task's alert e-mail (citecheck.job.airflow)


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
        "shards": Param(4, type="integer", minimum=1,
                        description="shards of the day: structural, judge_shard and fold_shard run once per shard"),
        "llm_sample_rate": Param(None, type=["null", "number"], description="LLM random sample rate"),
        "llm_budget_usd": Param(None, type=["null", "number"], description="daily LLM budget (USD)"),
        "min_turns": Param(None, type=["null", "integer"], minimum=1,
                           description="fewest scored turns to publish the day (empty: CITECHECK_MIN_TURNS, else 1)"),
    },
)
def citation_metrics_daily():
    # Another run holding the day (`DayLocked`: one run per day at a time) fails this task with the
    # holder's run id; it retries, backing off, until that run's record_run frees the day.
    @task(multiple_outputs=False, retries=12, retry_delay=LOCK_RETRY_DELAY, retry_exponential_backoff=True,
          max_retry_delay=dt.timedelta(minutes=10))
    def open_run() -> list[dict]:
        """Loads `[source] traces` when configured, then takes the day and opens the run; returns,
        per shard, the day, run id and shard every later task works on (the per-shard tasks map over
        it, the others read its first)."""
        from citecheck.job import open_run
        from citecheck.job.traces import load_configured_traces

        run = day_run()
        load_configured_traces(run.engine, run.settings.config, run.day)
        opened = open_run(run)
        return [{**opened, "shard": shard} for shard in opened["shards"]]

    # Per-shard steps are mapped tasks, one per step, not a mapped task group per shard: the day's
    # LLM claim split and escalation (one Message Batch each) sit between a shard's structural,
    # judge and fold steps, and only judge_shard takes the `nli` pool and queue.
    @task(multiple_outputs=False)
    def structural(opened: dict) -> dict:
        """Runs the structural checks of one shard's conversations."""
        from citecheck.job import structural

        return structural(day_run(opened), opened["shard"])

    @task(multiple_outputs=False)
    def split_claims(opened: list[dict]) -> dict:
        """In `[claims] mode = "llm"`, splits the claims with the LLM (one Message Batch, which a
        retry reattaches to), so it gets the Anthropic key; nothing in other modes."""
        from citecheck.job import split_claims

        return split_claims(day_run(opened[0], with_anthropic_key=True))

    @task(pool="nli", queue=NLI_QUEUE, max_active_tis_per_dagrun=8, multiple_outputs=False)
    def judge_shard(opened: dict) -> dict:
        from citecheck.job import judge_shard

        return judge_shard(day_run(opened), opened["shard"])

    # Message Batches may take up to 24 h to end; the judge reattaches to its batch on retry.
    @task(execution_timeout=ESCALATE_TIMEOUT, multiple_outputs=False)
    def escalate(opened: list[dict]) -> dict:
        from citecheck.job import escalate

        return escalate(day_run(opened[0], with_anthropic_key=True))

    @task(multiple_outputs=False)
    def fold_shard(opened: dict) -> dict:
        """Decides one shard's verdicts, stages its rows and its partial state of the day's metrics."""
        from citecheck.job import fold_shard

        return fold_shard(day_run(opened), opened["shard"])

    @task(trigger_rule="none_failed", multiple_outputs=False)
    def combine(opened: list[dict], shard_results: list[dict], escalation: dict) -> dict:
        """Adds the shards' partial states: the day's metric rows, intervals and decisions."""
        from citecheck.job import combine

        # one slice read: iterating the lazy sequence asks for one item past its end (an error line)
        return combine(day_run(opened[0]), list(shard_results[:]), escalation)

    @task(multiple_outputs=False)
    def validate(opened: list[dict]) -> dict:
        from airflow.sdk.exceptions import AirflowFailException

        from citecheck.job import ValidationFailed, validate

        try:
            return validate(day_run(opened[0]))
        except ValidationFailed as exc:  # the same data fails the same way: fail now, no retries
            raise AirflowFailException(str(exc)) from exc

    @task(outlets=[DAILY_METRICS], multiple_outputs=False)
    def publish(opened: list[dict]) -> dict:
        from airflow.sdk import get_current_context

        from citecheck.job import publish

        day = {k: opened[0][k] for k in ("run_id", "day")}
        counts = publish(day_run(opened[0]))
        get_current_context()["outlet_events"][DAILY_METRICS].extra = {**day, **counts}
        return counts

    @task(on_success_callback=AlertNotifier(), multiple_outputs=False)
    def monitor(opened: list[dict]) -> dict:
        """Step-change alerts of the published day against its history."""
        from citecheck.job import monitor

        return monitor(day_run(opened[0]))

    @task(multiple_outputs=False)
    def report(opened: list[dict]) -> dict:
        """The day's HTML report, stored in the warehouse for the `citecheck_report` plugin."""
        from citecheck.job import report

        return report(day_run(opened[0]))

    @task(multiple_outputs=False)
    def record_run(opened: list[dict], published: dict) -> dict:
        from citecheck.job import record_run

        return record_run(day_run(opened[0]), published)

    opened = open_run()
    structured = structural.expand(opened=opened)
    claims = split_claims(opened)
    shard_results = judge_shard.expand(opened=opened)
    escalation = escalate(opened)
    folded = fold_shard.expand(opened=opened)
    combined = combine(opened, shard_results, escalation)
    validated = validate(opened)
    published = publish(opened)
    chain(structured, claims, shard_results, escalation, folded, combined, validated, published, monitor(opened),
          report(opened), record_run(opened, published))


citation_metrics_daily()
