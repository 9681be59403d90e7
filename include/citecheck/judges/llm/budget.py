"""The USD and answer budget (SPEC §4): every request's worst-case cost is reserved before it is
sent, so spend never exceeds the budget; a request whose outcome is unknown (a timeout) keeps
its reservation as spent."""

from __future__ import annotations

import threading


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

    def reserve(self, usd: float, *, new_answer: bool, wait: bool) -> bool:
        """Reserve `usd`; with `wait`, wait for in-flight requests to settle before saying no."""
        with self._cond:
            if new_answer and self.answers is not None and self.answers_used >= self.answers:
                return False
            while not self._fits(usd):
                if not wait or self.in_flight == 0:
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
