"""Reading a labelled review file: CSV (the export, filled in a spreadsheet) or JSON Lines.

Each row needs `item_id`, `label` (supported | partial | not_supported) and `citation_labels`
(`S1=full;S3=none`, or in JSON Lines also an object `{"S1": "full"}`) with one grade per cited
label of the item; it may also grade an uncited passage of the context. An item of a claims-mode
day may also carry `claim_labels` (`0=supported;1=not_supported`, or an object `{"0": "supported"}`):
one sentence label per claim of the item, every claim labelled once any is; left empty, the item is
labelled as a sentence only. A row whose `label` and `citation_labels` are both empty is not
labelled yet and is passed over. A bad row (unknown
item, unknown value, missing field, a cited label left ungraded) is reported with its line and
reason; the other rows load.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citecheck.review import CITATION_GRADES, SENTENCE_LABELS


@dataclass
class LabelFile:
    """What a file held: valid rows (`item_id`, `label`, `citation_labels`, `source`), bad rows
    with their line and reason, the lines not labelled yet, and lines a later line replaced."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    unlabelled: list[int] = field(default_factory=list)
    replaced: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"valid": len(self.rows), "errors": self.errors, "unlabelled": len(self.unlabelled),
                "replaced": self.replaced}


class RowError(ValueError):
    """One row's problem, worded for the reviewer."""


def read_label_file(path: str | Path, known: Callable[[list[str]], Mapping[str, list[str]]],
                    fmt: str | None = None,
                    claims: Callable[[list[str]], Mapping[str, list[int]]] | None = None) -> LabelFile:
    """Parse and validate a file. `known(ids)` returns, for the ids a stored sample holds, the
    labels each item's reviewer grades (`citecheck.warehouse.review.known_items`); `claims(ids)`
    the claim indexes of each item's sentence (`citecheck.warehouse.review.item_claims`)."""
    path = Path(path)
    fmt = fmt or ("jsonl" if path.suffix.lower() in (".jsonl", ".json", ".ndjson") else "csv")
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"unknown label file format {fmt!r}; expected csv or jsonl")
    text = path.read_text(encoding="utf-8-sig")
    raw = list(_csv_rows(text) if fmt == "csv" else _jsonl_rows(text))
    ids = [r["item_id"].strip() for _, r, _ in raw if isinstance(r, Mapping) and isinstance(r.get("item_id"), str)]
    cited_of = known(sorted(set(ids)))
    claims_of = claims(sorted(set(ids))) if claims is not None else {}
    out = LabelFile()
    by_item: dict[str, int] = {}
    for line, row, problem in raw:
        try:
            if problem:
                raise RowError(problem)
            parsed = validate_row(row, cited_of, claims_of)
        except RowError as exc:
            out.errors.append({"line": line, "item_id": _item_of(row), "reason": str(exc)})
            continue
        if parsed is None:
            out.unlabelled.append(line)
            continue
        parsed["source"] = f"{path.name}:{line}"
        if parsed["item_id"] in by_item:  # the later line wins, as a reimport would
            earlier = by_item[parsed["item_id"]]
            out.replaced.append({"line": out.rows[earlier]["line"], "item_id": parsed["item_id"],
                                 "replaced_by_line": line})
            out.rows[earlier] = {**parsed, "line": line}
        else:
            by_item[parsed["item_id"]] = len(out.rows)
            out.rows.append({**parsed, "line": line})
    return out


def _item_of(row: Any) -> str | None:
    return row.get("item_id") if isinstance(row, Mapping) and isinstance(row.get("item_id"), str) else None


