"""Text normalisation shared by judges, quote checks and lookups."""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
import unicodedata

_WS = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"'})


def normalise_statement(text: str) -> str:
    """Collapse whitespace and trim: the key of a statement in tables and caches."""
    return _WS.sub(" ", text).strip()


def normalise_for_match(text: str) -> str:
    """Whitespace, case and curly quotes normalised: for exact-substring quote verification."""
    return _WS.sub(" ", text.translate(_APOSTROPHES)).strip().casefold()


def normalise_for_quote(text: str) -> str:
    """`normalise_for_match` after Unicode NFKC: full-width forms (ＡＢＣ１２３，), half-width
    katakana, ligatures and no-break spaces read as their plain forms, so a quote the LLM gives in
    either form of the same characters verifies (SPEC §2.2)."""
    return normalise_for_match(unicodedata.normalize("NFKC", text))


def quote_in_passage(quote: str, passage: str) -> bool:
    """True when `quote` occurs verbatim in `passage` after normalisation (whitespace, case, curly
    quotes, NFKC). No fuzzy matching."""
    needle = normalise_for_quote(quote)
    return bool(needle) and needle in normalise_for_quote(passage)


def text_hash(text: str) -> str:
    """A stable short hash of a text, for cache keys."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def find_span(passage: str, quote: str) -> tuple[int, int] | None:
    """(start, end) of `quote` in `passage` matched as `quote_in_passage` matches (whitespace runs,
    case, curly quotes and NFKC forms ignored), as offsets into the original passage; None when absent."""
    words = unicodedata.normalize("NFKC", quote).translate(_APOSTROPHES).split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    pieces = [unicodedata.normalize("NFKC", c) for c in passage]  # one piece per passage character
    found = re.search(pattern, "".join(pieces).translate(_APOSTROPHES), re.IGNORECASE)
    if not found:
        return None
    ends = list(itertools.accumulate(len(p) for p in pieces))  # normalised end of each character
    start = bisect.bisect_right(ends, found.start())
    end = bisect.bisect_left(ends, found.end()) + 1
    return (start, min(end, len(passage)))
