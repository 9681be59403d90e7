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

A split keeps its sentence's meaning (issue 37): a claim may not add a negation cue its sentence
lacks, nor may the claims together drop one the sentence has ("Clearance items cannot be returned."
is not "Clearance items can always be returned."), the cues per language read from
`data/negations.txt` (with its source; a language without a list is not checked); a claim may not
be longer than its sentence by more than `MAX_CLAIM_GROWTH` plus `CLAIM_SLACK_CHARS` characters
(a claim repeats its sentence's words, at most a resolved subject more). A splitter that names one
sentence twice (a claims file's entries, an LLM reply's ids) proposes a `RejectedSplit`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from citecheck.core.figures import figures_added
from citecheck.core.languages import DEFAULT_LANGUAGE, primary_language

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
MAX_CLAIM_GROWTH = 0.2  # a claim may be 20% longer than its sentence …
CLAIM_SLACK_CHARS = 20  # … plus 20 characters (a subject a pronoun stood for)
UNSPACED_LANGUAGES = frozenset({"ja", "zh"})  # negation cues matched as substrings
DUPLICATE_SENTENCE = "the splitter named this sentence more than once"


@dataclass(frozen=True, slots=True)
class RejectedSplit:
    """What a splitter proposes for a sentence it cannot split cleanly (named twice): the
    sentence stays whole and the rejection is counted, with its reason."""

    reason: str


@dataclass(frozen=True, slots=True)
class _Cues:
    words: dict[str, str]  # form → the cue it is a form of
    endings: tuple[tuple[str, str], ...]  # ("n't", "not"): a word ending so
    beginnings: tuple[tuple[str, str], ...]  # ("n'", "ne"): an elided word beginning so


@lru_cache(maxsize=1)
def negation_cues() -> dict[str, _Cues]:
    """`data/negations.txt` by language: every form of each negation cue."""
    text = resources.files("citecheck.core.claims").joinpath("data/negations.txt").read_text(encoding="utf-8")
    raw: dict[str, list[list[str]]] = {}
    language = None
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            language = line[1:-1].strip()
            raw[language] = []
        elif line and language is not None:
            raw[language].append(line.split())
    out = {}
    for code, cues in raw.items():
        words, endings, beginnings = {}, [], []
        for forms in cues:
            for form in (f.casefold().replace("\u2019", "'") for f in forms):
                if form.startswith("-"):
                    endings.append((form[1:], forms[0]))
                elif form.endswith("'"):
                    beginnings.append((form, forms[0]))
                else:
                    words[form] = forms[0]
        out[code] = _Cues(words, tuple(endings), tuple(beginnings))
    return out


def negations(text: str, language: str) -> frozenset[str] | None:
    """The negation cues of a text in `language` (None: no cue list for the language)."""
    code = primary_language(language)
    cues = negation_cues().get(code)  # primary_language already reads und as the default
    if cues is None:
        return None
    if code in UNSPACED_LANGUAGES:
        return frozenset(cue for form, cue in cues.words.items() if form in text)
    found = set()
    for word in (w.casefold().replace("\u2019", "'") for w in _WORD.findall(text)):
        cue = cues.words.get(word)
        cue = cue or next((c for end, c in cues.endings if word.endswith(end)), None)
        cue = cue or next((c for begin, c in cues.beginnings if word.startswith(begin)), None)
        if cue is not None:
            found.add(cue)
    return frozenset(found)


def _polarity_problem(sentence: str, claims: Sequence[str], language: str) -> str | None:
    stated = negations(sentence, language)
    if stated is None:
        return None
    kept: set[str] = set()
    for claim in claims:
        cues = negations(claim, language) or frozenset()
        if cues - stated:
            return f"claim {claim!r} adds the negation(s) {', '.join(sorted(cues - stated))}: its polarity differs"
        kept |= cues
    if stated - kept:
        return f"the claims drop the negation(s) {', '.join(sorted(stated - kept))}: their polarity differs"
    return None


def _capitalised(text: str) -> set[str]:
    return {w for w in _WORD.findall(text) if w[0].isupper()}


def split_problem(sentence: str, claims: Sequence[str], max_claims: int, language: str = DEFAULT_LANGUAGE
                  ) -> str | None:
    """Why this split of `sentence` (in `language`, the turn's) is rejected, or None when it is kept."""
    if not claims:
        return "no claims"
    if len(claims) > max_claims:
        return f"{len(claims)} claims, more than {max_claims}"
    longest = len(sentence) * (1 + MAX_CLAIM_GROWTH) + CLAIM_SLACK_CHARS
    for claim in claims:
        if not isinstance(claim, str) or not claim.strip():
            return "an empty claim"
        if len(claim) > longest:
            return f"a claim of {len(claim)} characters, longer than its sentence ({len(sentence)}) allows"
    words = {w.casefold() for w in _WORD.findall(sentence)}
    for claim in claims:
        added = figures_added(claim, sentence, language)
        if added:
            return f"claim {claim!r} adds the figure(s) {', '.join(f.text for f in added)}"
        new = sorted(w for w in _capitalised(claim) if w.casefold() not in words)
        if new:
            return f"claim {claim!r} adds the word(s) {', '.join(new)}"
    return _polarity_problem(sentence, claims, language)
