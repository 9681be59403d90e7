"""The three reader metrics (SPEC §5) from reader events: numerators and denominators, the null
day (no reader event logged at all), slices that logged nothing on a logged day, unjudged turns."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from citecheck.core.metrics import JUDGED_METRICS, READER_METRICS, MetricAccumulator
from citecheck.core.pipeline import judge_batch, structure_turns
from citecheck.core.reader_events import EventError, ReaderEvent, reader_event
from citecheck.core.structural import ConversationHistory
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from helpers import load_fixture, orbit_settings

AT = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)


def _scored(selected: bool = True):
    data = load_fixture("orbit_labs.json")
    config = orbit_settings().config
    structured = list(structure_turns([turn_from_dict(t) for t in data["turns"]], config, ConversationHistory()))
    return {s.turn_id: s for s in judge_batch(structured, judge_from_spec(data["judge"]),
                                              selected=lambda _st: selected)}, config


def _e(n: int, kind: str, label: str | None = None, index: int | None = None, turn: str = "orbit-1") -> ReaderEvent:
    return ReaderEvent(f"e{n}", turn, kind, AT, label, index)


# orbit-1: sentences 0 [S2] supported (S2 credited), 1 [S1, S3] supported (S1 credited, S3 not),
# 2 [S2] miscited, 3 [S3, S4] unsupported, 4 [S3] miscited, 5 uncited, 6 not check-worthy
ORBIT_1_EVENTS = (
    _e(1, "citation_shown", "S2", 0), _e(2, "citation_shown", "S2", 0),  # one citation shown twice
    _e(3, "citation_shown", "S1", 1), _e(4, "citation_shown", "S3", 1), _e(5, "citation_shown", "S2", 2),
    _e(6, "citation_opened", "S1", 1), _e(7, "citation_opened", "S1", 1),  # opened twice: 2 opens, 1 citation
    _e(8, "citation_opened", "S4", 3),  # opened without a logged shown event: it was shown
    _e(9, "source_reported", "S2", 2),  # miscited: judged, not credited
    _e(10, "source_reported", "S1", 1),  # credited
    _e(11, "source_reported", "S3"),  # no sentence: S3 wherever cited (1, 3, 4: three citations), credited in none
    _e(12, "source_reported", "S1", 5),  # sentence 5 cites nothing: a report, unresolved (label_not_in_sentence)
    _e(13, "source_reported"),  # no label: a report, unresolved (no_label)
)
ORBIT_2_EVENTS = (_e(14, "source_reported", "S1", 0, turn="orbit-2"),)  # orbit-2 sentence 0 [S1]: credited
EVENTS = {"orbit-1": ORBIT_1_EVENTS, "orbit-2": ORBIT_2_EVENTS}


def _rows(acc: MetricAccumulator, slice_name: str = "all", slice_value: str = "all", averaging: str = "micro"):
    return {r["metric"]: r for r in acc.rows() if (r["slice_name"], r["slice_value"], r["averaging"])
            == (slice_name, slice_value, averaging)}


def test_numerators_and_denominators_of_the_three_metrics():
    scored, config = _scored()
    acc = MetricAccumulator(config)
    for turn_id, st in scored.items():
        acc.add(replace(st, reader_events=EVENTS.get(turn_id, ())))
    rows = _rows(acc)
    fractions = {m: (rows[m]["numerator"], rows[m]["denominator"]) for m in READER_METRICS}
    assert fractions == {
        "citation_open_rate": (2, 5),  # opened {1:S1, 3:S4} / shown {0:S2, 1:S1, 1:S3, 2:S2, 3:S4}
        "citation_opens_per_1000_answers": (3000, 3),  # 3 open events over the day's 3 answers
        "source_reports_per_1000_answers": (6000, 3),  # 5 + 1 report events, resolved or not
        # orbit-1 2:S2, 1:S3, 3:S3, 4:S3 not credited, 1:S1 credited; orbit-2 0:S1 credited (issue 31:
        # a label-only report names each citation of the label, no longer one citation judged as a whole)
        "reported_citation_unsupported_share": (4, 6),
        # e12 and e13 name no citation of orbit-1, of the day's 14 events
        "unresolved_event_share": (2, 14),
        "unresolved_event_share_no_label": (1, 14),
        "unresolved_event_share_unknown_label": (0, 14),
        "unresolved_event_share_unknown_sentence": (0, 14),
        "unresolved_event_share_label_not_in_sentence": (1, 14),
    }
    share = rows["reported_citation_unsupported_share"]
    assert "reported_citation_unsupported_share" in JUDGED_METRICS
    assert share["ci_low"] is not None and share["ci_low"] < 4 / 6 < share["ci_high"]  # answers as clusters
    assert rows["citation_open_rate"]["ci_low"] is None  # counted on every turn, not an estimate
    assert rows["source_reports_per_1000_answers"]["answers"] == 3


def test_a_day_without_any_reader_event_has_null_reader_metrics():
    scored, config = _scored()
    acc = MetricAccumulator(config)
    for st in scored.values():
        acc.add(st)  # reader_events None: the day logs no reader event at all
    for averaging in ("micro", "macro"):
        rows = _rows(acc, averaging=averaging)
        assert {m: rows[m]["value"] for m in READER_METRICS} == dict.fromkeys(READER_METRICS)
    assert _rows(acc)["attachment_rate"]["value"] is not None


def test_answers_nobody_acted_on_count_as_zero_on_a_logged_day():
    scored, config = _scored()
    acc = MetricAccumulator(config)
    acc.add(replace(scored["orbit-2"], reader_events=()))
    rows = _rows(acc)
    assert (rows["source_reports_per_1000_answers"]["value"], rows["citation_opens_per_1000_answers"]["value"]) \
        == (0.0, 0.0)
    assert rows["citation_open_rate"]["value"] is None  # nothing shown: no rate
    assert rows["reported_citation_unsupported_share"]["value"] is None


def test_reports_on_an_unjudged_turn_count_as_reports_but_not_as_judged_citations():
    scored, config = _scored(selected=False)
    acc = MetricAccumulator(config)
    acc.add(replace(scored["orbit-1"], reader_events=ORBIT_1_EVENTS))
    rows = _rows(acc)
    assert rows["source_reports_per_1000_answers"]["numerator"] == 5000
    assert rows["reported_citation_unsupported_share"]["denominator"] == 0
    assert rows["reported_citation_unsupported_share"]["value"] is None


def test_reader_metrics_stay_out_of_sentence_slices():
    scored, config = _scored()
    acc = MetricAccumulator(config)
    acc.add(replace(scored["orbit-1"], reader_events=ORBIT_1_EVENTS))
    sentence_slices = {r["metric"] for r in acc.rows() if r["slice_name"] in ("has_number", "multi_citation")}
    assert sentence_slices and not sentence_slices & set(READER_METRICS)
    assert _rows(acc, "answer_length", next(r["slice_value"] for r in acc.rows() if r["slice_name"] ==
                                            "answer_length"))["citation_open_rate"]["value"] == pytest.approx(0.4)


@pytest.mark.parametrize(("line", "reason"), [
    ([], "malformed line: not a JSON object (list)"),
    ({"turn_id": "t", "event": "citation_shown", "occurred_at": "2026-11-30T12:00:00Z"}, "missing field: event_id"),
    ({"event_id": "e", "turn_id": "t", "event": "citation_shown"}, "missing field: occurred_at"),
    ({"event_id": "e", "turn_id": "t", "event": "citation_hovered", "occurred_at": "2026-11-30T12:00:00Z"},
     "unknown event type 'citation_hovered'"),
    ({"event_id": "e", "turn_id": "t", "event": "citation_shown", "occurred_at": "yesterday"},
     "occurred_at is not an ISO timestamp"),
    ({"event_id": "e", "turn_id": "t", "event": "citation_shown", "occurred_at": "2026-11-30T12:00:00Z",
      "sentence_index": -1}, "sentence_index is not a sentence number"),
    ({"event_id": "e", "turn_id": "t", "event": "citation_shown", "occurred_at": "2026-11-30T12:00:00Z",
      "label": 3}, "label is not a non-empty string"),
    ({"event_id": 7, "turn_id": "t", "event": "citation_shown", "occurred_at": "2026-11-30T12:00:00Z"},
     "event_id is not a non-empty string"),
])
def test_a_line_that_is_no_event_says_why(line, reason):
    with pytest.raises(EventError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        reader_event(line)


def test_an_event_reads_with_its_optional_fields():
    e = reader_event({"event_id": "e1", "turn_id": "t1", "event": "source_reported", "label": " S2 ",
                      "sentence_index": 3, "occurred_at": "2026-11-30T13:00:00+01:00"})
    assert (e.label, e.sentence_index, e.occurred_at) == ("S2", 3, dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC))
