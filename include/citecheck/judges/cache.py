"""The judgment cache: raw model probabilities per (model, revision, sentence, window).

The NLI judge asks the cache before the model, so a rerun or backfill of an unchanged day scores
nothing (SPEC §4). Values are the softmaxed probabilities in the model's `id2label` order, not
verdicts, so a threshold change needs no re-scoring. Two implementations share one small
interface: `InMemoryCache` here (one CLI run) and `citecheck.warehouse.judgment_cache.SQLCache` (the
`judgment_cache` table, on SQLite for `--cache PATH` and on Postgres for the warehouse), which the
caller opens and hands to the judge: judges never reach the warehouse themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple, Protocol

from citecheck.core.text import text_hash

Probabilities = tuple[float, ...]

class CacheKey(NamedTuple):
    """What identifies one scored (window, sentence) pair."""

    model: str
    revision: str
    sentence_hash: str
    window_hash: str


def cache_key(model: str, revision: str | None, sentence: str, window: str) -> CacheKey:
    """The key of a pair: model id + revision + hash(sentence) + hash(window)."""
    return CacheKey(model, revision or "", text_hash(sentence), text_hash(window))


class JudgmentCache(Protocol):
    """Where the NLI judge keeps raw probabilities between runs."""

    def get_many(self, keys: Iterable[CacheKey]) -> dict[CacheKey, Probabilities]:
        """The cached values of those keys that are present."""
        ...

    def put_many(self, values: Mapping[CacheKey, Probabilities]) -> None:
        """Store values; a key already present keeps its first value."""
        ...

    def describe(self) -> str:
        """A short name for run statistics (never a password)."""
        ...


class InMemoryCache:
    """A dict: one process, one run (the CLI without `--cache`)."""

    def __init__(self) -> None:
        self._values: dict[CacheKey, Probabilities] = {}

    def get_many(self, keys: Iterable[CacheKey]) -> dict[CacheKey, Probabilities]:
        return {key: self._values[key] for key in keys if key in self._values}

    def put_many(self, values: Mapping[CacheKey, Probabilities]) -> None:
        for key, probs in values.items():
            self._values.setdefault(key, tuple(probs))

    def describe(self) -> str:
        return "memory"

    def __len__(self) -> int:
        return len(self._values)
