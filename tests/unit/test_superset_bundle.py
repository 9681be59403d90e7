"""The Superset dashboard draws each metric on an axis of its own unit, from the registry, and shows
the day's acceptance decision with its failing criteria from `criteria_results` (issue 37 item 6).
Before: "Headline rates per day" drew `source_reports_per_1000_answers` (up to 4,000 reports per
1,000 answers) as 4000.0% on the percent axis and flattened every rate to the bottom."""

from __future__ import annotations

import json

import pytest

from citecheck.bi import superset as B
from citecheck.core.metrics import BY_NAME, HEADLINE_METRICS


@pytest.fixture
def files(monkeypatch):
    monkeypatch.delenv("CITECHECK_WAREHOUSE_SCHEMA", raising=False)
    return B.bundle("postgresql://bi@db.example.invalid/warehouse")


def _charts(files):
    return {c["slice_name"]: c for k, c in files.items() if k.startswith("charts/")}


def _query(chart):
    return json.loads(chart["query_context"])["queries"][0]


def test_every_chart_of_the_wide_view_draws_one_unit_on_its_axis(files):
    drawn = set()
    for title, chart in _charts(files).items():
        query = _query(chart)
        metrics = [m for m in query["metrics"] or () if isinstance(m, str) and m in BY_NAME]
        if not metrics:
            continue
        units = {BY_NAME[m].axis_unit for m in metrics}
        assert len(units) == 1, (title, units)
        assert chart["params"]["y_axis_format"] == BY_NAME[metrics[0]].bi_format, title
        drawn |= set(metrics)
    assert set(HEADLINE_METRICS) <= drawn  # every headline metric is still on the dashboard
    rates = _query(_charts(files)["Headline rates per day"])["metrics"]
    assert "source_reports_per_1000_answers" not in rates and "citation_recall" in rates
    reports = _charts(files)["Headline reports per 1,000 answers, per day"]
    assert _query(reports)["metrics"] == ["source_reports_per_1000_answers"]
    assert reports["params"]["y_axis_format"] == ",.1f"


def test_the_axis_unit_comes_from_the_registry():
    assert BY_NAME["citation_recall"].axis_unit == "share"
    assert BY_NAME["source_reports_per_1000_answers"].axis_unit == "reports per 1,000 answers"
    assert BY_NAME["unknown_labels_per_1000_answers"].axis_unit == "unknown labels per 1,000 answers"
    assert set(B.headline_axes()) == {BY_NAME[m].axis_unit for m in HEADLINE_METRICS}


def test_the_dashboard_shows_the_days_decision_and_its_failing_criteria(files):
    charts = _charts(files)
    datasets = {v["uuid"]: v for k, v in files.items() if k.startswith("datasets/")}
    decision, criteria = charts["Decision of the day"], charts["Acceptance criteria of each day (failing first)"]
    for chart in (decision, criteria):
        context = json.loads(chart["query_context"])
        assert datasets[context["datasource"]["id"]]["table_name"] == "criteria_results"
    dataset = datasets[json.loads(decision["query_context"])["datasource"]["id"]]
    named = {m["metric_name"]: m["expression"] for m in dataset["metrics"]}
    query = _query(decision)
    assert query["columns"] == ["day"] and set(query["metrics"]) <= set(named)
    assert {"decision", "criteria_failing", "criteria_no_data", "criteria_passing"} <= set(query["metrics"])
    assert "'fail'" in named["decision"] and "'no_data'" in named["decision"]
    columns = {c["column_name"] for c in dataset["columns"]}
    listed = _query(criteria)
    assert set(listed["columns"]) <= columns and {"criterion", "decision", "value", "bound"} <= set(listed["columns"])
    assert listed["orderby"] == [["day", False], ["decision", True]]  # each day's failing criteria first
    positioned = {v["meta"]["uuid"] for k, v in files["dashboards/citecheck.yaml"]["position"].items()
                  if k.startswith("CHART-")}
    assert {decision["uuid"], criteria["uuid"]} <= positioned

