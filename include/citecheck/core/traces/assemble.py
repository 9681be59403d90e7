"""Traces → SPEC §1 turns: one turn per trace, from its answer span (the last model call with an
assistant answer), with the passages the model saw under the labels the prompt showed them.

The context set: the documents of the reranker (its output) or else the retrievers that ended
before the answer span began; else the documents in the request itself (native document blocks);
else the passages written into the prompt (a source list, one marker a passage). A passage's label
is the marker in front of its text in the prompt (`label_source` "prompt"), else its document id
("document_id"), else its position ("position"); one source for the whole turn, the first that
labels every passage with distinct labels. A trace is skipped, with the reason, when a span of it
could not be read, a span's parent never arrived, it has no answer span, or no passage text can be
found: never judged against an empty passage.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from citecheck.core.traces.conventions import Call, ConventionError, Document, convention_of, read_call
from citecheck.core.traces.spans import Rejected, Span

LABEL_SOURCES = ("prompt", "document_id", "position")
# "Source 3:", "Document 2 -", "Passage #1)": a source list written as words (the marker pattern
# covers "[1]", "[S2]" and whatever the config's `[markers] pattern` reads).
_WORD_LABEL = re.compile(r"(?:^|\n)[ \t]*(?:Source|Document|Passage|Doc)[ \t]*#?[ \t]*(?P<labels>\w+)[ \t]*[:.)\-]",
                         re.IGNORECASE)


@dataclass
class TraceTurn:
    """A turn read from a trace, with what the load reports about it."""

    turn: dict[str, Any]
    trace_id: str
    span_id: str
    label_source: str
    spans: int


@dataclass
class Assembled:
    """What a set of spans gave: turns, and traces skipped with their reasons."""

    turns: list[TraceTurn] = field(default_factory=list)
    skipped: list[Rejected] = field(default_factory=list)

    def label_sources_by_day(self, timezone: str = "UTC") -> dict[str, dict[str, int]]:
        """{metric day: {label_source: turns}} of the turns read."""
        from zoneinfo import ZoneInfo

        counts: dict[str, Counter[str]] = {}
        for t in self.turns:
            day = dt.datetime.fromisoformat(t.turn["answered_at"]).astimezone(ZoneInfo(timezone)).date().isoformat()
            counts.setdefault(day, Counter())[t.label_source] += 1
        return {day: dict(sorted(c.items())) for day, c in sorted(counts.items())}


def turn_id_of(trace_id: str, span_id: str) -> str:
    """The turn id of a trace's answer span: idempotent by (trace id, span id)."""
    return f"{trace_id}-{span_id}"


