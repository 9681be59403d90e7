"""Reading logged turns (SPEC §1): JSON shape → `Turn`, with a clear reason when a turn is bad.

A bad turn never sinks a day: `turn_from_dict` raises `TurnError` with a reason, and callers
record the turn as skipped. Provider-native answers (`anthropic_blocks`) are joined into answer
text here, with their citation pointers checked against the logged request documents (§3.4).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from citecheck.core.model import CitationSpan, Passage, PointerProblem, Turn

ANSWER_FORMATS = ("markers", "anthropic_blocks")
MAX_ID_CHARS = 200  # turn ids, conversation ids and labels: the width of the warehouse's id columns
MAX_LABEL_CHARS = MAX_ID_CHARS
MAX_ATTRIBUTE_KEY_CHARS = 190  # a slice is named "attribute:<key>" in a 200-character column
MAX_ATTRIBUTE_VALUE_CHARS = 400  # the width of daily_metrics.slice_value
DEFAULT_MAX_ANSWER_CHARS = 1_000_000  # Config.max_answer_chars; ~250k tokens
INT32 = 2 ** 31
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # NUL and lone surrogates: no database stores them


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


def clean_text(text: str) -> str:
    """`text` with NUL characters and lone UTF-16 surrogates replaced by U+FFFD.

    JSON can spell both (`\\u0000`, `\\ud800`); neither can be written as UTF-8 or stored in a
    PostgreSQL text column. One character for one keeps every offset (native citations) valid.
    """
    return _UNSTORABLE.sub("\ufffd", text) if _UNSTORABLE.search(text) else text


def parse_timestamp(value: Any, key: str = "answered_at") -> dt.datetime | None:
    """An ISO 8601 timestamp as an aware UTC datetime (no zone = UTC); None or "" = no timestamp."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, str):
        text = value.strip()
        try:
            parsed = dt.datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" else text)
        except ValueError:
            raise TurnError(f"{key} is not an ISO timestamp ({clean_text(value)[:60]!r})") from None
    else:
        raise TurnError(f"{key} is not a string ({type(value).__name__})")
    try:
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
    except OverflowError as exc:
        raise TurnError(f"{key} is out of range in UTC ({value!s:.60})") from exc


def _require_str(data: Mapping[str, Any], key: str, *, allow_empty: bool = False, max_chars: int | None = None
                 ) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        kind = "missing" if value is None else f"not a string ({type(value).__name__})"
        raise TurnError(f"{key} is {kind}")
    if not allow_empty and not value.strip():
        raise TurnError(f"{key} is empty")
    if max_chars is not None and len(value) > max_chars:
        raise TurnError(f"{key} is longer than {max_chars} characters ({len(value):,})")
    return clean_text(value)


