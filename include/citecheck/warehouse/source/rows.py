"""Validation: a SPEC §1 turn dict → the rows the source tables hold, or ValueError with the
reason (what a column cannot hold faithfully); what the load repaired goes with the row."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from citecheck.core.formats import NATIVE_FIELDS
from citecheck.core.formats.common import TurnError, replaced_characters
from citecheck.core.languages import turn_language
from citecheck.core.turns import (
    MAX_ID_CHARS,
    MAX_LABEL_CHARS,
    clean_text,
    conversation_id,
    is_zoneless,
    parse_timestamp,
    turn_from_dict,
    turn_index,
)
from citecheck.warehouse import tables as T

MAX_JSON_DEPTH = 100  # deeper JSON crashed the PostgreSQL insert (RecursionError at ~980 levels)


def storable(value: Any, key: str = "value", replaced: list[int] | None = None) -> Any:
    """A copy of a JSON value that every warehouse can store: NUL and lone surrogates become
    U+FFFD (`clean_text`; `replaced[0]` counts them when given), NaN and infinities become text
    ("nan", "inf"; PostgreSQL's json rejects them), tuples become lists. Iterative, and
    ValueError past `MAX_JSON_DEPTH` levels."""

    def text(v: str) -> str:
        cleaned = clean_text(v)
        if cleaned is not v and replaced is not None:
            replaced[0] += replaced_characters(v)
        return cleaned

    def leaf(v: Any) -> Any:
        if isinstance(v, str):
            return text(v)
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        return v

    def container(v: Any) -> dict[Any, Any] | list[Any] | None:
        return {} if isinstance(v, Mapping) else [] if isinstance(v, (list, tuple)) else None

    root = container(value)
    if root is None:
        return leaf(value)
    stack: list[tuple[Any, Any, int]] = [(value, root, 1)]
    while stack:
        src, dst, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"{key} is nested deeper than {MAX_JSON_DEPTH} levels")
        for k, v in (src.items() if isinstance(src, Mapping) else enumerate(src)):
            child = container(v)
            if child is None:
                child = leaf(v)
            else:
                stack.append((v, child, depth + 1))
            if isinstance(dst, dict):
                dst[text(k) if isinstance(k, str) else k] = child
            else:
                dst.append(child)
    return root


def _language(turn: Mapping[str, Any]) -> dict[str, str | None]:
    try:
        parsed = turn_from_dict(turn)
    except TurnError:
        return {"language": None, "language_source": None}
    found = turn_language(parsed.attributes, parsed.answer)
    return {"language": found.code, "language_source": found.source}


def _text_column(turn: Mapping[str, Any], key: str, width: int | None = None) -> str | None:
    """A text field as stored: a string or nothing. Another type would read back as text the job
    would then score (an answer of 5 as "5"), so it is refused here with the job's own wording."""
    value = turn.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key} is not a string ({type(value).__name__})")
    if value is not None and width is not None and len(value) > width:
        raise ValueError(f"{key} is longer than {width} characters ({len(value):,})")
    return value


def source_rows(turn: Mapping[str, Any], assume_zone: str = "UTC") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A SPEC §1 turn dict → one `source_turns` row and its `source_passages` rows.

    What a column holds faithfully is stored as given, so the job, not the loader, decides what
    is malformed and records why with the day (answer missing or empty, label missing, labels
    twice with different texts, bad native blocks or attributes). Raises ValueError, with the
    reason, for what a column cannot hold faithfully: no turn id or one longer than its column,
    a text field of another type, a turn_index that is no 32-bit integer, no timestamp (the turn
    would belong to no day and never be read) or one that is not ISO 8601, a markers turn
    without a context list, JSON nested too deeply, a timestamp without a zone when `assume_zone`
    (`[day] assume_zone`) is "refuse".

    The turn's language (SPEC §2.2) is stored with it (`language`, `language_source`), as the job
    reads it: from the turn as `turn_from_dict` builds it (a native format's answer text is its
    normalised text); null for a turn the job will skip as malformed.

    What the load repaired goes with the row (`input_repairs`, counted per day by the job): the
    characters replaced (`replaced_characters`) and, for a timestamp without a zone, the zone it was
    read in (`assumed_zone`).
    """
    if not isinstance(turn, Mapping):
        raise ValueError(f"turn is not a JSON object ({type(turn).__name__})")
    replaced = [0]
    turn = storable(turn, "turn", replaced)
    turn_id = turn.get("turn_id")
    if not isinstance(turn_id, str) or not turn_id.strip():
        raise ValueError("turn_id is missing or not a string")
    if len(turn_id) > MAX_ID_CHARS:
        raise ValueError(f"turn_id is longer than {MAX_ID_CHARS} characters ({len(turn_id):,})")
    answer_format = _text_column(turn, "answer_format", T.source_turns.c.answer_format.type.length)
    context = turn.get("context")
    if context is None and (answer_format or "markers") == "markers":
        raise ValueError("context is missing")
    if context is not None and not isinstance(context, list):
        raise ValueError(f"context is not a list ({type(context).__name__})")
    answered_at = parse_timestamp(turn.get("answered_at"), assume_zone=assume_zone)  # ValueError: not ISO 8601
    repairs = {"replaced_characters": replaced[0]} if replaced[0] else {}
    if is_zoneless(turn.get("answered_at")):
        repairs["assumed_zone"] = assume_zone
    if answered_at is None:
        raise ValueError("answered_at is missing: the turn would belong to no metric day")
    row = {
        "turn_id": turn_id,
        "conversation_id": conversation_id(turn.get("conversation_id")),
        "turn_index": turn_index(turn.get("turn_index")),
        "answered_at": answered_at,
        "question": _text_column(turn, "question"),
        "answer": _text_column(turn, "answer"),
        "answer_format": answer_format,
        **{key: turn.get(key) for key in NATIVE_FIELDS},
        "attributes": turn.get("attributes"),
        "input_repairs": repairs or None,
        **_language(turn),
    }
    passages = []
    for position, p in enumerate(context or []):
        if not isinstance(p, Mapping):
            raise ValueError(f"context[{position}] is not an object")
        passages.append({
            "turn_id": turn_id, "position": position,
            "label": _passage_text(p, "label", position, MAX_LABEL_CHARS),
            "text": _passage_text(p, "text", position),
            "source": _metadata(p, "source", position, None),
            "document_id": _metadata(p, "document_id", position, T.source_passages.c.document_id.type.length),
            "version": _metadata(p, "version", position, T.source_passages.c.version.type.length),
        })
    return row, passages


def _passage_text(passage: Mapping[str, Any], key: str, position: int, width: int | None = None) -> str | None:
    try:
        return _text_column(passage, key, width)
    except ValueError as exc:
        raise ValueError(f"context[{position}].{exc}") from None


def _metadata(passage: Mapping[str, Any], key: str, position: int, width: int | None) -> str | None:
    """A passage's source / document id / version as text (a number is fine as its digits)."""
    value = passage.get(key)
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value)
    if width is not None and len(text) > width:
        raise ValueError(f"context[{position}].{key} is longer than {width} characters")
    return text
