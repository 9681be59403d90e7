"""Alert delivery (issue 13 §1): the DAG's notifier (Airflow's SmtpNotifier) sends the day's alerts
to a real SMTP server (aiosmtpd) started here on 127.0.0.1, through a real Airflow connection
defined with AIRFLOW_CONN_…; off while that connection is missing."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import importlib.util
import json
import socket
import types

import pytest

from citecheck import job
from citecheck import warehouse as W
from citecheck.features import monitor
from citecheck.warehouse.read_model import alerts_between
from helpers import REPO, load_fixture, orbit_settings, orbit_warehouse_turns

DAY = dt.date(2026, 11, 30)
ALERTS = [
    {"metric": "unknown_label_rate", "slice_name": "all", "slice_value": "all", "averaging": "micro",
     "baseline": 0.005, "value": 0.031, "direction": "up", "size": 0.026, "rule": "step up"},
    {"metric": "multi_citation_share", "slice_name": "attribute:model", "slice_value": "m2", "averaging": "micro",
     "baseline": 0.021, "value": 0.118, "direction": "up", "size": 0.097, "rule": "step up"},
]


class Inbox:
    """aiosmtpd handler keeping every message it receives."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], email.message.EmailMessage]] = []

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd calls this hook by name
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.messages.append((list(envelope.rcpt_tos), message))
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp_server():
    from aiosmtpd.controller import Controller

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


@pytest.fixture
def dag_module():
    spec = importlib.util.spec_from_file_location("citation_metrics_daily_under_test",
                                                  REPO / "dags" / "citation_metrics_daily.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    """A published Orbit day (so the warehouse holds answer and passage text) with two alerts,
    written by the run's own monitor step while it holds the day (every write of a run is fenced:
    once `record_run` has freed the day, the run writes nothing more)."""
    assess_day = monitor.assess_day

    def assess_with_alerts(*args, **kwargs):
        _alerts, stats = assess_day(*args, **kwargs)
        return ALERTS, {**stats, "alerts": len(ALERTS)}

    monkeypatch.setattr(monitor, "assess_day", assess_with_alerts)
    url = f"sqlite:///{tmp_path}/wh.sqlite"
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    W.load_turns(engine, orbit_warehouse_turns())
    job.run_day(engine, DAY, orbit_settings())
    assert len(alerts_between(engine, DAY, DAY)) == len(ALERTS)
    engine.dispose()
    config = tmp_path / "config.toml"
    config.write_text('[monitor]\nnotify_to = ["quality@example.com", "oncall@example.com"]\n'
                      'report_url = "https://airflow.example.com/citecheck/report/{day}"\n')
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow_home"))
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", url)
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    monkeypatch.delenv("CITECHECK_JUDGE", raising=False)
    return url


def _context(day: dt.date) -> dict:
    """What Airflow hands a task callback, as far as the notifier reads it."""
    start = dt.datetime.combine(day, dt.time(), dt.UTC)
    return {"data_interval_start": start, "logical_date": start, "params": {},
            "dag_run": types.SimpleNamespace(run_id="scheduled__x", run_type="scheduled")}


def _smtp_connection(monkeypatch, port: int) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_CITECHECK_ALERTS_SMTP", json.dumps({
        "conn_type": "smtp", "host": "127.0.0.1", "port": port,
        "extra": {"from_email": "citecheck@example.com", "disable_tls": True, "disable_ssl": True}}))


def test_the_notifier_sends_the_days_alerts_without_answer_or_passage_text(
        smtp_server, dag_module, warehouse, monkeypatch):
    inbox, port = smtp_server
    _smtp_connection(monkeypatch, port)
    dag_module.AlertNotifier()(_context(DAY))  # the callback's own entry point: render, then notify
    assert len(inbox.messages) == 1
    recipients, message = inbox.messages[0]
    assert sorted(recipients) == ["oncall@example.com", "quality@example.com"]
    assert message["From"] == "citecheck@example.com"
    assert "2026-11-30" in message["Subject"] and "2 metric alert" in message["Subject"]
    body = message.get_body(("html", "plain")).get_content()
    for text in ("unknown_label_rate", "overall", "0.5%", "3.1%", "multi_citation_share",
                 "attribute:model=m2", "2.1%", "11.8%", "https://airflow.example.com/citecheck/report/2026-11-30"):
        assert text in body, text
    orbit = load_fixture("orbit_labs.json")
    texts = [p["text"][:40] for t in orbit["turns"] for p in t["context"]]
    texts += [s.strip()[:40] for t in orbit["turns"] for s in t["answer"].split(".") if len(s.strip()) > 20]
    leaked = [t for t in texts if t in body or t in message["Subject"]]
    assert not leaked, f"answer or passage text in the alert e-mail: {leaked}"


def test_off_without_the_connection_and_silent_on_a_day_without_alerts(
        smtp_server, dag_module, warehouse, monkeypatch):
    inbox, port = smtp_server
    monkeypatch.delenv("AIRFLOW_CONN_CITECHECK_ALERTS_SMTP", raising=False)
    dag_module.AlertNotifier()(_context(DAY))
    assert inbox.messages == [], "no connection: alert e-mail is off"
    _smtp_connection(monkeypatch, port)
    dag_module.AlertNotifier()(_context(DAY - dt.timedelta(days=1)))
    assert inbox.messages == [], "nothing to say on a day without alerts"


def test_a_defined_connection_without_recipients_is_a_clear_error(smtp_server, dag_module, warehouse, monkeypatch,
                                                                  tmp_path):
    _inbox, port = smtp_server
    _smtp_connection(monkeypatch, port)
    config = tmp_path / "no_recipients.toml"
    config.write_text("[monitor]\nhistory_days = 28\n")
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    with pytest.raises(ValueError, match="notify_to is empty"):
        dag_module.AlertNotifier()(_context(DAY))


def _orbit_copies(day: dt.date, copies: int) -> list[dict]:
    """The Orbit day's turns `copies` times (distinct ids): counts large enough for the sampling test."""
    return [dict(t, turn_id=f"{t['turn_id']}#{k}", conversation_id=f"{t.get('conversation_id')}#{k}")
            for k in range(copies) for t in orbit_warehouse_turns(day.isoformat())]


