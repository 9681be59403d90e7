"""Turns from traces (SPEC §1 "Turns from traces", `citecheck load-traces`), one concern a module:

- `spans`: reading OTLP JSON lines (protobuf classes, imported where used: the `traces` extra)
  and Langfuse observation exports into `Span`s, with what could not be read (`Rejected`)
- `conventions`: what a span says in OpenInference, OpenTelemetry GenAI or Langfuse terms (`Call`)
- `assemble`: one turn per trace (`TraceTurn`), the passages labelled as the prompt showed them
  (`label_source`), or the trace skipped with its reason
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from citecheck.core.traces.assemble import LABEL_SOURCES, Assembled, TraceTurn, assemble, number_turns, turn_id_of
from citecheck.core.traces.conventions import CONVENTIONS
from citecheck.core.traces.spans import MAX_ATTRIBUTE_CHARS, REASONS, Rejected, Span, read_spans


@dataclass
class TraceRead:
    """A trace file read: its turns, the traces skipped and the lines or spans rejected."""

    assembled: Assembled
    rejected: list[Rejected] = field(default_factory=list)
    spans: int = 0
    file_kind: str = "otlp"


def file_kind(first_line: bytes | None, convention: str) -> str:
    """otlp or langfuse: from `--convention`, else from the file's first line."""
    if convention == "langfuse":
        return "langfuse"
    if convention != "auto" or first_line is None:
        return "otlp"
    try:
        first = json.loads(first_line)
    except ValueError:
        return "otlp"
    return "otlp" if not isinstance(first, dict) or "resourceSpans" in first else "langfuse"


def read_traces(lines: Iterable[bytes], marker_re: re.Pattern[str], convention: str = "auto") -> TraceRead:
    """The turns of a trace file's lines (`convention`: auto or one of `CONVENTIONS`)."""
    lines = list(lines)
    kind = file_kind(next((line for line in lines if line.strip()), None), convention)
    spans, rejected, langfuse_traces = read_spans(lines, kind)
    assembled = assemble(spans, marker_re, convention, langfuse_traces)
    return TraceRead(assembled, rejected, len(spans), kind)


__all__ = ["CONVENTIONS", "LABEL_SOURCES", "MAX_ATTRIBUTE_CHARS", "REASONS", "Assembled", "Rejected", "Span",
           "TraceRead", "TraceTurn", "assemble", "file_kind", "number_turns", "read_traces", "turn_id_of"]
