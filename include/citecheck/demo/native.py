"""Provider-native answers (Anthropic `char_location` citations over request documents)."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from citecheck.demo.answers import Conversation, Sent, draw_claims, retrieve, tail
from citecheck.demo.dialogue import UPLOADS
from citecheck.demo.knowledge import PASSAGES, KBPassage
from citecheck.demo.traffic import NATIVE_KIND_WEIGHTS, pick

MAX_NATIVE_PASSAGES = 5

_WORD = re.compile(r"[a-z0-9]+")


def _passage_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans of a passage, end including the trailing space as the API reports it."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in re.finditer(r"[.!?] +(?=[A-Z])", text):
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def _best_span(text: str, sentence: str) -> tuple[int, int]:
    words = set(_WORD.findall(sentence.lower()))
    spans = _passage_spans(text)
    return max(spans, key=lambda s: len(words & set(_WORD.findall(text[s[0]:s[1]].lower()))))


def _citation(docs: Sequence[tuple[str, str]], index: int, sentence: str) -> dict[str, Any]:
    title, text = docs[index]
    start, end = _best_span(text, sentence)
    return {"type": "char_location", "cited_text": text[start:end], "document_index": index,
            "document_title": title, "start_char_index": start, "end_char_index": end}


def _broken_citation(rng: random.Random, docs: Sequence[tuple[str, str]], index: int, sentence: str
                     ) -> dict[str, Any]:
    """A pointer that does not match the logged documents: bad index, wrong title or shifted span."""
    citation = _citation(docs, index, sentence)
    problem = rng.choice(("out_of_range", "off_by_one", "shifted_span"))
    if problem == "out_of_range":
        citation["document_index"] = len(docs) + rng.randint(0, 2)
    elif problem == "off_by_one":
        citation["document_index"] = index - 1 if index > 0 else index + 1
    else:
        citation["start_char_index"] += 3
        citation["end_char_index"] = min(citation["end_char_index"] + 3, len(docs[index][1]))
    return citation


def _native_sentences(rng: random.Random, docs: list[tuple[str, str]], passages: dict[int, KBPassage],
                      primary: KBPassage) -> list[Sent]:
    """Claims with native citations, each drawn as one of the kinds a native answer can show."""
    context = [p for _, p in sorted(passages.items())]
    index_of = {p.pid: i for i, p in passages.items()}
    n = rng.choices((1, 2, 3, 4, 5), weights=(15, 30, 30, 15, 10))[0]
    sents: list[Sent] = []
    for claim in draw_claims(rng, primary, context, n):
        kind = pick(rng, list(NATIVE_KIND_WEIGHTS.items()))
        here = index_of[claim.pid]
        other = rng.choice([i for i in index_of.values() if i != here])
        sent = Sent(claim.text(("D", here)), kind, supported_by=(f"D{here}",))
        if kind == "unsupported":
            sent = Sent(rng.choice(PASSAGES[claim.pid].wrong), kind)
        targets = {"supported": [here], "padded": [here, other], "miscited": [other], "uncited": [],
                   "unsupported": [here], "pointer_problem": [here]}[kind]
        for t in targets:
            if kind == "pointer_problem":
                sent.citations.append(_broken_citation(rng, docs, t, sent.body))
            else:
                sent.citations.append(_citation(docs, t, sent.body))
        sent.labels = [f"D{c['document_index']}" for c in sent.citations]
        sents.append(sent)
    return sents


def _native_blocks(sents: list[Sent]) -> list[dict[str, Any]]:
    """Content blocks as the API returns them: the cited text, then its stop in a plain block."""
    blocks: list[dict[str, Any]] = []
    for i, sent in enumerate(sents):
        gap = "" if i == len(sents) - 1 else " "
        if sent.citations:
            blocks.append({"type": "text", "text": sent.body[:-1], "citations": sent.citations})
            blocks.append({"type": "text", "text": sent.body[-1] + gap})
        else:
            blocks.append({"type": "text", "text": sent.body + gap})
    return blocks


def native_turn(rng: random.Random, conv: Conversation, primary: KBPassage, question: str
                ) -> tuple[dict[str, Any], list[Sent]]:
    """An `anthropic_blocks` turn: request documents (maybe a user upload first) and cited blocks."""
    docs: list[tuple[str, str]] = []
    if rng.random() < 0.3:
        docs.append(rng.choice(UPLOADS))
    context = retrieve(rng, primary, rng.randint(3, MAX_NATIVE_PASSAGES))
    passages = {len(docs) + i: p for i, p in enumerate(context)}
    docs.extend((p.source, p.text) for p in context)
    sents = _native_sentences(rng, docs, passages, primary) + tail(rng, primary.domain)
    conv.contexts.append(context)
    turn = {"question": question, "answer": "", "answer_format": "anthropic_blocks",
            "answer_blocks": _native_blocks(sents),
            "request_documents": [{"title": t, "text": x} for t, x in docs],
            "attributes": dict(conv.attributes)}
    return turn, sents


def pointer_ok(citation: dict[str, Any], docs: Sequence[dict[str, str]]) -> bool:
    """Whether a native citation points at the logged document and span it quotes."""
    index = citation["document_index"]
    if not 0 <= index < len(docs) or docs[index]["title"] != citation["document_title"]:
        return False
    text = docs[index]["text"][citation["start_char_index"]:citation["end_char_index"]]
    return text.strip() == citation["cited_text"].strip()