@pytest.mark.slow
def test_dag_test_monitor_alerts_and_the_email_arrives(smtp_server, tmp_path):
    """Through Airflow itself (`dag.test()`): three published Orbit days (20 copies each), then a
    day whose answers cite labels their context does not hold; the monitor task alerts and its
    notifier e-mails the alert to the aiosmtpd server through the AIRFLOW_CONN_ connection."""
    from citecheck.core.config import load_config
    from citecheck.warehouse.read_model import alerts_between
    from helpers.dags import dag_test

    inbox, port = smtp_server
    url = f"sqlite:///{tmp_path}/wh.sqlite"
    orbit = load_fixture("orbit_labs.json")
    config = tmp_path / "monitor.toml"
    config.write_text(f'[check_worthiness]\nrefusals = ["{orbit["refusal_text"]}"]\n'
                      '[monitor]\nmin_history = 3\nmin_denominator = 0\nnotify_to = ["quality@example.com"]\n'
                      'report_url = "http://127.0.0.1:8080/citecheck/report/{day}"\n')
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    settings = job.JobSettings(judge_spec=orbit["judge"], config=load_config(config))
    for day in (DAY - dt.timedelta(days=n) for n in (3, 2, 1)):
        W.load_turns(engine, _orbit_copies(day, 20))
        job.run_day(engine, day, settings)
    stepped = _orbit_copies(DAY, 20)
    for turn in stepped:
        if isinstance(turn.get("answer"), str):
            turn["answer"] = turn["answer"].replace("[S1]", "[S9]")
    W.load_turns(engine, stepped)
    connection = json.dumps({"conn_type": "smtp", "host": "127.0.0.1", "port": port,
                             "extra": {"from_email": "citecheck@example.com", "disable_tls": True,
                                       "disable_ssl": True}})
    out = dag_test(tmp_path, url, DAY.isoformat(), CITECHECK_CONFIG=str(config),
                   AIRFLOW_CONN_CITECHECK_ALERTS_SMTP=connection)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    alerts = alerts_between(engine, DAY, DAY)
    assert any(a["metric"] == "unknown_label_rate" and a["slice_name"] == "all" and a["direction"] == "up"
               for a in alerts), alerts
    assert len(inbox.messages) == 1, "the monitor task's notifier sent one e-mail"
    recipients, message = inbox.messages[0]
    body = message.get_body(("html", "plain")).get_content()
    assert recipients == ["quality@example.com"]
    assert "unknown_label_rate" in body and "http://127.0.0.1:8080/citecheck/report/2026-11-30" in body
    texts = [p["text"][:40] for t in orbit["turns"] for p in t["context"]]
    assert not [t for t in texts if t in body]


def test_the_notifier_is_the_monitor_tasks_success_callback(dag_module):
    task = dag_module.citation_metrics_daily().get_task("monitor")
    callbacks = task.on_success_callback if isinstance(task.on_success_callback, list) else [
        task.on_success_callback]
    notifiers = [c for c in callbacks if isinstance(c, dag_module.AlertNotifier)]
    assert len(notifiers) == 1 and notifiers[0].smtp_conn_id == "citecheck_alerts_smtp"
    assert {t.task_id for t in task.upstream_list} == {"publish", "open_run"}
