"""What every format module shares: the turn error, text cleaning, field readers, and the
collector that turns checked pointers into citations and pointer problems (SPEC §3.4)."""

from __future__ import annotations

import hashlib
import math
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citecheck.core.model import CitationSpan, Passage, PointerProblem

MAX_ID_CHARS = 200  # turn ids, conversation ids and labels: the width of the warehouse's id columns
MAX_LABEL_CHARS = MAX_ID_CHARS
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # NUL and lone surrogates: no database stores them
_SPACE = re.compile(r"\s+")

# Pointer problem kinds (the `citation_verdicts.pointer_problem` column, the per-kind metrics).
MALFORMED = "malformed"  # a field missing, of the wrong type, or an unknown citation type
INDEX_OUT_OF_RANGE = "index_out_of_range"  # no source, page, block or chunk at that index
TITLE_MISMATCH = "title_mismatch"  # the citation's title (or search result source) is not the logged one
OFFSETS_OUT_OF_RANGE = "offsets_out_of_range"  # negative, reversed, or past the end of the text
PART_OUT_OF_RANGE = "part_out_of_range"  # the answer part the citation is in does not exist
SPLIT_CHARACTER = "split_character"  # a byte range that cuts a UTF-8 character
CITED_TEXT_MISMATCH = "cited_text_mismatch"  # the cited text is not what the source offsets select
UNKNOWN_SOURCE = "unknown_source"  # a url, file id or source id that names no logged source
ANSWER_TEXT_MISMATCH = "answer_text_mismatch"  # the citation's answer text is not what its offsets select
POINTER_PROBLEM_KINDS = (MALFORMED, INDEX_OUT_OF_RANGE, TITLE_MISMATCH, OFFSETS_OUT_OF_RANGE, PART_OUT_OF_RANGE,
                         SPLIT_CHARACTER, CITED_TEXT_MISMATCH, UNKNOWN_SOURCE, ANSWER_TEXT_MISMATCH)


def unknown_url_label(url: str) -> str:
    """The label of a cited url that names no logged source: `web:<host>#<12 hex of the url's SHA-256>`.

    Never the url itself: its path and query can carry personal data or tokens, and labels are
    published in columns the read-only BI role reads (`citation_verdicts.label`). The same url
    always gets the same label, and two urls of one host stay two labels (two citations)."""
    try:
        host = urllib.parse.urlsplit(url).hostname or ""
    except ValueError:  # an unparsable netloc (a bad IPv6 literal)
        host = ""
    digest = hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"web:{host[:100]}#{digest}"


class TurnError(ValueError):
    """A turn that cannot be scored; the message is the reason recorded with the skip."""


def clean_text(text: str) -> str:
    """`text` with NUL characters and lone UTF-16 surrogates replaced by U+FFFD.

    JSON can spell both (`\\u0000`, `\\ud800`); neither can be written as UTF-8 or stored in a
    PostgreSQL text column. One character for one keeps every offset (native citations) valid.
    """
    return _UNSTORABLE.sub("\ufffd", text) if _UNSTORABLE.search(text) else text


def replaced_characters(text: str) -> int:
    """How many characters `clean_text` replaces in `text` (what the day's input repairs count)."""
    return len(_UNSTORABLE.findall(text))


def squash(text: str) -> str:
    """Whitespace collapsed to one space and stripped: how cited texts are compared."""
    return _SPACE.sub(" ", text).strip()


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def finite_number(value: Any, where: str) -> float | None:
    """A provider's number (a score) as a float, None when absent (null); `TurnError` naming
    `where` when it is no number (the loader keeps a non-finite one as its text, "inf"), a number
    no float holds (JSON's 1e400 or a 400-digit integer) or not finite (NaN, infinity): the turn
    is skipped with that reason, the day goes on."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TurnError(f"{where} is not a number ({str(value)[:40]!r})")
    try:
        number = float(value)
    except OverflowError:
        raise TurnError(f"{where} is a number out of range ({len(str(abs(value)))} digits)") from None
    if not math.isfinite(number):
        raise TurnError(f"{where} is not a finite number ({number})")
    return number


def optional_list(data: Mapping[str, Any], key: str) -> list[Any] | None:
    """A list field, None when absent; TurnError when present and not a list."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        raise TurnError(f"{key} is not a list ({type(value).__name__})")
    return value


def optional_text(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    """A string field that may be absent (None); TurnError naming `where` when it is another type."""
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise TurnError(f"{where}.{key} is not a string")
    return value


def text_or_none(value: Any) -> str | None:
    return clean_text(value) if isinstance(value, str) else None


def get(obj: Mapping[str, Any], camel: str, snake: str | None = None) -> Any:
    """A field by its JSON (camelCase) name or the Python SDKs' snake_case name."""
    if camel in obj:
        return obj[camel]
    return obj.get(snake) if snake else None


@dataclass(frozen=True, slots=True)
class Normalised:
    """A logged turn in the one shape every rule reads: answer text, the context set, and each
    citation's answer span (or position) and label, with the pointer problems found."""

    answer: str
    context: tuple[Passage, ...]
    citations: tuple[CitationSpan, ...]
    problems: tuple[PointerProblem, ...]


class Citations:
    """Collects a turn's checked citations. A citation with a label and an answer span becomes a
    `CitationSpan` (invalid when it has a problem); a problem with no place in the answer is an
    orphan: it counts as one citation with an unknown label for the turn."""

    def __init__(self) -> None:
        self.spans: list[CitationSpan] = []
        self.problems: list[PointerProblem] = []

    def ok(self, start: int, end: int, label: str, *, point: bool = False, unverified: Sequence[str] = (),
           confidence: float | None = None) -> None:
        # an empty answer span cites the position where it stands (else no sentence would own it)
        self.spans.append(CitationSpan(start, end, label, True, point=point or start == end,
                                       unverified=tuple(unverified), confidence=confidence))

    def bad(self, kind: str, reason: str, *, label: str | None = None, span: tuple[int, int] | None = None,
            point: bool = False, index: int = -1, cited_title: str | None = None,
            recorded_title: str | None = None) -> None:
        """A pointer problem; with a label and an answer span it also marks its sentence."""
        placed = label is not None and span is not None
        self.problems.append(PointerProblem(index, reason, cited_title, recorded_title, kind=kind, label=label,
                                            placed=placed))
        if placed:
            self.spans.append(CitationSpan(span[0], span[1], label, False, point=point or span[0] == span[1],
                                           problem=kind))


def placed_span(answer: str, own_text: Any, span: tuple[int, int] | None) -> tuple[int, int]:
    """Where a citation whose answer span does not select its own answer text (Cohere's `text`,
    Gemini's `segment.text`) is counted (SPEC §3.4): where that text occurs exactly once in the
    answer; else by its span clipped to the answer, as a position at the clipped span's start (one
    sentence owns it); else (no span, or one wholly outside the answer) a position at the end of
    the answer, which the last sentence owns. Never dropped."""
    if isinstance(own_text, str) and own_text.strip():
        text = clean_text(own_text)
        first = answer.find(text)
        if first >= 0 and answer.find(text, first + 1) < 0:
            return first, first + len(text)
    if span is not None:
        start, end = max(span[0], 0), min(span[1], len(answer))
        if start < end:
            return start, start
    return len(answer), len(answer)


def blocks_text(blocks: Sequence[str]) -> str:
    return "\n".join(blocks)


def joined_equals(blocks: Sequence[str], cited: str) -> bool:
    """Do the blocks, joined (with or without a separator), say exactly `cited` (whitespace aside)?"""
    want = squash(cited)
    return want in (squash("".join(blocks)), squash(" ".join(blocks)))
