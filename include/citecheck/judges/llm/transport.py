"""Calls to the Anthropic API and the Messages transport (SPEC §4).

`Calls` holds what both transports share: the SDK client (its own retries off, so waits are
configurable), retries of 408/409/429/5xx/529-overloaded and connection errors with exponential
backoff and jitter (`retry-after-ms` / `retry-after` honoured as the SDK does, `x-should-retry`
obeyed), budgeted Messages calls, and reading a reply with one re-ask when it is malformed.
`run_messages` sends one request per answer with bounded concurrency (threads); the Message
Batches transport is `batches.py`. Logs carry counts, custom ids and error classes only: never
answer or passage text, replies, or the key.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from citecheck.judges.llm.assessment import Assessment, not_judged
from citecheck.judges.llm.budget import Budget
from citecheck.judges.llm.config import LLMConfig, Usage
from citecheck.judges.llm.ledger import Ledger
from citecheck.judges.llm.replies import MalformedReply, assess_reply, parse_reply
from citecheck.judges.llm.requests import AnswerRequest, build_params

log = logging.getLogger(__name__)


@dataclass
class Failure:
    """A call that did not answer, with its reason."""

    reason: str
    uncertain: bool  # the request may have been processed (and billed)
    attempts: int = 1


def unjudged_all(request: AnswerRequest, reason: str) -> dict[str, Assessment]:
    """Every sentence of a request unjudged with the same reason."""
    return {sid: not_judged(reason) for sid, _ in request.sentences}


class Calls:
    """The API calls of one judge, booked in its `Ledger` and reserved against its `Budget`."""

    def __init__(
        self,
        config: LLMConfig,
        budget: Budget,
        ledger: Ledger,
        sleep: Callable[[float], None],
        api_key: str | None = None,
    ) -> None:
        self.config = config
        self.budget = budget
        self.ledger = ledger
        self.sleep = sleep
        self._api_key = api_key  # None: the SDK reads ANTHROPIC_API_KEY
        self._client: Any = None
        self._lock = threading.Lock()

    def has_api_key(self) -> bool:
        """Whether a key was given when the judge was built or ANTHROPIC_API_KEY is set."""
        return bool(self._api_key or os.environ.get("ANTHROPIC_API_KEY"))

    def client(self) -> Any:
        """The SDK client: the key given when the judge was built, else ANTHROPIC_API_KEY; the base
        URL from ANTHROPIC_BASE_URL."""
        with self._lock:
            if self._client is None:
                import anthropic

                self._client = anthropic.Anthropic(
                    api_key=self._api_key, max_retries=0, timeout=self.config.timeout_s
                )
            return self._client

    def with_retries(self, call: Callable[[], Any], *, what: str, billed: bool) -> Any:
        """Run `call`, retrying retryable failures; returns its value or a `Failure`.

        With `billed`, a failure whose outcome is unknown (a timeout after the request went out)
        is returned at once: the caller must book its possible cost before trying again, or not
        retry at all (creating a batch must not happen twice).
        """
        import anthropic

        attempt = 0
        while True:
            wait: float | None = None
            try:
                return call()
            except anthropic.APITimeoutError:
                failure, retryable = Failure("timeout", uncertain=True), True
            except anthropic.APIConnectionError:
                failure, retryable = Failure("connection error", uncertain=True), True
            except anthropic.APIStatusError as exc:
                failure = Failure(f"http {exc.status_code}: {exc.type or 'error'}", uncertain=False)
                retryable = _retryable_status(exc.response)
                wait = retry_after_s(exc.response.headers)
            self.ledger.error(failure.reason)
            if (billed and failure.uncertain) or not retryable or attempt >= self.config.max_retries:
                if not failure.uncertain or not billed:
                    log.warning(
                        "anthropic judge: %s failed after %d attempts: %s", what, attempt + 1, failure.reason
                    )
                failure.attempts = attempt + 1
                return failure
            self.ledger.count("retries")
            self.sleep(wait if wait is not None else self.backoff(attempt))
            attempt += 1

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter: up to a quarter shorter than base * 2^attempt."""
        base = min(self.config.backoff_base_s * 2**attempt, self.config.backoff_max_s)
        return base * (1 - 0.25 * random.random())

    def send(self, request: AnswerRequest, params: Mapping[str, Any], *, reserved: float | None) -> Any:
        """Messages calls under the budget until one answers: a Message, a `Failure`, or None.

        `reserved` is a reservation already made for the first attempt; None reserves one (a
        re-ask). None comes back when the budget has no room for the (next) attempt. A timeout
        keeps its reservation as possibly spent, and the retry needs a fresh one.
        """
        attempts = 0
        usd = reserved
        while True:
            if usd is None:
                usd = self.ledger.worst_case(request, batch=False)
                if not self.budget.reserve(usd, new_answer=False, wait=True):
                    return None
            self.ledger.count("requests")
            result = self.with_retries(
                lambda: self.client().messages.create(**params), what=request.custom_id, billed=True
            )
            if not isinstance(result, Failure):
                self.budget.settle(usd, self.ledger.record_usage(request, Usage.of(result), batch=False))
                return result
            self.budget.settle(usd, None if result.uncertain else 0.0)
            attempts += result.attempts
            if not result.uncertain or attempts > self.config.max_retries:
                if result.uncertain:
                    log.warning(
                        "anthropic judge: %s failed after %d attempts: %s",
                        request.custom_id,
                        attempts,
                        result.reason,
                    )
                return result
            self.ledger.count("retries")
            self.sleep(self.backoff(attempts - 1))
            usd = None

    def read(self, request: AnswerRequest, message: Any) -> dict[str, Assessment]:
        """Assessments from a reply, re-asking once (direct Messages) when it is malformed."""
        if message.stop_reason == "refusal":
            return unjudged_all(request, "the model refused")
        reader = request.reader
        parse = reader.parse if reader is not None else parse_reply
        try:
            data = parse(message)
        except MalformedReply as first:
            self.ledger.count("reasks")
            params = (reader.params if reader is not None else build_params)(
                self.config, request.params["messages"][0]["content"][0]["text"], str(first)
            )
            again = self.send(request, params, reserved=None)
            if again is None:
                return unjudged_all(request, f"{first}; no budget left to re-ask")
            if isinstance(again, Failure):
                return unjudged_all(request, f"{first}; re-ask failed: {again.reason}")
            try:
                data = parse(again)
            except MalformedReply as second:
                self.ledger.error("malformed reply twice")
                log.warning(
                    "anthropic judge: %s: malformed reply twice (%s; %s)", request.custom_id, first, second
                )
                return unjudged_all(request, f"malformed reply twice: {first}; {second}")
        assessed, unasked = (reader.assess if reader is not None else assess_reply)(request, data)
        self.ledger.count("unasked_ids", unasked)
        return assessed


