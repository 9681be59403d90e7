"""Reader events resolved against the answer's citations (issue 31 item 4, SPEC §1/§5): an event
names (sentence index, label) citations of its turn; one that names none is unresolved, counted
apart with its reason (`unresolved_event_share` and per reason), never in the reader rates."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace

import pytest

from citecheck.core.metrics import MetricAccumulator
from citecheck.core.pipeline import judge_batch, structure_turns
from citecheck.core.reader_events import (
    UNRESOLVED_REASONS,
    ReaderEvent,
    answer_citations,
    reader_counts,
    resolve_event,
)
from citecheck.core.structural import ConversationHistory
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from helpers import load_fixture, orbit_settings

AT = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def scored():
    """orbit-1: sentences 0 [S2] (credited), 1 [S1 credited, S3 not], 2 [S2] miscited, 3 [S3, S4]
    unsupported, 4 [S3] miscited, 5 uncited, 6 not check-worthy; orbit-2: 0 [S1] credited, 1 [S4]
    (a label its context lacks: an unknown label, but the answer cites it)."""
    data = load_fixture("orbit_labs.json")
    config = orbit_settings().config
    structured = list(structure_turns([turn_from_dict(t) for t in data["turns"]], config, ConversationHistory()))
    return {s.turn_id: s for s in judge_batch(structured, judge_from_spec(data["judge"]), selected=lambda _st: True)}


def _e(n: int, kind: str, label: str | None = None, index: int | None = None, turn: str = "orbit-2") -> ReaderEvent:
    return ReaderEvent(f"e{n}", turn, kind, AT, label, index)


def _counts(scored, turn: str, events) -> dict[str, int]:
    st = scored[turn]
    return dict(reader_counts(events, st.verdicts, selected=st.selected))


def _day_row(scored, events_by_turn, metric: str) -> dict:
    acc = MetricAccumulator(orbit_settings().config)
    for turn_id, st in scored.items():
        acc.add(replace(st, reader_events=tuple(events_by_turn.get(turn_id, ()))))
    (row,) = [r for r in acc.rows() if r["metric"] == metric and (r["slice_name"], r["averaging"]) == ("all", "micro")]
    return row


def test_the_issue_case_shown_by_index_and_opened_by_label_is_one_citation(scored):
    # orbit-2 cites S1 only in sentence 0: shown there, then opened without an index -> 1 of 1, not 1 of 2
    events = [_e(1, "citation_shown", "S1", 0), _e(2, "citation_opened", "S1")]
    counts = _counts(scored, "orbit-2", events)
    assert (counts["citations_opened"], counts["citations_shown"], counts["citation_opens"]) == (1, 1, 1)
    assert counts["unresolved_events"] == 0
    row = _day_row(scored, {"orbit-2": events}, "citation_open_rate")
    assert (row["numerator"], row["denominator"], row["value"]) == (1, 1, 1.0)


def test_the_worked_example_of_docs_metrics(scored):
    events = [_e(1, "citation_shown", "S1", 0), _e(2, "citation_opened", "S1"), _e(3, "citation_opened", "S9"),
              _e(4, "citation_shown", None, 0)]
    assert _day_row(scored, {"orbit-2": events}, "citation_open_rate")["value"] == 1.0
    share = _day_row(scored, {"orbit-2": events}, "unresolved_event_share")
    assert (share["numerator"], share["denominator"]) == (2, 4)


def test_a_label_without_an_index_names_every_citation_of_that_label(scored):
    # orbit-1 cites S2 in sentences 0 and 2: an open of S2 opens both; shown in 0 only is still 2 of 2
    counts = _counts(scored, "orbit-1", [_e(1, "citation_shown", "S2", 0), _e(2, "citation_opened", "S2",
                                                                                turn="orbit-1")])
    assert (counts["citations_opened"], counts["citations_shown"]) == (2, 2)
    cited = answer_citations(scored["orbit-1"].verdicts)
    assert resolve_event(_e(3, "citation_shown", "S3", turn="orbit-1"), cited).citations == {(1, "S3"), (3, "S3"),
                                                                                            (4, "S3")}


@pytest.mark.parametrize(("event", "reason"), [
    (_e(1, "citation_shown", None, 0), "no_label"),  # a sentence index but no label: names no citation
    (_e(2, "citation_opened"), "no_label"),
    (_e(3, "citation_opened", "S9", 0), "unknown_label"),  # the answer cites S9 nowhere
    (_e(4, "citation_shown", "S9"), "unknown_label"),
    (_e(5, "citation_opened", "S1", 7), "unknown_sentence"),  # orbit-2 has sentences 0 and 1
    (_e(6, "citation_opened", "S1", 1), "label_not_in_sentence"),  # sentence 1 cites S4, not S1
])
def test_each_unresolved_reason_is_counted_apart_and_never_in_the_rates(scored, event, reason):
    assert resolve_event(event, answer_citations(scored["orbit-2"].verdicts)).reason == reason
    good = [_e(10, "citation_shown", "S1", 0)]
    counts = _counts(scored, "orbit-2", [*good, event])
    assert counts == _counts(scored, "orbit-2", good) | {
        "reader_events": 2, "unresolved_events": 1, f"unresolved_events_{reason}": 1}
    assert (counts["citations_shown"], counts["citations_opened"], counts["citation_opens"]) == (1, 0, 0)
    share = _day_row(scored, {"orbit-2": [*good, event]}, "unresolved_event_share")
    assert (share["numerator"], share["denominator"], share["value"]) == (1, 2, 0.5)
    by_reason = _day_row(scored, {"orbit-2": [*good, event]}, f"unresolved_event_share_{reason}")
    assert (by_reason["numerator"], by_reason["denominator"]) == (1, 2)
    for other in set(UNRESOLVED_REASONS) - {reason}:
        assert _day_row(scored, {"orbit-2": [*good, event]}, f"unresolved_event_share_{other}")["numerator"] == 0


def test_an_unresolved_report_is_a_report_but_names_no_reported_citation(scored):
    events = [_e(1, "source_reported"), _e(2, "source_reported", "S9"), _e(3, "source_reported", "S1", 1)]
    counts = _counts(scored, "orbit-2", events)
    assert counts["source_reports"] == 3  # each reader's report of the answer counts (source_reports_per_1000)
    assert (counts["reported_citations"], counts["judged_reported_citations"]) == (0, 0)
    assert (counts["unresolved_events_no_label"], counts["unresolved_events_unknown_label"],
            counts["unresolved_events_label_not_in_sentence"]) == (1, 1, 1)
    assert _day_row(scored, {"orbit-2": events}, "reported_citation_unsupported_share")["value"] is None


def test_reports_resolve_to_citations_judged_one_by_one(scored):
    events = [_e(1, "source_reported", "S4", 1),  # the answer cites S4 (its context lacks it): never credited
              _e(2, "source_reported", "S1"), _e(3, "source_reported", "S1", 0)]  # one citation, reported twice
    counts = _counts(scored, "orbit-2", events)
    assert (counts["reported_citations"], counts["judged_reported_citations"],
            counts["reported_citations_uncredited"], counts["unresolved_events"]) == (2, 2, 1, 0)


def test_an_answer_without_events_on_a_logged_day_has_zero_unresolved_and_a_day_without_any_is_null(scored):
    logged = _day_row(scored, {"orbit-1": [_e(1, "citation_shown", "S2", 0, turn="orbit-1")]},
                      "unresolved_event_share")
    assert (logged["numerator"], logged["denominator"], logged["value"]) == (0, 1, 0.0)
    acc = MetricAccumulator(orbit_settings().config)
    for st in scored.values():
        acc.add(st)  # reader_events None: nothing logged for the day
    rows = [r for r in acc.rows() if r["metric"].startswith("unresolved_event_share") and r["slice_name"] == "all"]
    assert len(rows) == 2 * (1 + len(UNRESOLVED_REASONS)) and all(r["value"] is None for r in rows)


def test_the_monitor_watches_the_unresolved_share_by_default():
    from citecheck.features.monitor import DEFAULT_METRICS

    assert "unresolved_event_share" in DEFAULT_METRICS  # a step is the app's event logging changing


def test_resolved_rates_and_unresolved_reasons_are_published_by_the_daily_run(engine, tmp_path, capsys, monkeypatch):
    """Through the CLI on SQLite and PostgreSQL: load turns and events, run the day, read `metrics`."""
    import json

    from citecheck.cli import main
    from helpers import orbit_warehouse_turns

    day = "2026-11-30"
    data = load_fixture("orbit_labs.json")
    (tmp_path / "judge.json").write_text(json.dumps(data["judge"]), encoding="utf-8")
    (tmp_path / "config.toml").write_text(f"[check_worthiness]\nrefusals = [{json.dumps(data['refusal_text'])}]\n",
                                          encoding="utf-8")
    monkeypatch.setenv("CITECHECK_JUDGE", str(tmp_path / "judge.json"))
    monkeypatch.setenv("CITECHECK_CONFIG", str(tmp_path / "config.toml"))
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in orbit_warehouse_turns(day)),
                                          encoding="utf-8")
    one, two = f"orbit-1@{day}", f"orbit-2@{day}"
    events = [(two, "citation_shown", "S1", 0), (two, "citation_opened", "S1", None),  # the issue's case
              (one, "citation_shown", "S2", 0), (one, "citation_shown", "S1", 1),
              (one, "citation_opened", None, 1),  # no_label
              (one, "citation_opened", "S7", None),  # unknown_label
              (one, "citation_shown", "S2", 40),  # unknown_sentence
              (one, "source_reported", "S4", 0),  # label_not_in_sentence (S4 is cited in sentence 3)
              (one, "source_reported", "S2", 2)]  # miscited: judged, not credited
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(
        {"event_id": f"ev-{n}", "turn_id": t, "event": kind, "occurred_at": f"{day}T12:00:00Z",
         **({"label": label} if label else {}), **({"sentence_index": index} if index is not None else {})}) + "\n"
        for n, (t, kind, label, index) in enumerate(events)), encoding="utf-8")
    assert main(["load-turns", "--file", str(tmp_path / "turns.jsonl")]) in (0, 1)  # the fixture's bad row
    assert main(["load-events", "--file", str(tmp_path / "events.jsonl")]) == 0
    assert main(["run", "--day", day]) == 0
    capsys.readouterr()
    assert main(["metrics", "--day", day, "--json"]) == 0
    rows = {r["metric"]: r for r in json.loads(capsys.readouterr().out)
            if (r["slice_name"], r["averaging"]) == ("all", "micro")}

    def fraction(metric: str) -> tuple[float, float, float | None]:
        return rows[metric]["numerator"], rows[metric]["denominator"], rows[metric]["value"]

    # shown {orbit-2 0:S1, orbit-1 0:S2, 1:S1}, opened {orbit-2 0:S1}
    assert fraction("citation_open_rate") == (1, 3, pytest.approx(1 / 3))
    assert fraction("citation_opens_per_1000_answers")[0] == 1000  # the resolved open only
    assert fraction("source_reports_per_1000_answers")[0] == 2000  # both reports, resolved or not
    assert fraction("reported_citation_unsupported_share") == (1, 1, 1.0)
    assert fraction("unresolved_event_share") == (4, 9, pytest.approx(4 / 9))
    assert {reason: fraction(f"unresolved_event_share_{reason}")[0] for reason in UNRESOLVED_REASONS} == dict.fromkeys(
        UNRESOLVED_REASONS, 1)
    from citecheck.warehouse import read_model

    stats = read_model.published_run(engine, dt.date.fromisoformat(day))["stats"]  # the run's counts
    stats = json.loads(stats) if isinstance(stats, str) else stats
    assert {k: v for k, v in stats["counts"].items() if k.startswith("unresolved_events")} == {
        "unresolved_events": 4, **{f"unresolved_events_{reason}": 1 for reason in UNRESOLVED_REASONS}}

    # the daily report's reader panel lists the unresolved events by reason, beside the rates
    from citecheck.report import build_report

    html = build_report(engine, dt.date.fromisoformat(day))
    table = html[html.index('<table id="unresolved-events">'):]
    table = table[:table.index("</table>")]
    shown = dict(re.findall(r'<td data-reason="([a-z_]+)">[a-z_]+</td><td class="num">(\d+)</td>', table))
    assert shown == dict.fromkeys(UNRESOLVED_REASONS, "1")
    assert 'data-metric="unresolved_event_share"' in html
