"""Paired comparison of two versions scored on the same questions (`citecheck compare`).

Two `score` outputs — the same questions answered by two versions (prompt, model, retrieval) or
judged by two judges — are paired item by item on a key (`turn_id`, `question` or
`attributes.NAME`). For every headline metric, micro and macro, it reports base, candidate, the
difference candidate − base, a paired 95% interval of the difference and a two-sided p-value:

- micro: the difference of two ratios of totals over the paired items. Its variance is the
  linearized (Taylor) variance with the item as the cluster, computed on the pairs, so what the
  two versions share about a question cancels (citecheck.stats.intervals.ClusterTotals on the
  base and candidate counts side by side); t with (pairs − 1) degrees of freedom.
- macro: the mean over items of candidate value − base value, on the items where both versions
  have a value (the macro rule: answers with a zero denominator do not vote): a paired t-test
  (`scipy.stats.ttest_rel`) and its confidence interval.

Items whose key has no partner are dropped and listed; a key present twice in one file is an error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from citecheck.core.metrics import BY_NAME, CLAIM_METRICS, METRICS, SCORED_HEADLINE_METRICS, count_keys, f1_value
from citecheck.stats.intervals import CONFIDENCE, ClusterTotals, harmonic_mean_gradient

KEY_CHOICES = "turn_id | question | attributes.NAME"
SIDES = ("base", "candidate")


class CompareError(ValueError):
    """The inputs cannot be compared (bad file, missing or duplicated keys); nothing is reported."""


def read_score_output(path: str | Path) -> list[dict[str, Any]]:
    """The turns of a `citecheck score` JSON output, checked to carry per-turn counts and metrics."""
    return read_score_file(path)[0]


def read_score_file(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """(the scored turns, how many input turns it skipped) of a `citecheck score` JSON output."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CompareError(f"{path}: not JSON ({exc})") from exc
    turns = data.get("turns") if isinstance(data, dict) else None
    if not isinstance(turns, list):
        raise CompareError(f"{path}: not a `citecheck score` output (no 'turns' list)")
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("counts"), dict) or not isinstance(
                turn.get("metrics"), dict):
            raise CompareError(f"{path}: turn {i} has no 'counts' and 'metrics' (is this a judged `score` output?)")
    skipped = data.get("skipped", [])
    if not isinstance(skipped, list):
        raise CompareError(f"{path}: 'skipped' is not a list (is this a `citecheck score` output?)")
    return turns, len(skipped)


def item_key(turn: Mapping[str, Any], key: str) -> str:
    """The value of `key` (turn_id, question, attributes.NAME) for one scored turn."""
    if key in ("turn_id", "question"):
        value = turn.get(key)
    elif key.startswith("attributes.") and len(key) > len("attributes."):
        value = (turn.get("attributes") or {}).get(key[len("attributes."):])
    else:
        raise CompareError(f"unknown key {key!r}; expected {KEY_CHOICES}")
    if value is None or value == "":
        raise CompareError(f"turn {turn.get('turn_id')!r} has no {key}")
    return str(value)


def _by_key(turns: Sequence[Mapping[str, Any]], key: str, side: str) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    duplicated: list[str] = []
    for turn in turns:
        k = item_key(turn, key)
        if k in out:
            duplicated.append(k)
        out[k] = turn
    if duplicated:
        shown = ", ".join(repr(k) for k in sorted(set(duplicated))[:10])
        raise CompareError(f"{side}: {len(set(duplicated))} {key} value(s) appear more than once "
                           f"({shown}); keys must be unique to pair items")
    return out


def compare(base: Sequence[Mapping[str, Any]], candidate: Sequence[Mapping[str, Any]], key: str = "turn_id",
            metrics: Sequence[str] | None = None, confidence: float = CONFIDENCE) -> dict[str, Any]:
    """Pair two scored outputs' turns by `key` and compare every metric (see the module doc); by
    default the headline metrics, and the claim metrics when both outputs were scored in a claims mode."""
    sides = {"base": _by_key(base, key, "base"), "candidate": _by_key(candidate, key, "candidate")}
    paired = [k for k in sides["base"] if k in sides["candidate"]]
    pairs = [(sides["base"][k], sides["candidate"][k]) for k in paired]
    if metrics is None:
        claims = bool(pairs) and all("check_worthy_claims" in t.get("counts", {}) for pair in pairs for t in pair)
        metrics = (*SCORED_HEADLINE_METRICS, *(m for m in METRICS if claims and m in CLAIM_METRICS))
    out: dict[str, Any] = {
        "key": key,
        "confidence": confidence,
        "paired": len(pairs),
        "dropped": len(sides["base"]) + len(sides["candidate"]) - 2 * len(pairs),
        "dropped_keys": {"base": sorted(k for k in sides["base"] if k not in sides["candidate"]),
                         "candidate": sorted(k for k in sides["candidate"] if k not in sides["base"])},
        "metrics": {},
    }
    totals = _paired_totals(pairs, metrics)
    for metric in metrics:
        out["metrics"][metric] = {"micro": _micro(totals, metric, len(pairs), confidence),
                                  "macro": _macro(pairs, metric, confidence)}
    return out


def _count_keys(metric: str) -> tuple[str, ...]:
    if metric not in BY_NAME:
        raise CompareError(f"no metric {metric!r}")
    return count_keys(metric)


