"""Intervals for proportions: counted (Wilson score) and weighted back to a population.

A weighted proportion (weights = 1 / inclusion probability) gets a Wilson interval at Kish's
effective sample size `(sum w)^2 / sum w^2`, the usual design-effect approximation for unequal
weights. Both wrap `statsmodels.stats.proportion.proportion_confint`; they hold nothing of the
review loop and could serve the daily metrics' intervals too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class Estimate:
    """A proportion with its numerator, denominator and interval (None when the denominator is 0)."""

    numerator: float
    denominator: float
    value: float | None
    low: float | None
    high: float | None
    method: str

    def as_dict(self) -> dict[str, Any]:
        return {"numerator": self.numerator, "denominator": self.denominator, "value": self.value,
                "ci_low": self.low, "ci_high": self.high, "method": self.method}


def wilson(numerator: float, denominator: float, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """A counted proportion with its Wilson score interval."""
    from statsmodels.stats.proportion import proportion_confint

    if denominator <= 0:
        return Estimate(numerator, denominator, None, None, None, "wilson")
    low, high = proportion_confint(numerator, denominator, alpha=1 - confidence, method="wilson")
    return Estimate(numerator, denominator, numerator / denominator, float(low), float(high), "wilson")


def weighted(hits: Sequence[bool], weights: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """Σ w·hit / Σ w with a Wilson interval at the effective sample size; numerator and
    denominator are the weighted sums (population counts)."""
    from statsmodels.stats.proportion import proportion_confint

    if len(hits) != len(weights):
        raise ValueError(f"{len(hits)} outcomes but {len(weights)} weights")
    total = float(sum(weights))
    num = float(sum(w for h, w in zip(hits, weights, strict=True) if h))
    if total <= 0:
        return Estimate(num, total, None, None, None, "weighted wilson (kish n_eff)")
    n_eff = total ** 2 / sum(w * w for w in weights)
    p = num / total
    low, high = proportion_confint(p * n_eff, n_eff, alpha=1 - confidence, method="wilson")
    return Estimate(num, total, p, float(low), float(high), f"weighted wilson (kish n_eff={n_eff:.1f})")
