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
from array import array
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
        positions = self.positions
        for key in counts:
            if key not in positions:
                positions[key] = len(self.keys)
                self.keys.append(key)
        values = [0] * len(self.keys)
        for key, n in counts.items():
            values[positions[key]] = n
        vector = np.array(values)
        if vector.dtype.kind not in "biu":
            raise TypeError(f"metric counts are whole numbers; got {vector.dtype} values in {dict(counts)}")
        return vector.astype(np.int64, copy=False)


@dataclass(frozen=True, slots=True)
class _AnswerTotals:
    """What one answer (or a sentence slice of it) adds to every slice it falls in, computed once
    per answer, not once per slice: its counts as a vector (`CountIndex`) and the keys it has (a
    slice's counts hold a key, zero or not, once an answer of it had that key), its macro votes as
    a vector over `MACRO_NAMES` (the value, and 1 where the answer has one), and its rows for the
    intervals (None: it adds none)."""

    keys: tuple[str, ...]
    key_set: frozenset[str]
    counts: np.ndarray
    macro_values: np.ndarray
    macro_votes: np.ndarray
    interval_row: array | None  # a judged answer's `_interval_row`
    structural_row: array | None  # its `STRUCTURAL_INTERVAL_KEYS` counts, when not all zero


def answer_totals(counts: Counter[str], index: CountIndex, *, intervals: bool = True) -> _AnswerTotals:
    """An answer's counts ready to be pooled into slices (`intervals`: with its interval rows)."""
    vector = index.vector(counts)
    macro, votes = macro_vector(vector[_NUMERATOR_AT], vector[_DENOMINATOR_AT])
    interval_row = structural_row = None
    if intervals:
        if counts.get("selected_answers"):  # one cluster per judged answer
            interval_row = _interval_row(vector, macro)
        structural = vector[_STRUCTURAL_AT]
        if structural.any():
            structural_row = _doubles(structural)
    return _AnswerTotals(tuple(counts), frozenset(counts), vector, macro, votes, interval_row, structural_row)


def _doubles(vector: np.ndarray) -> array:
    """A vector as an array of doubles (what `ClusterTotals.add` copies without conversion)."""
    out = array("d")
    out.frombytes(vector.astype(np.float64).tobytes())
    return out


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

    def add(self, answer: _AnswerTotals) -> None:
        """Pool an answer's totals (`answer_totals`, with this slice's `index`)."""
        if len(self.totals) < len(answer.counts):  # keys first seen since the slice's last answer
            self.totals = np.concatenate([self.totals, np.zeros(len(answer.counts) - len(self.totals), np.int64)])
        self.totals[:len(answer.counts)] += answer.counts
        if not answer.key_set <= self.key_set:
            new = [key for key in answer.keys if key not in self.key_set]
            self.keys.extend(new)
            self.key_set.update(new)
        self._counts = None
        self.macro_sums += answer.macro_values
        self.macro_counts += answer.macro_votes
        if self.spread is not None and answer.interval_row is not None:
            self.spread.add(answer.interval_row)
        if self.every is not None and answer.structural_row is not None:
            self.every.add(answer.structural_row)

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


def _interval_row(vector: np.ndarray, macro: np.ndarray) -> array:
    """One judged answer's row for the intervals: its `JUDGED_COUNT_KEYS` counts (of its
    `CountIndex` vector), then its `JUDGED_MACRO_NAMES` values (of its `macro_vector`; a macro
    value the answer lacks is 0: its square adds nothing, and the slice counts only the answers
    that have one)."""
    # an array of doubles: built once per answer, copied into every slice's buffer without conversion
    return _doubles(np.concatenate([vector[_JUDGED_COUNT_AT], macro[_JUDGED_MACRO_AT]]))


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

    def _acc(self, name: str, value: str) -> _SliceAccumulator:
        key = (name, value)
        acc = self._slices.get(key)
        if acc is None:
            spread = ClusterTotals(JUDGED_COUNT_KEYS, INTERVAL_MEAN_KEYS) if self.intervals else None
            every = ClusterTotals(STRUCTURAL_INTERVAL_KEYS) if self.intervals and STRUCTURAL_INTERVAL_KEYS else None
            acc = self._slices[key] = _SliceAccumulator(self._index, spread=spread, every=every)
        return acc

    def add(self, scored: ScoredTurn) -> Counter[str]:
        counts = turn_counts(scored)
        answer = answer_totals(counts, self._index, intervals=self.intervals)
        self._acc("all", "all").add(answer)
        attrs = scored.structured.turn.attributes
        keys = self.config.slice_attributes or tuple(attrs)
        cap = self.cap
        for key in keys:
            if key in attrs:
                value = attrs[key] if cap is None else cap.value(key, attrs[key])
                self._acc(f"attribute:{key}", value).add(answer)
        self._acc(LANGUAGE_SLICE, scored.structured.language).add(answer)
        verdicts = scored.verdicts
        self._acc("answer_length", length_bucket(len(verdicts), self.config.length_buckets)).add(answer)
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
                    self._acc(name, value).add(answer)
                else:
                    self._acc(name, value).add(answer_totals(sentence_counts(scored, subset, whole=False),
                                                             self._index, intervals=self.intervals))
        return counts

    def state(self) -> dict[str, Any]:
        """Every slice's totals as plain lists (JSON): a shard's partial state of the day, which
        `merge` adds into the day's accumulator. Counts add exactly; the macro sums (and the
        intervals' sums of squared macro values) are float sums, equal to a single pass to about
        1e-15 relative, whatever the partition."""
        return {"intervals": self.intervals,
                "slices": [[name, value, acc.state()] for (name, value), acc in self._slices.items()]}

    def merge(self, state: Mapping[str, Any]) -> None:
        """Add another accumulator's `state` (a shard's answers) into this one."""
        if bool(state["intervals"]) != self.intervals:
            raise ValueError("cannot merge an accumulator's state with intervals into one without, or back")
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
        acc = self._slices.get((slice_name, slice_value))
        return Counter(acc.counts) if acc else Counter()

    def summary(self) -> dict[str, dict[str, Any]]:
        """Overall values per averaging, plus `intervals`: averaging → judged metric →
        {"ci_low", "ci_high"} (both null where the value is null)."""
        acc = self._slices.get(("all", "all")) or _SliceAccumulator()
        spans = {"micro": acc.micro_intervals(), "macro": acc.macro_intervals()}
        micro = acc.micro()
        return {"micro": values(micro), "macro": values(acc.macro()),
                "intervals": {avg: {m: interval_json(by.get(m)) for m in METRIC_NAMES
                                    if (m in JUDGED_METRICS or m in STRUCTURAL_INTERVAL_METRICS) and m in micro}
                              for avg, by in spans.items()}}

    def rows(self) -> list[dict[str, Any]]:
        """Long rows: one per (slice, metric, averaging), as the daily metrics table stores them."""
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
