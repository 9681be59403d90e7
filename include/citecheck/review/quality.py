"""Judges against human labels (SPEC §6), per judge and slice, with intervals.

Judges: `first_stage` (NLI or the recorded judge; the cascade's first stage where an LLM decided),
`llm` (where the LLM judge gave a verified verdict), `final` (the published verdict). A judge
passes a sentence when it judged its cited passages support it (a sentence that cites nothing:
`uncited_supported`). The reviewer's `partial` counts as not supported. False pass = judged
supported among the reviewer's not-supported sentences; false fail = judged not supported among
the reviewer's supported ones; agreement over all. Each is given raw (counts of the labelled
items, Wilson interval) and weighted back to the population by 1 / inclusion probability. In a
claims mode the same measures compare the reviewers' claim labels with the published claim
verdicts (slice `claims`, judge `final`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from citecheck.core.turns import MAX_ATTRIBUTE_VALUE_CHARS
from citecheck.core.vocabulary import REPLY_SUPPORTED, SUPPORT_LEVELS, SUPPORTED_VERDICTS, is_judged
from citecheck.stats import proportions as P
from citecheck.stats.agreement import agreement

JUDGES = ("first_stage", "llm", "final")
DEFAULT_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))
DEFAULT_FALSE_PASS_TARGET = 0.10


def judge_passes(row: Mapping[str, Any]) -> dict[str, bool | None]:
    """Each judge's pass (None: that judge did not judge the sentence) from a published
    `sentence_verdicts` row."""
    final = row["verdict"] in SUPPORTED_VERDICTS
    first = row.get("first_stage") or None
    llm = row.get("llm") or None
    first_pass = bool(first.get("supported")) if first and row.get("attached") else final
    llm_pass = (llm.get("verdict") == REPLY_SUPPORTED) if llm and llm.get("status") == "ok" else None
    return {"first_stage": first_pass, "llm": llm_pass, "final": final}


def nli_score(row: Mapping[str, Any]) -> float | None:
    """The first stage's NLI score (best entailment over the cited passages' windows, read from
    the judgment cache's probabilities by the job), None when the first stage was no NLI judge."""
    first = row.get("first_stage") or None
    if first:
        return first.get("score") if first.get("judge") == "nli" else None
    return row.get("score") if row.get("judge") == "nli" else None


def consensus(labels: Sequence[Mapping[str, Any]]) -> tuple[bool, dict[str, str]]:
    """(human supported, grades) of an item over its reviewers: the majority; a tie counts as
    not supported, and a tied grade takes the lower one."""
    votes = sum(1 if lab["label"] == REPLY_SUPPORTED else -1 for lab in labels)
    grades: dict[str, str] = {}
    order = {grade: -rank for rank, grade in enumerate(SUPPORT_LEVELS)}  # none lowest
    for key in sorted({k for lab in labels for k in (lab["citation_labels"] or {})}):
        counts = Counter((lab["citation_labels"] or {}).get(key) for lab in labels)
        counts.pop(None, None)
        best = max(counts.values())
        grades[key] = min((g for g, n in counts.items() if n == best), key=order.__getitem__)
    return votes > 0, grades


def claim_consensus(labels: Sequence[Mapping[str, Any]]) -> dict[str, bool]:
    """claim index → human supported over the reviewers who labelled the item's claims: the
    majority, as `consensus` (a tie counts as not supported)."""
    votes: Counter[str] = Counter()
    for lab in labels:
        for claim, label in (lab.get("claim_labels") or {}).items():
            votes[str(claim)] += 1 if label == REPLY_SUPPORTED else -1
    return {claim: n > 0 for claim, n in sorted(votes.items())}


def claim_passes(verdict: str | None) -> dict[str, bool | None]:
    """The published claim verdict's pass (None: the claim was not judged), as `judge_passes`'s `final`."""
    return {"final": verdict in SUPPORTED_VERDICTS if is_judged(verdict) else None}


CLAIMS_SLICE = "claims"  # judge quality per claim: the reviewers' claim labels against the claim verdicts


def claim_quality_rows(claims: Sequence[Mapping[str, Any]], confidence: float = P.DEFAULT_CONFIDENCE
                       ) -> list[dict[str, Any]]:
    """Agreement, false pass and false fail of the published claim verdicts against the reviewers'
    claim labels (each claim weighted as its sentence's item), slice `claims`."""
    return _rows_for(claims, "final", CLAIMS_SLICE, "all", confidence)


def _rows_for(items: Sequence[Mapping[str, Any]], judge: str, slice_name: str, slice_value: str,
              confidence: float) -> list[dict[str, Any]]:
    judged = [i for i in items if i["passes"][judge] is not None]
    if not judged:
        return []
    counts = agreement((i["human_supported"], bool(i["passes"][judge])) for i in judged)
    negatives = [i for i in judged if not i["human_supported"]]
    positives = [i for i in judged if i["human_supported"]]
    measures = {
        "agreement": (counts.agreement, judged, lambda i: i["human_supported"] == i["passes"][judge]),
        "false_pass": (counts.false_pass, negatives, lambda i: bool(i["passes"][judge])),
        "false_fail": (counts.false_fail, positives, lambda i: not i["passes"][judge]),
    }
    rows = []
    for measure, (ratio, pool, hit) in measures.items():
        raw = P.wilson(ratio.numerator, ratio.denominator, confidence)
        wtd = P.weighted([hit(i) for i in pool], [i["weight"] for i in pool], confidence)
        for weighting, est in (("raw", raw), ("weighted", wtd)):
            rows.append({"judge": judge, "slice_name": slice_name, "slice_value": slice_value, "measure": measure,
                         "weighting": weighting, **est.as_dict(), "labelled_items": len(pool)})
    return rows


