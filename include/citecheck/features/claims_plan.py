"""What a claims mode costs (`citecheck plan --claims rules|llm`, SPEC §2.1).

- NLI: the judge's own pair selection run over the sample traffic twice, once per sentence and
  once per claim (the rule splitter's claims; in the `llm` mode they stand in for the model's),
  giving pairs per claim, pairs per sentence in each mode, and pairs per day for N answers.
- LLM splitter: the real split request of every sample answer with check-worthy sentences
  (`judges.llm.claims.split_request`: rubric, payload, schema), its input tokens by the judge's
  token rule, and its output tokens as a reply holding the rule splitter's claims; tokens and USD
  per 1,000 answers at the judge model's prices, by Messages or Message Batches (half price), with
  and without prompt caching of the rubric. Anthropic caches a prompt prefix only from a minimum
  length (`MIN_CACHEABLE_TOKENS`); a shorter rubric is billed as plain input, and the plan says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from citecheck.core.config import Config

MIN_CACHEABLE_TOKENS = 1024
"""The shortest prompt prefix Anthropic caches on Sonnet/Opus-class models (2,048 on Haiku)."""


def claims_plan(traffic: Sequence[tuple[Sequence[Mapping[str, Any]], Mapping[str, Any]]], config: Config,
                answers: int, mode: str) -> dict[str, Any]:
    """NLI pairs per claim and per sentence, and for `llm` the splitter's tokens and USD."""
    from citecheck.features.capacity import traffic_profile

    sentences = traffic_profile(traffic, config)
    claims = traffic_profile(traffic, replace(config, claims_mode="rules"))
    per_sentence = sentences.pairs_per_sentence("dedupe")
    claims_per_sentence = claims.sentences / sentences.sentences if sentences.sentences else 0.0
    per_sentence_claims = claims.pairs_deduped / sentences.sentences if sentences.sentences else 0.0
    spa = sentences.sentences_per_answer
    out: dict[str, Any] = {
        "mode": mode,
        "answers": answers,
        "nli": {
            "sample_answers": sentences.answers,
            "check_worthy_sentences": sentences.sentences,
            "claims": claims.sentences,
            "claims_per_sentence": claims_per_sentence,
            "pairs_per_sentence_sentence_mode": per_sentence,
            "pairs_per_claim": claims.pairs_deduped / claims.sentences if claims.sentences else 0.0,
            "pairs_per_sentence_claims_mode": per_sentence_claims,
            "pairs_per_day_sentence_mode": round(answers * spa * per_sentence),
            "pairs_per_day_claims_mode": round(answers * spa * per_sentence_claims),
            "claims_source": "the rule splitter" + (" (standing in for the model's splits)" if mode == "llm" else ""),
        },
    }
    if mode == "llm":
        out["llm_splitter"] = llm_split_cost(traffic[0][0], config)
    return out


def llm_split_cost(raw_turns: Sequence[Mapping[str, Any]], config: Config, llm: Any = None) -> dict[str, Any]:
    """Tokens and USD per 1,000 answers of the LLM splitter on these turns."""
    from citecheck.core.claims.rules import split_sentence
    from citecheck.core.pipeline import in_conversation_order, structure_turns
    from citecheck.core.turns import turn_from_dict
    from citecheck.judges.llm.claims import split_reply_text, split_request
    from citecheck.judges.llm.config import BATCH_DISCOUNT, LLMConfig
    from citecheck.judges.llm.requests import estimate_tokens

    llm = llm or LLMConfig()
    answers = asked = system = other = output = 0
    for st in structure_turns(in_conversation_order(turn_from_dict(t) for t in raw_turns), config):
        answers += 1
        worthy = [(str(s.index), s.text) for s in st.sentences if s.check_worthy]
        if not worthy:
            continue
        asked += 1
        request = split_request(llm, st.turn_id, worthy)
        system += request.estimate.system_tokens
        other += request.estimate.other_input_tokens
        reply = split_reply_text({sid: split_sentence(text) for sid, text in worthy})
        output += estimate_tokens(reply, llm.chars_per_token)
    scale = 1000 / answers if answers else 0.0
    system_k, other_k, output_k = system * scale, other * scale, output * scale
    price = llm.price
    cacheable = asked and system / asked >= MIN_CACHEABLE_TOKENS
    scenarios = {}
    for transport in ("messages", "batches"):
        for caching in (False, True):
            system_price = price.cache_read_per_mtok if caching and cacheable else price.input_per_mtok
            usd = (system_k * system_price + other_k * price.input_per_mtok + output_k * price.output_per_mtok) / 1e6
            scenarios[f"{transport}{' + caching' if caching else ''}"] = usd * (BATCH_DISCOUNT if transport ==
                                                                               "batches" else 1.0)
    return {
        "model": llm.model,
        "sample_answers": answers,
        "answers_with_claims_to_split": asked,
        "input_tokens_per_1000_answers": round(system_k + other_k),
        "system_tokens_per_1000_answers": round(system_k),
        "output_tokens_per_1000_answers": round(output_k),
        "usd_per_1000_answers": scenarios,
        "rubric_tokens": round(system / asked) if asked else 0,
        "rubric_cacheable": bool(cacheable),
        "note": "" if cacheable else (
            f"the splitter's rubric ({round(system / asked) if asked else 0} tokens) is shorter than the "
            f"{MIN_CACHEABLE_TOKENS} tokens Anthropic caches, so caching saves nothing on it"),
    }


def render_claims(result: Mapping[str, Any]) -> str:
    """The claims part of `citecheck plan --claims`."""
    n = result["nli"]
    lines = [
        "",
        f"claims mode {result['mode']}: {n['claims_per_sentence']:.3f} claims per check-worthy sentence on the "
        f"sample ({n['claims']} claims / {n['check_worthy_sentences']} sentences; claims from {n['claims_source']})",
        f"NLI pairs: {n['pairs_per_sentence_sentence_mode']:.2f} per sentence in sentence mode, "
        f"{n['pairs_per_claim']:.2f} per claim = {n['pairs_per_sentence_claims_mode']:.2f} per sentence in claims "
        f"mode; {n['pairs_per_day_sentence_mode']:,} → {n['pairs_per_day_claims_mode']:,} pairs/day "
        f"for {result['answers']:,} answers",
    ]
    llm = result.get("llm_splitter")
    if llm:
        usd = llm["usd_per_1000_answers"]
        lines.append(
            f"LLM splitter ({llm['model']}), per 1,000 answers: {llm['input_tokens_per_1000_answers']:,} input "
            f"tokens ({llm['system_tokens_per_1000_answers']:,} of them the rubric), "
            f"{llm['output_tokens_per_1000_answers']:,} output tokens; USD "
            + ", ".join(f"{k} {v:.2f}" for k, v in usd.items()))
        if llm["note"]:
            lines.append(f"  note: {llm['note']}")
    return "\n".join(lines)
