"""The Message Batches transport (SPEC §4): one batch (half price) with one `custom_id` per answer.

The batch id is stored in a `BatchStateStore` under the run id before polling, so a retry of the
run reattaches instead of submitting again; `succeeded`, `errored`, `canceled` and `expired`
results are mapped back to their answers. A batch still processing after `batch_max_wait_s`
stays pending for a rerun.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from typing import Any

from citecheck.judges.llm.assessment import Assessment
from citecheck.judges.llm.batch_state import BatchStateStore
from citecheck.judges.llm.config import Usage
from citecheck.judges.llm.requests import AnswerRequest
from citecheck.judges.llm.transport import Calls, Failure, unjudged_all

log = logging.getLogger(__name__)


class BatchTransport:
    """Submits, reattaches to and polls the batches of one judge."""

    def __init__(self, calls: Calls, batch_state: BatchStateStore, run_id: str | None) -> None:
        self.calls = calls
        self.ledger = calls.ledger
        self.batch_state = batch_state
        self.run_id = run_id
        self._batch_calls = 0
        self._anonymous_run: str | None = None

    def key(self) -> str:
        """The store key of this judge's next batch: the run id, then `#2`, `#3` … for later calls.

        The daily job escalates a run in one call, so its key is the plain run id; a CLI run that
        judges in several calls makes them in the same order on a retry, so the keys repeat.
        Without a run id the key is unique to this judge: nothing can reattach to another run's batch.
        """
        self._batch_calls += 1
        if self.run_id is None and self._anonymous_run is None:
            self._anonymous_run = f"no-run-id-{uuid.uuid4().hex}"
            log.info("anthropic judge: no run id, so a retry cannot reattach to this batch")
        run = self.run_id or self._anonymous_run
        return run if self._batch_calls == 1 else f"{run}#{self._batch_calls}"

    def run(self, requests: Sequence[AnswerRequest]) -> dict[str, dict[str, Assessment]]:
        """Assessments by custom id for every request: those the budget admits go in one batch."""
        calls, budget = self.calls, self.calls.budget
        results: dict[str, dict[str, Assessment]] = {}
        selected: list[tuple[AnswerRequest, float]] = []
        for i, request in enumerate(requests):
            usd = self.ledger.worst_case(request, batch=True)
            if not budget.reserve(usd, new_answer=True, wait=False):
                self.ledger.left_out(requests[i:], results)
                break
            selected.append((request, usd))
        if not selected:
            return results
        self.ledger.count("answers_sent", len(selected))
        batch_id = self._batch_id([r for r, _ in selected])
        ended = None if isinstance(batch_id, Failure) else self._wait_for(batch_id)
        if isinstance(batch_id, Failure) or isinstance(ended, Failure):
            failure = batch_id if isinstance(batch_id, Failure) else ended
            for request, usd in selected:
                budget.settle(usd, None if failure.uncertain else 0.0)
                results[request.custom_id] = unjudged_all(request, f"batch: {failure.reason}")
            return results
        rows = calls.with_retries(
            lambda: list(calls.client().messages.batches.results(batch_id)), what=batch_id, billed=False
        )
        reason = "no result in the batch"
        if isinstance(rows, Failure):
            reason, rows = f"batch results unavailable: {rows.reason}", []
        by_id = {row.custom_id: row.result for row in rows}
        if rows and not any(r.custom_id in by_id for r, _ in selected):
            log.warning("anthropic judge: batch %s holds none of this run's answers", batch_id)
        # Settle every reservation first, so a re-ask below can wait for budget without deadlock.
        outcomes = [(r, self._outcome(r, usd, by_id.get(r.custom_id), reason)) for r, usd in selected]
        for request, outcome in outcomes:
            results[request.custom_id] = outcome if isinstance(outcome, dict) else calls.read(request, outcome)
        return results

    def _batch_id(self, requests: Sequence[AnswerRequest]) -> str | Failure:
        """The run's batch: reattach to the stored one, or create it and store its id at once."""
        key = self.key()
        stored = self.batch_state.get(key)
        if stored is not None:
            self.ledger.count("batches_reattached")
            self.ledger.batch_ids.append(stored)
            log.info("anthropic judge: reattaching to batch %s", stored)
            return stored
        body = [{"custom_id": r.custom_id, "params": dict(r.params)} for r in requests]
        self.ledger.count("requests")
        created = self.calls.with_retries(
            lambda: self.calls.client().messages.batches.create(requests=body), what="batch create", billed=True
        )
        if isinstance(created, Failure):
            return created
        self.batch_state.put(key, created.id)
        self.ledger.count("batches_created")
        self.ledger.batch_ids.append(created.id)
        log.info("anthropic judge: created batch %s with %d answers", created.id, len(requests))
        return created.id

    def _wait_for(self, batch_id: str) -> Any:
        """Poll until the batch ends; past `batch_max_wait_s` it stays pending for a rerun."""
        start = time.monotonic()
        while True:
            batch = self.calls.with_retries(
                lambda: self.calls.client().messages.batches.retrieve(batch_id), what=batch_id, billed=False
            )
            if isinstance(batch, Failure) or batch.processing_status == "ended":
                return batch
            if time.monotonic() - start >= self.calls.config.batch_max_wait_s:
                self.ledger.flags.add("batch_pending")
                return Failure("still processing; a rerun of this run reattaches to it", uncertain=True)
            self.calls.sleep(self.calls.config.poll_interval_s)

    def _outcome(self, request: AnswerRequest, usd: float, result: Any, missing: str) -> Any:
        """Settle one batch request's budget; its Message to read, or its unjudged outcome."""
        kind = getattr(result, "type", None)
        self.ledger.batch_results[kind or "missing"] += 1
        if kind != "succeeded":
            self.calls.budget.settle(usd, 0.0)  # errored, canceled and expired requests are not billed
            if kind == "errored":
                error_type = getattr(getattr(result.error, "error", None), "type", None) or "error"
                self.ledger.error(f"batch errored: {error_type}")
                return unjudged_all(request, f"batch request errored: {error_type}")
            return unjudged_all(request, f"batch request {kind}" if kind else missing)
        self.calls.budget.settle(usd, self.ledger.record_usage(request, Usage.of(result.message), batch=True))
        return result.message
