"""The judge interface and the derivation every set-oracle judge shares.

A judge takes a batch of `JudgeItem`s (possibly from many turns, so it can deduplicate and
batch model calls) and returns one `Judgment` per item, in order. It never guesses: when it has
no answer for an item it returns `unjudged(reason)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from citecheck.model import JudgeItem, Judgment


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


SetOracle = Callable[[frozenset[str]], bool]


def judgment_from_set_oracle(
    item: JudgeItem,
    supports: SetOracle,
    *,
    judge: str,
    judge_version: str,
    best_elsewhere: Callable[[], tuple[str, ...]] | None = None,
    score: float | None = None,
    contradiction: float | None = None,
    detail: dict[str, Any] | None = None,
) -> Judgment:
    """Derive cited / alone / rest / elsewhere / faithful from "does this label set support it?".

    `elsewhere` is the first context passage (in context order) that supports the sentence
    alone, preferring passages the sentence did not cite when its citations fail; when no single
    passage does, `best_elsewhere` may name a set (a judge that sees sets jointly).
    """
    cited_set = frozenset(item.cited)
    cited = bool(cited_set) and supports(cited_set)
    alone = {label: supports(frozenset((label,))) for label in item.cited}
    rest = {
        label: len(cited_set) > 1 and supports(cited_set - {label}) for label in item.cited
    }
    context_labels = [p.label for p in item.context]
    single = [
        lab
        for lab in context_labels
        if (alone[lab] if lab in alone else supports(frozenset((lab,))))
    ]
    if not cited:
        single.sort(key=lambda lab: lab in cited_set)
    elsewhere: tuple[str, ...] = (single[0],) if single else ()
    if not elsewhere and best_elsewhere is not None:
        elsewhere = best_elsewhere()
    faithful = cited or bool(elsewhere)
    return Judgment(
        cited=cited,
        alone=alone,
        rest=rest,
        elsewhere=elsewhere,
        faithful=faithful,
        score=score,
        contradiction=contradiction,
        judge=judge,
        judge_version=judge_version,
        detail=detail or {},
    )
