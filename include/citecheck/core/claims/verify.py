"""Verification of every split (SPEC §2.1): a split may not add content.

Every figure of a claim and every word of it that starts with a capital letter must occur in its
sentence; a claim may not be empty; a sentence splits into at most `max_claims` claims. A split that
breaks one of these is rejected: the sentence stays one claim and the rejection is counted
(`claim_splits_rejected`).

Figures are read by the product's one figure reader, `core.figures`, in the turn's language:
numbers written with digits (the language's grouping and decimal marks: "1,000" and "1000" are one
figure), cardinal number words ("forty", "veinte", "zwanzig"), percentages, amounts, dates and
times, compared by value (`figures.figures_added`). A capitalised word occurs in its sentence when
the sentence has the same word in any case ("It" may start a claim whose sentence said "it";
"Paris" may not appear from nowhere).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citecheck.core.figures import figures_added
from citecheck.core.languages import DEFAULT_LANGUAGE

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")


def _capitalised(text: str) -> set[str]:
    return {w for w in _WORD.findall(text) if w[0].isupper()}


def split_problem(sentence: str, claims: Sequence[str], max_claims: int, language: str = DEFAULT_LANGUAGE
                  ) -> str | None:
    """Why this split of `sentence` (in `language`, the turn's) is rejected, or None when it is kept."""
    if not claims:
        return "no claims"
    if len(claims) > max_claims:
        return f"{len(claims)} claims, more than {max_claims}"
    words = {w.casefold() for w in _WORD.findall(sentence)}
    for claim in claims:
        if not isinstance(claim, str) or not claim.strip():
            return "an empty claim"
        added = figures_added(claim, sentence, language)
        if added:
            return f"claim {claim!r} adds the figure(s) {', '.join(f.text for f in added)}"
        new = sorted(w for w in _capitalised(claim) if w.casefold() not in words)
        if new:
            return f"claim {claim!r} adds the word(s) {', '.join(new)}"
    return None
