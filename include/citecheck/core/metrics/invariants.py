"""SPEC §5 invariants that catch dashboard bugs, checked on every output's metric rows: THE table
of them. `invariant_violations` checks rows in Python (`score`, the property tests); the job's
validation gate (`job/validation.py`) turns the same table into Great Expectations expectations.

- every metric's value lies in its range (`Metric.bounds`: a rate in [0, 1], a per-1,000 count
  >= 0), one rule per kind of range (`definitions.BOUNDS_RULES`);
- `ORDERED`: a metric never exceeds another on the same (slice, averaging): recall counts
  supported sentences, which are attached (`judged_attachment_rate`) and faithful (`faithfulness`);
  the same for claims in a claims mode.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from citecheck.core.metrics.definitions import BOUNDS_RULES, BY_NAME, REGISTRY

TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class Ordered:
    """`lower` <= `upper` on every (slice, averaging) where both have a value."""

    rule: str
    lower: str
    upper: str

    @property
    def checks(self) -> str:
        return f"{self.lower} <= {self.upper} per (day, slice, averaging)"


ORDERED = (
    Ordered("recall_le_judged_attachment", "citation_recall", "judged_attachment_rate"),
    Ordered("recall_le_faithfulness", "citation_recall", "faithfulness"),
    Ordered("claim_recall_le_judged_attachment", "claim_recall", "claim_judged_attachment_rate"),
    Ordered("claim_recall_le_faithfulness", "claim_recall", "claim_faithfulness"),
)


def bounds_groups() -> dict[str, tuple[tuple[float, float | None], tuple[str, ...]]]:
    """rule -> (range, the metrics it covers), from the registry."""
    out: dict[str, tuple[tuple[float, float | None], tuple[str, ...]]] = {}
    for bounds, (rule, _) in BOUNDS_RULES.items():
        covered = tuple(m.name for m in REGISTRY if m.bounds == bounds)
        if covered:
            out[rule] = (bounds, covered)
    return out


def invariant_violations(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The invariants above, on metric rows: each problem in words."""
    problems: list[str] = []
    by_key: dict[tuple[str, str, str], dict[str, float | None]] = {}
    for row in rows:
        key = (row["slice_name"], row["slice_value"], row["averaging"])
        by_key.setdefault(key, {})[row["metric"]] = row["value"]
        v, m = row["value"], BY_NAME.get(row["metric"])
        if m is None or v is None:
            continue
        low, high = m.bounds
        if v < low - TOLERANCE or (high is not None and v > high + TOLERANCE):
            problems.append(f"{row['metric']} {key} = {v} is outside [{low:g}, {'∞' if high is None else f'{high:g}'}]")
    for key, values in by_key.items():
        for o in ORDERED:
            lower, upper = values.get(o.lower), values.get(o.upper)
            if lower is not None and upper is not None and lower > upper + TOLERANCE:
                problems.append(f"{o.lower} {lower} > {o.upper} {upper} for {key}")
    return problems
