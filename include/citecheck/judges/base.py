"""The judge interface; `judges.derive` holds what a judge's answers mean.

A judge takes a batch of `JudgeItem`s (possibly from many turns, so it can deduplicate and
batch model calls) and returns one `Judgment` per item, in order. It never guesses: when it has
no answer for an item it returns `unjudged(reason)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from citecheck.core.model import JudgeItem, Judgment


class JudgeSpecError(ValueError):
    """A judge file or spec that cannot be used; raised before any scoring starts."""


@runtime_checkable
class Judge(Protocol):
    """What the pipeline needs from a judge."""

    name: str
    version: str

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        """One judgment per item, in the same order."""
        ...

    def stats(self) -> dict[str, Any]:
        """Run statistics (pairs scored, tokens, cost …) for the runs table and CLI output."""
        ...
