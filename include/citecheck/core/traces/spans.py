"""Reading trace files into spans: OTLP JSON (one `ExportTraceServiceRequest` a line, what the
OpenTelemetry Collector's file exporter writes) decoded with the OpenTelemetry protobuf classes,
and Langfuse observation exports (JSON Lines). Every span keeps its ids, times, service and
attributes; what cannot be read is a `Rejected` with the line and a clear reason, and the rest is
read on.

The protobuf classes are imported inside `read_otlp_line` (the `traces` extra): the core install
scores files without them.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# A trace attribute longer than this is refused (its trace is skipped with the reason): the
# default `[segmentation] max_answer_chars` would skip such an answer anyway, and a 10 MB prompt
# is a logging fault, not a passage.
MAX_ATTRIBUTE_CHARS = 1_000_000

# The kinds of reason a line, span or trace is not loaded for, as the load report counts them.
REASONS = {
    "not_json": "a line that is no JSON (a truncated line)",
    "not_otlp": "a line that is no OTLP ExportTraceServiceRequest / Langfuse record",
    "no_trace_id": "a span or observation without a trace id",
    "no_span_id": "a span or observation without its own id",
    "attribute_too_long": f"an attribute longer than {MAX_ATTRIBUTE_CHARS:,} characters",
    "wrong_type": "an attribute of the wrong type",
    "parent_missing": "a span whose parent never arrived (an incomplete trace)",
    "no_convention": "a trace with no span in the conventions read",
    "no_answer": "a trace with no model call that has an assistant answer",
    "no_passage_text": "an answer whose passages have no text (content capture off, ids only)",
    "not_storable": "a turn the warehouse cannot hold (the reason says which field)",
}

_HEX = re.compile(r"[0-9a-fA-F]*")
_ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


@dataclass(frozen=True)
class Rejected:
    """Input that could not be read: its line (and span, when known), why, and the kind of
    reason it is counted under (`REASONS`)."""

    line: int
    kind: str
    reason: str
    trace_id: str | None = None
    span_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in (("line", self.line), ("trace_id", self.trace_id), ("span_id", self.span_id),
                                  ("kind", self.kind), ("reason", self.reason)) if v is not None}


@dataclass
class Span:
    """One span (or Langfuse observation) as read: ids in lower-case hex, times in nanoseconds
    since the epoch, `attributes` as plain Python values (an OTLP array a list, a key/value
    list a dict), `events` as (name, attributes). `fault`: an attribute this span cannot be used
    with (too long): its trace is skipped with it as the reason. `observation`: a Langfuse
    observation's own fields (the Langfuse reader; None for OTLP)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    line: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    service: str | None = None
    fault: str | None = None
    observation: dict[str, Any] | None = None


def hex_ids_to_base64(request: Any) -> Any:
    """An OTLP/JSON request with its trace and span ids turned from hex (what OTLP/JSON and the
    Collector write) into base64 (what protobuf's JSON mapping reads for `bytes`). An id that is
    not hex of the right length raises ValueError naming it; an empty id stays empty."""
    for resource_spans in _list(request, "resourceSpans"):
        for scope_spans in _list(resource_spans, "scopeSpans"):
            for span in _list(scope_spans, "spans"):
                for key in ("traceId", "spanId", "parentSpanId"):
                    _convert_id(span, key)
                for link in _list(span, "links"):
                    for key in ("traceId", "spanId"):
                        _convert_id(link, key)
    return request


def _list(value: Any, key: str) -> list[Any]:
    items = value.get(key) if isinstance(value, dict) else None
    return items if isinstance(items, list) else []


def _convert_id(span: Any, key: str) -> None:
    if not isinstance(span, dict) or key not in span:
        return
    value = span[key]
    if not isinstance(value, str) or not _HEX.fullmatch(value) or len(value) not in (0, 2 * _ID_BYTES[key]):
        raise ValueError(f"{key} {str(value)[:40]!r} is not {2 * _ID_BYTES[key]} hex digits")
    span[key] = base64.b64encode(bytes.fromhex(value)).decode()


