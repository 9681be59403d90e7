"""Reading logged turns (SPEC §1): JSON shape → `Turn`, with a clear reason when a turn is bad.

A bad turn never sinks a day: `turn_from_dict` raises `TurnError` with a reason, and callers
record the turn as skipped. Every answer format (markers and the provider-native ones) is read by
`citecheck.core.formats.normalise`, which checks each native citation pointer (§3.4).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from citecheck.core.formats import ANSWER_FORMATS, normalise
from citecheck.core.formats.common import MAX_ID_CHARS, MAX_LABEL_CHARS, TurnError, clean_text
from citecheck.core.model import Turn

MAX_ATTRIBUTE_KEY_CHARS = 190  # a slice is named "attribute:<key>" in a 200-character column
MAX_ATTRIBUTE_VALUE_CHARS = 400  # the width of daily_metrics.slice_value
DEFAULT_MAX_ANSWER_CHARS = 1_000_000  # Config.max_answer_chars; ~250k tokens
INT32 = 2 ** 31


@dataclass(frozen=True, slots=True)
class Skipped:
    """A line or row that was not scored, and why."""

    line: int | None
    turn_id: str | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "turn_id": self.turn_id, "reason": self.reason}


def is_zoneless(value: Any) -> bool:
    """Whether a timestamp names no zone (`parse_timestamp` then assumes one)."""
    if isinstance(value, dt.datetime):
        return value.tzinfo is None
    if not isinstance(value, str) or not value.strip() or value.strip()[-1:] in "Zz":
        return False
    try:
        return dt.datetime.fromisoformat(value.strip()).tzinfo is None
    except ValueError:
        return False


def parse_timestamp(value: Any, key: str = "answered_at", assume_zone: str = "UTC") -> dt.datetime | None:
    """An ISO 8601 timestamp as an aware UTC datetime; None or "" = no timestamp. No zone: read in
    `assume_zone` (`[day] assume_zone`, default UTC), or a TurnError when it is "refuse"."""
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
    if parsed.tzinfo is None:
        if assume_zone == "refuse":
            raise TurnError(f"{key} has no time zone ({clean_text(str(value))[:60]!r}) and [day] assume_zone is "
                            "\"refuse\"")
        from zoneinfo import ZoneInfo

        parsed = parsed.replace(tzinfo=dt.UTC if assume_zone == "UTC" else ZoneInfo(assume_zone))
    try:
        return parsed.astimezone(dt.UTC)
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
    return dict(attribute_text(k, v) for k, v in value.items())


def attribute_text(key: Any, value: Any) -> tuple[str, str]:
    """A slice key and value as the job slices by them: strings, cut to the slice columns."""
    return (_capped(_as_text(key), MAX_ATTRIBUTE_KEY_CHARS),
            "" if value is None else _capped(_as_text(value), MAX_ATTRIBUTE_VALUE_CHARS))


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
    normalised = normalise(data, answer_format)
    answer = normalised.answer
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
        context=normalised.context,
        attributes=_attributes(data.get("attributes")),
        native_citations=normalised.citations,
        pointer_problems=normalised.problems,
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


def read_turn_file(path: str, max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS
                   ) -> tuple[list[Turn], list[Skipped]]:
    """Every turn of a JSONL file, plus the lines skipped with their reasons.

    A turn id on several lines: the last line wins, as a reload does in the warehouse; each
    earlier line is skipped as replaced, so lines read = scored + skipped still holds.
    """
    items = list(read_jsonl(path, max_answer_chars))
    last = {item.turn_id: number for number, item in items if item.turn_id is not None}
    turns, skipped = [], []
    for number, item in items:
        if item.turn_id is not None and last[item.turn_id] != number:
            skipped.append(Skipped(number, item.turn_id, f"duplicate turn_id: replaced by line {last[item.turn_id]}"))
        elif isinstance(item, Skipped):
            skipped.append(item)
        else:
            turns.append(item)
    return turns, skipped


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


__all__ = ["ANSWER_FORMATS", "DEFAULT_MAX_ANSWER_CHARS", "MAX_ATTRIBUTE_KEY_CHARS", "MAX_ATTRIBUTE_VALUE_CHARS",
           "MAX_ID_CHARS", "MAX_LABEL_CHARS", "Skipped", "TurnError", "clean_text", "conversation_id", "decode_line",
           "parse_line", "parse_timestamp", "read_jsonl", "turn_from_dict", "turn_index", "turns_from_dicts"]
