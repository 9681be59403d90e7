"""Streaming a day's scored turns into per-slice totals: micro (pooled sentences, so long answers
weigh more) and macro (the mean of per-answer values over answers with a non-zero denominator,
each answer one vote), with 95% intervals on the judged metrics, answers as clusters
(`citecheck.stats.intervals`). Memory grows with the number of slices, not with turns.

Slices (SPEC §5): overall (`all`), each `attributes` key, the answer's `language` (SPEC §2.2),
answer length buckets, and sentences with / without numbers and with / without two or more
citations.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from citecheck.core.config import Config
from citecheck.core.metrics.counts import ScoredTurn, sentence_counts, turn_counts
from citecheck.core.metrics.definitions import (
    CLAIM_METRICS,
    JUDGED_METRICS,
    METRIC_NAMES,
    METRICS,
    MULTI_CITATION_SLICE_MIN,
    STRUCTURAL_INTERVAL_METRICS,
    TURN_LEVEL_METRICS,
)
from citecheck.core.metrics.ratios import (
    HARMONIC_MEANS,
    MACRO_DENOMINATORS,
    MACRO_NAMES,
    MACRO_NUMERATORS,
    macro_vector,
    ratios,
    values,
)
from citecheck.core.metrics.slice_cap import SliceCap
from citecheck.core.verdicts import SentenceVerdict
from citecheck.stats.intervals import (
    ClusterTotals,
    Interval,
    harmonic_mean_gradient,
    mean_variance,
    proportion_intervals,
)
from citecheck.stats.ratio import Ratio

# What the intervals sum per judged answer, with cross products (`ClusterTotals`): the counts
# behind the judged metrics (micro), then the answer's own judged metric values (macro).
JUDGED_COUNT_KEYS = tuple(dict.fromkeys(key for m, (num, den, _) in METRICS.items() if m in JUDGED_METRICS
                                        for key in (num, den)))
JUDGED_MACRO_NAMES = tuple(m for m in METRIC_NAMES if m in JUDGED_METRICS)
INTERVAL_MEAN_KEYS = tuple(f"macro:{m}" for m in JUDGED_MACRO_NAMES)
# What the intervals of the structural metrics that carry one sum per answer (every answer whose
# counts for them are not all zero is a cluster): their numerators and denominators.
STRUCTURAL_INTERVAL_KEYS = tuple(dict.fromkeys(key for m in STRUCTURAL_INTERVAL_METRICS for key in METRICS[m][:2]))
_MACRO_INDEX = {name: i for i, name in enumerate(MACRO_NAMES)}
# the count keys every accumulator places first (`CountIndex`), so an answer's vector is read at
# fixed positions for its macro votes and interval rows
METRIC_COUNT_KEYS = tuple(dict.fromkeys(key for num, den, _ in METRICS.values() for key in (num, den)))
_NUMERATOR_AT = np.array([METRIC_COUNT_KEYS.index(key) for key in MACRO_NUMERATORS], dtype=np.intp)
_DENOMINATOR_AT = np.array([METRIC_COUNT_KEYS.index(key) for key in MACRO_DENOMINATORS], dtype=np.intp)
_JUDGED_COUNT_AT = np.array([METRIC_COUNT_KEYS.index(key) for key in JUDGED_COUNT_KEYS], dtype=np.intp)
_JUDGED_MACRO_AT = np.array([_MACRO_INDEX[name] for name in JUDGED_MACRO_NAMES], dtype=np.intp)
_STRUCTURAL_AT = np.array([METRIC_COUNT_KEYS.index(key) for key in STRUCTURAL_INTERVAL_KEYS], dtype=np.intp)
_NUMBER = re.compile(r"\d")
LANGUAGE_SLICE = "language"  # a built-in slice: the turn's language (SPEC §2.2), `und` when undetermined
# The built-in sentence slices (SPEC §5): each one's test of a sentence; a slice's values are "yes"
# and "no". Criteria scopes (`where = { has_number = "yes" }`) read the same tests.
SENTENCE_SLICES: dict[str, Callable[[SentenceVerdict], bool]] = {
    "has_number": lambda v: bool(_NUMBER.search(v.sentence.text)),
    "multi_citation": lambda v: len(v.sentence.labels) >= MULTI_CITATION_SLICE_MIN,
}


class CountIndex:
    """A position for every count key: `METRIC_COUNT_KEYS` first, then each other key as it is
    first seen; shared by one accumulator's slices: an answer's counts become one vector, added to
    each slice in one step."""

    def __init__(self) -> None:
        self.positions: dict[str, int] = {key: i for i, key in enumerate(METRIC_COUNT_KEYS)}
        self.keys: list[str] = list(METRIC_COUNT_KEYS)

    def vector(self, counts: Mapping[str, int]) -> np.ndarray:
        """`counts` as a vector over the keys seen so far (its new keys placed at the end)."""
        vector = np.array(self.row(counts))
        if vector.dtype.kind not in "biu":
            raise TypeError(f"metric counts are whole numbers; got {vector.dtype} values in {dict(counts)}")
        return vector.astype(np.int64, copy=False)

    def row(self, counts: Mapping[str, int]) -> list[int]:
        """`counts` as a list over the keys seen so far (its new keys placed at the end): one
        answer of a block that `MetricAccumulator` pools at once."""
        positions = self.positions
        for key in counts:
            if key not in positions:
                positions[key] = len(self.keys)
                self.keys.append(key)
        values = [0] * len(self.keys)
        for key, n in counts.items():
            values[positions[key]] = n
        return values


PENDING_ROWS = 1024  # answers (and sentence-slice parts of them) held, then pooled into their slices at once


@dataclass
class _Block:
    """Answers not yet pooled: each one's counts (`CountIndex.row`) and key tuple (an id into the
    accumulator's distinct tuples: a slice's counts hold a key, zero or not, once an answer of it
    had that key), and per slice the positions of the answers it takes, in the order they came."""

    rows: list[list[int]] = field(default_factory=list)
    key_ids: list[int] = field(default_factory=list)
    members: dict[tuple[str, str], list[int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Pooled:
    """Some answers of a block, ready to be added to a slice: their counts (a matrix over the
    index's keys), their distinct key tuples in first-come order, their macro values and votes
    (over `MACRO_NAMES`), and their rows for the intervals (None: intervals off)."""

    counts: np.ndarray
    keys: list[tuple[str, ...]]
    macro_values: np.ndarray
    macro_votes: np.ndarray
    interval_rows: np.ndarray | None  # the judged answers' `JUDGED_COUNT_KEYS` counts, then `JUDGED_MACRO_NAMES` values
    structural_rows: np.ndarray | None  # `STRUCTURAL_INTERVAL_KEYS` counts of the answers where they are not all zero


@dataclass
class _SliceAccumulator:
    index: CountIndex = field(default_factory=CountIndex)
    # the pooled counts as a vector over `index`'s keys, and the keys the slice's answers had, in
    # the order they first came (`counts` reads them as a Counter)
    totals: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    keys: list[str] = field(default_factory=list)
    key_set: set[str] = field(default_factory=set)
    # per `MACRO_NAMES`: the sum of the answers' macro values (added in answer order, as a running
    # sum of floats would be) and how many answers have one
    macro_sums: np.ndarray = field(default_factory=lambda: np.zeros(len(MACRO_NAMES)))
    macro_counts: np.ndarray = field(default_factory=lambda: np.zeros(len(MACRO_NAMES), dtype=np.int64))
    spread: ClusterTotals | None = None  # sums over judged answers: the intervals
    every: ClusterTotals | None = None  # sums over every answer: the structural metrics' intervals
    _counts: Counter[str] | None = None  # `counts`, until the next add

    def add(self, pooled: _Pooled) -> None:
        """Pool answers' totals (`_Pooled`, over this slice's `index`)."""
        width = pooled.counts.shape[1]
        if len(self.totals) < width:  # keys first seen since the slice's last answers
            self.totals = np.concatenate([self.totals, np.zeros(width - len(self.totals), np.int64)])
        self.totals[:width] += pooled.counts.sum(axis=0)
        for keys in pooled.keys:
            if not self.key_set.issuperset(keys):
                new = [key for key in keys if key not in self.key_set]
                self.keys.extend(new)
                self.key_set.update(new)
        self._counts = None
        # added to the running sum one answer after the other (numpy reduces over rows in order)
        self.macro_sums = np.concatenate([self.macro_sums[None, :], pooled.macro_values]).sum(axis=0)
        self.macro_counts += pooled.macro_votes.sum(axis=0)
        if self.spread is not None and pooled.interval_rows is not None and len(pooled.interval_rows):
            self.spread.add_rows(pooled.interval_rows)
        if self.every is not None and pooled.structural_rows is not None and len(pooled.structural_rows):
            self.every.add_rows(pooled.structural_rows)

    def state(self) -> dict[str, Any]:
        """The slice's totals as plain lists (JSON), for `merge` into another accumulator's slice."""
        counts = self.counts
        return {"keys": list(self.keys), "counts": [counts[key] for key in self.keys],
                "macro_sums": self.macro_sums.tolist(), "macro_counts": self.macro_counts.tolist(),
                "spread": None if self.spread is None else self.spread.state(),
                "every": None if self.every is None else self.every.state()}

    def merge(self, state: Mapping[str, Any]) -> None:
        """Add another slice's totals (its `state`): as if its answers had been added here."""
        counts = dict(zip(state["keys"], state["counts"], strict=True))
        vector = self.index.vector(counts)
        if len(self.totals) < len(vector):
            self.totals = np.concatenate([self.totals, np.zeros(len(vector) - len(self.totals), np.int64)])
        self.totals[:len(vector)] += vector
        self.keys.extend(key for key in state["keys"] if key not in self.key_set)
        self.key_set.update(state["keys"])
        self._counts = None
        self.macro_sums += np.asarray(state["macro_sums"], dtype=np.float64)
        self.macro_counts += np.asarray(state["macro_counts"], dtype=np.int64)
        for mine, theirs in ((self.spread, state["spread"]), (self.every, state["every"])):
            if (mine is None) != (theirs is None):
                raise ValueError("cannot merge a slice's totals with intervals into one without, or back")
            if mine is not None:
                mine.merge(theirs)

    @property
    def counts(self) -> Counter[str]:
        """The pooled counts of the slice's answers: every key one of them had, zero or not."""
        if self._counts is None:
            positions, totals = self.index.positions, self.totals
            self._counts = Counter({key: int(totals[positions[key]]) for key in self.keys})
        return self._counts

    def macro_total(self, name: str) -> tuple[float, int]:
        """The sum of the answers' `name` values and how many answers have one (0 and 0: none)."""
        i = _MACRO_INDEX.get(name)
        n = 0 if i is None else int(self.macro_counts[i])
        return (float(self.macro_sums[i]) if n else 0), n

    def micro(self) -> dict[str, Ratio]:
        return ratios(self.counts)

    def macro(self) -> dict[str, Ratio]:
        claims_on = "check_worthy_claims" in self.counts
        return {name: Ratio(*self.macro_total(name)) for name in METRIC_NAMES
                if claims_on or name not in CLAIM_METRICS}

    def micro_intervals(self) -> dict[str, Interval | None]:
        """95% intervals of the judged micro rates, answers as clusters (see citecheck.stats.intervals)."""
        spread = self.spread
        if spread is None:
            return {}
        micro = self.micro()
        names, args = [], []
        for name, (num, den, _) in METRICS.items():
            if name in JUDGED_METRICS and name in micro:
                names.append(name)
                args.append((micro[name].value, spread.ratio_variance(num, den), spread.clusters_with(den),
                             spread.total(den)))
        for name, (a, b) in HARMONIC_MEANS:  # F1 of two ratios: its gradient over their totals
            recall, precision = micro[a].value, micro[b].value
            if recall is None or precision is None:
                continue
            (rn, rd, _), (pn, pd, _) = METRICS[a], METRICS[b]
            d_recall, d_precision = harmonic_mean_gradient(recall, precision)
            rx, px = spread.total(rd), spread.total(pd)
            variance = spread.linearized_variance({rn: d_recall / rx, rd: -d_recall * recall / rx,
                                                   pn: d_precision / px, pd: -d_precision * precision / px})
            names.append(name)
            args.append((micro[name].value, variance,
                         min(spread.clusters_with(rd), spread.clusters_with(pd)), min(rx, px)))
        every = self.every
        for name in STRUCTURAL_INTERVAL_METRICS if every is not None else ():
            if name in micro:
                num, den, _ = METRICS[name]
                names.append(name)
                args.append((micro[name].value, every.ratio_variance(num, den), every.clusters_with(den),
                             every.total(den)))
        return dict(zip(names, proportion_intervals(*zip(*args, strict=True)), strict=True))

    def macro_intervals(self) -> dict[str, Interval | None]:
        """95% intervals of the judged macro rates: the mean of one value per answer."""
        spread = self.spread
        if spread is None:
            return {}
        args = []
        claims_on = "check_worthy_claims" in self.counts
        names = [name for name in JUDGED_MACRO_NAMES if claims_on or name not in CLAIM_METRICS]
        for name in names:
            total, n = self.macro_total(name)
            variance = mean_variance(n, total, spread.sum_of_squares(f"macro:{name}"))
            args.append((total / n if n else None, variance, n, n))
        return dict(zip(names, proportion_intervals(*zip(*args, strict=True)), strict=True))


