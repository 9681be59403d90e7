"""Reader events (SPEC §1): what readers did with an answer's citations, logged by the app.

One event is `{event_id, turn_id, event, label?, sentence_index?, occurred_at}` with `event` one
of `EVENT_TYPES`. `reader_event` checks one decoded line and says why it cannot be an event;
`reader_counts` turns one answer's events, with its sentence verdicts, into the counts behind the
reader metrics (SPEC §5):

- a *citation* is (sentence index, label) of the turn; an event without a sentence index names
  the label wherever the turn cites it;
- `citations_shown`: distinct citations with a `citation_shown` or `citation_opened` event (an
  opened citation was rendered, whether or not its `shown` event was logged), so the open rate
  stays in [0, 1]; `citations_opened`: distinct citations opened; `citation_opens`: open events;
- `source_reports`: `source_reported` events (two readers reporting one citation are two reports);
- `judged_reported_citations`: distinct reported citations with a label whose sentence was judged
  (a selected, check-worthy sentence with a verdict) and cites that label;
  `reported_citations_uncredited`: those the judges did not credit (no judged sentence citing the
  label credits it; an unknown label is never credited);
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
# The counts `reader_counts` adds to an answer's counts (citecheck.core.metrics.COUNT_KEYS holds them too).
READER_COUNT_KEYS = ("reader_answers", "citations_shown", "citations_opened", "citation_opens", "source_reports",
                     "reported_citations", "judged_reported_citations", "reported_citations_uncredited")


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


def reader_counts(events: Iterable[ReaderEvent], verdicts: Sequence[Any], *, selected: bool) -> Counter[str]:
    """The reader counts of one answer on a day that logs reader events (see the module doc).
    `verdicts`: the answer's `SentenceVerdict`s; `selected`: whether the answer was judged."""
    from citecheck.core.vocabulary import UNJUDGED

    c: Counter[str] = Counter(reader_answers=1)
    shown: set[tuple[int | None, str | None]] = set()
    opened: set[tuple[int | None, str | None]] = set()
    reported: set[tuple[int | None, str]] = set()
    for e in events:
        key = (e.sentence_index, e.label)
        if e.event == CITATION_SHOWN:
            shown.add(key)
        elif e.event == CITATION_OPENED:
            shown.add(key)
            opened.add(key)
            c["citation_opens"] += 1
        elif e.event == SOURCE_REPORTED:
            c["source_reports"] += 1
            if e.label is not None:
                reported.add((e.sentence_index, e.label))
    c["citations_shown"] = len(shown)
    c["citations_opened"] = len(opened)
    c["reported_citations"] = len(reported)
    if selected and reported:
        for index, label in reported:
            judged = [v for v in verdicts if v.sentence.check_worthy and v.verdict != UNJUDGED
                      and label in v.sentence.labels and (index is None or v.sentence.index == index)]
            if judged:
                c["judged_reported_citations"] += 1
                c["reported_citations_uncredited"] += not any(v.credited.get(label) for v in judged)
    return c
