"""No language tag sinks the figures reader (issue 37 item 2): every code a detector can return,
every code the project maps, and BCP 47 tags of every shape read a sentence's figures; a date is
read in the language dateparser knows for the code (its alias, else the default)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citecheck.core.figures import (
    DATEPARSER_ALIASES,
    PERCENT_WORDS,
    TEXT2NUM_LANGUAGES,
    dateparser_language,
    find_figures,
    primary_language,
)
from citecheck.core.language_rules import LANGUAGES_WITH_DEFAULTS
from citecheck.core.languages import UNDETERMINED

SENTENCE = "The fee was 144,272,510 euros on 19/2/2018."


def _detector_codes() -> tuple[str, ...]:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return tuple(sorted(LanguageIdentifier.from_model_file(MODEL_FILE).nb_classes))


DETECTED = _detector_codes()
MAPPED = tuple(sorted({*LANGUAGES_WITH_DEFAULTS, *PERCENT_WORDS, *TEXT2NUM_LANGUAGES, *DATEPARSER_ALIASES,
                       UNDETERMINED}))
BCP47 = ("no-NO", "nb-NO", "nn", "zh-Hant-TW", "zh-yue", "sr-Latn-RS", "sgn-BE-FR", "de-CH-1901",
         "en-US-x-twain", "i-klingon", "x-private", "qaa", "abcdefgh", "EN", "en_GB", "la-VA",
         "vo", "tlh", "yue-Hant-HK", "", "-", "und-Latn", "mn-Cyrl-MN", "ku-Arab-IQ")


def test_the_detector_codes_include_those_dateparser_lacks():
    """The property is not vacuous: the detector returns codes dateparser refuses (`no`, `la`, `vo` …)."""
    from dateparser.data.languages_info import language_order

    assert {"no", "la", "vo", "ht", "wuu"} <= {c for c in DETECTED if c not in language_order}


@pytest.mark.parametrize("language", DETECTED + MAPPED + BCP47)
def test_every_language_reads_figures(language):
    kinds = {f.kind for f in find_figures(SENTENCE, language)}
    assert "date" in kinds or "number" in kinds


@pytest.mark.parametrize("language", ["no", "vo", "la", "ht", "wuu", "xx"])
def test_a_language_dateparser_lacks_still_reads_the_date(language):
    dates = [f.value for f in find_figures(SENTENCE, language) if f.kind == "date"]
    assert dates == ["2018-02-19"]


def test_dateparser_language_is_always_known():
    from dateparser.data.languages_info import language_order

    for code in DETECTED + MAPPED + tuple(primary_language(t) for t in BCP47):
        assert dateparser_language(code) in language_order
    assert dateparser_language("no") == "nb"
    assert dateparser_language("de") == "de"
    assert dateparser_language("vo") == "en"


@settings(max_examples=200, deadline=None)
@given(tag=st.from_regex(r"[A-Za-z]{1,8}(?:[-_][A-Za-z0-9]{1,8}){0,3}", fullmatch=True))
def test_any_tag_shape_reads_figures(tag):
    find_figures(SENTENCE, tag)