def run_messages(calls: Calls, requests: Sequence[AnswerRequest]) -> dict[str, dict[str, Assessment]]:
    """The Messages transport: one request per answer, `concurrency` at a time, in answer order."""
    results: dict[str, dict[str, Assessment]] = {}
    slots = threading.BoundedSemaphore(calls.config.concurrency)
    with ThreadPoolExecutor(max_workers=calls.config.concurrency) as pool:
        for i, request in enumerate(requests):
            slots.acquire()
            usd = calls.ledger.worst_case(request, batch=False)
            # Reserve here, in answer order, so the budget stops at a deterministic answer.
            if not calls.budget.reserve(usd, new_answer=True, wait=True):
                slots.release()
                calls.ledger.left_out(requests[i:], results)
                break
            calls.ledger.count("answers_sent")

            def work(r: AnswerRequest = request, reserved: float = usd) -> None:
                try:
                    results[r.custom_id] = _answer(calls, r, reserved)
                except Exception as exc:  # a bug must not sink the run; it is counted and visible
                    log.error("anthropic judge: internal error for %s: %s", r.custom_id, type(exc).__name__)
                    calls.ledger.error(f"internal error: {type(exc).__name__}")
                    results[r.custom_id] = unjudged_all(r, f"internal error: {type(exc).__name__}")
                finally:
                    slots.release()

            pool.submit(work)
    return results


def _answer(calls: Calls, request: AnswerRequest, reserved: float) -> dict[str, Assessment]:
    result = calls.send(request, request.params, reserved=reserved)
    if result is None:
        return unjudged_all(request, "timeout; no budget left to retry")
    if isinstance(result, Failure):
        return unjudged_all(request, result.reason)
    return calls.read(request, result)


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds a response asks us to wait: `retry-after-ms`, then `retry-after` (seconds or a date)."""
    try:
        return max(0.0, float(headers["retry-after-ms"]) / 1000)
    except (KeyError, TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils

    parsed = email.utils.parsedate_tz(value)
    return None if parsed is None else max(0.0, email.utils.mktime_tz(parsed) - time.time())


def _retryable_status(response: Any) -> bool:
    override = response.headers.get("x-should-retry")
    if override in ("true", "false"):
        return override == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500
