"""SPEC §5 invariants that catch dashboard bugs, checked on every output's metric rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from citecheck.core.metrics.definitions import CLAIM_RECALL_UPPER_BOUNDS, RATE_METRICS, RECALL_UPPER_BOUNDS


def invariant_violations(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """SPEC §5 invariants on metric rows: rates in [0, 1]; recall ≤ attachment (on the same
    population) and recall ≤ faithfulness per slice and averaging."""
    problems: list[str] = []
    by_key: dict[tuple[str, str, str], dict[str, float | None]] = {}
    for row in rows:
        key = (row["slice_name"], row["slice_value"], row["averaging"])
        by_key.setdefault(key, {})[row["metric"]] = row["value"]
        v = row["value"]
        if row["metric"] in RATE_METRICS and v is not None and not -1e-9 <= v <= 1 + 1e-9:
            problems.append(f"{row['metric']} {key} = {v} is outside [0, 1]")
    for key, m in by_key.items():
        for recall_name, bounds in (("citation_recall", RECALL_UPPER_BOUNDS),
                                    ("claim_recall", CLAIM_RECALL_UPPER_BOUNDS)):
            recall = m.get(recall_name)
            if recall is None:
                continue
            for bound in bounds:
                b = m.get(bound)
                if b is not None and recall > b + 1e-9:
                    problems.append(f"{recall_name} {recall} > {bound} {b} for {key}")
    return problems
