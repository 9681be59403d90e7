"""Sample turns in the other provider-native formats (OpenAI Responses and Chat, Cohere v2, Gemini,
Anthropic PDF and custom-content documents), each with the pointer bugs real apps log.

Written with `citecheck.demo.formats` from the same knowledge base and wordings as the
`anthropic_blocks` turns (labels `D<index>`), from their own random stream, so adding them to a
sample (`generate(..., provider_turns=N)`) leaves every other turn of it unchanged.

A dated change (`StepChange.provider_bug_rate`, data/traffic.toml) raises the bug rate for the
monitor to find. The bugs:

- Anthropic: the app logs the documents of the current turn only, not every document of the
  chat, so each `document_index` lands one document early (the chat's first turn attached an upload);
- OpenAI: the app logs its sources' urls normalised with a trailing slash, so no cited url
  names a logged source;
- Cohere: the app trimmed the answer's leading line break after the citations were made, so each
  citation's `start`/`end` select text one character late;
- Gemini: the app logs the supports of the streamed chunks, whose `partIndex` names no part of
  the final candidate (each is still placed, by its `segment.text`, and counted as a pointer
  problem); and for web grounding, pages whose text the app did not log
  (`no_source_text`, not a bug).
"""

from __future__ import annotations

import random
from typing import Any

from citecheck.core.formats.common import unknown_url_label
from citecheck.demo.answers import Conversation, Sent, draw_claims, retrieve, tail
from citecheck.demo.dialogue import UPLOADS
from citecheck.demo.formats import Claim, Source, native_turn
from citecheck.demo.knowledge import PASSAGES, KBPassage
from citecheck.demo.traffic import NATIVE_KIND_WEIGHTS, StepChange, pick

PROVIDER_VARIANTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("openai_responses", {"parts": 2}), ("openai_responses", {"files": True}), ("openai_chat", {}),
    ("cohere_v2", {}), ("gemini", {"parts": 2}), ("gemini", {"web": True}),
    ("anthropic_blocks", {"kind": "page"}), ("anthropic_blocks", {"kind": "block"}),
)
BUG_RATE = 0.25  # share of provider turns logged with their app's pointer bug
MAX_PASSAGES = 5


def _url(passage: KBPassage) -> str:
    return f"https://kb.example/{passage.pid}"


def provider_turn(rng: random.Random, conv: Conversation, primary: KBPassage, question: str,
                  change: StepChange | None = None) -> tuple[dict[str, Any], list[Sent]]:
    """One provider-native turn and the sentences it was built from (with the generator's truth:
    `Sent.citations` holds `{label, valid}` per citation, `kind` `no_source_text` where no judge
    can see the sources)."""
    answer_format, options = rng.choice(PROVIDER_VARIANTS)
    context = retrieve(rng, primary, rng.randint(3, MAX_PASSAGES))
    upload = answer_format == "anthropic_blocks"  # a document the chat's first turn attached
    sources: list[Source] = []
    if upload:
        title, text = rng.choice(UPLOADS)
        sources.append(Source(title, "upload://attachment", (text,)))
    offset = len(sources)
    sources += [Source(p.source, _url(p), (p.text,)) for p in context]
    index_of = {p.pid: offset + i for i, p in enumerate(context)}
    rate = change.provider_bug_rate if change is not None and change.provider_bug_rate is not None else BUG_RATE
    buggy = rng.random() < rate and not options.get("files")
    web_missing = {i for i in index_of.values() if rng.random() < 0.3} if options.get("web") else set()
    sents: list[Sent] = []
    claims: list[Claim] = []
    n = rng.choices((1, 2, 3, 4), weights=(20, 35, 30, 15))[0]
    for claim in draw_claims(rng, primary, context, n):
        kind = pick(rng, [(k, w) for k, w in NATIVE_KIND_WEIGHTS.items() if k != "pointer_problem"])
        here = index_of[claim.pid]
        other = rng.choice([i for i in index_of.values() if i != here])
        text = claim.text(("D", here)) if kind != "unsupported" else rng.choice(PASSAGES[claim.pid].wrong)
        cites = {"supported": (here,), "padded": (here, other), "miscited": (other,), "uncited": (),
                 "unsupported": (here,)}[kind]
        supported_by = (f"D{here}",) if kind != "unsupported" else ()
        sent = Sent(text, kind, supported_by=supported_by)
        for i in cites:
            # the trailing-slash bug: the cited url names no logged source, read as an unknown web source
            label = unknown_url_label(_url(context[i - offset])) if buggy and answer_format.startswith("openai") \
                else f"D{i}"
            sent.citations.append({"label": label, "valid": not buggy})
        # every citation is placed (SPEC §3.4): a Gemini support whose partIndex names no part
        # still lands on the one sentence its `segment.text` occurs in
        sent.labels = [c["label"] for c in sent.citations]
        if cites and not buggy and all(i in web_missing for i in cites):  # a bugged pointer counts as unknown
            sent.kind = "no_source_text"
        sents.append(sent)
        claims.append(Claim(text[:-1], cites, stop=text[-1], after_stop=bool(options.get("parts"))
                            and answer_format == "openai_responses"))
    extra = tail(rng, primary.domain)
    sents += extra
    claims += [Claim(s.body[:-1], (), stop=s.body[-1]) for s in extra]
    turn = native_turn(answer_format, claims, sources, **options)
    if buggy:
        _log_bug(turn, answer_format)
    if web_missing:
        turn["request_documents"] = [d for i, d in enumerate(turn["request_documents"]) if i not in web_missing]
    conv.contexts.append(context)
    return {"question": question, **turn, "attributes": dict(conv.attributes)}, sents


def _log_bug(turn: dict[str, Any], answer_format: str) -> None:
    if answer_format == "anthropic_blocks":  # the chat's upload (document 0) left out of the log
        turn["request_documents"] = turn["request_documents"][1:]
    elif answer_format.startswith("openai"):
        for doc in turn["request_documents"]:
            doc["url"] += "/"
    elif answer_format == "cohere_v2":  # a leading line break trimmed after the citations were made
        for citation in turn["response"]["citations"]:
            citation["start"] += 1
            citation["end"] += 1
    elif answer_format == "gemini":
        parts = len(turn["response"]["content"]["parts"])
        for support in turn["response"]["groundingMetadata"]["groundingSupports"]:
            support["segment"]["partIndex"] = parts + support["segment"].get("partIndex", 0)
