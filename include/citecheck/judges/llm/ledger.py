"""What one LLM judge counted over all its calls, for its `stats()`: events, error classes, batch
results, tokens, cost and status flags; and the token rule, tightened from observed usage."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable

from citecheck.judges.llm.assessment import Assessment, not_judged
from citecheck.judges.llm.config import LLMConfig, Usage
from citecheck.judges.llm.requests import AnswerRequest, estimate_request


class Ledger:
    """Thread-safe counters of one judge; transports write them, `AnthropicJudge.stats` reads them."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.counts: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.batch_results: Counter[str] = Counter()
        self.usage: Counter[str] = Counter()
        self.cost = 0.0
        self.batch_ids: list[str] = []
        self.flags: set[str] = set()
        self.chars_per_token = config.chars_per_token
        self._lock = threading.Lock()

    def count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.counts[key] += n

    def error(self, reason: str) -> None:
        """Count an error by its class: the reason up to its first colon (never any text)."""
        with self._lock:
            self.errors[reason.split(":")[0]] += 1

    def record_usage(self, request: AnswerRequest, usage: Usage, *, batch: bool) -> float:
        """Book a reply's tokens and cost (returned); tighten the token rule if it undercounted."""
        cost = self.config.price.cost(usage, batch=batch)
        with self._lock:
            self.usage["input_tokens"] += usage.input_tokens
            self.usage["output_tokens"] += usage.output_tokens
            self.usage["cache_read_input_tokens"] += usage.cache_read_tokens
            self.usage["cache_creation_input_tokens"] += usage.cache_write_tokens
            self.cost += cost
            estimated = request.estimate.system_tokens + request.estimate.other_input_tokens
            if usage.prompt_tokens > estimated:  # our rule undercounted this text: tighten it
                self.chars_per_token = min(self.chars_per_token, request.estimate.chars / usage.prompt_tokens)
        return cost

    def worst_case(self, request: AnswerRequest, *, batch: bool) -> float:
        """The request's worst-case cost in USD, re-estimated when the token rule was tightened."""
        estimate = request.estimate
        if self.chars_per_token < self.config.chars_per_token:
            estimate = estimate_request(self.config, request.params, self.chars_per_token)
        return estimate.worst_case_usd(self.config, batch=batch)

    def left_out(self, requests: Iterable[AnswerRequest], results: dict[str, dict[str, Assessment]]) -> None:
        """Answers the budget has no room for: flagged, counted, unjudged as `budget_reached`."""
        for r in requests:
            self.flags.add("budget_reached")
            self.count("answers_left_out")
            self.count("sentences_left_out", len(r.sentences))
            results[r.custom_id] = {sid: not_judged("budget_reached") for sid, _ in r.sentences}
