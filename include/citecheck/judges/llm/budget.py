"""The USD and answer budget (SPEC §4): every request's worst-case cost is reserved before it is
sent, so spend never exceeds the budget; a request whose outcome is unknown (a timeout) keeps
its reservation as spent. A `SharedBudget` is one budget across the tasks of a run (the daily job's
shards, its claim split and its escalation), counted in a `BudgetPool`."""

from __future__ import annotations

import threading
from typing import Protocol


class Budget:
    """Reservations against a USD and an answer budget; never lets spend exceed them."""

    def __init__(self, usd: float | None, answers: int | None) -> None:
        self.usd = usd
        self.answers = answers
        self.spent = 0.0
        self.unconfirmed = 0.0
        self.reserved = 0.0
        self.in_flight = 0
        self.answers_used = 0
        self._cond = threading.Condition()

    def _fits(self, usd: float) -> bool:
        return self.usd is None or self.spent + self.unconfirmed + self.reserved + usd <= self.usd + 1e-12

    def _take(self, usd: float, new_answer: bool) -> bool | None:
        """Whether `usd` (and a new answer) fit now; None when no answer is left (waiting cannot help)."""
        if new_answer and self.answers is not None and self.answers_used >= self.answers:
            return None
        return self._fits(usd)

    def reserve(self, usd: float, *, new_answer: bool, wait: bool) -> bool:
        """Reserve `usd`; with `wait`, wait for in-flight requests to settle before saying no."""
        with self._cond:
            while not (taken := self._take(usd, new_answer)):
                if taken is None or not wait or self.in_flight == 0:
                    return False
                self._cond.wait()
            self.reserved += usd
            self.in_flight += 1
            self.answers_used += new_answer
            return True

    def settle(self, reserved: float, actual: float | None) -> None:
        """Replace a reservation by the actual cost; None = outcome unknown, keep it as spent."""
        with self._cond:
            self.reserved -= reserved
            self.in_flight -= 1
            if actual is None:
                self.unconfirmed += reserved
            else:
                self.spent += actual
            self._cond.notify_all()

    def book(self, usd: float, answers: int) -> None:
        """Count spend made earlier against the same budget (the daily job's claim split, made
        in another task) as spent, with its answers."""
        with self._cond:
            self.spent += usd
            self.answers_used += answers


class BudgetPool(Protocol):
    """Where the spend of every task of one run is counted (the warehouse's run ledger:
    `warehouse.runs.RunBudgetPool`): `take` adds `usd` and `answers` when the total stays within the
    limits (atomically, across processes), else takes nothing; `give_back` returns what a settled
    reservation did not cost (negative: what it cost above its estimate)."""

    def take(self, usd: float, answers: int, limit_usd: float | None, limit_answers: int | None) -> bool: ...

    def give_back(self, usd: float) -> None: ...


class SharedBudget(Budget):
    """A budget whose limits are a run's, however many tasks (shards, the claim split, the
    escalation) spend it: every reservation is taken from the run's `BudgetPool` first, and what a
    settled request did not cost goes back to it; this object keeps the task's own figures (spent,
    unconfirmed) for its statistics. An outcome that stays unknown stays taken."""

    def __init__(self, usd: float | None, answers: int | None, pool: BudgetPool) -> None:
        super().__init__(None, None)  # the limits are the pool's
        self.usd, self.answers = usd, answers
        self.pool = pool

    def _take(self, usd: float, new_answer: bool) -> bool:  # waiting helps only with this task's own requests
        return self.pool.take(usd, int(new_answer), self.usd, self.answers)

    def settle(self, reserved: float, actual: float | None) -> None:
        if actual is not None and actual != reserved:  # (a reply above its estimate is counted too)
            self.pool.give_back(reserved - actual)
        super().settle(reserved, actual)

    # `book` (spend another task of the run made) counts only in this task's figures: it is in the pool
