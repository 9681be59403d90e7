"""Human-calibrated metrics: prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan,
Zrnic, "Prediction-powered inference", Science 2023), with the authors' package `ppi-python`.

Per sentence of the period's judged population, the judges' value `Yhat` is known everywhere;
on the labelled review items the human value `Y` is known too. In each stratum of the review
sample (a simple random sample of it), the estimate is the stratum's mean of `lambda * Yhat` plus
the labelled items' mean of the rectifier `Y - lambda * Yhat` (PPI++ power tuning: `lambda` from
the data; `ppi_mean_ci`). The strata are combined with weights N_h / N, which is weighting every
labelled item by 1 / its inclusion probability, with the stratified variance, so the interval is
valid for the stratified design (PPI's own interval assumes one i.i.d. sample and is too wide
here: 100% coverage in `bench/bench_calibration.py`). The judge-only value has no interval for
the judges' errors; the human-only value (`classical_mean_ci` on the labels, same design) is
valid too. When the strata are the judge's verdicts, the verdict carries no information inside a
stratum and both coincide for recall and faithfulness; the calibration then lives in the
stratification, and PPI gains where the judges' values vary inside a stratum (precision's
credited counts) or where the sample is not stratified by them.

Metrics (population: judged check-worthy sentences; SPEC §5):
- `citation_recall`: Yhat = verdict `supported`; Y = the reviewer says its cited passages support
  it (the sentence cites something).
- `faithfulness`: Yhat = verdict supported, miscited or uncited_supported; Y = the reviewer's
  `supported`, or some passage graded `full`.
- `citation_precision`: credited citations / citations. Per sentence Yhat = its credited
  citations, Y = those the reviewer's grades credit (Liu et al.'s rule, as the LLM judge);
  the mean is divided by the citations per sentence, known exactly for the whole population.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from citecheck.core.metrics import BY_NAME, CALIBRATED_METRICS
from citecheck.core.metrics.counts import judged_sentence_counts
from citecheck.core.vocabulary import FAITHFUL_VERDICTS, FULL, NO_SUPPORT, REPLY_NOT_SUPPORTED, REPLY_SUPPORTED
from citecheck.stats import proportions as P

METRICS = CALIBRATED_METRICS  # the registry's `calibrated` metrics


def judged_counts(row: Mapping[str, Any]) -> Counter[str]:
    """The judged counts of a published sentence row, by the core's one counting rule (its
    faithfulness from the verdict: a published row has no flag for a partial or contradicted
    sentence that an uncited passage supports)."""
    counts = judged_sentence_counts(row["verdict"], faithful=row["verdict"] in FAITHFUL_VERDICTS,
                                    attached=bool(row.get("attached")), citations=int(row.get("citations") or 0),
                                    credited=int(row.get("credited") or 0))
    return Counter({key: int(n) for key, n in counts.items()})


def judge_values(row: Mapping[str, Any]) -> dict[str, float]:
    """The judges' per-sentence values of a published sentence row: each metric's numerator count."""
    counts = judged_counts(row)
    return {metric: float(counts[BY_NAME[metric].numerator]) for metric in METRICS}


def human_values(human_supported: bool, grades: Mapping[str, str], cited: Sequence[str]) -> dict[str, float]:
    """The reviewer's per-sentence values (see the module docstring)."""
    from citecheck.judges.derive import liu_credit

    credit = liu_credit(REPLY_SUPPORTED if human_supported else REPLY_NOT_SUPPORTED,
                        {lab: grades.get(lab, NO_SUPPORT) for lab in cited})
    return {"citation_recall": float(human_supported and bool(cited)),
            "faithfulness": float(human_supported or any(g == FULL for g in grades.values())),
            "citation_precision": float(sum(credit.values()))}


def _groups(population_strata: Sequence[str], strata: Sequence[str]) -> dict[str, str]:
    """Stratum → estimation group: a stratum with fewer than 2 labelled items (its variance is
    unknown) joins one collapsed group, which joins the largest stratum if it holds fewer than 2
    labelled items itself (the usual collapsed-strata practice)."""
    labelled = Counter(strata)
    sizes = Counter(population_strata)
    group = {h: h if labelled[h] >= 2 else "(collapsed)" for h in set(sizes) | set(labelled)}
    if sum(labelled[h] for h, g in group.items() if g == "(collapsed)") < 2:
        full = [h for h, g in group.items() if g != "(collapsed)"]
        if full:
            biggest = max(full, key=lambda h: (sizes[h], h))
            group = {h: biggest if g == "(collapsed)" else g for h, g in group.items()}
    return group


