"""What a span says, in the three conventions: its kind (a model call, a retriever, a reranker),
the messages the model was sent, its output (text, or the provider's response JSON), the
documents it retrieved or reranked, and the session, user, model and provider it names.

- OpenInference (Arize Phoenix; `openinference-instrumentation-*`): `openinference.span.kind`,
  `llm.input_messages.{i}.message.role|content|contents.{j}.message_content.text`,
  `llm.output_messages.{i}.message.*`, `input.value` / `output.value` with `*.mime_type`,
  `retrieval.documents.{i}.document.id|content|score|metadata`,
  `reranker.output_documents.{i}.document.*`, `session.id`, `user.id`, `llm.model_name`,
  `llm.provider` / `llm.system`.
- OpenTelemetry GenAI (semantic conventions 1.37+): `gen_ai.operation.name`,
  `gen_ai.input.messages` / `gen_ai.output.messages` (`[{role, parts: [{type, content}]}]`, a
  JSON string or a structured value), `gen_ai.system_instructions`, `gen_ai.retrieval.documents`
  (`[{id, score}]`, text optional), `gen_ai.conversation.id`, `gen_ai.request.model`,
  `gen_ai.provider.name`; older instrumentations' events `gen_ai.{system,user,assistant}.message`
  and `gen_ai.choice`.
- Langfuse observations: `type` (GENERATION, RETRIEVER, SPAN …), `input` (messages), `output`,
  `metadata`, `model`; the trace's `sessionId`, `userId`.

A value of the wrong type raises `ConventionError` with the attribute's name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from citecheck.core.traces.spans import Span

CONVENTIONS = ("openinference", "otel-genai", "langfuse")
_GENAI_ANSWER_OPERATIONS = {"chat", "text_completion", "generate_content"}


class ConventionError(ValueError):
    """A span attribute of the wrong type (its trace is skipped with this reason)."""


@dataclass
class Document:
    """A retrieved or reranked document: its id, text and metadata, as the span gave them."""

    id: str | None
    text: str | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Call:
    """A span read in one convention. `kind`: llm | retriever | reranker | other; `messages`:
    (role, text) of the model's input in order (system instructions first); `output_text`: the
    assistant's text; `response` / `request`: the provider's response and request objects when
    the span logged them as JSON (`output.value`, `input.value`)."""

    convention: str
    kind: str = "other"
    messages: list[tuple[str, str]] = field(default_factory=list)
    output_text: str | None = None
    response: Any = None
    request: Any = None
    documents: list[Document] = field(default_factory=list)
    session: str | None = None
    user: str | None = None
    model: str | None = None
    provider: str | None = None


def convention_of(span: Span) -> str | None:
    """The convention a span follows, or None (a span of neither: an HTTP span, a framework's own)."""
    if span.observation is not None:
        return "langfuse"
    if "openinference.span.kind" in span.attributes:
        return "openinference"
    if any(key.startswith("gen_ai.") for key in span.attributes) or any(
            name.startswith("gen_ai.") for name, _ in span.events):
        return "otel-genai"
    return None


def read_call(span: Span, convention: str, trace: Mapping[str, Any] | None = None) -> Call:
    """The span read in `convention` (`trace`: the Langfuse trace record, for its session and user)."""
    if convention == "openinference":
        return _openinference(span.attributes)
    if convention == "otel-genai":
        return _genai(span.attributes, span.events)
    return _langfuse(span.observation or {}, trace or {})


def _text(attributes: Mapping[str, Any], key: str) -> str | None:
    value = attributes.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ConventionError(f"attribute {key} is {type(value).__name__}, not a string")


def _json(value: Any, key: str) -> Any:
    """A structured attribute that may come as a JSON string."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise ConventionError(f"attribute {key} is not JSON") from None
    return value


def _indexed(attributes: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """`prefix.{i}.rest` attributes grouped by i: {i: {rest: value}}."""
    out: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix):].partition(".")
        if index.isdigit():
            out.setdefault(int(index), {})[rest] = value
    return dict(sorted(out.items()))


def _openinference_messages(attributes: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
    messages = []
    for i, parts in _indexed(attributes, prefix).items():
        where = f"{prefix}{i}.message"
        role = _text(parts, "message.role") or ""
        content = parts.get("message.content")
        if content is not None and not isinstance(content, str):
            raise ConventionError(f"attribute {where}.content is {type(content).__name__}, not a string")
        texts = [content] if content else []
        contents = _indexed(parts, "message.contents.")
        for j, item in contents.items():
            kind = item.get("message_content.type")
            text = item.get("message_content.text")
            if text is not None and not isinstance(text, str):
                raise ConventionError(f"attribute {where}.contents.{j}.message_content.text is "
                                      f"{type(text).__name__}, not a string")
            if text and kind in (None, "text"):
                texts.append(text)
        messages.append((role, "\n".join(texts)))
    return messages


def _openinference_documents(attributes: Mapping[str, Any], prefix: str) -> list[Document]:
    documents = []
    for i, parts in _indexed(attributes, prefix).items():
        key = f"{prefix}{i}.document"
        doc_id = parts.get("document.id")
        text = _text(parts, "document.content")
        metadata = _json(parts.get("document.metadata"), f"{key}.metadata") or {}
        if not isinstance(metadata, dict):
            raise ConventionError(f"attribute {key}.metadata is not an object")
        documents.append(Document(None if doc_id is None else str(doc_id), text, metadata))
    return documents


def _openinference(attributes: Mapping[str, Any]) -> Call:
    kind = (_text(attributes, "openinference.span.kind") or "").upper()
    call = Call("openinference", {"LLM": "llm", "RETRIEVER": "retriever", "RERANKER": "reranker"}.get(kind, "other"))
    call.session = _text(attributes, "session.id")
    call.user = _text(attributes, "user.id")
    call.model = _text(attributes, "llm.model_name")
    call.provider = _text(attributes, "llm.provider") or _text(attributes, "llm.system")
    if call.kind == "retriever":
        call.documents = _openinference_documents(attributes, "retrieval.documents.")
    elif call.kind == "reranker":
        call.documents = _openinference_documents(attributes, "reranker.output_documents.")
    elif call.kind == "llm":
        call.messages = _openinference_messages(attributes, "llm.input_messages.")
        outputs = _openinference_messages(attributes, "llm.output_messages.")
        texts = [text for role, text in outputs if role in ("assistant", "model", "") and text]
        call.output_text = "\n".join(texts) if texts else None
        if attributes.get("output.mime_type") == "application/json":
            call.response = _json(_text(attributes, "output.value"), "output.value")
        if attributes.get("input.mime_type") == "application/json":
            call.request = _json(_text(attributes, "input.value"), "input.value")
    return call


def _parts_text(message: Any, key: str) -> tuple[str, str]:
    """(role, text) of a GenAI message `{role, parts: [{type, content}]}`."""
    if not isinstance(message, Mapping):
        raise ConventionError(f"attribute {key} holds a {type(message).__name__}, not a message object")
    parts = message.get("parts") or []
    if not isinstance(parts, list):
        raise ConventionError(f"attribute {key} has parts that are not a list")
    texts = []
    for part in parts:
        if isinstance(part, Mapping) and part.get("type", "text") == "text":
            content = part.get("content")
            if not isinstance(content, str):
                raise ConventionError(f"attribute {key} has a text part whose content is not a string")
            texts.append(content)
    return str(message.get("role") or ""), "\n".join(texts)


def _genai_messages(value: Any, key: str) -> list[tuple[str, str]]:
    value = _json(value, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConventionError(f"attribute {key} is not a list of messages")
    return [_parts_text(m, key) for m in value]


def _genai(attributes: Mapping[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Call:
    operation = _text(attributes, "gen_ai.operation.name") or ""
    kind = "llm" if operation in _GENAI_ANSWER_OPERATIONS else "retriever" if operation == "retrieval" else "other"
    call = Call("otel-genai", kind)
    call.session = _text(attributes, "gen_ai.conversation.id") or _text(attributes, "session.id")
    call.user = _text(attributes, "user.id") or _text(attributes, "enduser.id")
    call.model = _text(attributes, "gen_ai.request.model") or _text(attributes, "gen_ai.response.model")
    call.provider = _text(attributes, "gen_ai.provider.name") or _text(attributes, "gen_ai.system")
    if kind == "retriever":
        documents = _json(attributes.get("gen_ai.retrieval.documents"), "gen_ai.retrieval.documents") or []
        if not isinstance(documents, list):
            raise ConventionError("attribute gen_ai.retrieval.documents is not a list")
        for doc in documents:
            if not isinstance(doc, Mapping):
                raise ConventionError("attribute gen_ai.retrieval.documents holds a non-object")
            text = doc.get("content", doc.get("text"))
            call.documents.append(Document(None if doc.get("id") is None else str(doc["id"]),
                                           text if isinstance(text, str) else None,
                                           dict(doc.get("metadata") or {})))
        return call
    if kind != "llm":
        return call
    system = _json(attributes.get("gen_ai.system_instructions"), "gen_ai.system_instructions")
    if system:
        parts = system if isinstance(system, list) else [system]
        call.messages.append(_parts_text({"role": "system", "parts": parts}, "gen_ai.system_instructions"))
    call.messages += _genai_messages(attributes.get("gen_ai.input.messages"), "gen_ai.input.messages")
    outputs = _genai_messages(attributes.get("gen_ai.output.messages"), "gen_ai.output.messages")
    for name, event in events:  # instrumentations before the 1.37 conventions: one event a message
        role = name.removeprefix("gen_ai.").removesuffix(".message")
        if name in ("gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message"):
            content = event.get("content")
            if isinstance(content, str):
                call.messages.append((role, content))
        elif name == "gen_ai.choice":
            message = _json(event.get("message"), "gen_ai.choice message") or {}
            if isinstance(message, Mapping) and isinstance(message.get("content"), str):
                outputs.append(("assistant", message["content"]))
    texts = [text for role, text in outputs if role in ("assistant", "model", "") and text]
    call.output_text = "\n".join(texts) if texts else None
    return call


def _langfuse_messages(value: Any, key: str) -> list[tuple[str, str]]:
    """Langfuse `input`: a list of chat messages `{role, content}` (content a string or parts),
    an object with `messages`, or a plain string (one user message)."""
    if isinstance(value, str):
        return [("user", value)]
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    if not isinstance(value, list):
        return []
    out = []
    for message in value:
        if not isinstance(message, Mapping):
            raise ConventionError(f"{key} holds a {type(message).__name__}, not a message object")
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content
                                if isinstance(p, Mapping) and p.get("type", "text") == "text")
        if content is not None and not isinstance(content, str):
            raise ConventionError(f"{key} has a message whose content is {type(content).__name__}")
        out.append((str(message.get("role") or ""), content or ""))
    return out


def _langfuse(observation: Mapping[str, Any], trace: Mapping[str, Any]) -> Call:
    kind = {"GENERATION": "llm", "RETRIEVER": "retriever"}.get(str(observation.get("type")), "other")
    metadata = observation.get("metadata") if isinstance(observation.get("metadata"), Mapping) else {}
    if kind == "other" and metadata.get("reranker"):
        kind = "reranker"
    call = Call("langfuse", kind)
    session, user = trace.get("sessionId"), trace.get("userId")
    for key, value in (("sessionId", session), ("userId", user), ("model", observation.get("model"))):
        if value is not None and not isinstance(value, str):
            raise ConventionError(f"{key} is {type(value).__name__}, not a string")
    call.session, call.user, call.model = session, user, observation.get("model")
    call.provider = metadata.get("provider") if isinstance(metadata.get("provider"), str) else None
    output = observation.get("output")
    if kind in ("retriever", "reranker"):
        documents = output.get("documents") if isinstance(output, Mapping) else output
        if not isinstance(documents, list):
            raise ConventionError("a retriever's output is not a list of documents")
        for doc in documents:
            if not isinstance(doc, Mapping):
                raise ConventionError("a retriever's output holds a non-object")
            text = doc.get("content", doc.get("text", doc.get("page_content")))
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
            call.documents.append(Document(None if doc.get("id") is None else str(doc["id"]),
                                           text if isinstance(text, str) else None, dict(meta)))
    elif kind == "llm":
        call.messages = _langfuse_messages(observation.get("input"), "input")
        if isinstance(output, str):
            call.output_text = output
        elif isinstance(output, Mapping) and isinstance(output.get("content"), str):
            call.output_text = output["content"]
        elif isinstance(output, Mapping) and isinstance(output.get("content"), list):
            call.response = dict(output)  # a provider response (content blocks) as logged
        elif output is not None:
            raise ConventionError(f"output is {type(output).__name__}, not a message")
    return call
