"""A canonical, order-free digest of what a warehouse published: the regroup's before/after check.

`published_digest` reads `daily_metrics`, `sentence_verdicts` and `citation_verdicts` with the
columns that existed when the baseline was recorded, so later additions (new columns, new
metrics, new built-in slices) do not count as a change, while any change to a recorded row does.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import sqlalchemy as sa

METRIC_COLUMNS = ("day", "slice_name", "slice_value", "metric", "averaging", "numerator", "denominator", "value",
                  "answers", "sentences")
SENTENCE_COLUMNS = ("day", "turn_id", "sentence_index", "conversation_id", "text", "labels", "unknown_labels",
                    "stale_labels", "check_worthy", "non_claim_reason", "attached", "verdict", "score",
                    "contradiction", "supported_elsewhere_by", "judge", "judge_version", "reason", "llm")
CITATION_COLUMNS = ("day", "turn_id", "sentence_index", "label", "status", "check_worthy", "alone", "rest",
                    "credited")
TABLES = {"daily_metrics": METRIC_COLUMNS, "sentence_verdicts": SENTENCE_COLUMNS,
          "citation_verdicts": CITATION_COLUMNS}
SLICES_ADDED_SINCE = frozenset(("language",))  # built-in slices added after the baseline: new rows, outside it


def _canonical(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value if isinstance(value, (int, bool, list, dict, type(None))) else str(value)


def published_rows(engine: sa.Engine, table: str, metrics: set[str] | None = None) -> list[dict[str, Any]]:
    """The published rows of `table` (recorded columns only), sorted; `metrics` keeps only those."""
    columns = TABLES[table]
    with engine.connect() as conn:
        rows = conn.execute(sa.text(f"SELECT {', '.join(columns)} FROM {table}")).mappings().all()
    out = [{c: _canonical(r[c]) for c in columns} for r in rows]
    if metrics is not None and table == "daily_metrics":
        out = [r for r in out if r["metric"] in metrics and r["slice_name"] not in SLICES_ADDED_SINCE]
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def published_digest(engine: sa.Engine, metrics: set[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per table: row count and sha256 of the canonical rows."""
    digest = {}
    for table in TABLES:
        rows = published_rows(engine, table, metrics)
        blob = json.dumps(rows, sort_keys=True, default=str).encode()
        digest[table] = {"rows": len(rows), "sha256": hashlib.sha256(blob).hexdigest()}
    return digest
