"""The Anthropic judge: requests by answer, sent by the configured transport, under the budget.

Without a key (given when the judge is built, else `ANTHROPIC_API_KEY`) nothing is sent and the
status is `skipped_no_api_key`. When the next answer would not fit the budget, escalation stops
there: the rest are left out, counted, and the status is `budget_reached`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from citecheck.core.model import JudgeItem, Judgment
from citecheck.judges.base import JudgeSpecError
from citecheck.judges.llm.assessment import Assessment, judgment_of, not_judged
from citecheck.judges.llm.batch_state import BatchStateStore, JsonFileBatchStateStore, MemoryBatchStateStore
from citecheck.judges.llm.batches import BatchTransport
from citecheck.judges.llm.budget import Budget, BudgetPool, SharedBudget
from citecheck.judges.llm.config import LLMConfig, config_from_spec
from citecheck.judges.llm.ledger import Ledger
from citecheck.judges.llm.requests import build_requests
from citecheck.judges.llm.transport import Calls, run_messages, unjudged_all

log = logging.getLogger(__name__)


class AnthropicJudge:
    """Judges sentences with Claude; `assess` gives raw outcomes, `judge` the Judgments."""

    name = "anthropic"

    def __init__(
        self,
        config: LLMConfig,
        *,
        run_id: str | None = None,
        batch_state: BatchStateStore | None = None,
        sleep: Callable[[float], None] = time.sleep,
        api_key: str | None = None,
        budget_pool: BudgetPool | None = None,
    ) -> None:
        self.config = config
        self.version = config.model
        if batch_state is None:
            batch_state = (
                JsonFileBatchStateStore(config.batch_state_path)
                if config.batch_state_path
                else MemoryBatchStateStore()
            )
        # one budget for every task of a run when it has a pool (the daily job's), else this judge's own
        self._budget = (Budget(config.budget_usd, config.budget_answers) if budget_pool is None else
                        SharedBudget(config.budget_usd, config.budget_answers, budget_pool))
        self._ledger = Ledger(config)
        self._calls = Calls(config, self._budget, self._ledger, sleep, api_key)
        self._batches = BatchTransport(self._calls, batch_state, run_id)
        self._earlier: tuple[float, int] = (0.0, 0)  # booked by `book_spend`

    @property
    def run_id(self) -> str | None:
        return self._batches.run_id

    @property
    def batch_state(self) -> BatchStateStore:
        return self._batches.batch_state

    def client(self) -> Any:
        """The SDK client: the key given when the judge was built, else ANTHROPIC_API_KEY; the base
        URL from ANTHROPIC_BASE_URL."""
        return self._calls.client()

    def claim_splitter(self, cache: Any = None, max_claims: int = 20) -> Any:
        """The LLM claim splitter (`[claims] mode = "llm"`) on this judge's client and budget."""
        from citecheck.judges.llm.claims import LLMClaimSplitter

        return LLMClaimSplitter(self, cache=cache, max_claims=max_claims)

    def book_spend(self, usd: float, answers: int) -> None:
        """Book what this run's claim split spent earlier (another task of the daily job) into this
        judge's budget: splitting and judging share one daily budget."""
        self._budget.book(usd, answers)
        self._earlier = (self._earlier[0] + usd, self._earlier[1] + answers)

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        return [judgment_of(a, judge=self.name, version=self.version) for a in self.assess(items)]

    def assess(self, items: Sequence[JudgeItem]) -> list[Assessment]:
        """One Assessment per item, in order; every failure is an `unjudged` one with its reason."""
        ledger = self._ledger
        out: list[Assessment | None] = [None] * len(items)
        requests, early = build_requests(self.config, items, ledger.chars_per_token)
        for pos, a in early.items():
            out[pos] = a
        ledger.count("sentences_without_citations", len(early))
        ledger.count("answers_escalated", len(requests))
        if requests and not self._calls.has_api_key():
            ledger.flags.add("skipped_no_api_key")
            log.warning(
                "anthropic judge: ANTHROPIC_API_KEY is not set; %d answers not escalated", len(requests)
            )
            ledger.count("answers_skipped_no_key", len(requests))
            results = {r.custom_id: unjudged_all(r, "skipped_no_api_key") for r in requests}
        elif self.config.transport == "batches":
            results = self._batches.run(requests)
        else:
            results = run_messages(self._calls, requests)
        for r in requests:
            by_id = results[r.custom_id]
            for pos, (sid, _) in zip(r.positions, r.sentences, strict=True):
                out[pos] = by_id[sid]
        final = [a if a is not None else not_judged("internal: no outcome") for a in out]
        for a in final:
            ledger.count(f"sentences_{a.status}")
        return final

    def stats(self) -> dict[str, Any]:
        ledger = self._ledger
        flags = ledger.flags
        if "skipped_no_api_key" in flags:
            status = "skipped_no_api_key"
        elif "budget_reached" in flags:
            status = "budget_reached"
        elif "batch_pending" in flags:
            status = "batch_pending"
        else:
            status = "ok"
        c = ledger.counts
        return {
            "model": self.config.model,
            "transport": self.config.transport,
            "status": status,
            "requests": c["requests"],
            "answers_escalated": c["answers_escalated"],
            "answers_sent": c["answers_sent"],
            "answers_left_out": c["answers_left_out"],
            "sentences_left_out": c["sentences_left_out"],
            "sentences_ok": c["sentences_ok"],
            "sentences_unverified": c["sentences_unverified"],
            "sentences_unjudged": c["sentences_unjudged"],
            "sentences_without_citations": c["sentences_without_citations"],
            "reasks": c["reasks"],
            "retries": c["retries"],
            "unasked_ids": c["unasked_ids"],
            "errors": dict(ledger.errors),
            "input_tokens": ledger.usage["input_tokens"],
            "output_tokens": ledger.usage["output_tokens"],
            "cache_read_input_tokens": ledger.usage["cache_read_input_tokens"],
            "cache_creation_input_tokens": ledger.usage["cache_creation_input_tokens"],
            "cost_usd": round(ledger.cost, 6),
            "cost_usd_unconfirmed": round(self._budget.unconfirmed, 6),
            "budget_usd": self.config.budget_usd,
            "budget_answers": self.config.budget_answers,
            "budget_booked_usd": round(self._earlier[0], 6),
            "budget_booked_answers": self._earlier[1],
            "batch_ids": list(ledger.batch_ids),
            "batches_created": c["batches_created"],
            "batches_reattached": c["batches_reattached"],
            "batch_results": dict(ledger.batch_results),
        }


def from_spec(
    spec: Mapping[str, Any],
    *,
    run_id: str | None = None,
    batch_state: BatchStateStore | None = None,
    api_key: str | None = None,
    budget_pool: BudgetPool | None = None,
    **_: Any,
) -> AnthropicJudge:
    """Build the judge of an `anthropic` spec; `run_id` and `batch_state` let batches reattach;
    `api_key` (else ANTHROPIC_API_KEY) authenticates; `budget_pool` makes its budget one with every
    other judge of the run on that pool (`SharedBudget`)."""
    if batch_state is not None and not isinstance(batch_state, BatchStateStore):
        raise JudgeSpecError("anthropic judge: batch_state must have get(run_id) and put(run_id, batch_id)")
    return AnthropicJudge(config_from_spec(spec), run_id=run_id, batch_state=batch_state, api_key=api_key,
                          budget_pool=budget_pool)
