"""From counts to metric values (SPEC §5): every metric of one set of counts as a `Ratio`
(numerator and denominator kept; a zero denominator is null, never 0 or 1), THE F1 rule (the
harmonic mean a derived metric of the registry is: `Metric.harmonic_mean_of`), and the
per-answer values that macro averaging votes with."""

from __future__ import annotations

from collections.abc import Mapping

from citecheck.core.metrics.definitions import CLAIM_METRICS, METRICS, REGISTRY
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


def f1_value(recall: float, precision: float) -> float:
    """THE F1 rule: the harmonic mean 2PR / (P + R), 0 when both are 0."""
    return 0.0 if recall + precision == 0 else 2 * precision * recall / (precision + recall)


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


def macro_values(counts: Mapping[str, float]) -> list[tuple[str, float]]:
    """The non-null metric values of one answer's counts, as `ratios` computes them (macro votes)."""
    get = counts.get
    out = []
    for name, num, den, scale in _METRIC_TABLE:
        d = get(den, 0)
        if d:
            out.append((name, get(num, 0) * scale / d))
    if HARMONIC_MEANS:
        have = dict(out)
        for name, (a, b) in HARMONIC_MEANS:
            if a in have and b in have:
                out.append((name, f1_value(have[a], have[b])))
    return out