def stratified(population_yhat: Sequence[float], population_strata: Sequence[str], y: Sequence[float],
               yhat: Sequence[float], weights: Sequence[float], strata: Sequence[str],
               confidence: float = P.DEFAULT_CONFIDENCE) -> dict[str, tuple[float, float] | None]:
    """(estimate, standard error) of the population mean: `calibrated` (PPI++ per stratum,
    ppi-python's `ppi_mean_ci`: the point is its interval's centre) and `human_only` (the
    labels alone, `classical_mean_ci`), each combined over strata with weights N_h / N, the
    standard stratified estimator; weights 1 / inclusion probability inside a collapsed group.
    None when fewer than 2 items are labelled."""
    import numpy as np
    from ppi_py import classical_mean_ci, ppi_mean_ci
    from scipy.stats import norm

    if len(y) < 2 or not len(population_yhat):
        return {"calibrated": None, "human_only": None}
    z = float(norm.ppf(0.5 + confidence / 2))
    group = _groups(population_strata, strata)
    pop = np.asarray(population_yhat, dtype=float)
    pop_group = np.asarray([group[h] for h in population_strata])
    Y, Yh, w = (np.asarray(v, dtype=float) for v in (y, yhat, weights))
    lab_group = np.asarray([group[h] for h in strata])
    big_n = len(pop)
    out = {"calibrated": [0.0, 0.0], "human_only": [0.0, 0.0]}
    for g in sorted(set(group.values())):
        share = float((pop_group == g).sum()) / big_n
        sel = lab_group == g
        if not share or sel.sum() < 2:
            continue
        # a judge value constant in the group (a verdict stratum) leaves lambda undefined: any
        # value gives the same estimate, so take plain PPI (lambda = 1)
        lam = 1.0 if np.ptp(Yh[sel]) == 0 or np.ptp(pop[pop_group == g]) == 0 else None
        intervals = {
            "calibrated": ppi_mean_ci(Y[sel], Yh[sel], pop[pop_group == g], alpha=1 - confidence, w=w[sel],
                                      lam=lam),
            "human_only": classical_mean_ci(Y[sel], w=w[sel], alpha=1 - confidence),
        }
        for name, (low, high) in intervals.items():
            low, high = float(np.ravel(low)[0]), float(np.ravel(high)[0])
            out[name][0] += share * (low + high) / 2
            out[name][1] += (share * (high - low) / (2 * z)) ** 2
    return {name: (value, var ** 0.5) for name, (value, var) in out.items()}


def estimate(metric: str, population_yhat: Sequence[float], y: Sequence[float], yhat: Sequence[float],
             weights: Sequence[float], *, population_strata: Sequence[str] | None = None,
             strata: Sequence[str] | None = None, scale: float = 1.0, confidence: float = P.DEFAULT_CONFIDENCE
             ) -> list[dict[str, Any]]:
    """Rows `METRIC` (judge-only), `METRIC_calibrated` (PPI) and `METRIC_human_only`, each value
    divided by `scale` (citations per sentence, for precision). Without strata: one stratum."""
    from scipy.stats import norm

    big_n = len(population_yhat)
    population_strata = population_strata if population_strata is not None else ["all"] * big_n
    strata = strata if strata is not None else ["all"] * len(y)
    judge_only = sum(population_yhat) / big_n if big_n else None
    rows: list[dict[str, Any]] = [{"metric": metric, "value": None if judge_only is None else judge_only / scale,
                                   "ci_low": None, "ci_high": None,
                                   "method": "judges only (no interval for their errors)"}]
    z = float(norm.ppf(0.5 + confidence / 2))
    found = stratified(population_yhat, population_strata, y, yhat, weights, strata, confidence)
    methods = {"calibrated": "ppi++ mean per stratum (ppi-python ppi_mean_ci), stratified",
               "human_only": "mean of the labels per stratum (ppi-python classical_mean_ci), stratified"}
    for name, method in methods.items():
        if found[name] is not None and scale > 0:
            value, se = found[name]
            rows.append({"metric": f"{metric}_{name}", "value": _bound(value, scale),
                         "ci_low": _bound(value - z * se, scale), "ci_high": _bound(value + z * se, scale),
                         "method": method})
    for row in rows:
        row.update(confidence=confidence, labelled_items=len(y), population_items=big_n)
    return rows


def _scaled(value: float, scale: float) -> float:
    return float(value) / scale


def _bound(value: float, scale: float) -> float:
    """A rate, scaled and kept in [0, 1]: a normal interval, or with few labels and judges that
    disagree with them a rectified estimate, can spill over (precision's 1.06 on 20 labels)."""
    return min(1.0, max(0.0, _scaled(value, scale)))


def calibrated_rows(population: Sequence[Mapping[str, Any]], labelled: Sequence[Mapping[str, Any]],
                    confidence: float = P.DEFAULT_CONFIDENCE) -> list[dict[str, Any]]:
    """Judge-only, calibrated and human-only rows of every metric. `population`: published rows
    (`judged_sentences`); `labelled`: items with `weight`, `human_supported`, `grades`,
    `cited_labels` and the row's judge values under `judge`."""
    from citecheck.review.sample import stratum

    judge = [judge_values(r) for r in population]
    totals: Counter[str] = Counter()
    for r in population:
        totals.update(judged_counts(r))
    population_strata = [stratum(r) for r in population]
    rows = []
    for metric in METRICS:
        # the mean is per judged sentence: divide by the metric's denominator per sentence
        # (1 for recall and faithfulness, citations per sentence for precision)
        denominator = totals[BY_NAME[metric].denominator]
        scale = denominator / len(population) if population and denominator else 1.0
        human = [human_values(i["human_supported"], i["grades"], i["cited_labels"])[metric] for i in labelled]
        rows.extend(estimate(metric, [j[metric] for j in judge], human, [i["judge"][metric] for i in labelled],
                             [i["weight"] for i in labelled], population_strata=population_strata,
                             strata=[i["stratum"] for i in labelled], scale=scale, confidence=confidence))
    return rows
