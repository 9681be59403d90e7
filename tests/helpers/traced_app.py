"""A RAG app as a team runs it, traced: turns (SPEC §1 dicts, e.g. the demo's) are played through
the real OpenAI and Anthropic SDKs, instrumented by `openinference-instrumentation-openai` /
`-anthropic` or the official `opentelemetry-instrumentation-openai-v2`, against the local fake
servers, with a retriever span written through the OpenTelemetry API. The spans are exported the
way the OpenTelemetry Collector's file exporter writes them: OTLP JSON, one
`ExportTraceServiceRequest` a line, trace and span ids in hex.

`play(turns, route)`: `route(turn) -> "openinference" | "otel-genai"` picks the instrumentation
of each markers turn (Anthropic-native turns always go through the OpenInference Anthropic
instrumentor). Each trace's spans are moved in time so that its answer span ends at the turn's
`answered_at` (the traces of a past day, recorded now). `langfuse_export(turns)` writes the same
turns as a Langfuse observations export.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from typing import Any

from helpers import fake_anthropic, fake_openai

SERVICE = "policy-assistant"


def prompt_with_sources(context: list[Mapping[str, Any]], *, markers: bool = True) -> str:
    """The system prompt: the passages as a numbered source list under their labels."""
    lines = ["Answer from the sources below and cite each sentence's source as [label]."]
    for p in context:
        lines.append(f"[{p['label']}] {p['text']}" if markers else str(p["text"]))
    return "\n\n".join(lines)


def _anthropic_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    if "blocks" in doc:
        source = {"type": "content", "content": [{"type": "text", "text": b} for b in doc["blocks"]]}
    else:
        source = {"type": "text", "media_type": "text/plain", "data": doc["text"]}
    return {"type": "document", "source": source, "title": doc.get("title"), "citations": {"enabled": True}}


def playable(turn: Mapping[str, Any]) -> bool:
    """Turns the app can replay: markers turns with a context, Anthropic turns with text documents."""
    fmt = turn.get("answer_format") or "markers"
    if fmt == "markers":
        return isinstance(turn.get("context"), list) and bool(turn["context"]) and isinstance(turn.get("answer"), str)
    return fmt == "anthropic_blocks" and all("pages" not in d for d in turn.get("request_documents") or [])


class TracedApp:
    """The instrumented clients and an in-memory span exporter (start with `with TracedApp() as app`)."""

    def __init__(self) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("rag-app")
        self.answered_at: dict[int, dt.datetime] = {}  # trace id → when its answer span should end
        self._stack = ExitStack()

    def __enter__(self) -> TracedApp:
        self.openai_server = self._stack.enter_context(fake_openai.running())
        self.anthropic_server = self._stack.enter_context(fake_anthropic.running())
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack.close()

    # -- the instrumentations, one at a time (two on the same client would trace each call twice) --
    def _instrumented(self, convention: str) -> Any:
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        if convention == "otel-genai":
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as GenAIOpenAI

            instrumentors = [GenAIOpenAI()]
        else:
            from openinference.instrumentation.anthropic import AnthropicInstrumentor
            from openinference.instrumentation.openai import OpenAIInstrumentor

            instrumentors = [OpenAIInstrumentor(), AnthropicInstrumentor()]
        for instrumentor in instrumentors:
            instrumentor.instrument(tracer_provider=self.provider)
        return instrumentors

    def play(self, turns: Iterable[Mapping[str, Any]], route: Callable[[Mapping[str, Any]], str],
             *, markers_in_prompt: bool = True, document_ids: bool = True) -> None:
        turns = [t for t in turns if playable(t)]
        for convention in ("openinference", "otel-genai"):
            mine = [t for t in turns if (route(t) if (t.get("answer_format") or "markers") == "markers"
                                         else "openinference") == convention]
            if not mine:
                continue
            instrumentors = self._instrumented(convention)
            try:
                for turn in mine:
                    self._turn(turn, convention, markers_in_prompt, document_ids)
            finally:
                for instrumentor in instrumentors:
                    instrumentor.uninstrument()

    def _turn(self, turn: Mapping[str, Any], convention: str, markers_in_prompt: bool, document_ids: bool) -> None:
        import anthropic
        import openai

        conversation = turn["conversation_id"]
        root_attributes = ({"openinference.span.kind": "CHAIN", "session.id": conversation}
                           if convention == "openinference" else
                           {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": conversation})
        with self.tracer.start_as_current_span("answer", attributes=root_attributes) as root:
            self.answered_at[root.get_span_context().trace_id] = dt.datetime.fromisoformat(
                turn["answered_at"].replace("Z", "+00:00"))
            context = turn.get("context") or []
            if context:
                self._retrieve(turn["question"], context, convention, document_ids)
            if (turn.get("answer_format") or "markers") == "anthropic_blocks":
                from openinference.instrumentation import using_session

                self.anthropic_server.script.append({"content": turn["answer_blocks"]})
                client = anthropic.Anthropic(base_url=self.anthropic_server.url, api_key="test")
                with using_session(conversation):
                    client.messages.create(model=turn["attributes"]["model"], max_tokens=1024, messages=[{
                        "role": "user", "content": [*map(_anthropic_document, turn["request_documents"]),
                                                    {"type": "text", "text": turn["question"]}]}])
                return
            self.openai_server.script.append(turn["answer"])
            client = openai.OpenAI(base_url=self.openai_server.url + "/v1", api_key="test")
            messages = [{"role": "system", "content": prompt_with_sources(context, markers=markers_in_prompt)},
                        {"role": "user", "content": turn["question"]}]
            if convention == "openinference":
                from openinference.instrumentation import using_session

                with using_session(conversation):
                    client.chat.completions.create(model=turn["attributes"]["model"], messages=messages)
            else:
                client.chat.completions.create(model=turn["attributes"]["model"], messages=messages)

    def _retrieve(self, query: str, context: list[Mapping[str, Any]], convention: str, document_ids: bool) -> None:
        """The retriever span a RAG app writes itself, through the OpenTelemetry API."""
        if convention == "openinference":
            attributes: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": query}
            for i, p in enumerate(context):
                prefix = f"retrieval.documents.{i}.document"
                attributes[f"{prefix}.content"] = p["text"]
                if document_ids and p.get("document_id"):
                    attributes[f"{prefix}.id"] = p["document_id"]
                attributes[f"{prefix}.metadata"] = json.dumps({"source": p.get("source"), "version": p.get("version")})
        else:  # the GenAI conventions record ids and scores; the text is opt-in and often absent
            attributes = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": query,
                          "gen_ai.retrieval.documents": json.dumps(
                              [{"id": p.get("document_id"), "score": round(1 - i / 10, 2)}
                               for i, p in enumerate(context)])}
        with self.tracer.start_as_current_span("retrieve", attributes=attributes):
            pass

    # -- export ---------------------------------------------------------------------------------
    def otlp_lines(self, spans_per_line: int = 50) -> list[str]:
        """The finished spans as OTLP JSON lines (the Collector's file exporter), moved in time."""
        from google.protobuf import json_format
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        spans = sorted(self.exporter.get_finished_spans(), key=lambda s: (s.context.trace_id, s.start_time))
        shift = {}
        for trace_id, at in self.answered_at.items():
            ends = [s.end_time for s in spans if s.context.trace_id == trace_id and (
                s.attributes.get("openinference.span.kind") == "LLM"
                or s.attributes.get("gen_ai.operation.name") == "chat")]
            shift[trace_id] = int(at.timestamp() * 1e9) - max(ends)
        lines = []
        for start in range(0, len(spans), spans_per_line):
            request = encode_spans(spans[start:start + spans_per_line])
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        delta = shift.get(int.from_bytes(span.trace_id, "big"), 0)
                        span.start_time_unix_nano += delta
                        span.end_time_unix_nano += delta
            lines.append(json.dumps(to_hex_ids(json_format.MessageToDict(request))))
        return lines


def to_hex_ids(request: dict[str, Any]) -> dict[str, Any]:
    """protobuf's JSON mapping writes bytes as base64; OTLP/JSON (and the Collector) writes
    trace and span ids as hex."""
    for resource_spans in request.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return request


def langfuse_export(turns: Iterable[Mapping[str, Any]]) -> list[str]:
    """The turns as a Langfuse export: a trace record (`sessionId`, `userId`) and its observations
    (a RETRIEVER with the documents, a GENERATION with the chat input and the answer)."""
    lines = []
    for n, turn in enumerate(t for t in turns if playable(t) and (t.get("answer_format") or "markers") == "markers"):
        trace_id = f"lf-trace-{n:05d}"
        end = dt.datetime.fromisoformat(turn["answered_at"].replace("Z", "+00:00"))
        at = [(end - dt.timedelta(seconds=s)).isoformat().replace("+00:00", "Z") for s in (3, 2, 1, 0)]
        lines.append({"id": trace_id, "name": "answer", "sessionId": turn["conversation_id"], "userId": "u-7",
                      "timestamp": at[0]})
        lines.append({"id": f"{trace_id}-r", "traceId": trace_id, "type": "RETRIEVER", "name": "retrieve",
                      "startTime": at[0], "endTime": at[1], "input": turn["question"],
                      "output": [{"id": p.get("document_id"), "content": p["text"],
                                  "metadata": {"source": p.get("source"), "version": p.get("version")}}
                                 for p in turn["context"]]})
        lines.append({"id": f"{trace_id}-g", "traceId": trace_id, "type": "GENERATION", "name": "chat",
                      "startTime": at[2], "endTime": at[3], "model": turn["attributes"]["model"],
                      "metadata": {"provider": "openai"},
                      "input": [{"role": "system", "content": prompt_with_sources(turn["context"])},
                                {"role": "user", "content": turn["question"]}],
                      "output": {"role": "assistant", "content": turn["answer"]}})
    return [json.dumps(line) for line in lines]


BROKEN_KINDS = ("no_trace_id", "parent_missing", "wrong_type", "attribute_too_long", "not_json", "not_otlp")


def broken_lines(lines: list[str]) -> tuple[list[str], str]:
    """OTLP JSON lines of at least four traces (one with a retriever span) broken the ways real
    exports break, one of `BROKEN_KINDS` each: the retriever span of one trace loses its trace id
    (that trace is still readable: its id is returned), another trace's root never arrives, a
    third's `session.id` is a number, a fourth gets a 10 MB attribute; then a truncated line and a
    line whose trace id is not hex."""
    requests = [json.loads(line) for line in lines]
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for request in requests:
        for rs in request["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    by_trace.setdefault(span["traceId"], []).append(span)
    kept = next(t for t, spans in sorted(by_trace.items()) if any(s["name"] == "retrieve" for s in spans))
    rest = [t for t in sorted(by_trace) if t != kept]
    next(s for s in by_trace[kept] if s["name"] == "retrieve")["traceId"] = ""
    for request in requests:  # the root span of rest[0] never arrives
        for rs in request["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                ss["spans"] = [s for s in ss["spans"] if not (s["traceId"] == rest[0] and not s.get("parentSpanId"))]
    model_call = next(s for s in by_trace[rest[1]] if s["name"] not in ("answer", "retrieve"))
    model_call["attributes"] = [a for a in model_call["attributes"] if a["key"] != "session.id"]
    model_call["attributes"].append({"key": "session.id", "value": {"intValue": "7"}})
    model_call = next(s for s in by_trace[rest[2]] if s["name"] not in ("answer", "retrieve"))
    model_call["attributes"].append({"key": "input.value", "value": {"stringValue": "x" * 10_000_000}})
    out = [json.dumps(request) for request in requests]
    out.append(out[0][: len(out[0]) // 2])
    out.append(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "01"}]}]}]}))
    return out, kept
