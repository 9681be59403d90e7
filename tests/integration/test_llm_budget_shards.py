"""One LLM budget across shards (issue 36, item 5): a plain `"kind": "anthropic"` judge run as 4
shards, with the LLM claim splitter, against the local fake Anthropic server (the real SDK): each
shard submits its own batch (its own key in the run ledger), the claim split and every shard take
from ONE budget (the run's pool in the ledger), so the day spends at most the budget, and the run
records its whole spend (`runs.llm_cost_usd`, the claim split included)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa

from citecheck.core.config import config_from_mapping
from citecheck.job import JobSettings, run_day
from citecheck.judges.llm.config import Usage, config_from_spec
from citecheck.warehouse import load_turns, runs
from citecheck.warehouse import tables as T
from helpers import load_fixture
from helpers.fake_anthropic import FakeAnthropic, claim_splits_as, serve_with_env

FIXTURE = load_fixture("claims.json")
DAY = dt.date(2026, 11, 30)
SHARDS = 4
COPIES = 10  # of each seed answer, each in a conversation of its own: answers in every shard
SPEC = {"kind": "anthropic", "transport": "batches", "poll_interval_s": 0.001, "max_retries": 1,
        "backoff_base_s": 0.001, "timeout_s": 5}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    yield from serve_with_env(monkeypatch, "sk-test-budget-shards")


def _turns() -> list[dict[str, Any]]:
    return [{**turn, "turn_id": f"{turn['turn_id']}-{k}", "conversation_id": f"{turn['conversation_id']}-{k}"}
            for k in range(COPIES) for turn in FIXTURE["turns"].values()]


def _settings(budget_usd: float | None) -> JobSettings:
    return JobSettings(judge_spec={**SPEC, "budget_usd": budget_usd}, config=config_from_mapping(
        {"claims": {"mode": "llm"}}), min_turns=1, shards=SHARDS, unjudged_limit=1.0)  # left out: still published


def _billed(fake: FakeAnthropic, batches_before: set[str]) -> float:
    """What the fake server billed for the batches submitted since `batches_before`: every request
    in them succeeded with the server's usage, at the model's batch price."""
    price = config_from_spec(SPEC).price
    requests = sum(len(b.requests) for bid, b in fake.batches.items() if bid not in batches_before)
    return requests * price.cost(Usage(**fake.usage), batch=True)


def _run(engine, fake: FakeAnthropic, budget_usd: float | None) -> tuple[dict[str, Any], float, list[str]]:
    with engine.begin() as conn:  # every run splits afresh (no split cache from the run before)
        conn.execute(T.claim_split_cache.delete())
    before = set(fake.batches)
    out = run_day(engine, DAY, _settings(budget_usd))
    new = [bid for bid in fake.batches if bid not in before]
    return runs.run_row(engine, out["run_id"]), _billed(fake, before), new


def test_four_shards_spend_one_budget_and_the_run_records_all_of_it(engine, fake: FakeAnthropic):
    fake.grader = claim_splits_as({})  # every sentence one claim; every judged sentence supported
    load_turns(engine, _turns())
    # the whole day without a limit: what it costs, and one batch per shard besides the claim split's
    unlimited, billed_all, batches = _run(engine, fake, None)
    ids = unlimited["state"]["llm_batch_ids"]
    shards_used = {s for s in range(SHARDS) if f"{unlimited['run_id']}/shard-{s}" in ids}
    assert len(shards_used) >= 3, unlimited["state"]  # the day really is spread over the shards
    assert sorted(ids.values()) == sorted(batches) and len(set(ids.values())) == len(ids) == 1 + len(shards_used)
    assert unlimited["llm_cost_usd"] == pytest.approx(billed_all, rel=1e-9)
    split = unlimited["stats"]["claim_split"]["llm"]["cost_usd"]
    assert 0 < split < billed_all  # the claim split's spend is part of the run's

    # a budget for the split and half the judging: the split and the 4 shards together stay within it
    budget = split + (billed_all - split) / 2
    limited, billed, _ = _run(engine, fake, budget)
    assert billed <= budget + 1e-12, (billed, budget)
    assert limited["llm_cost_usd"] == pytest.approx(billed, rel=1e-9)
    assert limited["state"]["llm_budget"]["usd"] == pytest.approx(billed, rel=1e-9)  # every reservation settled
    first = limited["stats"]["judge"]["first"]
    left_out = first.get("answers_left_out", 0) + limited["stats"]["claim_split"]["claim_splits_skipped_budget"]
    assert left_out > 0  # the budget, not the day's size, bounded the spend
    with engine.connect() as conn:
        unjudged = conn.execute(sa.select(sa.func.count()).select_from(T.sentence_verdicts).where(
            T.sentence_verdicts.c.run_id == limited["run_id"], T.sentence_verdicts.c.verdict == "unjudged")
        ).scalar_one()
    assert unjudged > 0
