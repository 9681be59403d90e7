"""95% intervals (issue 11): the arithmetic against independent computations, and the intervals in
every judged metric row of `score`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from citecheck.core.config import Config
from citecheck.core.metrics import JUDGED_METRICS, MetricAccumulator
from citecheck.core.pipeline import score_structured, structure_turns
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from citecheck.stats.intervals import ClusterTotals, Interval, mean_variance, proportion_interval, proportion_intervals
from helpers import load_fixture, score_dicts

ORBIT = load_fixture("orbit_labs.json")
# (supported, judged sentences, credited, judged citations) of eight answers: sizes and rates vary
CLUSTERS = np.array([[3, 4, 3, 5], [0, 2, 0, 2], [5, 5, 6, 7], [1, 6, 1, 9], [2, 3, 2, 3],
                     [7, 9, 8, 12], [0, 1, 0, 1], [4, 4, 3, 4]], dtype=float)
KEYS = ("supported", "judged_sentences", "credited_citations", "judged_citations")


def _totals(rows=CLUSTERS) -> ClusterTotals:
    totals = ClusterTotals(KEYS)
    for row in rows:
        totals.add(list(row))
    return totals


def test_ratio_variance_matches_the_textbook_formula():
    y, x = CLUSTERS[:, 0], CLUSTERS[:, 1]
    n, ratio = len(x), y.sum() / x.sum()
    # Cochran's linearized variance of a ratio estimator, cluster residuals written out directly
    expected = n / (n - 1) * np.sum((y - ratio * x) ** 2) / x.sum() ** 2
    assert _totals().ratio_variance("supported", "judged_sentences") == pytest.approx(expected, rel=1e-12)
    assert _totals().clusters_with("supported") == 6
    assert _totals().n == 8 and _totals().total("judged_citations") == 43


def test_flushing_in_chunks_changes_nothing(monkeypatch):
    import citecheck.stats.intervals as I

    monkeypatch.setattr(I, "FLUSH_ROWS", 3)
    chunked = _totals()
    monkeypatch.setattr(I, "FLUSH_ROWS", 10_000)
    whole = _totals()
    for num, den in (("supported", "judged_sentences"), ("credited_citations", "judged_citations")):
        assert chunked.ratio_variance(num, den) == pytest.approx(whole.ratio_variance(num, den), rel=1e-12)


def test_rows_added_as_a_matrix_give_the_same_sums_to_the_last_bit(monkeypatch):
    import citecheck.stats.intervals as I

    monkeypatch.setattr(I, "FLUSH_ROWS", 3)  # blocks that straddle the flushes
    rng = np.random.default_rng(7)
    rows = rng.random((23, len(KEYS))) * rng.integers(1, 50, size=(23, 1))
    one_by_one, blocks = _totals(rows), ClusterTotals(KEYS)
    for start, end in ((0, 2), (2, 9), (9, 10), (10, 23)):
        blocks.add_rows(rows[start:end])
    assert blocks.state() == one_by_one.state()


def test_ratio_variance_agrees_with_a_cluster_bootstrap():
    """The independent check: scipy's bootstrap, resampling whole answers, on 120 answers."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 13, 120)
    p = rng.beta(2, 1, 120)
    supported = rng.binomial(sizes, p)
    totals = ClusterTotals(("y", "x"))
    for y, x in zip(supported, sizes, strict=True):
        totals.add([y, x])
    boot = stats.bootstrap((supported, sizes), lambda y, x: y.sum() / x.sum(), paired=True, vectorized=False,
                           n_resamples=3000, method="percentile", rng=np.random.default_rng(1))
    assert math.sqrt(totals.ratio_variance("y", "x")) == pytest.approx(boot.standard_error, rel=0.1)


def test_linearized_f1_variance_matches_numeric_differentiation():
    totals = _totals()
    t = CLUSTERS.sum(axis=0)

    def f1(v):
        r, p = v[0] / v[1], v[2] / v[3]
        return 2 * r * p / (r + p)

    # independent: numeric gradient, then the cluster residuals' variance written out
    g = np.array([(f1(t + h) - f1(t - h)) / (2e-6) for h in np.eye(4) * 1e-6])
    z = CLUSTERS @ g
    n = len(CLUSTERS)
    expected = n / (n - 1) * np.sum((z - z.mean()) ** 2)
    r, p = t[0] / t[1], t[2] / t[3]
    dr, dp = 2 * p * p / (r + p) ** 2, 2 * r * r / (r + p) ** 2
    got = totals.linearized_variance({"supported": dr / t[1], "judged_sentences": -dr * r / t[1],
                                      "credited_citations": dp / t[3], "judged_citations": -dp * p / t[3]})
    assert got == pytest.approx(expected, rel=1e-6)


def test_mean_variance_is_the_sample_variance_over_n():
    v = np.array([0.2, 1.0, 0.5, 0.0, 0.75])
    assert mean_variance(5, v.sum(), (v ** 2).sum()) == pytest.approx(v.var(ddof=1) / 5)
    assert mean_variance(1, 0.5, 0.25) is None


def test_proportion_interval_is_wilson_on_the_effective_size():
    # binomial variance and very many clusters: exactly statsmodels' Wilson interval on n draws
    n, p = 400, 0.3
    got = proportion_interval(p, p * (1 - p) / n, 10**7)
    low, high = proportion_confint(p * n, n, alpha=0.05, method="wilson")
    assert (got.low, got.high) == pytest.approx((low, high), abs=1e-6)
    # doubled variance (design effect 2): the Wilson interval of n/2 draws, Korn–Graubard shrunk by (z/t)²
    got = proportion_interval(p, 2 * p * (1 - p) / n, 40)
    size = n / 2 * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, 39)) ** 2
    low, high = proportion_confint(p * size, size, alpha=0.05, method="wilson")
    assert (got.low, got.high) == pytest.approx((low, high), abs=1e-9)


