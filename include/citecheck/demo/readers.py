"""Reader events for the sample (SPEC §1): what readers of the generated answers did.

Most rendered citations are logged as shown (`SHOWN`), a few per cent are opened, and a reader
reports a wrong source rarely, more often when the citation does not support its sentence (a
miscited or unsupported sentence, an invented label). Events follow their answer by seconds to
hours. Each turn's events depend only on (seed, turn id), so any date range holds the same events
for the same turns.

One batch arrives a day late: the events of the evening (from `LATE_FROM_HOUR` UTC) of the range's
second-to-last day, which the app's log shipper delivers the next day. `load-sample` loads the
on-time events; `bin/demo` loads the late batch after that day is published, so it turns stale
and a backfill restates it.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from typing import Any

from citecheck.core.vocabulary import BAD_VERDICTS
from citecheck.demo.judgments import ExpectedSentence

SHOWN = 0.93  # a rendered citation's shown event is logged (some clients log nothing)
OPEN = {"good": 0.03, "bad": 0.05}  # a shown citation is opened
REPORT = {"good": 0.002, "bad": 0.04}  # a shown citation is reported as a wrong source
LATE_FROM_HOUR = 18


def turn_events(seed: int, turn: dict[str, Any], sentences: Sequence[ExpectedSentence]) -> list[dict[str, Any]]:
    """The reader events of one generated turn (SPEC §1 dicts), in time order."""
    rng = random.Random(f"citecheck-sample:{seed}:readers:{turn['turn_id']}")
    answered = dt.datetime.fromisoformat(turn["answered_at"].replace("Z", "+00:00"))
    known = {p.get("label") for p in turn.get("context") or []} if turn.get("answer_format", "markers") == "markers" \
        else None
    out: list[dict[str, Any]] = []

    def emit(kind: str, index: int, label: str, after: float) -> None:
        at = answered + dt.timedelta(seconds=after)
        out.append({"event_id": f"{turn['turn_id']}-e{len(out) + 1}", "turn_id": turn["turn_id"], "event": kind,
                    "label": label, "sentence_index": index, "occurred_at": at.strftime("%Y-%m-%dT%H:%M:%SZ")})

    for index, sentence in enumerate(sentences):
        for label in sentence.labels:
            bad = sentence.verdict in BAD_VERDICTS or (known is not None and label not in known)
            if rng.random() >= SHOWN:
                continue
            shown_after = rng.uniform(1, 20)
            emit("citation_shown", index, label, shown_after)
            if rng.random() < OPEN["bad" if bad else "good"]:
                emit("citation_opened", index, label, shown_after + rng.expovariate(1 / 90))
            if rng.random() < REPORT["bad" if bad else "good"]:
                emit("source_reported", index, label, shown_after + rng.expovariate(1 / 3600))
    return sorted(out, key=lambda e: (e["occurred_at"], e["event_id"]))


def sample_events(seed: int, turns: Sequence[dict[str, Any]], expected: dict[str, tuple[ExpectedSentence, ...]],
                  start: dt.date, days: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(on-time events, the late batch) of the sample's turns (see the module doc)."""
    late_day = start + dt.timedelta(days=days - 2) if days >= 2 else None
    on_time, late = [], []
    for turn in turns:
        answered = dt.datetime.fromisoformat(turn["answered_at"].replace("Z", "+00:00"))
        is_late = late_day is not None and answered.date() == late_day and answered.hour >= LATE_FROM_HOUR
        (late if is_late else on_time).extend(turn_events(seed, turn, expected.get(turn["turn_id"], ())))
    return on_time, late