def _csv_rows(text: str) -> Iterator[tuple[int, Any, str | None]]:
    """(first line of the record, the row, a problem) per CSV record; a missing column is a
    problem of every row."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [c for c in ("item_id", "label", "citation_labels") if c not in header]
    start = 2
    for row in reader:
        problem = None
        if missing:
            problem = f"missing column {', '.join(missing)}"
        elif None in row:
            problem = "more cells than the header has columns"
        yield start, row, problem
        start = reader.line_num + 1


def _jsonl_rows(text: str) -> Iterator[tuple[int, Any, str | None]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, None, f"not valid JSON ({exc.msg})"
            continue
        yield number, row, None if isinstance(row, dict) else "not a JSON object"


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or (
        isinstance(value, (dict, list)) and not value)


def validate_row(row: Mapping[str, Any], cited_of: Mapping[str, list[str]],
                 claims_of: Mapping[str, list[int]] | None = None) -> dict[str, Any] | None:
    """The clean row, None when it is not labelled yet, RowError when it is bad."""
    item = row.get("item_id")
    if _blank(item):
        raise RowError("missing field item_id")
    if not isinstance(item, str):
        raise RowError(f"bad value for item_id: {item!r}")
    item = item.strip()
    if "label" not in row:
        raise RowError("missing field label")
    if "citation_labels" not in row:
        raise RowError("missing field citation_labels")
    label, grades = row.get("label"), row.get("citation_labels")
    if _blank(label) and _blank(grades):
        return None
    if item not in cited_of:
        raise RowError(f"unknown item {item!r} (not in any exported review sample)")
    if _blank(label):
        raise RowError("missing field label")
    label = sentence_label(label)
    cited = cited_of[item]
    parsed = citation_grades(grades)
    ungraded = [lab for lab in cited if lab not in parsed]
    if ungraded:
        raise RowError(f"missing citation label for {', '.join(ungraded)} (grade every cited label)")
    per_claim = claim_labels(row.get("claim_labels"), (claims_of or {}).get(item, []))
    return {"item_id": item, "label": label, "citation_labels": parsed, "claim_labels": per_claim}


def _pairs(value: Any, column: str, form: str) -> list[tuple[str, Any]]:
    """A `KEY=value;KEY=value` cell (or a JSON object) of `column` as (key, value) pairs, in order;
    `form` says what one entry looks like in the error."""
    if isinstance(value, Mapping):
        return [(str(k), v) for k, v in value.items()]
    if not isinstance(value, str):
        raise RowError(f"bad value for {column}: {value!r}")
    pairs = []
    for entry in (e.strip() for e in value.replace("\n", ";").split(";")):
        if not entry:
            continue
        if "=" not in entry:
            raise RowError(f"bad value for {column}: {entry!r} is not {form}")
        key, _, text = entry.partition("=")
        pairs.append((key.strip(), text))
    return pairs


def claim_labels(value: Any, claims: list[int]) -> dict[str, str]:
    """`0=supported;1=partial` (or an object) → {claim index: sentence label}, every claim of the
    item labelled; {} when empty (the item labelled as a sentence only)."""
    if _blank(value):
        return {}
    pairs = _pairs(value, "claim_labels", "CLAIM=supported|partial|not_supported")
    if not claims:
        raise RowError("claim_labels given, but the item's sentence has no claims (a sentence-mode day)")
    out: dict[str, str] = {}
    for key, text in pairs:
        if key not in {str(c) for c in claims}:
            raise RowError(f"bad value for claim_labels: no claim {key!r} (the item's claims: "
                           f"{', '.join(map(str, claims))})")
        try:
            given = sentence_label(text)
        except RowError:
            raise RowError(f"bad value for claim_labels: {key}={text} "
                           f"(expected {', '.join(SENTENCE_LABELS)})") from None
        if key in out and out[key] != given:
            raise RowError(f"bad value for claim_labels: claim {key} labelled twice ({out[key]}, {given})")
        out[key] = given
    unlabelled = [str(c) for c in claims if str(c) not in out]
    if unlabelled:
        raise RowError(f"missing claim label for claim {', '.join(unlabelled)} (label every claim of the item)")
    return out


def sentence_label(value: Any) -> str:
    """`supported` / `partial` / `not_supported` (case, spaces and hyphens forgiven)."""
    text = str(value).strip().lower().replace("-", "_").replace(" ", "_") if isinstance(value, str) else None
    if text not in SENTENCE_LABELS:
        raise RowError(f"bad value for label: {value!r} (expected {', '.join(SENTENCE_LABELS)})")
    return text


def citation_grades(value: Any) -> dict[str, str]:
    """`S1=full;S3=none` (or an object) → {label: grade}."""
    if _blank(value):
        return {}
    pairs = _pairs(value, "citation_labels", "LABEL=full|partial|none")
    out: dict[str, str] = {}
    for key, grade in pairs:
        g = grade.strip().lower() if isinstance(grade, str) else grade
        if not key or g not in CITATION_GRADES:
            raise RowError(f"bad value for citation_labels: {key}={grade} (expected {', '.join(CITATION_GRADES)})")
        if key in out and out[key] != g:
            raise RowError(f"bad value for citation_labels: {key} graded twice ({out[key]}, {g})")
        out[key] = g
    return out
