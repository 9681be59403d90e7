"""Reader events (SPEC §1): what readers did with an answer's citations, logged by the app.

One event is `{event_id, turn_id, event, label?, sentence_index?, occurred_at}` with `event` one
of `EVENT_TYPES`. `reader_event` checks one decoded line and says why it cannot be an event;
`resolve_event` resolves one event against the answer's citations; `reader_counts` turns one
answer's events, with its sentence verdicts, into the counts behind the reader metrics (SPEC §5):

- a *citation* is (sentence index, label) of the turn as the pipeline reads it: a label its
  sentence cites. Each event is resolved to the citations it names before anything is counted:
  with a label and a sentence index, that one citation; with a label only, the label wherever the
  turn cites it (every citation of that label). An event that names no citation of the answer is
  *unresolved*, with the first of `UNRESOLVED_REASONS` that applies: `no_label` (no label, with or
  without a sentence index), `unknown_label` (the turn cites the label nowhere),
  `unknown_sentence` (the answer has no sentence of that index), `label_not_in_sentence` (the
  sentence exists but does not cite the label). Unresolved events count apart
  (`unresolved_events`, and per reason `unresolved_events_<reason>`, of `reader_events`, every
  event of the answer) and never in the citation rates;
- `citations_shown`: distinct resolved citations with a `citation_shown` or `citation_opened` event
  (an opened citation was rendered, whether or not its `shown` event was logged), so the open rate
  stays in [0, 1]; `citations_opened`: distinct resolved citations opened; `citation_opens`:
  resolved open events;
- `source_reports`: `source_reported` events, resolved or not (two readers reporting one citation
  are two reports; a report naming no citation of the answer still reports the answer);
- `reported_citations`: distinct resolved citations reported; `judged_reported_citations`: those
  whose sentence was judged (a selected, check-worthy sentence with a verdict);
  `reported_citations_uncredited`: those the judges did not credit (an unknown label never is);
- `reader_answers`: 1 when reader events are logged for the day at all. It is the denominator of
  the per-1,000-answers metrics, so a day without any reader event has null reader metrics (not
  logged is not zero), while an answer nobody opened on a logged day counts as zero.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citecheck.core.turns import MAX_ID_CHARS, MAX_LABEL_CHARS, TurnError, clean_text, parse_timestamp

CITATION_SHOWN = "citation_shown"
CITATION_OPENED = "citation_opened"
SOURCE_REPORTED = "source_reported"
EVENT_TYPES = (CITATION_SHOWN, CITATION_OPENED, SOURCE_REPORTED)
REQUIRED_FIELDS = ("event_id", "turn_id", "event", "occurred_at")
MAX_SENTENCE_INDEX = 2**31 - 1
# Why an event names no citation of its answer (`resolve_event`), in the order they are tried.
NO_LABEL = "no_label"
UNKNOWN_LABEL = "unknown_label"
UNKNOWN_SENTENCE = "unknown_sentence"
LABEL_NOT_IN_SENTENCE = "label_not_in_sentence"
UNRESOLVED_REASONS = (NO_LABEL, UNKNOWN_LABEL, UNKNOWN_SENTENCE, LABEL_NOT_IN_SENTENCE)
UNRESOLVED_PREFIX = "unresolved_events_"  # + a reason: the count of that reason's events
# The counts `reader_counts` adds to an answer's counts (citecheck.core.metrics.COUNT_KEYS holds them too).
READER_COUNT_KEYS = ("reader_answers", "citations_shown", "citations_opened", "citation_opens", "source_reports",
                     "reported_citations", "judged_reported_citations", "reported_citations_uncredited",
                     "reader_events", "unresolved_events", *(UNRESOLVED_PREFIX + r for r in UNRESOLVED_REASONS))

Citation = tuple[int, str]  # (sentence index, label) of a turn


class EventError(ValueError):
    """Why a line is not a reader event (the loader's rejection reason)."""


@dataclass(frozen=True, slots=True)
class ReaderEvent:
    event_id: str
    turn_id: str
    event: str
    occurred_at: dt.datetime
    label: str | None = None
    sentence_index: int | None = None

    def as_row(self) -> dict[str, Any]:
        return {"event_id": self.event_id, "turn_id": self.turn_id, "event": self.event, "label": self.label,
                "sentence_index": self.sentence_index, "occurred_at": self.occurred_at}


def _identifier(data: Mapping[str, Any], key: str, width: int) -> str:
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise EventError(f"{key} is not a non-empty string ({type(value).__name__})")
    if len(value) > width:
        raise EventError(f"{key} is longer than {width} characters ({len(value):,})")
    return clean_text(value)


def reader_event(data: Any, assume_zone: str = "UTC") -> ReaderEvent:
    """One decoded JSON line as a `ReaderEvent`; EventError says why it is not one: not an object,
    a missing field (named), an unknown `event` type (named), a bad id, label, sentence index or
    timestamp. An `occurred_at` without a zone is read in `assume_zone` (`[day] assume_zone`, as
    turns are), or refused when it is "refuse"."""
    if not isinstance(data, Mapping):
        raise EventError(f"malformed line: not a JSON object ({type(data).__name__})")
    for key in REQUIRED_FIELDS:
        if data.get(key) is None or data.get(key) == "":
            raise EventError(f"missing field: {key}")
    kind = data["event"]
    if kind not in EVENT_TYPES:
        shown = clean_text(kind)[:60] if isinstance(kind, str) else f"{type(kind).__name__} {kind!s:.40}"
        raise EventError(f"unknown event type {shown!r} (expected one of {', '.join(EVENT_TYPES)})")
    label = data.get("label")
    if label is not None:
        if not isinstance(label, str) or not label.strip():
            raise EventError(f"label is not a non-empty string ({type(label).__name__})")
        if len(label) > MAX_LABEL_CHARS:
            raise EventError(f"label is longer than {MAX_LABEL_CHARS} characters")
        label = clean_text(label.strip())
    index = data.get("sentence_index")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int)
                              or not 0 <= index <= MAX_SENTENCE_INDEX):
        raise EventError(f"sentence_index is not a sentence number (a whole number >= 0): {index!s:.40}")
    try:
        occurred_at = parse_timestamp(data["occurred_at"], "occurred_at", assume_zone=assume_zone)
    except TurnError as exc:
        raise EventError(str(exc)) from None
    assert occurred_at is not None  # required above
    return ReaderEvent(_identifier(data, "event_id", MAX_ID_CHARS), _identifier(data, "turn_id", MAX_ID_CHARS),
                       kind, occurred_at, label, index)


