"""95% intervals for rates estimated from a sample of answers, answers being clusters of sentences.

The sampling unit is the answer: sentences of one answer share a context set, a prompt and a
model's mood, so they succeed or fail together. A day's judged answers are a random sample
(the deterministic hash share `nli_share`) of the day's answers, which are themselves a draw
from the assistant's traffic; an interval here is for the rate of that traffic, so it covers
both the day's draw and the judging sample (it is computed from the judged answers only: judging
a quarter of the day makes it about twice as wide).

- Micro rates are ratios of totals, Σy / Σx over answers. Their variance is the ratio
  estimator's linearized (Taylor) variance, from running sums over answers (n, Σr, Σrrᵀ) of a
  vector r of counts: constant memory, one pass (`ClusterTotals`). Any smooth function of totals
  (F1 of two ratios) gets its variance the same way from its gradient (`linearized_variance`).
- Macro rates are means of one value per answer: the variance of a mean, s²/n, from n, Σv, Σv²
  (`mean_variance`).
- The interval turns (value, variance, answers) into bounds inside [0, 1]: a Wilson interval on
  the *effective* sample size value·(1 − value)/variance (Kish), with the Korn–Graubard degrees
  of freedom correction (answers − 1) for small days (`proportion_interval`). Plain value ± z·se
  under-covers near 0 and 1 and on days with few answers; this one keeps its nominal coverage
  down to 40 judged answers a day, the smallest day bench/bench_intervals.py simulates.

Streaming cluster moments and the Kish/Korn–Graubard step are written here because neither
scipy nor statsmodels offers them for one-pass data (statsmodels' survey tools want every row in
memory); the Wilson bounds and the t and normal quantiles come from statsmodels and scipy.

Public API (also for human-review estimates: weighted proportions, prediction-powered means):
`Interval`, `ClusterTotals`, `mean_variance`, `harmonic_mean_gradient`, `proportion_interval(s)`.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95
FLUSH_ROWS = 512  # answers buffered before folding into the sums: bounds memory per ClusterTotals


@dataclass(frozen=True, slots=True)
class Interval:
    """A two-sided interval [low, high] for one estimate."""

    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    @property
    def width(self) -> float:
        return self.high - self.low


class ClusterTotals:
    """Running sums over clusters (answers) of a fixed vector of values, in constant memory.

    Keeps the number of clusters n, the totals Σr, per key how many clusters have a non-zero value,
    the cross products Σrrᵀ among `keys` (for ratios and functions of them) and only the sums of
    squares of `mean_keys` (values that are only averaged). A row holds `keys` then `mean_keys`.
    Rows are buffered in a flat array and folded in with numpy every `FLUSH_ROWS` rows, so adding
    an answer costs one list of floats, not k² Python multiplications.
    """

    def __init__(self, keys: Sequence[str], mean_keys: Sequence[str] = ()) -> None:
        self.keys = (*keys, *mean_keys)
        self.index = {key: i for i, key in enumerate(self.keys)}
        self._paired = len(keys)
        k = len(self.keys)
        self._n = 0
        self._sum = np.zeros(k)
        self._cross = np.zeros((self._paired, self._paired))
        self._squares = np.zeros(k)
        self._nonzero = np.zeros(k, dtype=np.int64)
        self._buffer = array("d")
        self._buffered = 0

    def add(self, row: Sequence[float]) -> None:
        """One cluster's counts, in `keys` order."""
        self._buffer.extend(row)
        self._buffered += 1
        if self._buffered >= FLUSH_ROWS:
            self._flush()

    def add_rows(self, rows: np.ndarray) -> None:
        """Many clusters' counts at once: a matrix, one row per cluster in `keys` order (the same
        sums, to the last bit, as adding them one by one)."""
        rows = np.ascontiguousarray(rows, dtype=np.float64)
        start = 0
        while start < len(rows):
            end = min(len(rows), start + FLUSH_ROWS - self._buffered)
            self._buffer.frombytes(rows[start:end].tobytes())
            self._buffered += end - start
            start = end
            if self._buffered >= FLUSH_ROWS:
                self._flush()

    def _flush(self) -> None:
        if not self._buffered:
            return
        rows = np.frombuffer(self._buffer, dtype=np.float64).reshape(self._buffered, len(self.keys))
        self._n += self._buffered
        self._sum += rows.sum(axis=0)
        # einsum, not `rows.T @ rows`: BLAS wakes its thread pool for every small product, which
        # costs ten times the arithmetic on a busy machine
        paired = rows[:, :self._paired]
        self._cross += np.einsum("ij,ik->jk", paired, paired)
        self._squares += np.einsum("ij,ij->j", rows, rows)
        self._nonzero += np.count_nonzero(rows, axis=0)
        self._buffer = array("d")
        self._buffered = 0

    def state(self) -> dict[str, list[float] | list[int] | list[str] | int]:
        """The sums as plain lists (JSON): what `merge` adds into another's. The sums of counts are
        sums of whole numbers, exact in doubles below 2**53, so they add up the same in any order."""
        self._flush()
        return {"keys": list(self.keys), "n": self._n, "sum": self._sum.tolist(), "cross": self._cross.tolist(),
                "squares": self._squares.tolist(), "nonzero": self._nonzero.tolist()}

    def merge(self, state: Mapping[str, object]) -> None:
        """Add another's sums (its `state`, over the same keys): the totals of both sets of clusters."""
        if list(state["keys"]) != list(self.keys):  # type: ignore[call-overload]
            raise ValueError(f"cannot merge cluster totals over {state['keys']} into totals over {list(self.keys)}")
        self._flush()
        self._n += int(state["n"])  # type: ignore[call-overload]
        self._sum += np.asarray(state["sum"], dtype=np.float64)
        self._cross += np.asarray(state["cross"], dtype=np.float64).reshape(self._cross.shape)
        self._squares += np.asarray(state["squares"], dtype=np.float64)
        self._nonzero += np.asarray(state["nonzero"], dtype=np.int64)

    @property
    def n(self) -> int:
        """Clusters added."""
        self._flush()
        return self._n

    def total(self, key: str) -> float:
        self._flush()
        return float(self._sum[self.index[key]])

    def sum_of_squares(self, key: str) -> float:
        """Σ over clusters of the squared value of `key` (with `total` and `n`: a mean's variance)."""
        self._flush()
        return float(self._squares[self.index[key]])

    def clusters_with(self, key: str) -> int:
        """Clusters whose count of `key` is non-zero (the answers a rate with that denominator covers)."""
        self._flush()
        return int(self._nonzero[self.index[key]])

    def linearized_variance(self, gradient: Mapping[str, float]) -> float | None:
        """Variance of a smooth function of the totals, from its gradient at the totals (Taylor).

        With clusters independent and identically drawn, Var(Σr) ≈ n·S where S is the sample
        covariance of one cluster's counts, so Var(f) ≈ n·gᵀSg. None with fewer than 2 clusters.
        """
        self._flush()
        n = self._n
        if n < 2:
            return None
        g = np.zeros(self._paired)
        for key, value in gradient.items():
            i = self.index[key]
            if i >= self._paired:
                raise KeyError(f"{key!r} is a mean key: its cross products are not kept")
            g[i] = value
        # gᵀ(Σrrᵀ − ΣrΣrᵀ/n)g / (n − 1), times n; centred by the totals, so large counts cancel stably
        spread = g @ self._cross @ g - (g @ self._sum[:self._paired]) ** 2 / n
        return max(0.0, float(spread) * n / (n - 1))

    def ratio_variance(self, numerator: str, denominator: str) -> float | None:
        """Linearized variance of Σy/Σx (y = `numerator`, x = `denominator` counts); None when Σx = 0."""
        x = self.total(denominator)
        if not x:
            return None
        ratio = self.total(numerator) / x
        if numerator == denominator:
            return 0.0
        return self.linearized_variance({numerator: 1 / x, denominator: -ratio / x})