def assemble(spans: Iterable[Span], marker_re: re.Pattern[str], convention: str = "auto",
             langfuse_traces: Mapping[str, Mapping[str, Any]] | None = None) -> Assembled:
    """The turns of every trace in `spans`; `convention`: auto (each span's own) or the one to read."""
    traces: dict[str, dict[str, Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, {})[span.span_id] = span  # a span given twice: the later one
    out = Assembled()
    for trace_id, by_id in traces.items():
        try:
            out.turns.append(_turn(trace_id, by_id, marker_re, convention, (langfuse_traces or {}).get(trace_id)))
        except _Skip as skip:
            out.skipped.append(Rejected(skip.line, skip.kind, str(skip), trace_id, skip.span_id))
    return out


class _Skip(ValueError):
    def __init__(self, kind: str, reason: str, line: int, span_id: str | None = None) -> None:
        super().__init__(reason)
        self.kind, self.line, self.span_id = kind, line, span_id


def _calls(trace_id: str, by_id: Mapping[str, Span], convention: str,
           langfuse_trace: Mapping[str, Any] | None) -> list[tuple[Span, Call]]:
    first_line = min(s.line for s in by_id.values())
    for span in by_id.values():
        if span.fault:
            raise _Skip("attribute_too_long", f"span {span.span_id}: {span.fault}", span.line, span.span_id)
        if span.parent_id is not None and span.parent_id not in by_id:
            raise _Skip("parent_missing",
                        f"span {span.span_id}'s parent {span.parent_id} never arrived (an incomplete trace)",
                        span.line, span.span_id)
    calls = []
    for span in sorted(by_id.values(), key=lambda s: (s.start_ns, s.end_ns)):
        found = convention_of(span)
        if found is None or (convention != "auto" and found != convention):
            continue
        try:
            calls.append((span, read_call(span, found, langfuse_trace)))
        except ConventionError as exc:
            raise _Skip("wrong_type", f"span {span.span_id}: {exc}", span.line, span.span_id) from None
    if not calls:
        raise _Skip("no_convention",
                    "no span in the " + ("known conventions" if convention == "auto" else f"{convention} convention"),
                    first_line)
    return calls


def _turn(trace_id: str, by_id: Mapping[str, Span], marker_re: re.Pattern[str], convention: str,
          langfuse_trace: Mapping[str, Any] | None) -> TraceTurn:
    calls = _calls(trace_id, by_id, convention, langfuse_trace)
    answers = [(s, c) for s, c in calls if c.kind == "llm" and (c.output_text or _is_response(c.response))]
    if not answers:
        raise _Skip("no_answer", "no model call with an assistant answer (content capture off?)", calls[0][0].line)
    span, call = max(answers, key=lambda sc: (sc[0].end_ns, sc[0].start_ns))
    before = [c for s, c in calls if c.kind in ("retriever", "reranker") and s.end_ns <= span.start_ns]
    rerankers = [c for c in before if c.kind == "reranker"]
    retrieved = rerankers[-1].documents if rerankers else [d for c in before for d in c.documents]
    turn: dict[str, Any] = {
        "turn_id": turn_id_of(trace_id, span.span_id),
        "conversation_id": _first(c.session for _, c in [(span, call), *calls]) or trace_id,
        "answered_at": dt.datetime.fromtimestamp(span.end_ns / 1e9, dt.UTC).isoformat(),
        "question": next((text for role, text in reversed(call.messages) if role in ("user", "human")), None),
    }
    native = _anthropic_native(call)
    if native is not None:
        turn.update(native)
        label_source = "prompt"  # the request numbers its documents; the citations point into that numbering
    else:
        turn["answer"] = call.output_text or _response_text(call.response)
        turn["answer_format"] = "markers"
        prompt = "\n".join(text for role, text in call.messages if role not in ("assistant", "model"))
        documents = [d for d in retrieved if d.text]
        if not documents and _request_documents(call.request):
            documents = [Document(None, d["text"], {"title": d.get("title")}) for d in _request_documents(call.request)]
        if not documents:  # a source list in a message (each message read alone)
            documents = [d for role, text in call.messages if role not in ("assistant", "model")
                         for d in _prompt_passages(text, marker_re)]
        if not documents:
            reason = ("its retrieved documents have ids only and the prompt lists no passage" if retrieved
                      else "no passage text: no retrieved documents, no documents in the request, no source list "
                           "in the prompt")
            raise _Skip("no_passage_text", f"answer span {span.span_id}: {reason} (content capture off?)",
                        span.line, span.span_id)
        labels, label_source = _labels(documents, prompt, marker_re)
        turn["context"] = [{"label": label, "text": d.text,
                            "source": d.metadata.get("source") or d.metadata.get("title"),
                            "document_id": d.id, "version": d.metadata.get("version")}
                           for label, d in zip(labels, documents, strict=True)]
    service = next((s.service for s, _ in calls if s.service), None)
    turn["attributes"] = {k: v for k, v in (
        ("model", call.model), ("provider", call.provider), ("service", service),
        ("user", _first(c.user for _, c in calls)), ("convention", call.convention), ("label_source", label_source),
    ) if v is not None}
    return TraceTurn(turn, trace_id, span.span_id, label_source, len(by_id))


def _first(values: Iterable[str | None]) -> str | None:
    return next((v for v in values if v), None)


def _is_response(response: Any) -> bool:
    return isinstance(response, Mapping) and isinstance(response.get("content"), list)


def _response_text(response: Any) -> str | None:
    if not _is_response(response):
        return None
    return "".join(b.get("text", "") for b in response["content"] if isinstance(b, Mapping) and b.get("type") == "text")


def _anthropic_native(call: Call) -> dict[str, Any] | None:
    """An Anthropic Messages response whose text blocks carry citations: the `anthropic_blocks`
    turn, its documents from the request's document blocks. A response without citations is a
    markers answer (None)."""
    response = call.response
    if not _is_response(response) or not any(
            isinstance(b, Mapping) and b.get("citations") for b in response["content"]):
        return None
    blocks = [{k: v for k, v in b.items() if v is not None} if isinstance(b, Mapping) else b
              for b in response["content"]]
    for block in blocks:
        if isinstance(block, dict) and isinstance(block.get("citations"), list):
            block["citations"] = [{k: v for k, v in c.items() if v is not None} if isinstance(c, Mapping) else c
                                  for c in block["citations"]]
    return {"answer": "", "answer_format": "anthropic_blocks", "answer_blocks": blocks,
            "request_documents": _request_documents(call.request)}


def _request_documents(request: Any) -> list[dict[str, Any]]:
    """The document blocks of an Anthropic Messages request, in the order the API numbers them:
    `{title, text}` (plain text) or `{title, blocks}` (custom content)."""
    documents: list[dict[str, Any]] = []
    messages = request.get("messages") if isinstance(request, Mapping) else None
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, Mapping) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, Mapping) or block.get("type") != "document":
                continue
            source = block.get("source") if isinstance(block.get("source"), Mapping) else {}
            doc: dict[str, Any] = {"title": block.get("title")}
            if source.get("type") == "text":
                doc["text"] = source.get("data")
            elif source.get("type") == "content" and isinstance(source.get("content"), list):
                doc["blocks"] = [b.get("text") for b in source["content"] if isinstance(b, Mapping)]
            else:
                doc["text"] = None  # a PDF: the job reports it unreadable, not empty
            documents.append(doc)
    return documents


