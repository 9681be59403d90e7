"""The daily HTML report: span highlighting, data gathering, rendering (self-contained, escaped),
storage of the rendered day, and the CLI, on SQLite and on the real PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json
import re

import markupsafe
import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.core.text import find_span
from citecheck.job import publish_report
from citecheck.report import ReportError, build_report, format_value
from citecheck.report.charts import vega_runtime
from citecheck.report.data import Evidence, FlaggedSentence, ReportData, evidence_for, highlight
from citecheck.report.render import CONTENT_SECURITY_POLICY, render
from citecheck.warehouse import read_model as reads
from citecheck.warehouse import tables as T
from citecheck.warehouse.read_model import report_html, report_index
from citecheck.warehouse.reports import store_report
from helpers import orbit_settings, orbit_warehouse_turns, publish_orbit_days

DAYS = [dt.date(2026, 11, 28), dt.date(2026, 11, 29), dt.date(2026, 11, 30)]
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def published(engine):
    """A warehouse (SQLite file or a fresh PostgreSQL database) with three published Orbit days."""
    publish_orbit_days(engine, DAYS)
    return engine


def headline_values(page: str) -> dict[str, str]:
    return dict(re.findall(r'class="value headline-value" data-metric="([^"]+)" data-value="([^"]*)"', page))


# --- units ------------------------------------------------------------------------------------

def test_find_span_matches_as_quote_verification_does():
    passage = "Meals are reimbursed\n up to 40 euros per day. Alcohol is “never” reimbursed."
    start, end = find_span(passage, "meals are REIMBURSED up to 40")
    assert passage[start:end] == "Meals are reimbursed\n up to 40"
    start, end = find_span(passage, 'Alcohol is "never"')
    assert passage[start:end] == "Alcohol is “never”"
    assert find_span(passage, "taxis") is None
    assert find_span(passage, "   ") is None


def test_highlight_merges_overlapping_spans_and_keeps_every_character():
    text = "abcdefghij"
    pieces = highlight(text, [(2, 5), (4, 7), (8, 9)])
    assert pieces == (("ab", False), ("cdefg", True), ("h", False), ("i", True), ("j", False))
    assert "".join(p for p, _ in pieces) == text
    assert highlight("", []) == (("", False),)
    assert highlight(text, [(0, 10)]) == ((text, True),)


def test_evidence_prefers_a_verified_llm_quote_then_the_nli_window():
    passages = {"S1": {"label": "S1", "text": "The cap is 220 euros. Receipts are required.", "source": "policy"},
                "S2": {"label": "S2", "text": "Approved reports are paid within 5 days.", "source": "faq"}}
    row = {"labels": ["S1", "S9"], "unknown_labels": ["S9"], "supported_elsewhere_by": "S2",
           "llm": {"quotes": [{"label": "S1", "quote": "Receipts are required", "verified": True},
                              {"label": "S2", "quote": "paid within 5", "verified": False}]},
           "best_windows": {"S1": "The cap is 220 euros.", "S2": "Approved reports are paid within 5 days."}}
    s1, s2 = evidence_for(row, passages)
    assert (s1.label, s1.role, s1.span_kind) == ("S1", "cited", "verified LLM quote")
    assert [p for p, marked in s1.segments if marked] == ["Receipts are required"]
    assert (s2.label, s2.role, s2.span_kind) == ("S2", "supports", "NLI best window")  # unverified quote ignored
    assert [p for p, marked in s2.segments if marked] == ["Approved reports are paid within 5 days."]

    missing = evidence_for({"labels": ["S3"], "best_windows": {"S3": "gone"}}, passages)[0]
    assert missing.passage is None and "not found" in missing.note
    moved = evidence_for({"labels": ["S1"], "best_windows": {"S1": "not in the passage any more"}}, passages)[0]
    assert moved.span_kind is None and "not in the stored passage" in moved.note
    plain = evidence_for({"labels": ["S1"]}, passages)[0]
    assert plain.span_kind is None and plain.segments == ((passages["S1"]["text"], False),)


def test_values_are_formatted_by_the_metric_scale():
    assert format_value("citation_recall", 0.375) == "37.5%"
    assert format_value("citation_f1", 0.5) == "50.0%"
    assert format_value("unknown_labels_per_1000_answers", 333.3333) == "333.3"
    assert format_value("some_future_metric", 12.345) == "12.3"
    assert format_value("citation_recall", None) == "n/a"


def _constructed(**overrides) -> ReportData:
    day = dt.date(2026, 11, 30)
    metric = {"day": day, "slice_name": "all", "slice_value": "all", "metric": "citation_recall", "averaging": "micro",
              "numerator": 3.0, "denominator": 8.0, "value": 0.375, "answers": 3, "sentences": 12, "run_id": "r1",
              "ci_low": 0.1, "ci_high": 0.7}
    sentence = {"turn_id": "t1", "sentence_index": 0, "text": "Claim " + HOSTILE, "labels": ["S1"],
                "unknown_labels": [], "verdict": "unsupported", "score": 0.1, "contradiction": 0.2, "judge": "nli"}
    passage = {"text": "P " + HOSTILE, "source": HOSTILE, "document_id": "d", "version": "1"}
    evidence = Evidence("S1", "cited", passage, (("P ", False), (HOSTILE, True)), "NLI best window")
    data = ReportData(
        day=day, trend_days=7, run=None, headline=[metric], all_metrics=[metric],
        history=[dict(metric, day=day - dt.timedelta(days=i)) for i in range(3)],
        slices=[dict(metric, slice_name="product", slice_value=HOSTILE)], agreement=[],
        flagged=[FlaggedSentence(sentence, (evidence,))],
        alerts=[{"metric": "citation_recall", "slice_name": "all", "slice_value": "all", "baseline": 0.8,
                              "value": 0.375, "direction": "down", "size": -0.425, "rule": HOSTILE}],
        suggestions=[{"kind": "miscited", "sentence": HOSTILE, "turn_id": "t1", "sentence_index": 0,
                                   "cited_labels": ["S1"], "suggested_labels": ["S2"], "source": "faq",
                                   "document_id": "d", "version": "2", "judge": "llm", "score": None,
                                   "quote": HOSTILE, "auto_apply": False, "caution": "has_numbers"}],
        interval_columns=("ci_low", "ci_high"))
    for key, value in overrides.items():
        setattr(data, key, value)
    return data


def test_untrusted_texts_are_escaped_everywhere():
    page = render(_constructed())
    assert "<script>alert" not in page and "<img src=x" not in page
    escaped = str(markupsafe.escape(HOSTILE))
    assert page.count(escaped) >= 6  # sentence, passage, source, slice, alert rule, suggestion (+ quote)
    # the slice value also reaches the chart data, inside a <script>: JSON-escaped, never raw
    assert "\\u003cscript\\u003e" in page
    assert "<mark>&lt;script&gt;" in page


def test_the_reader_panel_and_alert_groups_are_shown():
    from citecheck.core.alert_groups import group_alerts

    day = dt.date(2026, 11, 30)
    row = {"day": day, "slice_name": "all", "slice_value": "all", "averaging": "micro", "answers": 3, "sentences": 9,
           "run_id": "r1", "ci_low": None, "ci_high": None}
    reader = [dict(row, metric="citation_open_rate", numerator=2.0, denominator=50.0, value=0.04),
              dict(row, metric="source_reports_per_1000_answers", numerator=6000.0, denominator=3.0, value=2000.0),
              dict(row, metric="reported_citation_unsupported_share", numerator=2.0, denominator=4.0, value=0.5,
                   ci_low=0.15, ci_high=0.85)]
    alert = {"metric": "unknown_label_rate", "slice_name": "all", "slice_value": "all", "averaging": "micro",
             "baseline": 0.02, "value": 0.06, "direction": "up", "size": 0.04, "rule": "step up", "day": "2026-11-30"}
    alerts = group_alerts([alert, *[dict(alert, slice_name="attribute:model", slice_value=f"m{i}", size=0.03 + i / 100)
                                    for i in range(4)]])
    page = render(_constructed(reader=reader, alerts=alerts))
    panel = re.search(r'<div class="cards" id="reader-panel">(.*?)</div>\s*<p', page, re.S).group(1)
    assert 'data-metric="citation_open_rate"' in panel and "4.0%" in panel and "2000.0" in panel
    assert "[15.0%, 85.0%]" in panel  # the judged share carries its interval
    # counts as a person reads them: the reports themselves, not the per-1,000 numerator 6000
    assert "6 reports / 3 answers" in panel and "2 opened / 50 citations shown" in panel and "6000" not in panel
    assert page.count('<tr class="alert">') == 1 and page.count('<tr class="alert-echo">') == 4
    assert "also in 4 slices, moved most:" in page and "5 alert(s) in 1 group(s)" in page
    null_day = render(_constructed(reader=[dict(r, value=None, ci_low=None, ci_high=None) for r in reader]))
    assert "No reader event was logged for 2026-11-30" in null_day and 'id="reader-panel"' in null_day


def test_intervals_are_shown_and_charted_when_the_warehouse_stores_them():
    page = render(_constructed())
    assert '<span class="interval">[10.0%, 70.0%]</span>' in page
    assert '"y2": {"field": "ci_high"' in page or '"y2":{"field":"ci_high"' in page.replace(" ", "")
    without = render(_constructed(interval_columns=()))
    assert 'class="interval"' not in without and "ci_high" not in without
    assert "point values only" in without


# --- against a warehouse ------------------------------------------------------------------------

def test_the_report_of_a_published_day_matches_the_warehouse(published):
    day = DAYS[-1]
    page = build_report(published, day, trend_days=7)
    micro = {r["metric"]: r["value"] for r in job.day_metrics(published, day)
             if r["slice_name"] == "all" and r["averaging"] == "micro"}
    shown = headline_values(page)
    assert shown["citation_recall"] == repr(micro["citation_recall"])
    assert set(shown) >= {"citation_recall", "citation_precision", "attachment_rate", "faithfulness"}
    for metric, value in shown.items():
        assert float(value) == micro[metric] if value else micro[metric] is None
    # F1's card shows its recall and precision, not its internal 2PR / (P + R) fraction
    f1_card = re.search(r'data-metric="citation_f1".*?<span class="fraction">(.*?)</span>', page, re.S).group(1)
    assert f1_card.startswith("recall ") and " · precision " in f1_card
    # self-contained: the Vega runtime is inlined, and outside it no external script, stylesheet,
    # image or link target
    runtime = vega_runtime()
    assert page.count(runtime) == 1
    markup = page.replace(runtime, "")
    assert not re.search(r'<(script|img|iframe|link)[^>]+(src|href)=', markup)
    assert not re.search(r'(src|href)="(https?:)?//', markup)
    assert f'<meta http-equiv="Content-Security-Policy" content="{markupsafe.escape(CONTENT_SECURITY_POLICY)}">' in page
    # trend data: the three published days of the window
    assert all(f'"day": "{d.isoformat()}"' in page for d in DAYS)
    # every flagged sentence of the day is listed with its passages
    with published.connect() as conn:
        flagged = conn.execute(sa.select(sa.func.count()).select_from(T.sentence_verdicts).where(
            T.sentence_verdicts.c.day == day, T.sentence_verdicts.c.check_worthy.is_(True),
            T.sentence_verdicts.c.verdict.in_(["unsupported", "miscited", "contradicted"]))).scalar_one()
    assert flagged >= 1
    assert page.count('<div class="sentence"') == flagged
    assert 'class="evidence cited"' in page


def test_the_days_alerts_and_suggestions_are_shown(published):
    from citecheck.warehouse.alerts import replace_alerts
    from citecheck.warehouse.read_model import alerts_between
    from citecheck.warehouse.read_model import day_suggestions as suggestions_for

    day = DAYS[-1]
    alert = {"metric": "unknown_labels_per_1000_answers", "slice_name": "product", "slice_value": "travel",
             "averaging": "micro", "baseline": 5.0, "value": 333.3, "direction": "up", "size": 328.3,
             "rule": "abs 328.3 >= 2; interval above the baseline"}
    overall = dict(alert, metric="multi_citation_share", slice_name="all", slice_value="all", baseline=0.02,
                   value=0.12, size=0.1)
    replace_alerts(published, day, "run-x", [alert, overall])
    replace_alerts(published, DAYS[0], "run-y", [dict(alert, metric="refusal_rate")])
    assert len(alerts_between(published, day, day)) == 2
    suggestions = suggestions_for(published, day)
    assert suggestions, "the Orbit day has a miscited sentence, so a re-cite suggestion"
    page = build_report(published, day, trend_days=7)
    assert page.count('<tr class="alert">') == 2
    alerts = re.search(r'<table id="alerts-table">(.*?)</table>', page, re.S).group(1)
    assert "product = travel" in alerts and "333.3" in alerts and "refusal_rate" not in alerts
    assert alerts.index("<td>overall</td>") < alerts.index("product = travel"), "overall alerts come first"
    assert "12.0%" in alerts and "2.0%" in alerts
    assert page.count('<tr class="suggestion">') == len(suggestions)
    for s in suggestions:
        assert str(markupsafe.escape(s["sentence"])) in page
        assert ", ".join(s["suggested_labels"]) in page


def test_a_day_with_many_suggestions_lists_the_first_and_counts_them_all(published, monkeypatch):
    from collections import Counter

    import citecheck.report.data as report_data
    from citecheck.warehouse.read_model import day_suggestions, suggestion_counts

    day = DAYS[-1]
    every = day_suggestions(published, day)
    counts = suggestion_counts(published, day)
    assert {kind: n["suggestions"] for kind, n in counts.items()} == Counter(s["kind"] for s in every)
    assert {kind: n["automatic"] for kind, n in counts.items()} == {
        kind: sum(1 for s in every if s["kind"] == kind and s["auto_apply"]) for kind in counts}
    assert day_suggestions(published, day, limit=1) == every[:1]
    monkeypatch.setattr(report_data, "SUGGESTIONS_SHOWN", 1)  # a large day: more than the page lists
    page = build_report(published, day, trend_days=7)
    assert page.count('<tr class="suggestion">') == 1
    shown = re.search(r'<p id="suggestion-counts">(.*?)</p>', page, re.S).group(1)
    assert f"{len(every):,} suggestion" in shown
    for kind, n in counts.items():
        assert f"{kind} {n['suggestions']:,} ({n['automatic']:,} automatic)" in shown
    assert (f"citecheck suggestions --day {day}" in shown) == (len(every) > 1)


def test_a_stored_report_is_replaced_by_a_rerun(published):
    day = DAYS[-1]
    index = report_index(published)
    assert [r["day"] for r in index] == DAYS[::-1], "the job's report step stored every day, newest first"
    assert index[0]["run_id"] == reads.published_run(published, day)["run_id"] and index[0]["trend_days"] == 28
    assert index[0]["rendered_at"].tzinfo is not None
    stored = report_html(published, day)
    assert f'<span id="report-day">{day.isoformat()}</span>' in stored
    store_report(published, day, "<p>second</p>", trend_days=3, run_id="run-b")
    assert report_html(published, day) == "<p>second</p>"
    assert report_html(published, dt.date(2020, 1, 1)) is None
    index = report_index(published)
    assert len(index) == 3 and (index[0]["run_id"], index[0]["trend_days"]) == ("run-b", 3)
    rerun = publish_report(published, day, "run-c", trend_days=7)
    assert rerun["bytes"] > 100_000  # the Vega runtime is inlined
    assert report_html(published, day).count('<span id="report-day">') == 1
    assert report_index(published, limit=1)[0]["run_id"] == "run-c"


def test_judge_quality_of_the_latest_review_period_is_shown(published):
    from citecheck.warehouse import review as WR

    day = DAYS[-1]
    assert reads.judge_quality_for(published, day) is None
    page = build_report(published, day, trend_days=7)
    assert "No human review has been published" in page
    row = {"judge": "first_stage", "slice_name": "all", "slice_value": "all", "measure": "false_pass",
           "weighting": "weighted", "numerator": 3.0, "denominator": 40.0, "value": 0.075, "ci_low": 0.02,
           "ci_high": 0.19, "method": "wilson", "labelled_items": 40}
    WR.publish_review(published, dt.date(2026, 11, 1), dt.date(2026, 11, 20), [dict(row, value=0.5)], [])
    WR.publish_review(published, dt.date(2026, 11, 23), dt.date(2026, 11, 29),
                      [row, dict(row, slice_name="attribute:product", slice_value="x", value=0.9)], [])
    WR.publish_review(published, dt.date(2026, 12, 1), dt.date(2026, 12, 7), [dict(row, value=0.7)], [])
    quality = reads.judge_quality_for(published, day)
    assert (quality["from_day"], quality["to_day"]) == (dt.date(2026, 11, 23), dt.date(2026, 11, 29))
    assert [r["value"] for r in quality["rows"]] == [0.075]
    page = build_report(published, day, trend_days=7)
    table = re.search(r'<table id="judge-quality-table">(.*?)</table>', page, re.S).group(1)
    assert "0.075" in table and "[0.020, 0.190]" in table and "0.900" not in table and "0.700" not in table
    assert "Review period 2026-11-23 to 2026-11-29" in page


def test_a_warehouse_without_the_reports_table_has_no_reports(tmp_path, pg_warehouse_url):
    for url in (f"sqlite:///{tmp_path}/empty.sqlite", pg_warehouse_url):
        engine = W.make_engine(url)
        with engine.connect() as conn:
            assert not sa.inspect(conn).has_table("reports")
        assert report_index(engine) == [] and report_html(engine, DAYS[-1]) is None
        engine.dispose()


def test_the_vega_runtime_is_bundled_once_and_kept_on_disk(tmp_path, monkeypatch):
    import vl_convert

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    vega_runtime.cache_clear()
    try:
        bundle = vega_runtime()
        (cached,) = (tmp_path / "citecheck").glob("vega-runtime-*.js")
        assert vl_convert.__version__ in cached.name and cached.read_text(encoding="utf-8") == bundle
        assert "vegaEmbed" in bundle and len(bundle) > 500_000
        vega_runtime.cache_clear()
        assert vega_runtime() == bundle  # read back from disk
    finally:
        vega_runtime.cache_clear()


def test_a_day_without_published_metrics_is_a_clear_error(published):
    with pytest.raises(ReportError, match="no published metrics for 2026-12-25"):
        build_report(published, dt.date(2026, 12, 25))
    with pytest.raises(ReportError, match="at least 1"):
        build_report(published, DAYS[-1], trend_days=0)


def test_cli_writes_the_file_and_stores_it(tmp_path, monkeypatch, capsys):
    from citecheck.cli import main

    url = f"sqlite:///{tmp_path}/wh.sqlite"
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    W.load_turns(engine, orbit_warehouse_turns(DAYS[-1].isoformat()))
    job.run_day(engine, DAYS[-1], orbit_settings())
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", url)
    monkeypatch.delenv("CITECHECK_CONFIG", raising=False)
    out = tmp_path / "out" / "report.html"
    assert main(["report", "--day", "2026-11-30", "--days", "3", "--out", str(out), "--store"]) == 0
    assert "written to" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8") == report_html(engine, DAYS[-1])
    assert main(["report", "--day", "2026-11-01", "--out", str(tmp_path / "none.html")]) == 2
    assert "no published metrics for 2026-11-01" in capsys.readouterr().err
    assert not (tmp_path / "none.html").exists()
    for bad in (["--days", "0"], ["--days", "x"], ["--day", "30/11/2026"]):
        args = ["report", "--day", "2026-11-30", "--out", str(out), *bad]
        with pytest.raises(SystemExit) as exit_:
            main(args)
        assert exit_.value.code == 2


@pytest.mark.slow
def test_nli_best_windows_are_published_and_highlighted(tmp_path):
    """The NLI judge's best window per cited/supporting passage reaches `sentence_verdicts` through
    the real job, and the report highlights it inside the stored passage."""
    from helpers.tiny_models import save_tiny_nli

    model = save_tiny_nli(tmp_path / "tiny_nli")
    engine = W.make_engine(f"sqlite:///{tmp_path}/wh.sqlite")
    W.init_warehouse(engine)
    W.load_turns(engine, orbit_warehouse_turns(DAYS[-1].isoformat()))
    job.run_day(engine, DAYS[-1], orbit_settings(judge_spec={"kind": "nli", "model": str(model), "batch_size": 8}))
    with engine.connect() as conn:
        rows = conn.execute(sa.select(T.sentence_verdicts.c.labels, T.sentence_verdicts.c.best_windows).where(
            T.sentence_verdicts.c.judge == "nli")).all()
    windows = [w for _labels, w in rows if w]
    assert windows, "judged sentences keep their best windows"
    assert all(set(w) <= set(labels) | {"S1", "S2", "S3", "S4", "S5"} for labels, w in rows if w)
    page = build_report(engine, DAYS[-1], trend_days=1)
    flagged = reads.flagged_sentences(engine, DAYS[-1], ("contradicted", "unsupported", "miscited"), 30)
    assert any(r["best_windows"] for r in flagged), "the tiny model leaves sentences unsupported"
    assert "highlighted: NLI best window" in page and "<mark>" in page
    json.dumps(windows)  # stored as plain JSON


def test_the_trend_window_comes_from_the_config():
    from citecheck.core.config import ConfigError, config_from_mapping
    from citecheck.report import DEFAULT_TREND_DAYS, configured_trend_days

    assert configured_trend_days(config_from_mapping({})) == DEFAULT_TREND_DAYS == 28
    assert configured_trend_days(config_from_mapping({"report": {"days": 7}})) == 7
    for bad in ({"days": 0}, {"days": "7"}, {"days": True}, {"weeks": 2}):
        with pytest.raises(ConfigError, match="report"):
            configured_trend_days(config_from_mapping({"report": bad}))


def test_the_trend_chart_has_a_panel_per_metric_with_values():
    from citecheck.report.charts import trend_chart

    day = dt.date(2026, 11, 30)
    rows = [{"day": day - dt.timedelta(days=i), "metric": m, "value": v, "ci_low": None, "ci_high": None}
            for i in range(3) for m, v in (("citation_recall", 0.5 + i / 10), ("first_stage_agreement", None))]
    spec = trend_chart(rows, ("citation_recall", "first_stage_agreement", "refusal_rate"), day, 7, intervals=False)
    assert spec["facet"]["sort"] == ["citation_recall"]
    values = spec["data"]["values"]
    assert {v["metric"] for v in values} == {"citation_recall"} and len(values) == 3
    assert spec["spec"]["layer"][0]["mark"]["type"] == "line"
    band = trend_chart(rows, ("citation_recall",), day, 7, intervals=True)
    assert band["spec"]["layer"][0]["mark"]["type"] == "area"


def test_the_report_opens_with_the_days_decision_and_links_failing_answers(engine):
    from citecheck.core.criteria import parse_criteria

    day = DAYS[-1]
    W.load_turns(engine, orbit_warehouse_turns(day.isoformat()))
    criteria = parse_criteria([
        {"name": "recall", "metric": "citation_recall", "min": 0.9, "answers": True},
        {"name": "attached", "metric": "attachment_rate", "min": 0.5},
        {"name": "pay answers", "metric": "citation_recall", "min": 0.5, "where": {"topic": "pay"}},
    ])
    job.run_day(engine, day, orbit_settings(criteria=criteria))
    page = build_report(engine, day, trend_days=7)
    assert page.index('id="decision"') < page.index('id="headline"')
    assert 'Decision of the day: <span class="decision decision-fail">fail</span>' in page
    rows = re.findall(r'<tr class="criterion" data-decision="([^"]+)">\s*<td>([^<]+)</td>', page)
    # the Orbit day skips its malformed row, 1 of 5 turns: over the daily default of 1% (core.coverage)
    assert rows == [("fail", "recall"), ("fail", "turns skipped"), ("no_data", "pay answers"), ("pass", "attached")]
    assert "min 90.0% on value" in page
    # each failing answer links to its flagged sentences, which carry the anchors
    links = re.findall(r'<a href="#(s-[^"]+)">', page)
    assert links and all(f'id="{anchor}"' in page for anchor in links)
    assert f'data-turn="orbit-1@{day}"' in page
    # the untraced figure of "paid within 5 business days [S3][S4]" is shown on its sentence
    assert '<span class="figure figure-untraced" title="number 5">5 (not in the cited text)</span>' in page


def test_a_day_without_criteria_shows_no_decision(published):
    assert 'id="decision"' not in build_report(published, DAYS[-1], trend_days=7)
