"""`citecheck plan --claims` (SPEC §2.1): NLI pairs per claim vs per sentence on the sample traffic,
and the LLM splitter's tokens and USD per 1,000 answers by transport and caching."""

from __future__ import annotations

import json

import pytest

from citecheck import demo
from citecheck.cli import main
from citecheck.features.claims_plan import MIN_CACHEABLE_TOKENS, claims_plan, llm_split_cost, render_claims
from citecheck.judges.llm.config import BATCH_DISCOUNT
from helpers import REPO


@pytest.fixture(scope="module")
def traffic():
    return demo.plan_traffic(turns_per_day=60)


def test_pairs_per_claim_and_per_sentence_come_from_the_judges_own_pair_selection(traffic):
    result = claims_plan(traffic, demo.sample_config(), 10_000, "rules")
    nli = result["nli"]
    assert nli["claims"] >= nli["check_worthy_sentences"] > 0
    assert nli["claims_per_sentence"] == pytest.approx(nli["claims"] / nli["check_worthy_sentences"])
    assert nli["pairs_per_sentence_claims_mode"] == pytest.approx(nli["pairs_per_claim"] * nli["claims_per_sentence"])
    assert "llm_splitter" not in result and "claims mode rules" in render_claims(result)


def test_the_llm_splitter_costs_half_in_batches_and_less_with_a_cached_rubric(traffic):
    cost = llm_split_cost(traffic[0][0], demo.sample_config())
    usd = cost["usd_per_1000_answers"]
    assert usd["batches"] == pytest.approx(usd["messages"] * BATCH_DISCOUNT)
    assert usd["batches + caching"] == pytest.approx(usd["messages + caching"] * BATCH_DISCOUNT)
    assert cost["rubric_tokens"] >= MIN_CACHEABLE_TOKENS and cost["rubric_cacheable"]
    assert usd["messages + caching"] < usd["messages"]
    assert cost["input_tokens_per_1000_answers"] > cost["system_tokens_per_1000_answers"] > 0
    assert cost["output_tokens_per_1000_answers"] > 0


def test_plan_cli_prints_the_claims_mode(capsys):
    rates = REPO / "bench" / "results" / "nli_rates_deberta_epyc-avx2_2026-12-01.json"
    code = main(["plan", "--answers", "1000", "--rates", str(rates), "--claims", "llm", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["claims"]["mode"] == "llm" and set(out["claims"]["llm_splitter"]["usd_per_1000_answers"]) == {
        "messages", "messages + caching", "batches", "batches + caching"}
