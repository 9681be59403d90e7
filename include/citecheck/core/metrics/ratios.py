"""From counts to metric values (SPEC §5): every metric of one set of counts as a `Ratio`
(numerator and denominator kept; a zero denominator is null, never 0 or 1), THE F1 rule (the
harmonic mean a derived metric of the registry is: `Metric.harmonic_mean_of`), and the
per-answer values that macro averaging votes with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from citecheck.core.metrics.definitions import CLAIM_METRICS, COUNT_COLUMN, METRICS, REGISTRY
from citecheck.stats.ratio import Ratio


def ratios(counts: Mapping[str, float]) -> dict[str, Ratio]:
    """Every metric of one set of counts (an answer, or pooled answers for micro); the claim
    metrics only for the counts of a claims mode."""
    claims_on = "check_worthy_claims" in counts
    out = {name: Ratio(counts.get(num, 0) * scale, counts.get(den, 0)) for name, (num, den, scale) in METRICS.items()
           if claims_on or name not in CLAIM_METRICS}
    for name, (a, b) in HARMONIC_MEANS:
        out[name] = f1(out[a], out[b])
    return out


def f1_value(recall: Any, precision: Any) -> Any:
    """THE F1 rule: the harmonic mean 2PR / (P + R), 0 when both are 0; on two floats a float, on
    two arrays the rule element by element (the same arithmetic, so the same bits)."""
    if np.ndim(recall) == 0 and np.ndim(precision) == 0:
        return 0.0 if recall + precision == 0 else 2 * precision * recall / (precision + recall)
    total = precision + recall
    return np.divide(2 * precision * recall, total, out=np.zeros(np.shape(total)), where=total != 0)


def f1(recall: Ratio, precision: Ratio) -> Ratio:
    """`f1_value` as a Ratio (2PR over P + R); null when either is null."""
    r, p = recall.value, precision.value
    if r is None or p is None:
        return Ratio(0, 0)
    if r + p == 0:
        return Ratio(0, 1)
    return Ratio(2 * p * r, p + r)


def values(ratio_map: Mapping[str, Ratio]) -> dict[str, float | None]:
    return {name: r.value for name, r in ratio_map.items()}


_METRIC_TABLE = tuple((name, num, den, scale) for name, (num, den, scale) in METRICS.items())
# derived metric -> the two metrics it is the harmonic mean of (F1: recall, precision)
HARMONIC_MEANS = tuple((m.name, m.harmonic_mean_of) for m in REGISTRY if m.harmonic_mean_of is not None)
# every metric an answer can give a macro vote for, in a fixed order: the registry's ratios, then
# the harmonic means; the counts behind the ratios (`macro_vector`)
MACRO_NAMES = tuple(dict.fromkeys([*(name for name, *_ in _METRIC_TABLE), *(name for name, _ in HARMONIC_MEANS)]))
MACRO_NUMERATORS = tuple(num for _, num, _, _ in _METRIC_TABLE)
MACRO_DENOMINATORS = tuple(den for _, _, den, _ in _METRIC_TABLE)
_SCALES = np.array([scale for *_, scale in _METRIC_TABLE], dtype=float)
_HARMONIC_POSITIONS = tuple((MACRO_NAMES.index(name), MACRO_NAMES.index(a), MACRO_NAMES.index(b))
                            for name, (a, b) in HARMONIC_MEANS)


def macro_vector(numerators: np.ndarray, denominators: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An answer's macro votes over `MACRO_NAMES`, from its counts of `MACRO_NUMERATORS` and
    `MACRO_DENOMINATORS` (in the registry's order; the last axis, so a matrix gives one row per
    answer): (values, 1 where the answer has a value, else 0; a missing value is 0.0). A value is
    numerator × scale / denominator where the denominator is not 0, as `ratios` computes it; a
    harmonic mean (`f1_value`) where both its metrics have one."""
    shape = (*np.shape(numerators)[:-1], len(MACRO_NAMES))
    values = np.zeros(shape)
    votes = np.zeros(shape, dtype=np.int64)
    n = len(_METRIC_TABLE)
    has = denominators != 0
    np.divide(numerators * _SCALES, denominators, out=values[..., :n], where=has)
    votes[..., :n] = has
    for i, a, b in _HARMONIC_POSITIONS:
        both = (votes[..., a] & votes[..., b]).astype(bool)
        values[..., i] = np.where(both, f1_value(values[..., a], values[..., b]), 0.0)
        votes[..., i] = both
    return values, votes


_NUMERATOR_AT = np.array([COUNT_COLUMN[key] for key in MACRO_NUMERATORS], dtype=np.intp)
_DENOMINATOR_AT = np.array([COUNT_COLUMN[key] for key in MACRO_DENOMINATORS], dtype=np.intp)


def answer_votes(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`macro_vector` of answers' counts given as rows over `COUNT_KEYS` (`COUNT_COLUMN`)."""
    return macro_vector(rows[:, _NUMERATOR_AT], rows[:, _DENOMINATOR_AT])


def macro_values(counts: Mapping[str, float]) -> list[tuple[str, float]]:
    """The non-null metric values of one answer's counts, as `ratios` computes them (macro votes)."""
    get = counts.get
    values, votes = macro_vector(np.array([get(key, 0) for key in MACRO_NUMERATORS]),
                                 np.array([get(key, 0) for key in MACRO_DENOMINATORS]))
    return [(name, float(values[i])) for i, name in enumerate(MACRO_NAMES) if votes[i]]
