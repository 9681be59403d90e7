"""Days of traffic: conversations over the day, repeated FAQ answers, broken lines, `generate`.

Each day depends only on (seed, date, the change in force that day): `generate(d, 2)` holds
exactly the turns of `generate(d, 1)` and `generate(d + 1, 1)`, including the follow-ups of
conversations that started the evening before. A conversation follows the habits of the day it
starts on.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from citecheck.demo.answers import Conversation, Sent, marker_turn, refusal_turn
from citecheck.demo.dialogue import REFUSAL_QUESTIONS
from citecheck.demo.judgments import ExpectedSentence, expected_sentence, judgment_rows
from citecheck.demo.knowledge import BY_DOMAIN, PASSAGES, KBPassage
from citecheck.demo.languages import language_turn
from citecheck.demo.native import native_turn
from citecheck.demo.providers import provider_turn
from citecheck.demo.readers import sample_events
from citecheck.demo.topics import add_topics
from citecheck.demo.traffic import BUNDLED_CHANGES, HOUR_WEIGHTS, StepChange, attributes, change_on

MALFORMED_KINDS: tuple[str, ...] = (
    "truncated_json", "python_repr", "not_an_object", "missing_turn_id", "empty_turn_id",
    "context_not_list", "answer_not_string", "passage_without_label", "unknown_answer_format",
    "native_without_documents",
)


@dataclass
class Sample:
    """Generated traffic: valid turns, broken JSONL lines, and recorded judgments for every sentence.

    `expected[turn_id]` lists each sentence as the parser should see it, with the failure kind it
    was drawn as and the verdict a correct pipeline gives it. `malformed_at[i]` is the time the
    i-th broken line belongs to (interleaving and day assignment); `malformed_kinds[i]` its defect.
    """

    turns: list[dict[str, Any]]
    malformed_lines: list[str]
    judgments: list[dict[str, Any]]
    expected: dict[str, tuple[ExpectedSentence, ...]] = field(default_factory=dict)
    malformed_kinds: list[str] = field(default_factory=list)
    malformed_at: list[str] = field(default_factory=list)
    reader_events: list[dict[str, Any]] = field(default_factory=list)  # on time (`citecheck.demo.readers`)
    late_reader_events: list[dict[str, Any]] = field(default_factory=list)  # the batch that arrives a day late


@dataclass
class DayTurn:
    """A generated turn, the sentences it was built from, and when it was answered."""

    turn: dict[str, Any]
    sents: list[Sent]
    moment: dt.datetime


def _stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _follow_up_question(rng: random.Random, passage: KBPassage) -> str:
    """A follow-up as users type it: the next question, sometimes with a lead-in."""
    question = passage.question
    if question.startswith("I "):
        return rng.choice(("", "Thanks. ")) + question
    lead = rng.choice(("", "Thanks. ", "And ", "One more thing: "))
    if lead in ("And ", "One more thing: "):
        question = question[:1].lower() + question[1:]
    return lead + question


def _next_primary(rng: random.Random, previous: KBPassage) -> KBPassage:
    if rng.random() < 0.8:
        return rng.choice([p for p in BY_DOMAIN[previous.domain] if p is not previous])
    return rng.choice(list(PASSAGES.values()))


def conversation(rng: random.Random, conv_id: str, start: dt.datetime, length: int, *,
                 native: bool = False, force_stale: bool = False, change: StepChange | None = None,
                 provider: bool = False) -> list[DayTurn]:
    """The turns of one chat: a first question, then follow-ups a few minutes apart.

    `native`: Anthropic-native answers; `provider`: the other native formats; `force_stale`: every
    follow-up cites a label of the previous context set that names nothing now; `change`: the
    citation habits in force (None: the usual).
    """
    conv = Conversation(conv_id, attributes(rng))
    moment = start
    primary = rng.choice(list(PASSAGES.values()))
    out: list[DayTurn] = []
    for index in range(1, length + 1):
        if provider:
            turn, sents = provider_turn(rng, conv, primary, primary.question, change)
        elif native:
            turn, sents = native_turn(rng, conv, primary, primary.question)
        elif not force_stale and rng.random() < (0.04 if index == 1 else 0.02):
            domain, question = rng.choice(REFUSAL_QUESTIONS)
            turn, sents = refusal_turn(rng, conv, question, domain)
        else:
            question = primary.question if index == 1 else _follow_up_question(rng, primary)
            turn, sents = marker_turn(rng, conv, primary, question, force_stale, change)
        out.append(DayTurn(_identify(turn, conv_id, index, moment), sents, moment))
        moment += dt.timedelta(seconds=rng.randint(40, 600) if not force_stale else rng.randint(480, 840))
        primary = _next_primary(rng, primary)
    return out


def _identify(turn: dict[str, Any], conv_id: str, index: int, moment: dt.datetime) -> dict[str, Any]:
    head = {"turn_id": f"{conv_id}-t{index}", "conversation_id": conv_id, "turn_index": index,
            "answered_at": _stamp(moment)}
    return head | turn


@cache
def _faq_pool(seed: int) -> tuple[tuple[dict[str, Any], tuple[Sent, ...]], ...]:
    """Answers that real traffic repeats word for word (FAQ questions answered the same way)."""
    rng = random.Random(f"citecheck-sample:{seed}:faq")
    pool = []
    for k in range(12):
        conv = Conversation(f"faq-{k}", attributes(rng))
        primary = rng.choice(list(PASSAGES.values()))
        turn, sents = marker_turn(rng, conv, primary, primary.question)
        pool.append((turn, tuple(sents)))
    return tuple(pool)


def faq_turn(rng: random.Random, seed: int, conv_id: str, start: dt.datetime) -> DayTurn:
    """A one-turn conversation answered word for word like earlier ones (the seed's FAQ answers)."""
    turn, sents = rng.choice(_faq_pool(seed))
    copy = json.loads(json.dumps(turn))
    return DayTurn(_identify(copy, conv_id, 1, start), [Sent(**vars(s)) for s in sents], start)


def start_time(rng: random.Random, day: dt.date) -> dt.datetime:
    """When a conversation of `day` starts (UTC), drawn by the hourly traffic weights."""
    hour = rng.choices(range(24), weights=HOUR_WEIGHTS)[0]
    base = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    return base + dt.timedelta(hours=hour, seconds=rng.randint(0, 3599))


def day_turns(seed: int, day: dt.date, turns_per_day: int, change: StepChange | None = None) -> list[DayTurn]:
    """Every turn of the conversations that start on `day` (some answer after midnight)."""
    rng = random.Random(f"citecheck-sample:{seed}:{day.isoformat()}")
    prefix = f"conv-{day:%Y%m%d}"
    base = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    late = base + dt.timedelta(hours=23, minutes=53, seconds=rng.randint(0, 240))
    out = conversation(rng, f"{prefix}-0000", late, 2 if turns_per_day > 1 else 1, force_stale=True, change=change)
    k = 1
    while len(out) < turns_per_day:
        conv_id = f"{prefix}-{k:04d}"
        start = start_time(rng, day)
        roll = rng.random()
        if roll < 0.08:
            out.append(faq_turn(rng, seed, conv_id, start))
        else:
            length = rng.choices((1, 2, 3, 4), weights=(60, 25, 10, 5))[0]
            length = min(length, turns_per_day - len(out))
            out.extend(conversation(rng, conv_id, start, length, native=roll < 0.15 and length == 1, change=change))
        k += 1
    return out[:turns_per_day]


def provider_day_turns(seed: int, day: dt.date, count: int, change: StepChange | None = None) -> list[DayTurn]:
    """`count` one-turn conversations starting on `day` in the other provider-native formats, from
    their own random stream (the day's other turns do not depend on them)."""
    rng = random.Random(f"citecheck-sample:{seed}:{day.isoformat()}:providers")
    out: list[DayTurn] = []
    for k in range(count):
        out.extend(conversation(rng, f"prov-{day:%Y%m%d}-{k:04d}", start_time(rng, day), 1, provider=True,
                                change=change))
    return out


def language_day_turns(seed: int, day: dt.date, count: int) -> list[DayTurn]:
    """`count` one-turn conversations starting on `day` in German, French, Spanish and Japanese
    (`citecheck.demo.languages`), from their own random stream."""
    rng = random.Random(f"citecheck-sample:{seed}:{day.isoformat()}:languages")
    out: list[DayTurn] = []
    for k in range(count):
        conv_id = f"lang-{day:%Y%m%d}-{k:04d}"
        moment = start_time(rng, day)
        turn, sents = language_turn(rng, conv_id)
        out.append(DayTurn(_identify(turn, conv_id, 1, moment), sents, moment))
    return out


def _malformed(seed: int, day: dt.date, count: int, change: StepChange | None) -> list[tuple[str, str, str]]:
    """(line, kind, time) for broken JSONL lines, each broken in one distinct way."""
    rng = random.Random(f"citecheck-sample:{seed}:{day.isoformat()}:malformed")
    out = []
    for j in range(count):
        kind = MALFORMED_KINDS[(day.toordinal() * count + j) % len(MALFORMED_KINDS)]
        start = start_time(rng, day)
        native = kind == "native_without_documents"
        (base,) = conversation(rng, f"bad-{day:%Y%m%d}-{j:03d}", start, 1, native=native, change=change)
        out.append((_break(rng, base.turn, kind), kind, _stamp(start)))
    return out


def _break(rng: random.Random, turn: dict[str, Any], kind: str) -> str:
    data = json.loads(json.dumps(turn))
    if kind == "truncated_json":
        line = json.dumps(data, ensure_ascii=False)
        return line[: rng.randint(len(line) // 4, len(line) // 2)]
    if kind == "python_repr":
        return repr(data)
    if kind == "not_an_object":
        return json.dumps([data], ensure_ascii=False)
    if kind == "missing_turn_id":
        del data["turn_id"]
    elif kind == "empty_turn_id":
        data["turn_id"] = ""
    elif kind == "context_not_list":
        data["context"] = " ".join(p["text"] for p in data["context"])
    elif kind == "answer_not_string":
        data["answer"] = [data["answer"]]
    elif kind == "passage_without_label":
        del data["context"][rng.randrange(len(data["context"]))]["label"]
    elif kind == "unknown_answer_format":
        data["answer_format"] = "html"
    elif kind == "native_without_documents":
        del data["request_documents"]
    return json.dumps(data, ensure_ascii=False)


def generate(start: dt.date, days: int, turns_per_day: int = 300, seed: int = 0,
             changes: Sequence[StepChange] | None = None, provider_turns: int = 0, topics: bool = False,
             language_turns: int = 0) -> Sample:
    """Turns answered on `days` days from `start` (UTC), broken lines (~1%) and their judgments.

    `changes`: dated step changes of the citation habits; None = the bundled ones
    (data/traffic.toml), `()` = none. Days before the first change do not depend on it.
    `provider_turns`: turns a day in the OpenAI, Cohere, Gemini and Anthropic PDF/custom-content
    formats, with their apps' pointer bugs (`citecheck.demo.providers`); 0 keeps the sample as it
    was recorded (tests/integration/test_regroup_unchanged.py), any number leaves the other turns unchanged.
    `language_turns`: turns a day answered in German, French, Spanish and Japanese
    (`citecheck.demo.languages`); 0 keeps the sample as recorded, any number leaves the other turns
    unchanged.
    `topics`: every turn gets a `topic` attribute (`citecheck.demo.topics`; no random draw, so
    nothing else changes).
    """
    if days < 1 or turns_per_day < 1:
        raise ValueError("days and turns_per_day must be at least 1")
    changes = BUNDLED_CHANGES if changes is None else tuple(changes)
    first = dt.datetime(start.year, start.month, start.day, tzinfo=dt.UTC)
    end = first + dt.timedelta(days=days)
    built: list[DayTurn] = []
    for offset in range(-1, days):
        day = start + dt.timedelta(days=offset)
        for item in day_turns(seed, day, turns_per_day, change_on(day, changes)) + (
                provider_day_turns(seed, day, provider_turns, change_on(day, changes)) if provider_turns else []) + (
                language_day_turns(seed, day, language_turns) if language_turns else []):
            if first <= item.moment < end:
                built.append(item)
    built.sort(key=lambda t: (t.turn["answered_at"], t.turn["turn_id"]))
    if topics:
        add_topics(item.turn for item in built)
    expected: dict[str, tuple[ExpectedSentence, ...]] = {}
    for item in built:
        expected[item.turn["turn_id"]] = tuple(expected_sentence(s, item.turn) for s in item.sents)
    malformed = []
    for offset in range(days):
        day = start + dt.timedelta(days=offset)
        malformed += _malformed(seed, day, max(1, round(turns_per_day * 0.01)), change_on(day, changes))
    malformed.sort(key=lambda m: m[2])
    on_time, late = sample_events(seed, [item.turn for item in built], expected, start, days)
    return Sample(
        turns=[item.turn for item in built],
        malformed_lines=[m[0] for m in malformed],
        judgments=judgment_rows(expected.values()),
        expected=expected,
        malformed_kinds=[m[1] for m in malformed],
        malformed_at=[m[2] for m in malformed],
        reader_events=on_time,
        late_reader_events=late,
    )
