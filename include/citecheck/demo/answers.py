"""Markers-format answers: retrieve a context set, draw each claim as one failure kind, write it."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from citecheck.demo.dialogue import OFFERS, REFUSAL_OFFERS, REFUSAL_SENTENCES, USER_QUESTIONS_BY_DOMAIN
from citecheck.demo.knowledge import (
    BY_DOMAIN,
    DOMAIN_VERSIONS,
    JOINTS,
    JOINTS_OF,
    PASSAGES,
    Claim,
    KBPassage,
    label_key,
)
from citecheck.demo.traffic import KIND_WEIGHTS, StepChange, pick


@dataclass
class Sent:
    """One sentence being built: its words, labels and what supports it in this turn."""

    body: str
    kind: str
    labels: list[str] = field(default_factory=list)
    supported_by: tuple[str, ...] = ()
    joint: tuple[str, ...] = ()
    check_worthy: bool = True
    citations: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Conversation:
    """A chat in progress: its attributes and the context sets of its turns so far."""

    conversation_id: str
    attributes: dict[str, str]
    contexts: list[list[KBPassage]] = field(default_factory=list)
    max_label: int = 0


def marker_style(attributes: dict[str, str]) -> str:
    """The marker habit of a model and prompt: one style per turn, set by its attributes."""
    if attributes.get("model") == "assistant-c":
        return "comma"
    if attributes.get("model") == "assistant-b" and attributes.get("prompt_version") == "p2":
        return "after_stop"
    return "adjacent"


def retrieve(rng: random.Random, primary: KBPassage, size: int) -> list[KBPassage]:
    """A context set in prompt order: the asked-about passage near the top, neighbours, distractors."""
    same = [p for p in BY_DOMAIN[primary.domain] if p is not primary]
    partners = [PASSAGES[j.b if j.a == primary.pid else j.a] for j in JOINTS_OF.get(primary.pid, [])]
    rng.shuffle(same)
    if partners and rng.random() < 0.6:
        first = rng.choice(partners)
        same.remove(first)
        same.insert(0, first)
    n_same = min(len(same), rng.randint(1, max(1, size - 2)))
    others = [p for p in PASSAGES.values() if p.domain != primary.domain]
    chosen = same[:n_same] + rng.sample(others, size - 1 - n_same)
    rest = sorted(chosen, key=lambda p: (p.domain != primary.domain) + rng.random() * 1.5)
    position = rng.choices(range(min(4, size)), weights=(55, 25, 12, 8)[:min(4, size)])[0]
    rest.insert(position, primary)
    return rest


def _labels_of(context: Sequence[KBPassage]) -> dict[str, str]:
    return {p.pid: f"S{i + 1}" for i, p in enumerate(context)}


def _claim_sent(claim: Claim, context: Sequence[KBPassage], kind: str, labels: list[str]) -> Sent:
    """A claim worded for where its passage sits in this context set (absent = unsupported here)."""
    where = _labels_of(context).get(claim.pid)
    key = ("S", int(where[1:])) if where else ("S", None)
    return Sent(claim.text(key), kind, labels, supported_by=(where,) if where else ())


def draw_claims(rng: random.Random, primary: KBPassage, context: Sequence[KBPassage], n: int) -> list[Claim]:
    """Distinct claims an answer talks about: mostly the asked-about passage, some neighbours."""
    neighbours = [p for p in context if p.domain == primary.domain and p is not primary]
    pool = list(primary.claims)
    rng.shuffle(pool)
    extra = [c for p in neighbours for c in p.claims]
    rng.shuffle(extra)
    take_primary = min(len(pool), max(1, round(n * 0.75)))
    claims = pool[:take_primary] + extra[:n - take_primary]
    return claims[:n]


def _marker_sentences(rng: random.Random, conv: Conversation, context: list[KBPassage], primary: KBPassage,
                      force_stale: bool, change: StepChange | None) -> list[Sent]:
    """The check-worthy sentences of a markers answer, each drawn as one failure kind."""
    weights = KIND_WEIGHTS[conv.attributes["model"]]
    n = rng.choices((1, 2, 3, 4, 5, 6), weights=(15, 25, 25, 18, 10, 7))[0]
    claims = draw_claims(rng, primary, context, n)
    labels = _labels_of(context)
    prev = conv.contexts[-1] if conv.contexts else None
    sents: list[Sent] = []
    for i, claim in enumerate(claims):
        stale_here = force_stale and prev is not None and i == len(claims) - 1
        kind = "stale_label" if stale_here else pick(rng, list(weights.items()))
        sent = _realise(rng, kind, claim, context, labels, prev, conv)
        if sent is None or sent.body in {s.body for s in sents}:
            sent = _claim_sent(claim, context, "supported", [labels[claim.pid]])
        sents.append(sent)
    if change is not None:
        change.apply(rng, sents, list(labels.values()), max(conv.max_label, len(context)) + 1)
    return sents


def _realise(rng: random.Random, kind: str, claim: Claim, context: list[KBPassage], labels: dict[str, str],
             prev: list[KBPassage] | None, conv: Conversation) -> Sent | None:
    """One sentence of the given kind about `claim`, or None when this context cannot host it."""
    right = labels[claim.pid]
    others = [lab for pid, lab in labels.items() if pid != claim.pid]
    if kind == "supported":
        return _claim_sent(claim, context, kind, [right])
    if kind == "duplicate_marker":
        return _claim_sent(claim, context, kind, [right, right])
    if kind == "padded":
        pads = rng.sample(others, 2 if len(others) >= 2 and rng.random() < 0.25 else 1)
        return _claim_sent(claim, context, kind, [right, *pads] if rng.random() < 0.7 else [*pads, right])
    if kind == "miscited":
        return _claim_sent(claim, context, kind, [rng.choice(others)])
    if kind == "uncited":
        return _claim_sent(claim, context, kind, [])
    if kind == "unknown_label":
        ghost = f"S{rng.randint(max(conv.max_label, len(context)) + 1, 9)}"
        return _claim_sent(claim, context, kind, [ghost] if rng.random() < 0.5 else [right, ghost])
    if kind == "unsupported":
        return _unsupported(rng, claim, context, right)
    if kind == "joint":
        return _joint(rng, context, labels)
    if kind == "stale_label" and prev is not None:
        return _stale(rng, context, prev)
    return None


def _unsupported(rng: random.Random, claim: Claim, context: list[KBPassage], right: str) -> Sent:
    """A wrong detail on the topic, or a true policy fact from a passage this prompt did not have."""
    passage = PASSAGES[claim.pid]
    cite = [right] if rng.random() < 0.75 else []
    absent = [p for p in BY_DOMAIN[passage.domain] if p not in context]
    if absent and rng.random() < 0.25:
        outside = rng.choice(rng.choice(absent).claims)
        return _claim_sent(outside, context, "unsupported", cite)
    return Sent(rng.choice(passage.wrong), "unsupported", cite)


def _joint(rng: random.Random, context: list[KBPassage], labels: dict[str, str]) -> Sent | None:
    options = [j for j in JOINTS if j.a in labels and j.b in labels
               and int(labels[j.a][1:]) <= 4 and int(labels[j.b][1:]) <= 4]
    if not options:
        return None
    joint = rng.choice(options)
    la, lb = labels[joint.a], labels[joint.b]
    cited = sorted((la, lb), key=label_key)
    return Sent(joint.text((int(la[1:]), int(lb[1:]))), "joint", cited, joint=tuple(cited))


def _stale(rng: random.Random, context: list[KBPassage], prev: list[KBPassage]) -> Sent | None:
    """Cite a label that named a passage of the previous turn's context but names nothing now."""
    slots = [k for k in range(len(context) + 1, len(prev) + 1) if prev[k - 1] not in context]
    if not slots:
        return None
    k = rng.choice(slots)
    claim = rng.choice(prev[k - 1].claims)
    return _claim_sent(claim, context, "stale_label", [f"S{k}"])


