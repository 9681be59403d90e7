"""Streaming a day's scored turns into per-slice totals: micro (pooled sentences, so long answers
weigh more) and macro (the mean of per-answer values over answers with a non-zero denominator,
each answer one vote), with 95% intervals on the judged metrics, answers as clusters
(`citecheck.stats.intervals`). Memory grows with the number of slices, not with turns.

Slices (SPEC §5): overall (`all`), each `attributes` key, the answer's `language` (SPEC §2.2),
answer length buckets, and sentences with / without numbers and with / without two or more
citations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from citecheck.core.config import Config
from citecheck.core.metrics.counts import SENTENCE_SLICES, WIDTH, AnswerCounts, ScoredTurn, as_counter
from citecheck.core.metrics.definitions import (
    CLAIM_METRICS,
    COUNT_COLUMN,
    JUDGED_METRICS,
    METRIC_NAMES,
    METRICS,
    STRUCTURAL_INTERVAL_METRICS,
    TURN_LEVEL_METRICS,
)
from citecheck.core.metrics.ratios import HARMONIC_MEANS, MACRO_NAMES, answer_votes, ratios, values
from citecheck.core.metrics.slice_cap import SliceCap
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
_JUDGED_COUNT_AT = np.array([COUNT_COLUMN[key] for key in JUDGED_COUNT_KEYS], dtype=np.intp)
_JUDGED_MACRO_AT = np.array([_MACRO_INDEX[name] for name in JUDGED_MACRO_NAMES], dtype=np.intp)
_STRUCTURAL_AT = np.array([COUNT_COLUMN[key] for key in STRUCTURAL_INTERVAL_KEYS], dtype=np.intp)
_SELECTED_ANSWERS = COUNT_COLUMN["selected_answers"]
LANGUAGE_SLICE = "language"  # a built-in slice: the turn's language (SPEC §2.2), `und` when undetermined


@dataclass(frozen=True, slots=True)
class _Pooled:
    """Some answers of a block, ready to be added to a slice: their counts (rows over
    `COUNT_KEYS`), whether one was scored in a claims mode, their macro values and votes (over
    `MACRO_NAMES`), and their rows for the intervals (None: intervals off)."""

    counts: np.ndarray
    claims: bool
    macro_values: np.ndarray
    macro_votes: np.ndarray
    interval_rows: np.ndarray | None  # the judged answers' `JUDGED_COUNT_KEYS` counts, then `JUDGED_MACRO_NAMES` values
    structural_rows: np.ndarray | None  # `STRUCTURAL_INTERVAL_KEYS` counts of the answers where they are not all zero


@dataclass
class _SliceAccumulator:
    # the pooled counts as a row over `COUNT_KEYS`, and whether an answer of the slice was scored
    # in a claims mode (its counts then have the claim counts, zero or not)
    totals: np.ndarray = field(default_factory=lambda: np.zeros(WIDTH, dtype=np.int64))
    claims: bool = False
    # per `MACRO_NAMES`: the sum of the answers' macro values (added in answer order, as a running
    # sum of floats would be) and how many answers have one
    macro_sums: np.ndarray = field(default_factory=lambda: np.zeros(len(MACRO_NAMES)))
    macro_counts: np.ndarray = field(default_factory=lambda: np.zeros(len(MACRO_NAMES), dtype=np.int64))
    spread: ClusterTotals | None = None  # sums over judged answers: the intervals
    every: ClusterTotals | None = None  # sums over every answer: the structural metrics' intervals
    _counts: Counter[str] | None = None  # `counts`, until the next add

    def add(self, pooled: _Pooled) -> None:
        """Pool answers' totals (`_Pooled`)."""
        self.totals += pooled.counts.sum(axis=0)
        self.claims = self.claims or pooled.claims
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
        return {"keys": list(counts), "counts": list(counts.values()),
                "macro_sums": self.macro_sums.tolist(), "macro_counts": self.macro_counts.tolist(),
                "spread": None if self.spread is None else self.spread.state(),
                "every": None if self.every is None else self.every.state()}

    def merge(self, state: Mapping[str, Any]) -> None:
        """Add another slice's totals (its `state`): as if its answers had been added here."""
        for key, n in zip(state["keys"], state["counts"], strict=True):
            if key not in COUNT_COLUMN:
                raise ValueError(f"cannot merge a slice's count {key!r}: not in COUNT_KEYS")
            self.totals[COUNT_COLUMN[key]] += n
        self.claims = self.claims or "check_worthy_claims" in state["keys"]
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
        """The pooled counts of the slice's answers: every count key (the claim counts only when an
        answer of the slice was scored in a claims mode)."""
        if self._counts is None:
            self._counts = as_counter(self.totals, self.claims)
        return self._counts

    def macro_total(self, name: str) -> tuple[float, int]:
        """The sum of the answers' `name` values and how many answers have one (0 and 0: none)."""
        i = _MACRO_INDEX.get(name)
        n = 0 if i is None else int(self.macro_counts[i])
        return (float(self.macro_sums[i]) if n else 0), n

    def micro(self) -> dict[str, Ratio]:
        return ratios(self.counts)

    def macro(self) -> dict[str, Ratio]:
        claims_on = self.claims
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
        claims_on = self.claims
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
    """Pools counted answers into per-slice totals; memory grows with slices, not with turns."""

    def __init__(self, config: Config, *, intervals: bool = True, cap: SliceCap | None = None) -> None:
        """`intervals=False` leaves `ci_low`/`ci_high` null (the bench's baseline); `cap`: the
        day's bounded attribute slices (`SliceCap`; none: every value is a slice)."""
        self.config = config
        self.intervals = intervals
        self.cap = cap
        self._slices: dict[tuple[str, str], _SliceAccumulator] = {}
        self._sentence_slices = [name for name, on in (("has_number", config.slice_numbers),
                                                       ("multi_citation", config.slice_multi_citation)) if on]

    def _acc(self, name: str, value: str) -> _SliceAccumulator:
        key = (name, value)
        acc = self._slices.get(key)
        if acc is None:
            spread = ClusterTotals(JUDGED_COUNT_KEYS, INTERVAL_MEAN_KEYS) if self.intervals else None
            every = ClusterTotals(STRUCTURAL_INTERVAL_KEYS) if self.intervals and STRUCTURAL_INTERVAL_KEYS else None
            acc = self._slices[key] = _SliceAccumulator(spread=spread, every=every)
        return acc

    def add(self, scored: ScoredTurn) -> None:
        """Pool one answer (a day pools a block at a time: `core.fold.AnswerFold`)."""
        self.add_counted(AnswerCounts.of([scored]))

    def add_counted(self, counted: AnswerCounts) -> None:
        """Pool a block of counted answers into their slices: each slice's share of the block's
        rows (answers, and their sentence slices' parts) summed in one step, the macro votes and
        the interval rows computed for the whole block at once."""
        scored = counted.scored
        members: dict[tuple[str, str], list[int]] = {("all", "all"): list(range(len(scored)))}
        keys, cap, buckets = self.config.slice_attributes, self.cap, self.config.length_buckets
        plain = np.zeros(len(scored), dtype=bool)
        for i, answer in enumerate(scored):
            st = answer.structured
            attrs = st.turn.attributes
            for key in keys or tuple(attrs):
                if key in attrs:
                    value = attrs[key] if cap is None else cap.value(key, attrs[key])
                    members.setdefault((f"attribute:{key}", value), []).append(i)
            members.setdefault((LANGUAGE_SLICE, st.language), []).append(i)
            members.setdefault(("answer_length", length_bucket(len(answer.verdicts), buckets)), []).append(i)
            plain[i] = not st.turn.pointer_problems and st.turn.answer_format == "markers"
        rows, claims = [counted.whole], [counted.claims]  # the answers, then their sentence slices' parts
        held = len(scored)
        for name in self._sentence_slices:
            for value, (part, kept) in zip(("yes", "no"), counted.split_sentences(counted.slice_tests[name]),
                                           strict=True):
                # an answer of a plain turn with every sentence in the slice gives its own counts
                part = np.where((plain & (kept == counted.sentence_totals))[:, None], counted.whole, part)
                taken = np.flatnonzero(kept)
                if len(taken):
                    rows.append(part[taken])
                    claims.append(counted.claims[taken])
                    members[(name, value)] = list(range(held, held + len(taken)))
                    held += len(taken)
        parts = np.concatenate(rows[1:] or [counted.whole[:0]])
        part_values, part_votes = answer_votes(parts)  # the answers' own: counted once, with their counts
        self._pool(np.concatenate(rows), np.concatenate(claims), np.concatenate([counted.whole_votes[0], part_values]),
                   np.concatenate([counted.whole_votes[1], part_votes]), members)

    def _pool(self, counts: np.ndarray, claims: np.ndarray, macro: np.ndarray, votes: np.ndarray,
              members: Mapping[tuple[str, str], list[int]]) -> None:
        """Add rows of counts (answers or their sentence slices' parts), with their macro values and
        votes, to their slices: the interval rows of all of them at once, each slice's share
        summed in one step."""
        interval_rows = structural = judged = has_structural = None
        if self.intervals:  # one cluster per judged answer; the structural sums over answers with any
            judged = counts[:, _SELECTED_ANSWERS] > 0
            interval_rows = np.concatenate([counts[:, _JUDGED_COUNT_AT], macro[:, _JUDGED_MACRO_AT]], axis=1)
            structural = counts[:, _STRUCTURAL_AT].astype(np.float64)
            has_structural = structural.any(axis=1)
        for (name, value), positions in members.items():
            if not positions:
                continue
            at = np.array(positions, dtype=np.intp)
            judged_rows = structural_rows = None
            if interval_rows is not None:
                judged_rows = interval_rows[at[judged[at]]]
                structural_rows = structural[at[has_structural[at]]]
            self._acc(name, value).add(_Pooled(counts[at], bool(claims[at].any()), macro[at], votes[at],
                                               judged_rows, structural_rows))

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