def _optional_str(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise TurnError(f"{key} is not a string ({type(value).__name__})")
    return clean_text(value)


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
        if len(label) > MAX_LABEL_CHARS:
            raise TurnError(f"context[{i}].label is longer than {MAX_LABEL_CHARS} characters")
        if not isinstance(text, str):
            raise TurnError(f"context[{i}].text is missing or not a string")
        label, text = clean_text(label), clean_text(text)
        if label in seen:
            if seen[label] != text:
                raise TurnError(f"context label {label!r} appears twice with different texts")
            continue
        seen[label] = text
        passages.append(Passage(
            label=label,
            text=text,
            source=_as_text(item.get("source") or ""),
            document_id=None if item.get("document_id") is None else _as_text(item["document_id"]),
            version=None if item.get("version") is None else _as_text(item["version"]),
        ))
    return tuple(passages)


def _as_text(value: Any) -> str:
    return clean_text(value if isinstance(value, str) else str(value))


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _attributes(value: Any) -> dict[str, str]:
    """Slice keys and values as strings, cut to what a slice column holds (a slice, not data)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TurnError("attributes is not an object")
    return {_capped(_as_text(k), MAX_ATTRIBUTE_KEY_CHARS):
            "" if v is None else _capped(_as_text(v), MAX_ATTRIBUTE_VALUE_CHARS) for k, v in value.items()}


def turn_index(value: Any) -> int | None:
    """A turn index: an integer or a string of one, within 32 bits; None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise TurnError(f"turn_index is not an integer ({clean_text(value)[:40]!r})") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TurnError(f"turn_index is not an integer ({type(value).__name__})")
    if not -INT32 <= value < INT32:
        raise TurnError("turn_index is out of range (32-bit integer)")
    return value


def conversation_id(value: Any) -> str | None:
    """A conversation id as a string (integers allowed), None when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TurnError("conversation_id is not a string")
    text = str(value)
    if len(text) > MAX_ID_CHARS:
        raise TurnError(f"conversation_id is longer than {MAX_ID_CHARS} characters")
    return clean_text(text)


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
        context.append(Passage(label=f"D{i}", text=clean_text(doc["text"]),
                               source=clean_text(title) if isinstance(title, str) else ""))
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
        pieces.append(clean_text(text))
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
    cited_title = clean_text(cited_title) if isinstance(cited_title, str) else cited_title
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
        if not isinstance(cited_text, str) or record.text[start:end].strip() != clean_text(cited_text).strip():
            return label, PointerProblem(index, "cited_text does not match the record span", cited_title,
                                         record.source)
    return label, None


def turn_from_dict(data: Any, max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS) -> Turn:
    """Validate one turn in the SPEC §1 JSON shape. An answer over `max_answer_chars` (0 = no
    limit; `[segmentation] max_answer_chars`) is refused: parsing is linear, but a 10 MB answer is
    ~170,000 sentences, one turn dominating the day's judging and budget."""
    if not isinstance(data, Mapping):
        raise TurnError(f"turn is not a JSON object ({type(data).__name__})")
    turn_id = _require_str(data, "turn_id", max_chars=MAX_ID_CHARS)
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
    if max_answer_chars and len(answer) > max_answer_chars:
        raise TurnError(f"answer is {len(answer):,} characters, over the limit of {max_answer_chars:,}"
                        " (segmentation.max_answer_chars)")
    answered_at = data.get("answered_at")
    parse_timestamp(answered_at)
    conversation = conversation_id(data.get("conversation_id"))
    return Turn(
        turn_id=turn_id,
        conversation_id=conversation or turn_id,
        turn_index=turn_index(data.get("turn_index")) or 0,
        answered_at=(answered_at.strip() or None) if isinstance(answered_at, str) else None,
        question=_optional_str(data, "question"),
        answer=answer,
        answer_format=answer_format,
        context=context,
        attributes=_attributes(data.get("attributes")),
        native_citations=spans,
        pointer_problems=problems,
    )


def turns_from_dicts(rows: Iterable[Any], max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS
                     ) -> tuple[list[Turn], list[Skipped]]:
    """Validate turn dicts (a chunk of the warehouse's day): the turns, and the rows skipped with
    their reasons. One malformed row never sinks the others."""
    turns: list[Turn] = []
    skipped: list[Skipped] = []
    for data in rows:
        try:
            turns.append(turn_from_dict(data, max_answer_chars))
        except TurnError as exc:
            skipped.append(Skipped(None, data.get("turn_id") if isinstance(data, Mapping) else None, str(exc)))
    return turns, skipped


def read_jsonl(path: str, max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS
               ) -> Iterator[tuple[int, Turn | Skipped]]:
    """Stream a JSON Lines file: each line as a `Turn` or a `Skipped` with its reason."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            yield number, parse_line(raw, number, max_answer_chars)


def decode_line(raw: bytes | str) -> Any:
    """One JSONL line → its JSON value; ValueError with the reason when it is not one.

    A UTF-8 byte order mark (Windows tools write one at the start of a file) is dropped.
    """
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw.removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ValueError(f"line is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise ValueError("invalid JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise ValueError(f"invalid JSON: {exc}"[:300]) from None


def parse_line(raw: bytes | str, number: int | None = None, max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS
               ) -> Turn | Skipped:
    """One JSONL line → `Turn`, or `Skipped` (bad UTF-8, bad JSON, bad fields)."""
    try:
        data = decode_line(raw)
    except ValueError as exc:
        return Skipped(number, None, str(exc))
    turn_id = data.get("turn_id") if isinstance(data, dict) else None
    try:
        return turn_from_dict(data, max_answer_chars)
    except TurnError as exc:
        return Skipped(number, clean_text(turn_id) if isinstance(turn_id, str) else None, str(exc))