@dataclass(frozen=True, slots=True)
class Resolution:
    """What one event names: its citations, or why it names none (`reason`, one of `UNRESOLVED_REASONS`)."""

    citations: frozenset[Citation] = frozenset()
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class AnswerCitations:
    """An answer's citations, looked up both ways (built once per answer: each event resolves in
    constant time, whatever the answer's size)."""

    labels_of: Mapping[int, frozenset[str]]  # sentence index -> the labels it cites (every sentence)
    citations_of: Mapping[str, frozenset[Citation]]  # label -> its citations (sentence index, label)


def answer_citations(verdicts: Sequence[Any]) -> AnswerCitations:
    """The citations of an answer, from its `SentenceVerdict`s (one per sentence)."""
    return citations_of_sentences({v.sentence.index: v.sentence.labels for v in verdicts})


def citations_of_sentences(sentence_labels: Mapping[int, Iterable[str]]) -> AnswerCitations:
    """The citations of an answer from each sentence index's labels (every sentence of the
    answer): what `warehouse.review` builds from the published sentences to resolve the reported
    events with `resolve_event`, the same rule the reader counts use."""
    labels_of = {index: frozenset(labels or ()) for index, labels in sentence_labels.items()}
    by_label: dict[str, set[Citation]] = {}
    for index, labels in labels_of.items():
        for label in labels:
            by_label.setdefault(label, set()).add((index, label))
    return AnswerCitations(labels_of, {label: frozenset(found) for label, found in by_label.items()})


def resolve_event(event: ReaderEvent, cited: AnswerCitations) -> Resolution:
    """The citations `event` names in an answer (`answer_citations`), or why it names none (see
    the module doc)."""
    label, index = event.label, event.sentence_index
    if label is None:
        return Resolution(reason=NO_LABEL)
    found = cited.citations_of.get(label)
    if not found:
        return Resolution(reason=UNKNOWN_LABEL)
    if index is None:
        return Resolution(found)
    if index not in cited.labels_of:
        return Resolution(reason=UNKNOWN_SENTENCE)
    if label not in cited.labels_of[index]:
        return Resolution(reason=LABEL_NOT_IN_SENTENCE)
    return Resolution(frozenset({(index, label)}))


def reader_counts(events: Iterable[ReaderEvent], verdicts: Sequence[Any], *, selected: bool) -> Counter[str]:
    """The reader counts of one answer on a day that logs reader events (see the module doc).
    `verdicts`: the answer's `SentenceVerdict`s; `selected`: whether the answer was judged."""
    from citecheck.core.vocabulary import is_judged

    c: Counter[str] = Counter(reader_answers=1)
    for key in READER_COUNT_KEYS:  # present, zero or not: a logged day's answer has every reader count
        c[key] += 0
    cited = answer_citations(verdicts)
    shown: set[Citation] = set()
    opened: set[Citation] = set()
    reported: set[Citation] = set()
    for e in events:
        c["reader_events"] += 1
        c["source_reports"] += e.event == SOURCE_REPORTED
        resolution = resolve_event(e, cited)
        if resolution.reason is not None:
            c["unresolved_events"] += 1
            c[UNRESOLVED_PREFIX + resolution.reason] += 1
            continue
        if e.event == CITATION_SHOWN:
            shown |= resolution.citations
        elif e.event == CITATION_OPENED:
            shown |= resolution.citations
            opened |= resolution.citations
            c["citation_opens"] += 1
        elif e.event == SOURCE_REPORTED:
            reported |= resolution.citations
    c["citations_shown"] = len(shown)
    c["citations_opened"] = len(opened)
    c["reported_citations"] = len(reported)
    if selected and reported:
        by_index = {v.sentence.index: v for v in verdicts}
        for index, label in reported:
            v = by_index[index]
            if is_judged(v.verdict):
                c["judged_reported_citations"] += 1
                c["reported_citations_uncredited"] += not v.credited.get(label)
    return c