def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` message as a plain Python value."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, kind)


def _attributes(pairs: Iterable[Any]) -> tuple[dict[str, Any], str | None]:
    out, fault = {}, None
    for kv in pairs:
        value = any_value(kv.value)
        size = len(value) if isinstance(value, str) else 0
        if size > MAX_ATTRIBUTE_CHARS:
            fault = fault or (f"attribute {kv.key} is {size:,} characters (a trace attribute may have "
                              f"{MAX_ATTRIBUTE_CHARS:,})")
            continue
        out[kv.key] = value
    return out, fault


def _json_object(raw: bytes | str, line: int, what: str) -> dict[str, Any] | Rejected:
    """A line's JSON object, or why it is none (`not_json`: a truncated line; `not_otlp`)."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return Rejected(line, "not_json", f"not JSON (a truncated line?): {str(exc)[:120]}")
    if not isinstance(data, dict):
        return Rejected(line, "not_otlp", f"not {what} object ({type(data).__name__})")
    return data


def read_otlp_line(raw: bytes | str, line: int) -> tuple[list[Span], list[Rejected]]:
    """One line of an OTLP JSON file: its spans, and what could not be read (the whole line when
    it is no JSON or no `ExportTraceServiceRequest`; a span without a trace or span id)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    data = _json_object(raw, line, "an ExportTraceServiceRequest")
    if isinstance(data, Rejected):
        return [], [data]
    try:
        request = json_format.ParseDict(hex_ids_to_base64(data), ExportTraceServiceRequest(),
                                        ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError) as exc:
        return [], [Rejected(line, "not_otlp", f"not an OTLP ExportTraceServiceRequest: {str(exc)[:200]}")]
    spans, rejected = [], []
    for resource_spans in request.resource_spans:
        resource, _ = _attributes(resource_spans.resource.attributes)
        service = resource.get("service.name")
        for scope_spans in resource_spans.scope_spans:
            for s in scope_spans.spans:
                trace_id, span_id = s.trace_id.hex(), s.span_id.hex()
                if not trace_id or not span_id:
                    rejected.append(Rejected(line, "no_span_id" if trace_id else "no_trace_id",
                                             "span without a trace id" if not trace_id else "span without a span id",
                                             trace_id or None, span_id or None))
                    continue
                attributes, fault = _attributes(s.attributes)
                events = []
                for event in s.events:
                    event_attributes, event_fault = _attributes(event.attributes)
                    fault = fault or event_fault
                    events.append((event.name, event_attributes))
                spans.append(Span(trace_id, span_id, s.parent_span_id.hex() or None, s.name, s.start_time_unix_nano,
                                  s.end_time_unix_nano, line, attributes, events,
                                  service if isinstance(service, str) else None, fault))
    return spans, rejected


# -- Langfuse ----------------------------------------------------------------------------------

LANGFUSE_TYPES = {"GENERATION", "RETRIEVER", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "EMBEDDING", "EVALUATOR",
                  "GUARDRAIL"}


def _nanos(value: Any, key: str) -> int:
    if not isinstance(value, str):
        raise ValueError(f"{key} is not an ISO 8601 string")
    at = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if at.tzinfo is None:
        at = at.replace(tzinfo=dt.UTC)
    return int(at.timestamp()) * 1_000_000_000 + at.microsecond * 1000


def read_langfuse_line(raw: bytes | str, line: int,
                       traces: dict[str, dict[str, Any]]) -> tuple[list[Span], list[Rejected]]:
    """One line of a Langfuse export: an observation (`id`, `traceId`, `type`, `input`, `output`,
    `metadata`, `parentObservationId`, `startTime`, `endTime`, `model`) becomes a span; a trace
    (`id` without `traceId`: `sessionId`, `userId`) is kept in `traces` for its observations."""
    data = _json_object(raw, line, "a Langfuse observation or trace")
    if isinstance(data, Rejected):
        return [], [data]
    if "traceId" not in data and "type" not in data and isinstance(data.get("id"), str):
        traces[data["id"]] = data
        return [], []
    trace_id, span_id = data.get("traceId"), data.get("id")
    if not isinstance(trace_id, str) or not trace_id:
        return [], [Rejected(line, "no_trace_id", "observation without a trace id", None,
                             span_id if isinstance(span_id, str) else None)]
    if not isinstance(span_id, str) or not span_id:
        return [], [Rejected(line, "no_span_id", "observation without an id", trace_id)]
    kind = data.get("type")
    if kind not in LANGFUSE_TYPES:
        return [], [Rejected(line, "not_otlp", f"observation type {str(kind)[:40]!r} is not a Langfuse type",
                             trace_id, span_id)]
    try:
        start = _nanos(data.get("startTime"), "startTime")
        end = _nanos(data.get("endTime") or data.get("startTime"), "endTime")
    except ValueError as exc:
        return [], [Rejected(line, "wrong_type", str(exc)[:200], trace_id, span_id)]
    parent = data.get("parentObservationId")
    fault = None
    for key in ("input", "output"):
        size = len(json.dumps(data.get(key), default=str)) if data.get(key) is not None else 0
        if size > MAX_ATTRIBUTE_CHARS:
            fault = f"{key} is {size:,} characters (a trace attribute may have {MAX_ATTRIBUTE_CHARS:,})"
            data[key] = None
    parent = parent if isinstance(parent, str) and parent else None
    return [Span(trace_id, span_id, parent, str(data.get("name") or kind),
                 start, end, line, fault=fault, observation=data)], []


def sniff_langfuse(first: Mapping[str, Any] | None) -> bool:
    """Whether a file's first object is a Langfuse export line (not an OTLP request)."""
    return isinstance(first, Mapping) and "resourceSpans" not in first and ("traceId" in first or "id" in first)


def read_spans(lines: Iterable[bytes], kind: str) -> tuple[list[Span], list[Rejected], dict[str, dict[str, Any]]]:
    """The spans and rejections of every non-blank line, read as `kind` (otlp | langfuse), and
    the Langfuse trace records by id (empty for OTLP)."""
    spans: list[Span] = []
    rejected: list[Rejected] = []
    traces: dict[str, dict[str, Any]] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        got, bad = read_otlp_line(raw, number) if kind == "otlp" else read_langfuse_line(raw, number, traces)
        spans.extend(got)
        rejected.extend(bad)
    return spans, rejected, traces
