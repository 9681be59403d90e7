"""THE Airflow glue the three DAG files share: the connection ids, the connection lookup, the
warehouse of a task, the `DayRun` of a daily DAG run and the alert e-mail notifier.

Airflow is imported inside the functions (and the notifier class is built on first use), so the
job package imports without it; only a DAG file, which Airflow parses, calls them."""

from __future__ import annotations

import datetime as dt
import functools
import os
from typing import Any

from sqlalchemy.engine import Engine

WAREHOUSE_CONN_ID = os.environ.get("CITECHECK_WAREHOUSE_CONN_ID", "citecheck_warehouse")
ANTHROPIC_CONN_ID = os.environ.get("CITECHECK_ANTHROPIC_CONN_ID", "citecheck_anthropic")
ALERTS_SMTP_CONN_ID = os.environ.get("CITECHECK_ALERTS_SMTP_CONN_ID", "citecheck_alerts_smtp")


def connection(conn_id: str) -> Any:
    """The Airflow connection, or None when it is not defined (every one of ours is optional)."""
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        return BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return None


def task_warehouse_url(conn_id: str = WAREHOUSE_CONN_ID) -> str | None:
    """The warehouse URL of the Airflow connection `conn_id`; None when it is not defined (then
    CITECHECK_WAREHOUSE_URL is the warehouse)."""
    found = connection(conn_id)
    return found.get_uri() if found is not None else None


def task_warehouse(config: Any = None, conn_id: str = WAREHOUSE_CONN_ID) -> Engine:
    """The warehouse of a running task, initialised: the Airflow connection `conn_id` if it is
    defined, else CITECHECK_WAREHOUSE_URL; schemas from `config` (default: CITECHECK_CONFIG's)."""
    from citecheck.warehouse import engine_for, init_warehouse

    engine = engine_for(config, task_warehouse_url(conn_id))
    init_warehouse(engine)
    return engine


def day_run(extracted: dict | None = None, *, with_anthropic_key: bool = False, context: Any = None) -> Any:
    """The `citecheck.job.DayRun` of a daily DAG run: the day and run id `open_run` returned (or, for
    `open_run` itself, the day `citecheck.job.metric_day` picks and the DAG run id), the settings
    from the DAG params and environment, the warehouse from the Airflow connection (else
    CITECHECK_WAREHOUSE_URL), and for the LLM step the Anthropic key from its connection (Airflow
    masks it in task logs). `context`: the one a callback is handed (default: the running task's)."""
    from airflow.sdk import get_current_context
    from airflow.sdk.exceptions import AirflowFailException

    from citecheck.job.metric_day import AmbiguousDay, metric_day
    from citecheck.job.settings import settings_from_env
    from citecheck.job.steps import DayRun
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
    anthropic = connection(ANTHROPIC_CONN_ID) if with_anthropic_key else None
    return DayRun(engine_for(settings.config, task_warehouse_url()), day, run_id, settings,
                  anthropic_api_key=anthropic.password if anthropic and anthropic.password else None)


@functools.cache
def alert_notifier_class() -> type:
    """`AlertNotifier`, the monitor task's success callback (an `SmtpNotifier`, built on first use)."""
    from airflow.providers.smtp.notifications.smtp import SmtpNotifier

    class AlertNotifier(SmtpNotifier):
        """E-mails the day's step-change alerts through the `citecheck_alerts_smtp` connection
        (SmtpNotifier), to `[monitor] notify_to` of the config. Off while that connection is not
        defined; nothing is sent for a day without alerts. The message holds metric names, slices,
        numbers and the report link, no answer or passage text."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(to=[], smtp_conn_id=ALERTS_SMTP_CONN_ID, **kwargs)

        def notify(self, context: Any) -> None:
            from citecheck.features.monitor import alert_message, monitor_settings
            from citecheck.warehouse.read_model import alerts_between

            if connection(self.smtp_conn_id) is None:
                self.log.info("alert e-mail is off: no connection %r", self.smtp_conn_id)
                return
            run = day_run(context=context)
            alerts = alerts_between(run.engine, run.day, run.day)
            if not alerts:
                return
            monitor = monitor_settings(run.settings.config)
            if not monitor.notify_to:
                raise ValueError(f"connection {self.smtp_conn_id!r} is defined but [monitor] notify_to is empty")
            self.to = list(monitor.notify_to)
            self.subject, self.html_content = alert_message(alerts, run.day, monitor.report_link(run.day))
            super().notify(context)

    return AlertNotifier