def test_proportion_interval_edges():
    assert proportion_interval(None, 0.01, 50) is None
    assert proportion_interval(0.5, None, 50) is None
    assert proportion_interval(0.5, 0.01, 1) is None  # one answer says nothing about spread
    top = proportion_interval(1.0, 0.0, 30, draws=90)  # all supported: Wilson on the 90 sentences
    size = 90 * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, 29)) ** 2
    assert top.high == 1.0 and top.low == pytest.approx(proportion_confint(size, size, method="wilson")[0])
    assert proportion_interval(0.0, 0.0, 30, draws=90).low == 0.0
    many = proportion_intervals([0.2, None, 0.9], [0.001, 0.1, 0.0005], [50, 50, 50])
    assert many[1] is None and many[0].contains(0.2) and many[2].contains(0.9)
    assert isinstance(many[0], Interval)


# --- intervals in the score output -------------------------------------------------------------

def _sample_turns(copies: int = 1) -> list[dict]:
    turns = [t for t in ORBIT["turns"] if t.get("answer")]
    return [dict(t, turn_id=f"{t['turn_id']}#{k}", conversation_id=f"{t.get('conversation_id', 'c')}#{k}")
            for k in range(copies) for t in turns]


def _orbit_score(copies: int) -> dict:
    from citecheck.core.config import config_from_mapping

    config = config_from_mapping({"check_worthiness": {"refusals": [ORBIT["refusal_text"]]}})
    return score_dicts(_sample_turns(copies), ORBIT["judge"], config)


def test_every_judged_row_has_an_interval_around_its_value():
    out = _orbit_score(4)
    judged = [r for r in out["rows"] if r["metric"] in JUDGED_METRICS]
    assert judged
    from citecheck.core.metrics.definitions import STRUCTURAL_INTERVAL_METRICS

    with_intervals = JUDGED_METRICS | set(STRUCTURAL_INTERVAL_METRICS)  # the figure rates: every answer
    for row in out["rows"]:
        if row["metric"] not in with_intervals or row["value"] is None:
            assert row["ci_low"] is None and row["ci_high"] is None, row
        elif row["ci_low"] is not None:
            assert 0 <= row["ci_low"] <= row["value"] <= row["ci_high"] <= 1, row
    with_interval = [r for r in judged if r["ci_low"] is not None]
    assert {r["averaging"] for r in with_interval} == {"micro", "macro"}
    assert {r["slice_name"] for r in with_interval} >= {"all", "answer_length"}
    overall = out["metrics"]["intervals"]
    assert set(overall) == {"micro", "macro"}
    recall = overall["micro"]["citation_recall"]
    row = next(r for r in out["rows"] if r["slice_name"] == "all" and r["averaging"] == "micro"
               and r["metric"] == "citation_recall")
    assert [recall["ci_low"], recall["ci_high"]] == [row["ci_low"], row["ci_high"]]
    assert out["invariant_violations"] == []


def test_repeating_the_day_four_times_halves_the_width():
    """Same answers, four times as many: the interval keeps the value and shrinks about as 1/√4."""
    one, four = _orbit_score(8), _orbit_score(32)

    def span(out, averaging, metric):
        r = next(r for r in out["rows"] if r["slice_name"] == "all" and r["averaging"] == averaging
                 and r["metric"] == metric)
        return r["value"], r["ci_high"] - r["ci_low"]

    for averaging in ("micro", "macro"):
        for metric in ("citation_recall", "citation_precision", "faithfulness", "citation_f1"):
            (v1, w1), (v4, w4) = span(one, averaging, metric), span(four, averaging, metric)
            assert v1 == pytest.approx(v4)
            assert 0.4 < w4 / w1 < 0.6, (averaging, metric, w1, w4)


def test_intervals_are_deterministic():
    first, second = _orbit_score(3), _orbit_score(3)
    assert [(r["ci_low"], r["ci_high"]) for r in first["rows"]] == [(r["ci_low"], r["ci_high"]) for r in second["rows"]]


def test_judging_a_share_of_the_day_widens_the_interval():
    """Judged turns are a sample of the day: the interval comes from the judged answers only."""
    from citecheck.core.config import config_from_mapping

    config = config_from_mapping({"check_worthiness": {"refusals": [ORBIT["refusal_text"]]}})
    turns = [turn_from_dict(t) for t in _sample_turns(40)]
    judge = judge_from_spec(ORBIT["judge"])

    def widths(selected):
        acc = MetricAccumulator(config)
        for scored in score_structured(structure_turns(turns, config), judge, selected):
            acc.add(scored)
        row = next(r for r in acc.rows() if r["slice_name"] == "all" and r["averaging"] == "micro"
                   and r["metric"] == "citation_recall")
        return row["ci_high"] - row["ci_low"], row["answers"]

    whole, n_all = widths(None)
    quarter, n_quarter = widths(lambda st: int(st.turn_id.split("#")[1]) % 4 == 0)
    assert n_quarter == n_all // 4
    assert 1.7 < quarter / whole < 2.6


def test_no_intervals_when_switched_off():
    acc = MetricAccumulator(Config(), intervals=False)
    turn = turn_from_dict(_sample_turns(1)[0])
    for scored in score_structured(structure_turns([turn], Config()), judge_from_spec(ORBIT["judge"])):
        acc.add(scored)
    assert all(r["ci_low"] is None and r["ci_high"] is None for r in acc.rows())