def interval_json(ci: Interval | None) -> dict[str, float | None]:
    """`ci_low` and `ci_high` of an interval, both None for none (a null value, or not judged)."""
    return {"ci_low": None if ci is None else ci.low, "ci_high": None if ci is None else ci.high}


def length_bucket(n_sentences: int, buckets: Sequence[int]) -> str:
    low = 1
    for top in buckets:
        if n_sentences <= top:
            return f"{low}-{top}" if n_sentences else "0"
        low = top + 1
    return f"{low}+"


class MetricAccumulator:
    """Streams scored turns into per-slice counts; memory grows with slices, not with turns."""

    def __init__(self, config: Config, *, intervals: bool = True, cap: SliceCap | None = None) -> None:
        """`intervals=False` leaves `ci_low`/`ci_high` null (the bench's baseline); `cap`: the
        day's bounded attribute slices (`SliceCap`; none: every value is a slice)."""
        self.config = config
        self.intervals = intervals
        self.cap = cap
        self._slices: dict[tuple[str, str], _SliceAccumulator] = {}
        self._index = CountIndex()  # the count keys' positions, shared by the slices
        self._block = _Block()  # answers not yet pooled (`_pool`): every read pools them first
        self._key_ids: dict[tuple[str, ...], int] = {}  # each distinct key tuple an answer had

    def _acc(self, name: str, value: str) -> _SliceAccumulator:
        key = (name, value)
        acc = self._slices.get(key)
        if acc is None:
            spread = ClusterTotals(JUDGED_COUNT_KEYS, INTERVAL_MEAN_KEYS) if self.intervals else None
            every = ClusterTotals(STRUCTURAL_INTERVAL_KEYS) if self.intervals and STRUCTURAL_INTERVAL_KEYS else None
            acc = self._slices[key] = _SliceAccumulator(self._index, spread=spread, every=every)
        return acc

    def add(self, scored: ScoredTurn) -> Counter[str]:
        """Count an answer (returned) and hold it for its slices: pooled a block at a time."""
        counts = turn_counts(scored)
        answer = self._hold(counts)
        self._join("all", "all", answer)
        attrs = scored.structured.turn.attributes
        keys = self.config.slice_attributes or tuple(attrs)
        cap = self.cap
        for key in keys:
            if key in attrs:
                value = attrs[key] if cap is None else cap.value(key, attrs[key])
                self._join(f"attribute:{key}", value, answer)
        self._join(LANGUAGE_SLICE, scored.structured.language, answer)
        verdicts = scored.verdicts
        self._join("answer_length", length_bucket(len(verdicts), self.config.length_buckets), answer)
        turn = scored.structured.turn
        # a sentence slice holding every sentence has the answer's own counts (no answer-level extras)
        plain = not turn.pointer_problems and turn.answer_format == "markers"
        for name, test in self._sentence_slices():
            flags = [test(v) for v in verdicts]
            for value, wanted in (("yes", True), ("no", False)):
                subset = [v for v, flag in zip(verdicts, flags, strict=True) if flag == wanted]
                if not subset:
                    continue
                if plain and len(subset) == len(verdicts):
                    self._join(name, value, answer)
                else:
                    self._join(name, value, self._hold(sentence_counts(scored, subset, whole=False)))
        if len(self._block.rows) >= PENDING_ROWS:
            self._pool()
        return counts

    def _hold(self, counts: Counter[str]) -> int:
        """Add an answer's (or a sentence slice's) counts to the block; its position there."""
        block = self._block
        block.rows.append(self._index.row(counts))
        block.key_ids.append(self._key_ids.setdefault(tuple(counts), len(self._key_ids)))
        return len(block.rows) - 1

    def _join(self, name: str, value: str, position: int) -> None:
        """The held answer at `position` goes to slice (name, value)."""
        members = self._block.members.get((name, value))
        if members is None:
            members = self._block.members[(name, value)] = []
        members.append(position)

    def _pool(self) -> None:
        """Add the held answers to their slices: one matrix of counts, the macro votes and the
        interval rows computed for all of them at once, each slice's share summed in one step."""
        block = self._block
        if not block.rows:
            return
        self._block = _Block()
        width = len(self._index.keys)
        counts = np.array([row + [0] * (width - len(row)) for row in block.rows])
        if counts.dtype.kind not in "biu":
            bad = next(row for row in block.rows if any(not isinstance(n, int | np.integer) for n in row))
            raise TypeError(f"metric counts are whole numbers; got {dict(zip(self._index.keys, bad, strict=False))}")
        counts = counts.astype(np.int64, copy=False)
        macro, votes = macro_vector(counts[:, _NUMERATOR_AT], counts[:, _DENOMINATOR_AT])
        interval_rows = structural = judged = has_structural = None
        if self.intervals:  # one cluster per judged answer; the structural sums over answers with any
            judged = counts[:, self._index.positions["selected_answers"]] > 0
            interval_rows = np.concatenate([counts[:, _JUDGED_COUNT_AT], macro[:, _JUDGED_MACRO_AT]], axis=1)
            structural = counts[:, _STRUCTURAL_AT].astype(np.float64)
            has_structural = structural.any(axis=1)
        tuples = list(self._key_ids)
        key_ids = np.array(block.key_ids)
        for (name, value), members in block.members.items():
            at = np.array(members)
            ids = dict.fromkeys(key_ids[at].tolist())
            judged_rows = structural_rows = None
            if interval_rows is not None:
                judged_rows = interval_rows[at[judged[at]]]
                structural_rows = structural[at[has_structural[at]]]
            self._acc(name, value).add(_Pooled(counts[at], [tuples[i] for i in ids], macro[at], votes[at],
                                               judged_rows, structural_rows))

    def state(self) -> dict[str, Any]:
        """Every slice's totals as plain lists (JSON): a shard's partial state of the day, which
        `merge` adds into the day's accumulator. Counts add exactly; the macro sums (and the
        intervals' sums of squared macro values) are float sums, equal to a single pass to about
        1e-15 relative, whatever the partition."""
        self._pool()
        return {"intervals": self.intervals,
                "slices": [[name, value, acc.state()] for (name, value), acc in self._slices.items()]}

    def merge(self, state: Mapping[str, Any]) -> None:
        """Add another accumulator's `state` (a shard's answers) into this one."""
        if bool(state["intervals"]) != self.intervals:
            raise ValueError("cannot merge an accumulator's state with intervals into one without, or back")
        self._pool()
        for name, value, slice_state in state["slices"]:
            self._acc(name, value).merge(slice_state)

    def _sentence_slices(self) -> list[tuple[str, Callable[[SentenceVerdict], bool]]]:
        slices: list[tuple[str, Callable[[SentenceVerdict], bool]]] = []
        if self.config.slice_numbers:
            slices.append(("has_number", SENTENCE_SLICES["has_number"]))
        if self.config.slice_multi_citation:
            slices.append(("multi_citation", SENTENCE_SLICES["multi_citation"]))
        return slices

    def counts(self, slice_name: str = "all", slice_value: str = "all") -> Counter[str]:
        self._pool()
        acc = self._slices.get((slice_name, slice_value))
        return Counter(acc.counts) if acc else Counter()

    def summary(self) -> dict[str, dict[str, Any]]:
        """Overall values per averaging, plus `intervals`: averaging → judged metric →
        {"ci_low", "ci_high"} (both null where the value is null)."""
        self._pool()
        acc = self._slices.get(("all", "all")) or _SliceAccumulator()
        spans = {"micro": acc.micro_intervals(), "macro": acc.macro_intervals()}
        micro = acc.micro()
        return {"micro": values(micro), "macro": values(acc.macro()),
                "intervals": {avg: {m: interval_json(by.get(m)) for m in METRIC_NAMES
                                    if (m in JUDGED_METRICS or m in STRUCTURAL_INTERVAL_METRICS) and m in micro}
                              for avg, by in spans.items()}}

    def rows(self) -> list[dict[str, Any]]:
        """Long rows: one per (slice, metric, averaging), as the daily metrics table stores them."""
        self._pool()
        out: list[dict[str, Any]] = []
        for (slice_name, slice_value), acc in sorted(self._slices.items()):
            sentence_slice = slice_name in SENTENCE_SLICES
            for averaging, metric_map, spans in (("micro", acc.micro(), acc.micro_intervals()),
                                                 ("macro", acc.macro(), acc.macro_intervals())):
                for metric, r in metric_map.items():
                    if sentence_slice and metric in TURN_LEVEL_METRICS:
                        continue
                    judged = metric in JUDGED_METRICS
                    ci = spans.get(metric)
                    out.append({
                        "slice_name": slice_name,
                        "slice_value": slice_value,
                        "metric": metric,
                        "averaging": averaging,
                        "numerator": r.numerator,
                        "denominator": r.denominator,
                        "value": r.value,
                        "answers": acc.counts["selected_answers" if judged else "answers"],
                        "sentences": acc.counts["judged_sentences" if judged else "check_worthy_sentences"],
                        **interval_json(ci),
                    })
        return out
