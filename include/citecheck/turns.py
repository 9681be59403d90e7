"""Reading logged turns (SPEC §1): JSON shape → `Turn`, with a clear reason when a turn is bad.

A bad turn never sinks a day: `turn_from_dict` raises `TurnError` with a reason, and callers
record the turn as skipped. Provider-native answers (`anthropic_blocks`) are joined into answer
text here, with their citation pointers checked against the logged request documents (§3.4).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from citecheck.model import CitationSpan, Passage, PointerProblem, Turn

ANSWER_FORMATS = ("markers", "anthropic_blocks")


class TurnError(ValueError):
    """A turn that cannot be scored; the message is the reason recorded with the skip."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A line or row that was not scored, and why."""

    line: int | None
    turn_id: str | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "turn_id": self.turn_id, "reason": self.reason}


def _require_str(data: Mapping[str, Any], key: str, *, allow_empty: bool = False) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        kind = "missing" if value is None else f"not a string ({type(value).__name__})"
        raise TurnError(f"{key} is {kind}")
    if not allow_empty and not value.strip():
        raise TurnError(f"{key} is empty")
    return value


def _optional_str(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise TurnError(f"{key} is not a string ({type(value).__name__})")
    return value


def _passages(context: Any) -> tuple[Passage, ...]:
    if not isinstance(context, list):
        kind = "missing" if context is None else f"not a list ({type(context).__name__})"
        raise TurnError(f"context is {kind}")
    passages: list[Passage] = []
    seen: dict[str, str] = {}
    for i, item in enumerate(context):
        if not isinstance(item, Mapping):
            raise TurnError(f"context[{i}] is not an object")
        label = item.get("label")
        text = item.get("text")
        if not isinstance(label, str) or not label.strip():
            raise TurnError(f"context[{i}].label is missing or not a non-empty string")
        if not isinstance(text, str):
            raise TurnError(f"context[{i}].text is missing or not a string")
        if label in seen:
            if seen[label] != text:
                raise TurnError(f"context label {label!r} appears twice with different texts")
            continue
        seen[label] = text
        source = item.get("source") or ""
        passages.append(Passage(
            label=label,
            text=text,
            source=source if isinstance(source, str) else str(source),
            document_id=None if item.get("document_id") is None else str(item["document_id"]),
            version=None if item.get("version") is None else str(item["version"]),
        ))
    return tuple(passages)


def _attributes(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TurnError("attributes is not an object")
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _turn_index(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        raise TurnError("turn_index is not an integer")
    return value


def native_answer(blocks: Any, documents: Any) -> tuple[str, tuple[Passage, ...], tuple[CitationSpan, ...],
                                                        tuple[PointerProblem, ...]]:
    """Join Anthropic content blocks into answer text and check every citation pointer.

    `documents` are every document block of the request in order across all messages; a
    citation's `document_index` counts them. Valid pointers become spans labelled `D<index>`;
    a mismatch (no such index, wrong title, `record[start:end]` not equal to `cited_text`) is a
    pointer problem, still labelled `D<index>` on its sentence but counted like an unknown label.
    """
    if not isinstance(blocks, list):
        raise TurnError("answer_blocks is missing or not a list")
    if not isinstance(documents, list):
        raise TurnError("request_documents is missing or not a list")
    context: list[Passage] = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, Mapping) or not isinstance(doc.get("text"), str):
            raise TurnError(f"request_documents[{i}] needs a text string")
        title = doc.get("title")
        context.append(Passage(label=f"D{i}", text=doc["text"], source=title if isinstance(title, str) else ""))
    pieces: list[str] = []
    spans: list[CitationSpan] = []
    problems: list[PointerProblem] = []
    length = 0
    for b, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            raise TurnError(f"answer_blocks[{b}] is not an object")
        if block.get("type", "text") != "text":
            continue
        text = block.get("text")
        if not isinstance(text, str):
            raise TurnError(f"answer_blocks[{b}].text is not a string")
        start, length = length, length + len(text)
        pieces.append(text)
        citations = block.get("citations") or []
        if not isinstance(citations, list):
            raise TurnError(f"answer_blocks[{b}].citations is not a list")
        for citation in citations:
            label, problem = _check_pointer(citation, context)
            if problem is not None:
                problems.append(problem)
            if label is not None:
                spans.append(CitationSpan(start, length, label, problem is None))
    return "".join(pieces), tuple(context), tuple(spans), tuple(problems)


def _check_pointer(citation: Any, context: list[Passage]) -> tuple[str | None, PointerProblem | None]:
    if not isinstance(citation, Mapping):
        return None, PointerProblem(-1, "citation is not an object")
    index = citation.get("document_index")
    if isinstance(index, bool) or not isinstance(index, int):
        return None, PointerProblem(-1, "document_index is missing or not an integer")
    label = f"D{index}"
    cited_title = citation.get("document_title")
    if not 0 <= index < len(context):
        return label, PointerProblem(index, "document_index out of range", cited_title)
    record = context[index]
    if cited_title is not None and cited_title != record.source:
        return label, PointerProblem(index, "title does not match the request document", cited_title, record.source)
    start, end = citation.get("start_char_index"), citation.get("end_char_index")
    cited_text = citation.get("cited_text")
    if citation.get("type", "char_location") == "char_location":
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            return label, PointerProblem(index, "char offsets missing", cited_title, record.source)
        if not 0 <= start <= end <= len(record.text):
            return label, PointerProblem(index, "char offsets out of range", cited_title, record.source)
        if not isinstance(cited_text, str) or record.text[start:end].strip() != cited_text.strip():
            return label, PointerProblem(index, "cited_text does not match the record span", cited_title,
                                         record.source)
    return label, None


def turn_from_dict(data: Any) -> Turn:
    """Validate one turn in the SPEC §1 JSON shape."""
    if not isinstance(data, Mapping):
        raise TurnError(f"turn is not a JSON object ({type(data).__name__})")
    turn_id = _require_str(data, "turn_id")
    answer_format = _optional_str(data, "answer_format", "markers") or "markers"
    if answer_format not in ANSWER_FORMATS:
        raise TurnError(f"answer_format {answer_format!r} is not one of {ANSWER_FORMATS}")
    spans: tuple[CitationSpan, ...] = ()
    problems: tuple[PointerProblem, ...] = ()
    if answer_format == "anthropic_blocks":
        answer, context, spans, problems = native_answer(data.get("answer_blocks"), data.get("request_documents"))
        if not answer.strip():
            raise TurnError("answer_blocks hold no text")
    else:
        answer = _require_str(data, "answer")
        context = _passages(data.get("context"))
    answered_at = data.get("answered_at")
    if answered_at is not None and not isinstance(answered_at, str):
        raise TurnError("answered_at is not a string")
    conversation = data.get("conversation_id")
    if conversation is not None and not isinstance(conversation, (str, int)):
        raise TurnError("conversation_id is not a string")
    return Turn(
        turn_id=turn_id,
        conversation_id=str(conversation) if conversation not in (None, "") else turn_id,
        turn_index=_turn_index(data.get("turn_index")),
        answered_at=answered_at,
        question=_optional_str(data, "question"),
        answer=answer,
        answer_format=answer_format,
        context=context,
        attributes=_attributes(data.get("attributes")),
        native_citations=spans,
        pointer_problems=problems,
    )


def read_jsonl(path: str) -> Iterator[tuple[int, Turn | Skipped]]:
    """Stream a JSON Lines file: each line as a `Turn` or a `Skipped` with its reason."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            yield number, parse_line(raw, number)


def parse_line(raw: bytes | str, number: int | None = None) -> Turn | Skipped:
    """One JSONL line → `Turn`, or `Skipped` (bad UTF-8, bad JSON, bad fields)."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        return Skipped(number, None, f"line is not valid UTF-8 ({exc.reason} at byte {exc.start})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return Skipped(number, None, f"invalid JSON: {exc.msg} at column {exc.colno}")
    turn_id = data.get("turn_id") if isinstance(data, dict) else None
    try:
        return turn_from_dict(data)
    except TurnError as exc:
        return Skipped(number, turn_id if isinstance(turn_id, str) else None, str(exc))
