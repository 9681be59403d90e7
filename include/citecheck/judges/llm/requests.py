"""Requests (SPEC §4): one Messages request per answer (turn) covers all of its sentences to judge.

Each sentence goes with its id (its index in the answer, as a string), its text and the labels it
cites, and the cited passages go once each. The rubric is the shared system prompt, marked with
`cache_control` so every request after the first reads it from the prompt cache. The reply is
asked for as structured output (`output_config.format`, the JSON schema `REPLY_SCHEMA`). Each
request carries its worst-case cost estimate, reserved against the budget before it is sent.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citecheck.core.model import JudgeItem, Passage
from citecheck.core.text import text_hash
from citecheck.judges.llm.assessment import Assessment, not_judged
from citecheck.judges.llm.config import BATCH_DISCOUNT, LLMConfig
from citecheck.judges.llm.prompt import REASK_NOTE, REPLY_SCHEMA, RUBRIC


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """One Messages request: all sentences to judge of one answer."""

    turn_id: str
    custom_id: str
    positions: tuple[int, ...]  # positions in the judge() call's items
    sentences: tuple[tuple[str, tuple[str, ...]], ...]  # (id, cited labels)
    passages: Mapping[str, str]
    params: Mapping[str, Any]
    estimate: RequestEstimate
    # how the transport re-asks and reads the reply: None = the judge's verdicts; the claim
    # splitter's own reader (`judges.llm.claims.SplitReader`) otherwise
    reader: Any = None


@dataclass(frozen=True, slots=True)
class RequestEstimate:
    system_tokens: int
    other_input_tokens: int
    chars: int

    def worst_case_usd(self, config: LLMConfig, *, batch: bool) -> float:
        p = config.price
        system_price = (
            max(p.cache_write_per_mtok, p.input_per_mtok) if config.prompt_caching else p.input_per_mtok
        )
        usd = (
            self.system_tokens * system_price
            + self.other_input_tokens * p.input_per_mtok
            + config.max_tokens * p.output_per_mtok
        ) / 1_000_000
        return usd * BATCH_DISCOUNT if batch else usd


def estimate_tokens(text: str, chars_per_token: float = 3.0) -> int:
    """Tokens of a text by the rule ceil(chars / chars_per_token).

    About 4 characters per token for English on older Claude tokenizers; the tokenizer of Claude
    4.7 and later (Sonnet 5.x) counts about 30% more, so the default of 3 is a slightly
    conservative estimate for budgets. Requests are re-estimated from observed usage.
    """
    return math.ceil(len(text) / chars_per_token)


def system_blocks(config: LLMConfig) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "text", "text": RUBRIC}
    if config.prompt_caching:
        block["cache_control"] = {"type": "ephemeral"}
    return [block]


def request_payload(sentences: Sequence[tuple[str, str, Sequence[str]]], passages: Sequence[Passage]) -> str:
    """The user message: cited passages once each, then the sentences with the labels they cite."""
    return json.dumps(
        {
            "passages": [{"label": p.label, "text": p.text} for p in passages],
            "sentences": [{"id": sid, "text": text, "cites": list(cites)} for sid, text, cites in sentences],
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def build_params(config: LLMConfig, payload: str, reask_reason: str | None = None) -> dict[str, Any]:
    content = [{"type": "text", "text": payload}]
    if reask_reason is not None:
        content.append({"type": "text", "text": REASK_NOTE.format(reason=reask_reason)})
    output_config: dict[str, Any] = {"format": {"type": "json_schema", "schema": REPLY_SCHEMA}}
    if config.effort is not None:
        output_config["effort"] = config.effort
    params: dict[str, Any] = {
        "model": config.model,
        "max_tokens": config.max_tokens,
        "system": system_blocks(config),
        "messages": [{"role": "user", "content": content}],
        "output_config": output_config,
    }
    if config.thinking is not None:
        params["thinking"] = {"type": config.thinking}
    return params


def estimate_request(config: LLMConfig, params: Mapping[str, Any], chars_per_token: float) -> RequestEstimate:
    system = "".join(b["text"] for b in params["system"])
    schema = params.get("output_config", {}).get("format", {}).get("schema", REPLY_SCHEMA)
    other = json.dumps(params["messages"], ensure_ascii=False) + json.dumps(schema)
    return RequestEstimate(
        system_tokens=estimate_tokens(system, chars_per_token),
        other_input_tokens=estimate_tokens(other, chars_per_token),
        chars=len(system) + len(other),
    )


def build_requests(
    config: LLMConfig, items: Sequence[JudgeItem], chars_per_token: float | None = None
) -> tuple[list[AnswerRequest], dict[int, Assessment]]:
    """Group items by answer into requests; items with nothing to judge get an Assessment now."""
    cpt = chars_per_token or config.chars_per_token
    groups: dict[str, list[int]] = {}
    early: dict[int, Assessment] = {}
    for pos, item in enumerate(items):
        groups.setdefault(item.turn_id, []).append(pos)
    requests = []
    for turn_id, positions in groups.items():
        context = {p.label: p for p in items[positions[0]].context}
        seen: set[str] = set()
        kept: list[int] = []
        for pos in positions:
            item = items[pos]
            sid = item.item_id
            cites = [lab for lab in dict.fromkeys(item.cited) if lab in context]
            if not cites:
                early[pos] = not_judged("no resolved citations to judge")
            elif sid in seen:
                early[pos] = not_judged("duplicate sentence index in one answer")
            else:
                seen.add(sid)
                kept.append(pos)
        if not kept:
            continue
        sentences = tuple(
            (
                items[pos].item_id,
                tuple(lab for lab in dict.fromkeys(items[pos].cited) if lab in context),
            )
            for pos in kept
        )
        used = {lab for _, cites in sentences for lab in cites}
        passages = [p for p in items[positions[0]].context if p.label in used]
        payload = request_payload(
            [(sid, items[pos].sentence, cites) for pos, (sid, cites) in zip(kept, sentences, strict=True)],
            passages,
        )
        params = build_params(config, payload)
        digest = text_hash(turn_id + "\x1f" + ",".join(sid for sid, _ in sentences))
        requests.append(
            AnswerRequest(
                turn_id=turn_id,
                custom_id=f"a{digest[:32]}",
                positions=tuple(kept),
                sentences=sentences,
                passages={p.label: p.text for p in passages},
                params=params,
                estimate=estimate_request(config, params, cpt),
            )
        )
    return requests, early
