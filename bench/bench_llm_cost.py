"""Tokens and USD per 1,000 escalated answers for the LLM judge (SPEC §4), Orbit Labs answer orbit-1.

The request is the one the judge really sends: the fixture turn goes through the pipeline's
parsing and structural checks (`judge_items`), then `citecheck.judges.llm.build_requests` builds
the Messages request (rubric system prompt, cited passages once, sentences with their labels).
The reply is the contract object a careful judge would return for those sentences: verdicts and
per-citation support from the fixture's recorded judgments, one verbatim quote (the first
sentence of the passage) per supporting citation.

Token counts are estimates, not API counts (`messages.count_tokens` needs the network): the rule
of `citecheck.judges.llm.estimate_tokens`, ceil(chars / 3) — about chars / 4 on older Claude
tokenizers plus the ~30% more tokens of the Claude 4.7+/5.x tokenizer, rounded up so budgets
err high. The chars / 4 figures are printed too. The output schema is counted as uncached input
(how the API renders it is not public); thinking tokens are not counted (the judge asks for
`effort: low`; any thinking adds output tokens at the output price).

Scenarios for 1,000 answers with the default model's list prices (Claude Sonnet 5.5: USD 2 / 10
per million input / output tokens, cache write 2.50, cache read 0.20, Batch API half price):
- plain: no prompt caching, direct Messages calls;
- caching: the rubric is written to the cache once and read by the other 999 requests (the
  5-minute cache stays warm under steady traffic);
- batches: plain at half price;
- both: caching at half price (batch cache hits are best effort; this is the optimistic case).

Run: `.venv/bin/python bench/bench_llm_cost.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from citecheck.core.config import Config
from citecheck.core.pipeline import judge_items, structure_turns
from citecheck.core.text import normalise_statement
from citecheck.core.turns import turn_from_dict
from citecheck.judges.llm import (
    BATCH_DISCOUNT,
    REPLY_SCHEMA,
    LLMConfig,
    build_requests,
    estimate_tokens,
)
from citecheck.judges.recorded import parse_table

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "orbit_labs.json"
ANSWERS = 1_000
SEED_ANCHOR_USD, GOAL_USD = 9.0, 4.5


@dataclass(frozen=True)
class Tokens:
    rubric: int
    rest: int  # passages, sentences, JSON framing and the output schema
    output: int


def truthful_reply(items, table) -> str:
    """The reply a careful judge gives: recorded support per citation, a verbatim quote for each."""
    sentences = []
    for item in items:
        record = table[normalise_statement(item.sentence)]
        supports = {lab: "full" if lab in record.supported_by else "none" for lab in item.cited}
        if not any(s == "full" for s in supports.values()) and record.supports(frozenset(item.cited)):
            supports = {lab: "partial" for lab in item.cited}
        passages = {p.label: p.text for p in item.context}
        quotes = [
            {"label": lab, "quote": passages[lab].split(". ")[0]}
            for lab, s in supports.items()
            if s != "none"
        ]
        verdict = "supported" if quotes else "not_supported"
        sentences.append(
            {
                "id": str(item.sentence_index),
                "verdict": verdict,
                "citations": [{"label": lab, "support": s} for lab, s in supports.items()],
                "quotes": quotes,
            }
        )
    return json.dumps({"sentences": sentences}, ensure_ascii=False)


def measure(items, table, config: LLMConfig, chars_per_token: float) -> Tokens:
    [request] = build_requests(config, items)[0]
    rubric = "".join(block["text"] for block in request.params["system"])
    rest = json.dumps(request.params["messages"], ensure_ascii=False) + json.dumps(REPLY_SCHEMA)
    return Tokens(
        rubric=estimate_tokens(rubric, chars_per_token),
        rest=estimate_tokens(rest, chars_per_token),
        output=estimate_tokens(truthful_reply([items[p] for p in request.positions], table), chars_per_token),
    )


def scenarios(t: Tokens, config: LLMConfig) -> list[tuple[str, int, int, int, int, float]]:
    """(name, uncached input, cache write, cache read, output, USD) per 1,000 answers."""
    p = config.price
    n = ANSWERS
    plain_in, out = n * (t.rubric + t.rest), n * t.output
    plain = (plain_in * p.input_per_mtok + out * p.output_per_mtok) / 1e6
    cached_in, write, read = n * t.rest, t.rubric, (n - 1) * t.rubric
    cached = (
        cached_in * p.input_per_mtok
        + write * p.cache_write_per_mtok
        + read * p.cache_read_per_mtok
        + out * p.output_per_mtok
    ) / 1e6
    return [
        ("plain (no caching, direct)", plain_in, 0, 0, out, plain),
        ("prompt caching", cached_in, write, read, out, cached),
        ("batches (50% off)", plain_in, 0, 0, out, plain * BATCH_DISCOUNT),
        ("caching + batches", cached_in, write, read, out, cached * BATCH_DISCOUNT),
    ]


def main() -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    table = parse_table(data["judge"]["judgments"])
    turn = turn_from_dict(next(t for t in data["turns"] if t["turn_id"] == "orbit-1"))
    all_items = judge_items(next(structure_turns([turn], Config())))
    cited = [i for i in all_items if i.cited]
    rejected = [i for i in cited if not table[normalise_statement(i.sentence)].supports(frozenset(i.cited))]
    config = LLMConfig()
    p = config.price
    print(
        f"model {config.model}: USD {p.input_per_mtok:g} / {p.output_per_mtok:g} per MTok in / out, "
        f"cache write {p.cache_write_per_mtok:g}, cache read {p.cache_read_per_mtok:g}, "
        f"batches x{BATCH_DISCOUNT:g}"
    )
    for title, items in (
        ("every cited sentence of orbit-1 escalated", cited),
        ("only the first stage's rejections escalated", rejected),
    ):
        for cpt in (3.0, 4.0):
            t = measure(items, table, config, cpt)
            print(
                f"\n{title} ({len(items)} sentences), tokens = ceil(chars / {cpt:g}): "
                f"rubric {t.rubric}, rest of input {t.rest}, output {t.output} per answer"
            )
            print(f"{'scenario':<28}{'input':>10}{'cache wr':>10}{'cache rd':>11}{'output':>10}{'USD/1k':>9}")
            for name, inp, write, read, out, usd in scenarios(t, config):
                print(f"{name:<28}{inp:>10,}{write:>10,}{read:>11,}{out:>10,}{usd:>9.2f}")
    print(f"\nseed anchor about USD {SEED_ANCHOR_USD:g} per 1,000 answers; goal <= USD {GOAL_USD:g}")


if __name__ == "__main__":
    main()
