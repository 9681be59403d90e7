"""Verification of every split (SPEC §2.1): a split may not add content.

Every figure of a claim and every word of it that starts with a capital letter must occur in its
sentence; a claim may not be empty; a sentence splits into at most `max_claims` claims. A split that
breaks one of these is rejected: the sentence stays one claim and the rejection is counted
(`claim_splits_rejected`).

Figures here are what can be read without a locale: numbers written with digits (grouping marks
and decimal marks ignored: "1,000" and "1000" are one figure) and English cardinal number words
from two upward. A capitalised word occurs in its sentence when the sentence has the same word in
any case ("It" may start a claim whose sentence said "it"; "Paris" may not appear from nowhere).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_DIGITS = re.compile(r"\d+(?:[.,\u00a0\u202f ]\d+)*")
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
NUMBER_WORDS = frozenset((
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty",
    "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "million", "billion", "trillion", "dozen",
))


def _figures(text: str) -> set[str]:
    digits = {re.sub(r"\D", "", m.group()) for m in _DIGITS.finditer(text)}
    words = {w.casefold() for w in _WORD.findall(text) if w.casefold() in NUMBER_WORDS}
    return digits | words


def _capitalised(text: str) -> set[str]:
    return {w for w in _WORD.findall(text) if w[0].isupper()}


def split_problem(sentence: str, claims: Sequence[str], max_claims: int) -> str | None:
    """Why this split of `sentence` is rejected, or None when it is kept."""
    if not claims:
        return "no claims"
    if len(claims) > max_claims:
        return f"{len(claims)} claims, more than {max_claims}"
    figures = _figures(sentence)
    words = {w.casefold() for w in _WORD.findall(sentence)}
    for claim in claims:
        if not isinstance(claim, str) or not claim.strip():
            return "an empty claim"
        added = sorted(_figures(claim) - figures)
        if added:
            return f"claim {claim!r} adds the figure(s) {', '.join(added)}"
        new = sorted(w for w in _capitalised(claim) if w.casefold() not in words)
        if new:
            return f"claim {claim!r} adds the word(s) {', '.join(new)}"
    return None