def _paired_totals(pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
                   metrics: Sequence[str]) -> ClusterTotals:
    """Per pair, both versions' counts side by side ("base:supported", "candidate:supported", …)."""
    counts = tuple(dict.fromkeys(k for m in metrics for k in _count_keys(m)))
    totals = ClusterTotals([f"{side}:{k}" for side in SIDES for k in counts])
    for b, c in pairs:
        totals.add([float(turn["counts"].get(k, 0)) for turn in (b, c) for k in counts])
    return totals


def _ratio_and_gradient(totals: ClusterTotals, side: str, metric: str) -> tuple[float | None, dict[str, float]]:
    """A side's micro value over the pairs and its gradient over that side's totals."""
    parts = BY_NAME[metric].harmonic_mean_of
    if parts is not None:  # F1 of two ratios (`f1_value`), its gradient through both
        recall, g_recall = _ratio_and_gradient(totals, side, parts[0])
        precision, g_precision = _ratio_and_gradient(totals, side, parts[1])
        if recall is None or precision is None:
            return None, {}
        value = f1_value(recall, precision)
        d_recall, d_precision = harmonic_mean_gradient(recall, precision)
        return value, {**{k: d_recall * v for k, v in g_recall.items()},
                       **{k: d_precision * v for k, v in g_precision.items()}}
    num, den, scale = METRICS[metric]
    x = totals.total(f"{side}:{den}")
    if not x:
        return None, {}
    value = scale * totals.total(f"{side}:{num}") / x
    if num == den:
        return value, {}
    return value, {f"{side}:{num}": scale / x, f"{side}:{den}": -value / x}


def _micro(totals: ClusterTotals, metric: str, n: int, confidence: float) -> dict[str, Any]:
    base, g_base = _ratio_and_gradient(totals, "base", metric)
    cand, g_cand = _ratio_and_gradient(totals, "candidate", metric)
    if base is None or cand is None:
        return _result(base, cand, None, None, n, confidence)
    gradient = dict(g_cand)
    for k, v in g_base.items():
        gradient[k] = gradient.get(k, 0.0) - v
    variance = totals.linearized_variance(gradient) if n >= 2 else None
    return _result(base, cand, cand - base, variance, n, confidence)


def _macro(pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]], metric: str,
           confidence: float) -> dict[str, Any]:
    both = [(b["metrics"].get(metric), c["metrics"].get(metric)) for b, c in pairs]
    both = [(float(b), float(c)) for b, c in both if b is not None and c is not None]
    n = len(both)
    if not n:
        return _result(None, None, None, None, 0, confidence)
    base = math.fsum(b for b, _ in both) / n
    cand = math.fsum(c for _, c in both) / n
    diffs = [c - b for b, c in both]
    mean = math.fsum(diffs) / n
    variance = None
    if n >= 2:
        variance = math.fsum((d - mean) ** 2 for d in diffs) / (n - 1) / n
    return _result(base, cand, cand - base, variance, n, confidence)


def _result(base: float | None, cand: float | None, diff: float | None, variance: float | None, n: int,
            confidence: float) -> dict[str, Any]:
    """One comparison: values, difference, paired t interval (n − 1 df) and two-sided p-value."""
    from scipy import stats

    low = high = p_value = None
    if diff is not None and variance is not None and n >= 2:
        se = math.sqrt(variance)
        if se > 0:
            # the same t interval and p-value as scipy.stats.ttest_rel gives for the macro means
            # (checked in tests); written out once so micro's linearized variance uses it too
            half = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * se
            low, high = diff - half, diff + half
            p_value = float(2 * stats.t.sf(abs(diff) / se, n - 1))
        else:  # every pair moved by the same amount: no doubt left about the difference
            low = high = diff
            p_value = 1.0 if diff == 0 else 0.0
    return {"base": base, "candidate": cand, "difference": diff, "ci_low": low, "ci_high": high,
            "p_value": p_value, "items": n}


def compare_files(base_path: str | Path, candidate_path: str | Path, key: str = "turn_id") -> dict[str, Any]:
    """`compare` on two `citecheck score` JSON files, with their paths in the result."""
    out = compare(read_score_output(base_path), read_score_output(candidate_path), key)
    return {"base_file": str(base_path), "candidate_file": str(candidate_path), **out}


def format_comparison(result: Mapping[str, Any]) -> str:
    """The comparison as a readable table."""
    from citecheck.core.metrics.display import difference, format_value

    w = max(24, *(len(m) + 2 for m in result["metrics"]))  # 24 unless a claim metric's name is longer
    lines = [f"paired {result['paired']} items by {result['key']}; dropped {result['dropped']} without a partner",
             f"{'metric':<{w}}{'avg':<7}{'base':>8}{'cand':>8}{'diff':>11}  {'95% interval':<25}{'p':>8}{'n':>6}"]
    for metric, by in result["metrics"].items():
        for averaging in ("micro", "macro"):
            r = by[averaging]
            span = "" if r["ci_low"] is None else \
                f"[{difference(metric, r['ci_low'])}, {difference(metric, r['ci_high'])}]"
            p = "null" if r["p_value"] is None else f"{r['p_value']:.3g}"
            lines.append(f"{metric:<{w}}{averaging:<7}{format_value(metric, r['base']):>8}"
                         f"{format_value(metric, r['candidate']):>8}{difference(metric, r['difference']):>11}  "
                         f"{span:<25}{p:>8}{r['items']:>6}")
    for side, keys in result["dropped_keys"].items():
        if keys:
            shown = ", ".join(keys[:20]) + (f" (+{len(keys) - 20} more)" if len(keys) > 20 else "")
            lines.append(f"only in {side}: {shown}")
    return "\n".join(lines)


__all__ = ["CompareError", "compare", "compare_files", "format_comparison", "item_key", "read_score_output"]
