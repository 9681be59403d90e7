"""Human-calibrated metrics: prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan,
Zrnic, "Prediction-powered inference", Science 2023), with the authors' package `ppi-python`.

Per sentence of the period's judged population, the judges' value `Yhat` is known everywhere;
on the labelled review items the human value `Y` is known too. The estimate is the mean of `Yhat`
over the population plus the weighted mean of the rectifier `Y - Yhat` over the labelled items
(PPI++ power tuning `lambda` chosen from the data, `ppi_mean_ci`); weights are 1 / inclusion
probability, so the stratified sample stands for the population. Its interval is valid whatever
the judges' errors; the judge-only value has no interval for them, and the human-only value
(`classical_mean_ci` on the labels alone) is valid but wider.

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

from collections.abc import Mapping, Sequence
from typing import Any

from citecheck.review import proportions as P

METRICS = ("citation_recall", "citation_precision", "faithfulness")
FAITHFUL_VERDICTS = ("supported", "miscited", "uncited_supported")


def judge_values(row: Mapping[str, Any]) -> dict[str, float]:
    """The judges' per-sentence values of a published sentence row."""
    return {"citation_recall": float(row["verdict"] == "supported"),
            "faithfulness": float(row["verdict"] in FAITHFUL_VERDICTS),
            "citation_precision": float(row.get("credited") or 0)}


def human_values(human_supported: bool, grades: Mapping[str, str], cited: Sequence[str]) -> dict[str, float]:
    """The reviewer's per-sentence values (see the module docstring)."""
    from citecheck.judges.llm import liu_credit

    credit = liu_credit("supported" if human_supported else "not_supported",
                        {lab: grades.get(lab, "none") for lab in cited})
    return {"citation_recall": float(human_supported and bool(cited)),
            "faithfulness": float(human_supported or any(g == "full" for g in grades.values())),
            "citation_precision": float(sum(credit.values()))}


def estimate(metric: str, population_yhat: Sequence[float], y: Sequence[float], yhat: Sequence[float],
             weights: Sequence[float], *, scale: float = 1.0, confidence: float = P.DEFAULT_CONFIDENCE
             ) -> list[dict[str, Any]]:
    """Rows `METRIC` (judge-only), `METRIC_calibrated` (PPI) and `METRIC_human_only`, each value
    divided by `scale` (citations per sentence, for precision)."""
    import numpy as np
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

    pop = np.asarray(population_yhat, dtype=float)
    n, big_n = len(y), len(pop)
    rows: list[dict[str, Any]] = [{"metric": metric, "value": _scaled(pop.mean(), scale) if big_n else None,
                                   "ci_low": None, "ci_high": None,
                                   "method": "judges only (no interval for their errors)"}]
    if n >= 2 and big_n and scale > 0:
        Y, Yh, w = (np.asarray(v, dtype=float) for v in (y, yhat, weights))
        alpha = 1 - confidence
        point = float(np.ravel(ppi_mean_pointestimate(Y, Yh, pop, w=w))[0])
        low, high = (float(np.ravel(b)[0]) for b in ppi_mean_ci(Y, Yh, pop, alpha=alpha, w=w))
        h_low, h_high = (float(np.ravel(b)[0]) for b in classical_mean_ci(Y, w=w, alpha=alpha))
        human = float(np.sum(w * Y) / np.sum(w))
        rows.append({"metric": f"{metric}_calibrated", "value": _scaled(point, scale), "ci_low": _bound(low, scale),
                     "ci_high": _bound(high, scale), "method": "ppi++ mean (ppi-python ppi_mean_ci), weighted"})
        rows.append({"metric": f"{metric}_human_only", "value": _scaled(human, scale),
                     "ci_low": _bound(h_low, scale), "ci_high": _bound(h_high, scale),
                     "method": "weighted mean of the labels (ppi-python classical_mean_ci)"})
    for row in rows:
        row.update(confidence=confidence, labelled_items=n, population_items=big_n)
    return rows


def _scaled(value: float, scale: float) -> float:
    return float(value) / scale


def _bound(value: float, scale: float) -> float:
    """An interval end as a rate: scaled, and kept in [0, 1] where a normal interval spills over."""
    return min(1.0, max(0.0, _scaled(value, scale)))


def calibrated_rows(population: Sequence[Mapping[str, Any]], labelled: Sequence[Mapping[str, Any]],
                    confidence: float = P.DEFAULT_CONFIDENCE) -> list[dict[str, Any]]:
    """Judge-only, calibrated and human-only rows of every metric. `population`: published rows
    (`judged_sentences`); `labelled`: items with `weight`, `human_supported`, `grades`,
    `cited_labels` and the row's judge values under `judge`."""
    judge = [judge_values(r) for r in population]
    citations = sum(r["citations"] for r in population)
    rows = []
    for metric in METRICS:
        scale = citations / len(population) if metric == "citation_precision" and population else 1.0
        human = [human_values(i["human_supported"], i["grades"], i["cited_labels"])[metric] for i in labelled]
        rows.extend(estimate(metric, [j[metric] for j in judge], human, [i["judge"][metric] for i in labelled],
                             [i["weight"] for i in labelled], scale=scale, confidence=confidence))
    return rows
