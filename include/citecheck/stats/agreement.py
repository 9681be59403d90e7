"""Judge agreement with reference labels (SPEC §6, the calibration report): a judge's verdicts against them.

The reference is human labels for the calibration report, or the LLM judge for the daily
judge-agreement metrics. False pass = reference-unsupported sentences the judge passed, over
reference-unsupported sentences; false fail = reference-supported sentences it failed, over
reference-supported sentences.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citecheck.stats.ratio import Ratio


@dataclass(frozen=True, slots=True)
class Agreement:
    agreement: Ratio
    false_pass: Ratio
    false_fail: Ratio

    def as_dict(self) -> dict[str, Any]:
        return {
            "agreement": self.agreement.as_list(),
            "false_pass": self.false_pass.as_list(),
            "false_fail": self.false_fail.as_list(),
        }


def agreement(pairs: Iterable[tuple[bool, bool]]) -> Agreement:
    """Counts over (reference_supported, judge_supported) pairs."""
    agree = total = fp = neg = ff = pos = 0
    for reference, judged in pairs:
        total += 1
        agree += reference == judged
        if reference:
            pos += 1
            ff += not judged
        else:
            neg += 1
            fp += judged
    return Agreement(Ratio(agree, total), Ratio(fp, neg), Ratio(ff, pos))


def calibration_report(
    rows: Sequence[Mapping[str, Any]],
    *,
    reference: str = "human",
    judged: str = "judge",
    slice_keys: Sequence[str] = (),
) -> dict[str, Any]:
    """Overall and per-slice agreement for rows holding a reference and a judge boolean."""
    report: dict[str, Any] = {"overall": agreement((bool(r[reference]), bool(r[judged])) for r in rows).as_dict()}
    for key in slice_keys:
        values = sorted({str(r.get(key)) for r in rows})
        report[key] = {
            v: agreement(
                (bool(r[reference]), bool(r[judged])) for r in rows if str(r.get(key)) == v
            ).as_dict()
            for v in values
        }
    return report


def threshold_sweep(
    scores: Sequence[float], reference: Sequence[bool], thresholds: Sequence[float]
) -> list[dict[str, Any]]:
    """For a scoring judge (NLI): agreement and error rates at each threshold."""
    rows = []
    for t in thresholds:
        a = agreement(zip(reference, (s >= t for s in scores), strict=True))
        rows.append({"threshold": t, **a.as_dict()})
    return rows