def tail(rng: random.Random, domain: str, labels: Sequence[str] = ()) -> list[Sent]:
    """Sentences that are not claims: questions to the user and offers (a few carry a marker)."""
    out: list[Sent] = []
    if rng.random() < 0.08:
        out.append(Sent(rng.choice(USER_QUESTIONS_BY_DOMAIN[domain]), "question", check_worthy=False))
    if rng.random() < 0.3:
        cite = [rng.choice(labels)] if labels and rng.random() < 0.06 else []
        out.append(Sent(rng.choice(OFFERS), "offer", cite, check_worthy=False))
    return out


def _render_marker(labels: Sequence[str], style: str) -> str:
    if style == "comma":
        return "[" + ", ".join(labels) + "]"
    return "".join(f"[{lab}]" for lab in labels)


def _render(sent: Sent, style: str) -> str:
    """The sentence as the assistant wrote it: markers before the stop, or after it."""
    if not sent.labels:
        return sent.body
    marker = _render_marker(sent.labels, style)
    if style == "after_stop" or sent.body[-1] not in ".?!":
        return f"{sent.body} {marker}"
    return f"{sent.body[:-1]} {marker}{sent.body[-1]}"


def _assemble(rng: random.Random, claims: list[Sent], tail_sents: list[Sent], style: str, bullets: bool,
              bullet_stops: bool) -> str:
    """Join sentences into answer text: prose (sometimes two paragraphs) or a bullet list."""
    if bullets:
        if not bullet_stops:
            for sent in claims:
                sent.body = sent.body.rstrip(".")
        lines = ["- " + _render(s, style) for s in claims]
        if tail_sents:
            lines.append(" ".join(_render(s, style) for s in tail_sents))
        return "\n".join(lines)
    parts = [_render(s, style) for s in claims + tail_sents]
    if len(parts) >= 4 and rng.random() < 0.2:
        cut = rng.randint(2, len(parts) - 1)
        return " ".join(parts[:cut]) + "\n\n" + " ".join(parts[cut:])
    return " ".join(parts)


