"""`citecheck gate`: the release decision a CI job runs after scoring a candidate (a prompt, a
model, a retrieval change) on a fixed question set (SPEC §5.1).

Every criterion is decided on the candidate's `score` output (its bound, on its value or its
interval, in its scope). With `--base` (the current version's `score` output on the same
questions), a criterion's non-inferiority bounds are checked on the paired difference candidate −
base (`citecheck compare`: pairs by `turn_id`, its 95% interval with the question as the cluster):

- `max_drop = d`: fails when the interval's lower end is below −d (the candidate may be worse by
  more than d);
- `max_rise = r`: fails when the interval's upper end is above r (for rates where lower is
  better, such as `unsupported_rate`).

A criterion passes only when each of its checks passes; a check that cannot be made (an empty
scope, a null metric, a difference without an interval, non-inferiority bounds without `--base`)
is `no_data`, never a pass. The gate also counts what it could not score (`core.coverage`): the
candidate's skipped turns and, with `--base`, each side's turns without a partner; beyond the
criteria file's `[gate] max_skipped_share` / `max_unpaired_share` (unstated: none) the release
fails. The release passes only when every criterion and every coverage check passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from citecheck.core.coverage import decision_with, format_check, skipped_check, unpaired_checks
from citecheck.core.criteria import (
    FAIL,
    NO_DATA,
    PASS,
    Criteria,
    CriteriaEvaluator,
    Criterion,
    CriterionResult,
    attribute_in_scope,
    load_criteria_file,
    overall_decision,
)
from citecheck.features.compare import compare, read_score_file


def _scoped(turns: Sequence[Mapping[str, Any]], criterion: Criterion) -> list[Mapping[str, Any]]:
    return [t for t in turns if attribute_in_scope(criterion, t.get("attributes") or {})]


def _difference(criterion: Criterion, base: Sequence[Mapping[str, Any]], candidate: Sequence[Mapping[str, Any]],
                key: str) -> dict[str, Any]:
    """The paired difference candidate − base of the criterion's metric in its scope, and the
    decision of its non-inferiority bounds."""
    result = compare(_scoped(base, criterion), _scoped(candidate, criterion), key, metrics=(criterion.metric,))
    diff = result["metrics"][criterion.metric][criterion.averaging]
    out = {"base": diff["base"], "difference": diff["difference"], "ci_low": diff["ci_low"],
           "ci_high": diff["ci_high"], "pairs": result["paired"], "max_drop": criterion.max_drop,
           "max_rise": criterion.max_rise}
    if diff["ci_low"] is None or diff["ci_high"] is None:
        out["decision"] = NO_DATA
    else:
        dropped = criterion.max_drop is not None and diff["ci_low"] < -criterion.max_drop
        rose = criterion.max_rise is not None and diff["ci_high"] > criterion.max_rise
        out["decision"] = FAIL if dropped or rose else PASS
    return out


def gate(candidate: Sequence[Mapping[str, Any]], criteria: Criteria,
         base: Sequence[Mapping[str, Any]] | None = None, key: str = "turn_id", *,
         candidate_skipped: int = 0) -> dict[str, Any]:
    """Decide a release from `score` output turns (see the module doc); `candidate_skipped`: the
    candidate's input turns its `score` skipped."""
    evaluator = CriteriaEvaluator(criteria)
    for turn in candidate:
        evaluator.add_record(str(turn.get("turn_id")), turn.get("attributes") or {}, turn["counts"])
    lines = []
    for result in evaluator.results():
        c = result.criterion
        line = result.as_dict()
        checks = [result.decision] if c.bound_kind is not None else []
        if c.max_drop is not None or c.max_rise is not None:
            if base is None:
                line["versus_base"] = {"decision": NO_DATA, "reason": "max_drop / max_rise need --base"}
            else:
                line["versus_base"] = _difference(c, base, candidate, key)
            checks.append(line["versus_base"]["decision"])
        line["decision"] = overall_decision(checks)
        lines.append(line)
    failing = evaluator.failing_answers()
    checks = [skipped_check(candidate_skipped, len(candidate) + candidate_skipped, criteria.limits)]
    if base is not None:
        unpaired = compare(base, candidate, key, metrics=())["dropped_keys"]
        checks += unpaired_checks(len(unpaired["base"]), len(base), len(unpaired["candidate"]), len(candidate),
                                  criteria.limits)
    return {"decision": decision_with((line["decision"] for line in lines), checks), "criteria": lines,
            "coverage": [c.as_dict() for c in checks], "answers_failing": failing, "criteria_hash": criteria.hash,
            "paired_by": key if base is not None else None}


def gate_files(candidate_path: str | Path, criteria_path: str | Path, base_path: str | Path | None = None,
               key: str = "turn_id") -> dict[str, Any]:
    """`gate` on files: a criteria TOML file and one or two `citecheck score` JSON outputs.
    Raises CriteriaError or CompareError on invalid input."""
    criteria = load_criteria_file(criteria_path)
    candidate, skipped = read_score_file(candidate_path)
    base = read_score_file(base_path)[0] if base_path is not None else None
    out = gate(candidate, criteria, base, key, candidate_skipped=skipped)
    return {"candidate_file": str(candidate_path), "base_file": None if base_path is None else str(base_path),
            "criteria_file": str(criteria_path), **out}


def format_gate(result: Mapping[str, Any], heading: str = "release decision") -> str:
    """One line per criterion and the decision (`heading`: what is decided), for a CI log; also
    prints a published day's `criteria_results` (`citecheck metrics`)."""
    lines = []
    for line in result["criteria"]:
        line = {**line, "on": line.get("on", line.get("on_rule"))}
        value = "null" if line["value"] is None else f"{line['value']:.3f}"
        span = "" if line["ci_low"] is None else f" [{line['ci_low']:.3f}, {line['ci_high']:.3f}]"
        bound = "" if line["bound_kind"] is None else f", {line['bound_kind']} {line['bound']:g} on {line['on']}"
        text = f"{line['decision'].upper():<8}{line['criterion']}: {line['metric']} {value}{span}{bound}"
        if line["scope"] != "all":
            text += f" ({line['scope']}, {line['answers']} answers)"
        versus = line.get("versus_base")
        if versus is not None:
            if "reason" in versus:
                text += f"; vs base: {versus['reason']}"
            else:
                diff = "null" if versus["difference"] is None else f"{versus['difference']:+.3f}"
                vspan = "" if versus["ci_low"] is None else f" [{versus['ci_low']:+.3f}, {versus['ci_high']:+.3f}]"
                limits = ", ".join(f"{k} {versus[k]:g}" for k in ("max_drop", "max_rise") if versus[k] is not None)
                base = "null" if versus["base"] is None else f"{versus['base']:.3f}"
                text += f"; vs base {base}: {diff}{vspan} ({limits}, {versus['pairs']} pairs)"
        if line.get("failing_answers"):
            text += f"; {line['failing_answers']} answer(s) failing"
        lines.append(text)
    lines.extend(format_check(c) for c in result.get("coverage", ()))
    lines.append(f"{heading}: {result['decision']}")
    return "\n".join(lines)


__all__ = ["CriterionResult", "format_gate", "gate", "gate_files"]