def _single_label(match: re.Match[str]) -> str | None:
    labels = match.group("labels")
    return labels if labels and re.fullmatch(r"\w+", labels) else None


def _marker_matches(text: str, marker_re: re.Pattern[str]) -> list[re.Match[str]]:
    return sorted([*marker_re.finditer(text), *_WORD_LABEL.finditer(text)], key=lambda m: m.start())


def _prompt_passages(prompt: str, marker_re: re.Pattern[str]) -> list[Document]:
    """A source list written into the prompt: each marker at the start of a line and the text up
    to the next such marker (or a blank line)."""
    starts = [m for m in _marker_matches(prompt, marker_re)
              if _single_label(m) and prompt[prompt.rfind("\n", 0, m.start()) + 1:m.start()].strip() == ""]
    documents = []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(prompt)
        text = prompt[m.end():end].split("\n\n")[0].strip()
        if text:
            documents.append(Document(None, text, {"prompt_label": _single_label(m)}))
    return documents


def _labels(documents: list[Document], prompt: str, marker_re: re.Pattern[str]) -> tuple[list[str], str]:
    """The passages' labels and where they came from: the prompt's marker in front of each text
    (after the previous passage found), else the document ids, else the positions (1, 2, …)."""
    labels: list[str | None] = []
    for doc in documents:
        if doc.metadata.get("prompt_label"):
            labels.append(doc.metadata["prompt_label"])
            continue
        at = prompt.find(doc.text or "\0") if doc.text else -1
        if at < 0:
            labels.append(None)
            continue
        window_start = max(prompt.rfind("\n\n", 0, at), at - 300, 0)
        found = [_single_label(m) for m in _marker_matches(prompt[window_start:at], marker_re)]
        labels.append(found[-1] if found else None)
    if all(labels) and len(set(labels)) == len(labels):
        return [str(label) for label in labels], "prompt"
    ids = [d.id for d in documents]
    if all(ids) and len(set(ids)) == len(ids):
        return [str(i) for i in ids], "document_id"
    return [str(i) for i in range(1, len(documents) + 1)], "position"


def number_turns(turns: Iterable[dict[str, Any]],
                 stored: Mapping[str, Iterable[tuple[str, dt.datetime]]] | None = None) -> None:
    """Set each turn's `turn_index`: 1 + the turns of its conversation answered before it, those
    already stored (`stored`: conversation → (turn id, answered_at)) and those loaded with it."""
    by_conversation: dict[str, dict[str, dt.datetime]] = {}
    for conversation, earlier in (stored or {}).items():
        by_conversation.setdefault(conversation, {}).update(
            {turn_id: at if at.tzinfo else at.replace(tzinfo=dt.UTC) for turn_id, at in earlier})
    turns = list(turns)
    for turn in turns:
        by_conversation.setdefault(turn["conversation_id"], {})[turn["turn_id"]] = dt.datetime.fromisoformat(
            turn["answered_at"])
    for turn in turns:
        times = by_conversation[turn["conversation_id"]]
        mine = (times[turn["turn_id"]], turn["turn_id"])
        turn["turn_index"] = 1 + sum((at, turn_id) < mine for turn_id, at in times.items())