def mean_variance(n: int, total: float, total_sq: float) -> float | None:
    """Variance of the mean of n independent cluster values, s²/n, from n, Σv and Σv²."""
    if n < 2:
        return None
    mean = total / n
    return max(0.0, (total_sq - n * mean * mean) / (n - 1)) / n


def harmonic_mean_gradient(a: float, b: float) -> tuple[float, float]:
    """∂/∂a and ∂/∂b of 2ab/(a + b) (F1 of recall a and precision b); (0, 0) where a + b = 0."""
    s = a + b
    if s <= 0:
        return 0.0, 0.0
    return 2 * b * b / (s * s), 2 * a * a / (s * s)


def proportion_interval(value: float | None, variance: float | None, clusters: int, *,
                        draws: float | None = None, confidence: float = CONFIDENCE) -> Interval | None:
    """A `confidence` interval in [0, 1] for a rate estimated from `clusters` sampled clusters.

    `variance` is the estimate's design variance (cluster-aware). The interval is Wilson's on the
    Kish effective sample size value·(1 − value)/variance, shrunk by (z/t)² with clusters − 1
    degrees of freedom (Korn & Graubard 1998). Where the variance says nothing (a rate at exactly
    0 or 1, or zero spread) the effective size is `draws`, the number of sentences or answers
    behind the rate, as if they were independent (default: `clusters`). None when the value is
    None or there are fewer than 2 clusters.
    """
    return proportion_intervals([value], [variance], [clusters], [draws], confidence=confidence)[0]


def proportion_intervals(values: Sequence[float | None], variances: Sequence[float | None],
                         clusters: Sequence[int], draws: Sequence[float | None] | None = None, *,
                         confidence: float = CONFIDENCE) -> list[Interval | None]:
    """`proportion_interval` for many estimates in one vectorized call (a slice's metrics)."""
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    k = len(values)
    draws = draws if draws is not None else [None] * k
    ok = [v is not None and var is not None and c >= 2 for v, var, c in zip(values, variances, clusters, strict=True)]
    out: list[Interval | None] = [None] * k
    if not any(ok):
        return out
    pick = [i for i in range(k) if ok[i]]
    p = np.clip(np.array([values[i] for i in pick], dtype=float), 0.0, 1.0)
    var = np.array([variances[i] for i in pick], dtype=float)
    n = np.array([clusters[i] for i in pick], dtype=float)
    fallback = np.array([draws[i] or clusters[i] for i in pick], dtype=float)
    informative = (var > 0) & (p > 0) & (p < 1)
    size = np.where(informative, p * (1 - p) / np.where(informative, var, 1.0), fallback)
    tail = (1 + confidence) / 2
    size *= (stats.norm.ppf(tail) / stats.t.ppf(tail, n - 1)) ** 2  # Korn–Graubard degrees of freedom
    low, high = proportion_confint(p * size, size, alpha=1 - confidence, method="wilson")
    for j, i in enumerate(pick):
        lo, hi, value = float(low[j]), float(high[j]), float(p[j])
        if math.isfinite(lo) and math.isfinite(hi):
            out[i] = Interval(max(0.0, min(lo, value)), min(1.0, max(hi, value)))
    return out


__all__ = [
    "CONFIDENCE",
    "ClusterTotals",
    "Interval",
    "harmonic_mean_gradient",
    "mean_variance",
    "proportion_interval",
    "proportion_intervals",
]
