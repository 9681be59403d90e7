"""Loading trace files as turns (`citecheck load-traces`, and the daily DAG's `[source] traces`):
read every file of the patterns together (`citecheck.core.traces`), skip the turns already stored
(idempotent by trace and span id), number the new ones in their conversations and load them as
one `load-turns` would (the `source_loads` ledger)."""

from __future__ import annotations

import datetime as dt
import glob
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from citecheck.core.config import Config
from citecheck.core.traces import number_turns, read_traces
from citecheck.warehouse import conversation_turn_times, load_source_rows, source_rows, stored_turn_ids


class NoTraceFiles(ValueError):
    """No file matches the given paths or globs."""


def trace_files(patterns: Iterable[str]) -> list[Path]:
    """The files of paths or globs, each once, in name order within a glob."""
    files: list[Path] = []
    for pattern in patterns:
        found = [Path(pattern)] if Path(pattern).is_file() else [Path(p) for p in sorted(glob.glob(pattern))]
        files += [f for f in found if f not in files and f.is_file()]
    return files


def load_trace_files(engine: Engine, patterns: Iterable[str], config: Config,
                     convention: str = "auto") -> dict[str, Any]:
    """Load the turns of the trace files; the report: files, spans, turns read, loaded, already
    loaded, the label sources per metric day, what was not loaded counted by kind, and each
    problem with its line and reason."""
    patterns = list(patterns)
    files = trace_files(patterns)
    if not files:
        raise NoTraceFiles(f"no trace file matches {', '.join(patterns)}")
    lines: list[bytes] = []
    for path in files:
        lines += path.read_bytes().splitlines()
    read = read_traces(lines, config.marker_re, convention)
    turns = [t.turn for t in read.assembled.turns]
    known = stored_turn_ids(engine, (t["turn_id"] for t in turns))
    new = [t for t in turns if t["turn_id"] not in known]
    number_turns(new, conversation_turn_times(engine, {t["conversation_id"] for t in new}))
    rows, not_storable = [], []
    for turn in new:
        try:
            rows.append(source_rows(turn, config.assume_zone))
        except ValueError as exc:
            not_storable.append({"turn_id": turn["turn_id"], "kind": "not_storable", "reason": str(exc)[:300]})
    report = load_source_rows(engine, rows)
    problems = [r.as_dict() for r in read.rejected] + [s.as_dict() for s in read.assembled.skipped] + not_storable
    return {"files": [str(f) for f in files], "format": read.file_kind, "spans": read.spans,
            "traces_read": len(turns), "loaded": report.loaded, "already_loaded": len(known),
            "label_sources": read.assembled.label_sources_by_day(config.timezone),
            "not_loaded": dict(sorted(Counter(p["kind"] for p in problems).items())), "problems": problems}


def load_configured_traces(engine: Engine, config: Config, day: dt.date | None = None) -> dict[str, Any] | None:
    """The daily DAG's first step: load `[source] traces` (a path or glob; `{day}` in it is the
    run's day, YYYY-MM-DD) when configured and matching; None when not configured."""
    pattern = (config.extra.get("source") or {}).get("traces")
    if not pattern:
        return None
    if day is not None:
        pattern = pattern.replace("{day}", day.isoformat())
    try:
        return load_trace_files(engine, [pattern], config)
    except NoTraceFiles:
        return {"files": [], "loaded": 0, "problems": []}
