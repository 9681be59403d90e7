"""The two tests behind a step-change alert (`citecheck.features.monitor`): is the day's value a new
level against its own history, and is the day's event count unlikely under the history's rate?"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def level_shift_p(history: Sequence[float], value: float) -> float:
    """Two-sided p-value that `value` comes from the history's level: the Student-t prediction
    interval of one new observation, (value - mean) / (sd * sqrt(1 + 1/n)) with n - 1 degrees of
    freedom. A constant history gives 0 for any other value and 1 for the same value."""
    from scipy import stats

    n = len(history)
    mean = statistics.fmean(history)
    sd = statistics.stdev(history)
    if sd == 0 or not math.isfinite(sd):
        return 1.0 if math.isclose(value, mean, rel_tol=1e-12, abs_tol=1e-12) else 0.0
    t = (value - mean) / (sd * math.sqrt(1 + 1 / n))
    return float(2 * stats.t.sf(abs(t), n - 1))


def sampling_p(count: float, trials: float, rate: float, *, per_unit: bool) -> float:
    """Two-sided p-value of a day's event count under the history's pooled rate: exact binomial
    for a rate (`count` events out of `trials`), Poisson for a count per unit (events per answer,
    which may exceed one)."""
    from scipy import stats

    k = round(count)
    if per_unit:
        expected = rate * trials
        return float(min(1.0, 2 * min(stats.poisson.cdf(k, expected), stats.poisson.sf(k - 1, expected))))
    return float(stats.binomtest(k, max(round(trials), k), min(max(rate, 0.0), 1.0)).pvalue)