def slices_of(item: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """The slices an item belongs to: all, each turn attribute, and its citation count."""
    yield "all", "all"
    for key, value in sorted((item.get("attributes") or {}).items()):
        yield f"attr:{key}"[:200], str(value)[:MAX_ATTRIBUTE_VALUE_CHARS]
    n = len(item.get("cited_labels") or [])
    yield "citations", "2+" if n >= 2 else str(n)


def quality_rows(items: Sequence[Mapping[str, Any]], confidence: float = P.DEFAULT_CONFIDENCE
                 ) -> list[dict[str, Any]]:
    """Agreement, false pass and false fail per judge and slice (raw and weighted)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for item in items:
        for key in slices_of(item):
            groups[key].append(item)
    rows = []
    for (name, value), members in sorted(groups.items()):
        for judge in JUDGES:
            rows.extend(_rows_for(members, judge, name, value, confidence))
    return rows


def cohens_kappa(pairs: Sequence[tuple[str, str]], categories: Sequence[str]) -> dict[str, Any]:
    """Cohen's kappa of two reviewers' labels on shared items, with its interval
    (`statsmodels.stats.inter_rater.cohens_kappa`, asymptotic standard error)."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

    index = {c: k for k, c in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    for a, b in pairs:
        table[index[a], index[b]] += 1
    agree = float(np.trace(table))
    if not pairs:
        return {"value": None, "ci_low": None, "ci_high": None, "numerator": 0.0, "denominator": 0.0}
    expected = float((table.sum(0) * table.sum(1)).sum()) / len(pairs) ** 2
    if expected >= 1.0:  # both reviewers used one category only: kappa is undefined
        return {"value": None, "ci_low": None, "ci_high": None, "numerator": agree, "denominator": float(len(pairs))}
    res = sm_kappa(table, return_results=True)
    return {"value": float(res.kappa), "ci_low": float(res.kappa_low), "ci_high": float(res.kappa_upp),
            "numerator": agree, "denominator": float(len(pairs))}


def kappa_rows(labels: Sequence[Mapping[str, Any]], categories: Sequence[str]) -> list[dict[str, Any]]:
    """Cohen's kappa for every pair of reviewers with shared items (numerator: items they agree
    on, denominator: shared items)."""
    by_reviewer: dict[str, dict[str, str]] = defaultdict(dict)
    for lab in labels:
        by_reviewer[lab["reviewer"]][lab["item_id"]] = lab["label"]
    names = sorted(by_reviewer)
    rows = []
    for a_pos, a in enumerate(names):
        for b in names[a_pos + 1:]:
            shared = sorted(set(by_reviewer[a]) & set(by_reviewer[b]))
            if not shared:
                continue
            k = cohens_kappa([(by_reviewer[a][i], by_reviewer[b][i]) for i in shared], categories)
            rows.append({"judge": "reviewers", "slice_name": "reviewers", "slice_value": f"{a}|{b}",
                         "measure": "cohens_kappa", "weighting": "raw", **k, "method": "cohen (statsmodels)",
                         "labelled_items": len(shared)})
    return rows


def threshold_sweep(items: Sequence[Mapping[str, Any]], thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
                    false_pass_target: float = DEFAULT_FALSE_PASS_TARGET,
                    confidence: float = P.DEFAULT_CONFIDENCE) -> list[dict[str, Any]]:
    """False pass and false fail of the NLI first stage at each threshold, from the scores it
    already computed (nothing is re-scored): at threshold t the stage passes a sentence iff its
    best cited entailment is at least t, exactly the judge's own rule. Plus the lowest threshold
    whose weighted false-pass rate meets the target (the fewest false fails that do; None when
    none does), as measure `threshold_for_false_pass_target`."""
    scored = [i for i in items if i.get("nli_score") is not None]
    if not scored:
        return []
    rows = []
    meets: float | None = None
    for t in sorted(thresholds):
        swept = [{**i, "passes": {"first_stage": i["nli_score"] >= t}} for i in scored]
        for row in _rows_for(swept, "first_stage", "nli_threshold", f"{t:.2f}", confidence):
            if row["measure"] == "agreement":
                continue
            rows.append(row)
            if (meets is None and row["measure"] == "false_pass" and row["weighting"] == "weighted"
                    and row["value"] is not None and row["value"] <= false_pass_target):
                meets = t
    rows.append({"judge": "first_stage", "slice_name": "false_pass_target", "slice_value": f"{false_pass_target:g}",
                 "measure": "threshold_for_false_pass_target", "weighting": "weighted", "numerator": None,
                 "denominator": None, "value": meets, "ci_low": None, "ci_high": None,
                 "method": "lowest swept threshold with weighted false pass <= target", "labelled_items": len(scored)})
    return rows
