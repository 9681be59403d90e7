"""The generator's own truth about each sentence, and the recorded judge (SPEC §4) built from it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from citecheck.core.vocabulary import MISCITED, NOT_CHECK_WORTHY, SUPPORTED, UNCITED_SUPPORTED, UNJUDGED, UNSUPPORTED
from citecheck.demo.answers import Sent
from citecheck.demo.dialogue import OFFERS, REFUSAL_SENTENCES, USER_QUESTIONS
from citecheck.demo.knowledge import JOINT_KEYS, JOINTS, PASSAGES, SINGLE_KEYS, label_key
from citecheck.demo.languages import language_statements
from citecheck.demo.native import pointer_ok

if TYPE_CHECKING:
    from citecheck.demo.days import Sample


# what a sentence can be drawn as (`ExpectedSentence.kind`)
KINDS: tuple[str, ...] = (
    "supported", "padded", "miscited", "uncited", "unsupported", "joint", "unknown_label",
    "stale_label", "duplicate_marker", "pointer_problem", "offer", "question", "refusal",
)  # provider-format turns (citecheck.demo.providers) add "no_source_text"


@dataclass(frozen=True)
class ExpectedSentence:
    """What the generator meant one sentence to be: its judge text, labels, kind and verdict."""

    text: str
    labels: tuple[str, ...]
    kind: str
    verdict: str
    check_worthy: bool
    supported_by: tuple[str, ...] = ()
    jointly_supported_by: tuple[tuple[str, ...], ...] = ()


def _resolved(sent: Sent, turn: dict[str, Any]) -> list[str]:
    if turn["answer_format"] == "anthropic_blocks" and "answer_blocks" in turn and sent.citations \
            and "document_index" in sent.citations[0]:
        docs = turn["request_documents"]
        return [f"D{c['document_index']}" for c in sent.citations if pointer_ok(c, docs)]
    if turn["answer_format"] != "markers":  # citecheck.demo.providers: the generator's own truth
        return [c["label"] for c in sent.citations if c["valid"]]
    known = {p["label"] for p in turn["context"]}
    return [lab for lab in dict.fromkeys(sent.labels) if lab in known]


def expected_sentence(sent: Sent, turn: dict[str, Any]) -> ExpectedSentence:
    """The verdict a correct pipeline gives this sentence, from what the generator knows."""
    labels = tuple(dict.fromkeys(sent.labels))
    joint = (sent.joint,) if sent.joint else ()
    if not sent.check_worthy:
        verdict = NOT_CHECK_WORTHY
    elif sent.kind == "no_source_text":  # every cited source was logged without its text
        verdict = UNJUDGED
    else:
        resolved = set(_resolved(sent, turn))
        cited = bool(resolved & set(sent.supported_by)) or bool(sent.joint and set(sent.joint) <= resolved)
        if cited:
            verdict = SUPPORTED
        elif sent.supported_by or sent.joint:
            verdict = MISCITED if resolved else UNCITED_SUPPORTED
        else:
            verdict = UNSUPPORTED
    return ExpectedSentence(sent.body, labels, sent.kind, verdict, sent.check_worthy,
                            tuple(sent.supported_by), joint)


def _row(text: str, supported_by: Iterable[str], joint: Iterable[Sequence[str]] = ()) -> dict[str, Any]:
    row: dict[str, Any] = {"statement": text, "supported_by": sorted(supported_by, key=label_key)}
    joint = [sorted(j, key=label_key) for j in joint]
    if joint:
        row["jointly_supported_by"] = joint
    return row


def judgment_rows(turns: Iterable[Sequence[ExpectedSentence]]) -> list[dict[str, Any]]:
    """Recorded-judge rows: one per distinct sentence text, in order of first appearance."""
    rows: dict[str, dict[str, Any]] = {}
    for sentences in turns:
        for s in sentences:
            row = _row(s.text, s.supported_by, s.jointly_supported_by)
            seen = rows.setdefault(s.text, row)
            if seen != row:
                raise AssertionError(f"sample generator: conflicting judgments for {s.text!r}")
    return list(rows.values())


def with_claim_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows plus one per claim the rule splitter (`[claims] mode = "rules"`) makes of a row's
    statement, judged as its statement is: the generator writes a compound sentence from one
    passage's facts, so each of its conjuncts is supported by what supports the whole, and a conjunct
    of a sentence drawn as unsupported is recorded as unsupported (the generator does not say which
    half is wrong). A claim that some other statement could also give with another judgment, or
    that is a statement itself, gets no row of its own (`_judged_claims`): it stays unjudged rather
    than guessed, and every day's rows agree with the full judge file."""
    from citecheck.core.claims.rules import split_sentence

    allowed = _judged_claims()
    out = {row["statement"]: row for row in rows}
    for row in rows:
        for claim in split_sentence(row["statement"]):
            if claim in allowed and claim not in out:
                out[claim] = {**row, "statement": claim}
    return list(out.values())


@cache
def _judged_claims() -> frozenset[str]:
    """Claims of the rule splitter that only one judgment can come with, over every statement the
    generator can write."""
    from citecheck.core.claims.rules import split_sentence

    rows = [_row(t, s, j) for t, s, j in _all_rows()]
    statements = {row["statement"] for row in rows}
    judged: dict[str, set[str]] = {}
    for row in rows:
        judgment = repr((row["supported_by"], row.get("jointly_supported_by")))
        for claim in split_sentence(row["statement"]):
            if claim not in statements:
                judged.setdefault(claim, set()).add(judgment)
    return frozenset(claim for claim, judgments in judged.items() if len(judgments) == 1)


def judge_spec(sample: Sample) -> dict[str, Any]:
    """A recorded judge (SPEC §4) covering every sentence of the sample's valid turns."""
    return {"kind": "recorded", "about": "citecheck bundled sample data (generated)",
            "judgments": sample.judgments}


@cache
def _all_rows() -> tuple[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]], ...]:
    rows: list[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]]] = []
    for passage in PASSAGES.values():
        for claim in passage.claims:
            for key in SINGLE_KEYS:
                support = () if key[1] is None else (f"{key[0]}{key[1]}",)
                rows.append((claim.text(key), support, ()))
        rows.extend((w, (), ()) for w in passage.wrong)
    for joint in JOINTS:
        for a, b in JOINT_KEYS:
            rows.append((joint.text((a, b)), (), (tuple(sorted((f"S{a}", f"S{b}"), key=label_key)),)))
    with_bare = rows + [(t.rstrip("."), s, j) for t, s, j in rows if t.endswith(".")]
    fixed = [(t, (), ()) for t in REFUSAL_SENTENCES + OFFERS + USER_QUESTIONS]
    languages = [(t, support, ()) for t, support in language_statements()]
    return tuple(with_bare + fixed + languages)


def full_judge_spec() -> dict[str, Any]:
    """A recorded judge covering every sentence the generator can write, for any dates and seed."""
    about = "citecheck bundled sample data: every statement the generator can write"
    return {"kind": "recorded", "about": about,
            "judgments": with_claim_rows([_row(t, s, j) for t, s, j in _all_rows()])}