def _context_json(context: Sequence[KBPassage]) -> list[dict[str, str]]:
    return [{"label": f"S{i + 1}", "source": p.source, "text": p.text, "document_id": p.pid,
             "version": DOMAIN_VERSIONS[p.domain]} for i, p in enumerate(context)]


def marker_turn(rng: random.Random, conv: Conversation, primary: KBPassage, question: str,
                force_stale: bool = False, change: StepChange | None = None) -> tuple[dict[str, Any], list[Sent]]:
    """A markers-format turn: retrieve a context set, write the answer, remember its labels."""
    prev = conv.contexts[-1] if conv.contexts else None
    if force_stale:
        size = 3 if prev is not None else rng.choice((5, 6))
    else:
        size = rng.choices((3, 4, 5, 6), weights=(25, 35, 25, 15))[0]
        if prev is not None and rng.random() < 0.4:
            size = max(3, len(prev) - rng.randint(1, 2))
    context = retrieve(rng, primary, size)
    claims = _marker_sentences(rng, conv, context, primary, force_stale, change)
    tail_sents = tail(rng, primary.domain, [f"S{i + 1}" for i in range(len(context))])
    attrs = conv.attributes
    bullets = rng.random() < (0.45 if attrs["product"] == "helpdesk-bot" else 0.1) and len(claims) >= 2
    answer = _assemble(rng, claims, tail_sents, marker_style(attrs), bullets, attrs["model"] != "assistant-b")
    _remember(conv, context)
    turn = {"question": question, "answer": answer, "answer_format": "markers",
            "context": _context_json(context), "attributes": dict(attrs)}
    return turn, claims + tail_sents


def _remember(conv: Conversation, context: list[KBPassage]) -> None:
    conv.contexts.append(context)
    conv.max_label = max(conv.max_label, len(context))


def refusal_turn(rng: random.Random, conv: Conversation, question: str, domain: str
                 ) -> tuple[dict[str, Any], list[Sent]]:
    """A question the knowledge base cannot answer: context of near misses, a refusal, maybe an offer."""
    context = rng.sample(BY_DOMAIN[domain], min(len(BY_DOMAIN[domain]), rng.randint(3, 4)))
    sents = [Sent(rng.choice(REFUSAL_SENTENCES), "refusal", check_worthy=False)]
    if rng.random() < 0.5:
        sents.append(Sent(rng.choice(REFUSAL_OFFERS), "offer", check_worthy=False))
    _remember(conv, context)
    turn = {"question": question, "answer": " ".join(s.body for s in sents), "answer_format": "markers",
            "context": _context_json(context), "attributes": dict(conv.attributes)}
    return turn, sents
