"""Text normalisation shared by judges, quote checks and lookups."""

from __future__ import annotations

import hashlib
import re

_WS = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"'})


def normalise_statement(text: str) -> str:
    """Collapse whitespace and trim: the key of a statement in tables and caches."""
    return _WS.sub(" ", text).strip()


def normalise_for_match(text: str) -> str:
    """Whitespace, case and curly quotes normalised: for exact-substring quote verification."""
    return _WS.sub(" ", text.translate(_APOSTROPHES)).strip().casefold()


def quote_in_passage(quote: str, passage: str) -> bool:
    """True when `quote` occurs verbatim in `passage` after normalisation. No fuzzy matching."""
    needle = normalise_for_match(quote)
    return bool(needle) and needle in normalise_for_match(passage)


def text_hash(text: str) -> str:
    """A stable short hash of a text, for cache keys."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def find_span(passage: str, quote: str) -> tuple[int, int] | None:
    """(start, end) of `quote` in `passage` matched as `quote_in_passage` matches (whitespace runs,
    case and curly quotes ignored), as offsets into the original passage; None when absent."""
    words = quote.translate(_APOSTROPHES).split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    found = re.search(pattern, passage.translate(_APOSTROPHES), re.IGNORECASE)
    return (found.start(), found.end()) if found else None
