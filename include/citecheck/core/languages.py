"""The language of a turn (SPEC §2.2): its logged `language` or `locale` attribute, else detected.

A logged value counts when it is a BCP 47 tag (`de`, `de-DE`, `zh-Hant-TW`); its first subtag,
lower-cased, is the language (`language_source = "logged"`). A logged value that is not BCP 47
(`"xx_YY"`, `"123"`) is no language: the answer text is detected instead and the turn counts one
input repair (`invalid_language_tag`). Detection uses py3langid (97 languages, normalised
probabilities; `bench/bench_language_detection.py` measured it against lingua on short answers):
markers, URLs and code are removed first; a mixed-language answer takes its majority language
(each sentence votes with its letters); an empty answer, or one the detector is not sure of, is
`und` (undetermined).

This module is the one reader of language tags (`read_language_tag`: a BCP 47 tag, or a POSIX
locale such as `de_CH` read leniently but not well formed) and the one home of the fallback for a
missing or undetermined language (`language_or_default`: the data that reads such a text, babel's
locale, the claim splitter's, is English's). Which *rules* a turn's language gets (its own or the
generic ones) is `citecheck.core.language_rules`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

UNDETERMINED = "und"
DEFAULT_LANGUAGE = "en"  # what reads the text of a turn with no language (`language_or_default`)
LOGGED = "logged"
DETECTED = "detected"
LANGUAGE_SOURCES = (LOGGED, DETECTED)
LANGUAGE_ATTRIBUTES = ("language", "locale")  # the attribute keys read, in this order
INVALID_LANGUAGE_TAG = "invalid_language_tag"  # the input repair a malformed logged tag counts
LANGUAGE_UNSUPPORTED = "language_unsupported"  # the unjudged reason: no NLI model reads the language

# BCP 47 (RFC 5646) language tags, case-insensitive: language[-extlang][-script][-region][-variant]
# [-extension][-privateuse]. Grandfathered tags and bare private use ("x-…") are not a language.
_BCP47 = re.compile(
    r"(?i)^(?P<language>[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{5,8})(?:-[a-z]{4})?(?:-(?:[a-z]{2}|\d{3}))?"
    r"(?:-(?:[a-z\d]{5,8}|\d[a-z\d]{3}))*(?:-[a-wyz\d](?:-[a-z\d]{2,8})+)*(?:-x(?:-[a-z\d]{1,8})+)?$")
_MARKUP = re.compile(r"```.*?(?:```|$)|`[^`\n]*`|(?:https?|ftp)://\S+|\[[^\[\]\n]{0,40}\]", re.DOTALL)
_PIECES = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s*|\n+")
_LETTER = re.compile(r"[^\W\d_]")
MIN_CONFIDENCE = 0.3  # below this normalised probability the detector's guess is no answer
SURE = 0.95  # a whole answer detected this surely is one language: no per-sentence vote
MAX_VOTES = 8  # windows read of a long answer, evenly spread over it (detection cost stays bounded)
MAX_PIECE_CHARS = 300  # of each, and of each sentence that votes
MAX_VOTING_SENTENCES = 64  # sentences that vote, evenly spread (only a text of many tiny sentences has more)


@dataclass(frozen=True, slots=True)
class TurnLanguage:
    """A turn's language: `code` (an ISO 639 code, or `und`), where it came from, and the input
    repair it needed (`invalid_language_tag`, or None)."""

    code: str
    source: str
    repair: str | None = None


def read_language_tag(value: Any) -> tuple[str | None, bool]:
    """(language, well_formed) of a language tag: a BCP 47 tag gives its first subtag, lower-cased
    (`"de-DE"` → `("de", True)`); a POSIX-style locale with underscores gives its language but is
    not well formed (`"de_CH"` → `("de", False)`); anything else is no language (`"123"`, `""` →
    `(None, False)`). The one rule every reader of a tag goes through."""
    if not isinstance(value, str):
        return None, False
    text = value.strip()
    found = _BCP47.match(text)
    if found is None and "_" in text:
        lenient = _BCP47.match(text.split(".", 1)[0].split("@", 1)[0].replace("_", "-"))  # de_CH.UTF-8@euro
        return (lenient.group("language").split("-", 1)[0].lower() if lenient else None), False
    return (found.group("language").split("-", 1)[0].lower() if found else None), found is not None


def language_subtag(value: Any) -> str | None:
    """The language of a well-formed BCP 47 tag (`"de-DE"` → `"de"`); None when the value is not
    one (`"xx_YY"`, `"123"`, `""`): the logged-language rule of SPEC §2.2."""
    code, well_formed = read_language_tag(value)
    return code if well_formed else None


def language_or_default(code: str | None) -> str:
    """The language whose data reads a text: the code itself, or `DEFAULT_LANGUAGE` for a missing
    or undetermined one (`None`, `""`, `und`). The one `und` → `en` fallback."""
    return DEFAULT_LANGUAGE if not code or code == UNDETERMINED else code


@lru_cache(maxsize=256)
def primary_language(value: str | None) -> str:
    """The language of any tag, read leniently (`"de-CH"`, `"pt_BR"` → `"de"`, `"pt"`), with the
    default for none (`language_or_default`)."""
    return language_or_default(read_language_tag(value)[0])


def logged_language(attributes: Mapping[str, Any]) -> tuple[str | None, bool]:
    """(language, repaired) from a turn's attributes: the first of `language`, `locale` that is
    present and not blank. `repaired` is True when that value is not a BCP 47 tag (the caller
    detects instead). `und` logged is no language and no repair."""
    for key in LANGUAGE_ATTRIBUTES:
        value = attributes.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        code = language_subtag(value)
        if code is None:
            return None, True
        return (None if code == UNDETERMINED else code), False
    return None, False


def sampled(text: str) -> str:
    """A long text as `MAX_VOTES` windows of `MAX_PIECE_CHARS` spread evenly over it (one per
    line), so a 10 MB answer costs what a page does (py3langid's time grows with the text)."""
    if len(text) <= MAX_VOTES * MAX_PIECE_CHARS:
        return text
    stride = (len(text) - MAX_PIECE_CHARS) // (MAX_VOTES - 1)
    return "\n".join(text[k * stride:k * stride + MAX_PIECE_CHARS] for k in range(MAX_VOTES))


def detection_text(answer: str) -> str:
    """The answer as the detector reads it: without markers, URLs and code."""
    return _MARKUP.sub(" ", answer)


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _classify(text: str) -> tuple[str, float]:
    code, confidence = _identifier().classify(text)
    return str(code), float(confidence)


def detect_language(text: str) -> str:
    """The majority language of a text, or `und`.

    The whole text first: a sure answer (`SURE`) is the language. Otherwise each sentence the
    detector is sure enough of (`MIN_CONFIDENCE`) votes with its number of letters; with no vote,
    the whole text's answer if sure enough, else `und`. A text longer than `MAX_VOTES` ×
    `MAX_PIECE_CHARS` characters is read as `MAX_VOTES` windows spread evenly over it (`sampled`);
    every sentence of what is read votes (cut at `MAX_PIECE_CHARS`, at most
    `MAX_VOTING_SENTENCES` spread evenly), so an answer of a page or less is read whole.
    """
    if not _LETTER.search(text):
        return UNDETERMINED
    text = sampled(text)
    pieces = [p[:MAX_PIECE_CHARS] for p in _PIECES.split(text) if p and _LETTER.search(p)]
    if len(pieces) > MAX_VOTING_SENTENCES:
        step = (len(pieces) - 1) / (MAX_VOTING_SENTENCES - 1)
        pieces = [pieces[round(k * step)] for k in range(MAX_VOTING_SENTENCES)]
    whole, confidence = _classify(text)
    if confidence >= SURE:
        return whole
    votes: Counter[str] = Counter()
    if len(pieces) > 1:
        for piece in pieces:
            code, sure = _classify(piece)
            if sure >= MIN_CONFIDENCE:
                votes[code] += len(_LETTER.findall(piece))
    if votes:
        return max(sorted(votes), key=votes.__getitem__)
    return whole if confidence >= MIN_CONFIDENCE else UNDETERMINED


def turn_language(attributes: Mapping[str, Any], answer: str) -> TurnLanguage:
    """A turn's language: logged when its attributes carry a BCP 47 tag, else detected from the
    answer (a malformed tag is counted as a repair)."""
    code, repaired = logged_language(attributes)
    if code is not None:
        return TurnLanguage(code, LOGGED)
    return TurnLanguage(detect_language(detection_text(sampled(answer))), DETECTED,
                        INVALID_LANGUAGE_TAG if repaired else None)
