"""Bounded attribute slices (`[slices] max_values_per_key`): the most frequent values of a key keep
their slices, the rest are pooled under `other`, decided before the day is sliced from each value's
answers (counted by the warehouse, or in memory for `score`), with flat memory in the number of
distinct values."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from citecheck.core.config import Config

OTHER_SLICE_VALUE = "other"  # the slice of an attribute key's values past `[slices] max_values_per_key`


@dataclass(frozen=True)
class SliceCap:
    """Bounded attribute slices: per attribute key with more than `max_values` distinct values, the
    `max_values` most frequent by answers (ties: the smaller value) keep their own slice and every
    other value is pooled under `other`. `cut` says, per cut key, how many values there were, how
    many kept, and how many values and answers went to `other` (what `runs.stats` and the report
    show). Built from (key, value, answers) counts streamed key by key (`from_counts`), so it holds
    `max_values` values per key whatever the number of distinct values."""

    max_values: int
    kept: Mapping[str, frozenset[str]] = field(default_factory=dict)
    cut: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def value(self, key: str, value: str) -> str:
        """The slice value a turn's attribute value counts under."""
        kept = self.kept.get(key)
        return value if kept is None or value in kept else OTHER_SLICE_VALUE

    @classmethod
    def from_counts(cls, counts: Iterable[tuple[str, str, int]], max_values: int,
                    keys: Sequence[str] = ()) -> SliceCap:
        """From (key, value, answers) rows grouped by key (rows of one key consecutive; a value may
        come more than once); only `keys` when given; `max_values` 0 = no cap."""
        import heapq
        import itertools

        if max_values <= 0:
            return cls(0)
        wanted = set(keys)
        kept: dict[str, frozenset[str]] = {}
        cut: dict[str, dict[str, int]] = {}
        for key, rows in itertools.groupby(counts, key=lambda r: r[0]):
            if wanted and key not in wanted:
                continue
            best: list[tuple[int, _Reversed]] = []  # a min-heap of the best (answers, smaller value) so far
            distinct = answers = 0
            for _, value, n in rows:
                distinct += 1
                answers += n
                item = (n, _Reversed(value))
                if len(best) < max_values:
                    heapq.heappush(best, item)
                elif item > best[0]:
                    heapq.heapreplace(best, item)
            if distinct > max_values:
                kept[key] = frozenset(v.value for _, v in best)
                cut[key] = {"values": distinct, "kept": max_values, "other_values": distinct - max_values,
                            "other_answers": answers - sum(n for n, _ in best)}
        return cls(max_values, kept, cut)

    @classmethod
    def from_turns(cls, turns: Iterable[Any], config: Config) -> SliceCap:
        """`from_counts` over turns in memory (the CLI's `score`)."""
        counts: Counter[tuple[str, str]] = Counter()
        for turn in turns:
            counts.update(turn.attributes.items())
        rows = sorted((key, value, n) for (key, value), n in counts.items())
        return cls.from_counts(rows, config.slice_max_values, config.slice_attributes)

    def state(self) -> dict[str, Any]:
        """The cap as plain JSON (the job stages the day's cap once; every shard folds with it)."""
        return {"max_values": self.max_values, "kept": {k: sorted(v) for k, v in self.kept.items()},
                "cut": {k: dict(v) for k, v in self.cut.items()}}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> SliceCap:
        """The cap of a `state()`."""
        return cls(int(state["max_values"]), {k: frozenset(v) for k, v in state["kept"].items()},
                   {k: dict(v) for k, v in state["cut"].items()})

    def log_cuts(self) -> None:
        """One log line per cut key."""
        import logging

        log = logging.getLogger("citecheck.slices")
        for key, c in self.cut.items():
            log.warning("slices: attribute %r has %d values; the %d most frequent by answers keep their slices, "
                        "%d values (%d answers) are pooled under %r ([slices] max_values_per_key)",
                        key, c["values"], c["kept"], c["other_values"], c["other_answers"], OTHER_SLICE_VALUE)


@dataclass(frozen=True)
class _Reversed:
    """A value ordered backwards: in the min-heap of `SliceCap.from_counts`, a tie on answers keeps
    the smaller value."""

    value: str

    def __lt__(self, other: _Reversed) -> bool:
        return self.value > other.value

    def __gt__(self, other: _Reversed) -> bool:
        return self.value < other.value
