"""Every language the assistant speaks (SPEC §2.2): a turn's language, logged or detected, and the
segmentation and check-worthiness rules that follow it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citecheck.core.config import ConfigError, config_from_mapping
from citecheck.core.language_rules import LANGUAGES_WITH_DEFAULTS
from citecheck.core.languages import (
    DETECTED,
    INVALID_LANGUAGE_TAG,
    LOGGED,
    UNDETERMINED,
    detect_language,
    detection_text,
    language_subtag,
    sampled,
    turn_language,
)
from citecheck.core.model import Turn
from citecheck.core.parsing import parse_answer
from citecheck.core.structural import check_worthiness, structure_turn
from helpers import load_fixture

TABLE = load_fixture("language_answers.json")["answers"]
SHORT_ANSWERS = Path(__file__).resolve().parents[2] / "bench" / "data" / "short_answers_languages.json"
DEFAULT = config_from_mapping({})


def _turn(answer: str, attributes: dict[str, str] | None = None) -> Turn:
    return Turn("t1", "c1", 0, None, "q", answer, "markers", (), attributes or {})


def _split(structured) -> list[list]:
    return [[s.text, list(s.labels), s.non_claim_reason] for s in structured.sentences]


def test_the_table_covers_every_default_language():
    assert {row["language"] for row in TABLE} == set(LANGUAGES_WITH_DEFAULTS)


@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"{r['language']}:{r['answer'][:24]}")
def test_each_language_splits_cites_and_finds_non_claims_as_a_reader_does(row):
    logged = structure_turn(_turn(row["answer"], {"locale": f"{row['language']}-XX"}), DEFAULT)
    assert (logged.language, logged.language_source) == (row["language"], LOGGED)
    assert _split(logged) == row["sentences"]
    detected = structure_turn(_turn(row["answer"]), DEFAULT)  # no attribute: the text says which
    assert (detected.language, detected.language_source) == (row["language"], DETECTED)
    assert _split(detected) == row["sentences"]


def test_english_rules_alone_split_the_other_languages_wrongly():
    """What the language buys: read as English, the German answer breaks at "vgl.", "Abs." and "z. B."."""
    german = next(r for r in TABLE if r["language"] == "de")
    as_english = [s.text for s in parse_answer(german["answer"], DEFAULT, "en")]
    assert len(as_english) > len(german["sentences"])


@pytest.mark.parametrize(("answer", "labels"), [
    ("返金は14日以内です[S1]。ご不明な点があればお知らせください。", [["S1"], []]),
    ("返金は14日以内です。[S1]ご不明な点があればお知らせください。", [["S1"], []]),
    ("退款期限为30天[S2]！需要我把表格发给您吗？", [["S2"], []]),
    ("退款期限为30天！[S2]需要我把表格发给您吗？", [["S2"], []]),
])
def test_full_width_stops_end_sentences_with_the_marker_before_or_after_them(answer, labels):
    parsed = parse_answer(answer, DEFAULT, "ja")
    assert [list(s.labels) for s in parsed] == labels
    assert parsed[0].markers_after_stop == (1 if "。[" in answer or "！[" in answer else 0)


@pytest.mark.parametrize(("language", "sentence", "reason"), [
    ("de", "Lassen Sie mich wissen, wenn Sie mehr brauchen.", "offer"),
    ("fr", "N'hésitez pas à revenir vers moi.", "offer"),
    ("es", "Avíseme si necesita algo más.", "offer"),
    ("es", "¿Le envío la tabla completa, o prefiere un resumen", "question"),  # ¿ opens a question
    ("ja", "ご不明な点があればお知らせください。", "offer"),
    ("ja", "表をお送りしましょうか？", "question"),
    ("zh", "需要我把表格发给您吗？", "question"),
    ("zh", "如有其他问题，请随时告诉我。", "offer"),
    ("nl", "Laat het me weten als u meer nodig heeft.", "offer"),
    ("it", "Non trovo questa informazione nella politica.", "refusal"),
    ("pt", "Não encontro isso na política de viagens.", "refusal"),
])
def test_offers_questions_and_refusals_in_each_language(language, sentence, reason):
    assert check_worthiness(sentence, DEFAULT, language) == (False, reason)


def test_a_claim_stays_a_claim():
    assert check_worthiness("Hotels sind auf 220 Euro pro Nacht begrenzt.", DEFAULT, "de") == (True, None)
    assert check_worthiness("ホテル代は1泊220ユーロまでです。", DEFAULT, "ja") == (True, None)


def test_a_languages_section_extends_abbreviations_and_overrides_patterns():
    cfg = config_from_mapping({"languages": {"de": {"abbreviations": ["Ziff.", "Anl."],
                                                    "non_claim_patterns": ["^viel erfolg\\b"]}}})
    answer = "Die Grenze steht in Anl. B der Richtlinie [S1]. Viel Erfolg!"
    assert parse_answer(answer, DEFAULT, "de")[0].text == "Die Grenze steht in Anl."
    assert [s.text for s in parse_answer(answer, cfg, "de")] == ["Die Grenze steht in Anl. B der Richtlinie.",
                                                                 "Viel Erfolg!"]
    assert check_worthiness("Viel Erfolg!", cfg, "de") == (False, "offer")
    # replaced, not added to: the shipped German offer is no longer one
    assert check_worthiness("Lassen Sie mich wissen, wenn Sie mehr brauchen.", cfg, "de") == (True, None)
    assert cfg.rules_hash != DEFAULT.rules_hash


@pytest.mark.parametrize("section", [
    {"languages": {"DE_de": {"abbreviations": ["x."]}}},
    {"languages": {"de": {"segmenter": "de"}}},
    {"languages": {"de": {"non_claim_patterns": ["(unclosed"]}}},
    {"languages": {"de": {"abbreviations": "z. B."}}},
])
def test_a_bad_languages_section_is_a_clear_error(section):
    with pytest.raises(ConfigError, match="languages"):
        config_from_mapping(section)


# --- the turn's language ----------------------------------------------------------------------


@pytest.mark.parametrize(("tag", "code"), [
    ("de", "de"), ("de-DE", "de"), ("DE-de", "de"), ("zh-Hant-TW", "zh"), ("es-419", "es"), ("pt_BR", None),
    ("xx_YY", None), ("123", None), ("", None), ("en-", None), ("german", "german"),
])
def test_the_language_of_a_bcp47_tag_is_its_first_subtag(tag, code):
    assert language_subtag(tag) == code


def test_the_language_attribute_comes_before_the_locale():
    got = turn_language({"locale": "en-GB", "language": "de"}, "Hello there, this is English.")
    assert (got.code, got.source, got.repair) == ("de", LOGGED, None)


@pytest.mark.parametrize("tag", ["xx_YY", "123", "de_DE"])
def test_a_locale_that_is_not_bcp47_is_detected_instead_and_counted_as_a_repair(tag):
    turn = _turn("Die Erstattung dauert bis zu 14 Tage, vgl. Abs. 3 [S1].", {"locale": tag})
    structured = structure_turn(turn, DEFAULT)
    assert (structured.language, structured.language_source, structured.language_repair) == (
        "de", DETECTED, INVALID_LANGUAGE_TAG)
    assert [s.text for s in structured.sentences] == ["Die Erstattung dauert bis zu 14 Tage, vgl. Abs. 3."]


@pytest.mark.parametrize("answer", ["", "   ", "[S1]", "42 [S2].", "```\ncode\n```"])
def test_an_answer_with_no_words_is_undetermined(answer):
    structured = structure_turn(_turn(answer), DEFAULT)
    assert (structured.language, structured.language_source) == (UNDETERMINED, DETECTED)


def test_a_mixed_answer_takes_its_majority_language():
    answer = ("Die Erstattung dauert bis zu vierzehn Tage nach Eingang aller Belege. "
              "Hotelkosten werden bis zu einer festen Obergrenze pro Nacht übernommen. "
              "Für Taxifahrten gilt eine eigene Regel in der Richtlinie. "
              "See the travel policy for details.")
    assert detect_language(detection_text(answer)) == "de"
    assert detect_language(detection_text(answer.replace("See the travel policy for details.", "") +
                                          " The refund takes up to fourteen days after all receipts arrive."
                                          " Hotel costs are covered up to a fixed cap per night."
                                          " Taxi rides have their own rule in the policy."
                                          " A separate rule covers rail travel and car hire.")) == "en"


def test_an_answer_of_a_page_is_read_whole_not_a_sample_of_its_sentences():
    # 7 German and 5 English sentences placed where a spread of 8 of 12 sentences picks 5 English
    # and 3 German: every sentence votes, so the majority language is German
    de = ["Der Urlaub beträgt achtundzwanzig Tage im Jahr.", "Teilzeitkräfte erhalten anteilig weniger Urlaub.",
          "Nicht genommene Tage verfallen Ende März.", "Bitte beantragen Sie den Urlaub im Portal.",
          "Ihr Vorgesetzter muss den Antrag genehmigen.", "Krankheitstage zählen nicht als Urlaub.",
          "Bei Fragen wenden Sie sich an die Personalabteilung."]
    en = ["Please note the portal closes at night.", "You can also call the help desk.", "The form is short.",
          "Managers get a reminder each week.", "Holidays are listed in the calendar."]
    order = dict(zip([0, 1, 2, 3, 4, 7, 10], de, strict=True)) | dict(zip([5, 6, 8, 9, 11], en, strict=True))
    assert detect_language(" ".join(order[i] for i in range(12))) == "de"


def test_a_very_long_answer_is_read_as_windows_spread_over_it():
    german = "Der Urlaub beträgt achtundzwanzig Tage im Jahr und verfällt Ende März. "
    english = "Please file the request in the portal before the end of the month. "
    long_answer = german * 20_000 + english * 2_000  # 1.6 MB, a tenth of it English at the end
    assert len(sampled(long_answer)) < 3_000
    assert detect_language(long_answer) == "de"


def test_markers_urls_and_code_are_not_read_as_language():
    assert detection_text("Siehe https://example.org/a[1] und `x = 1` [S2].").split() == ["Siehe", "und", "."]


def test_detection_on_short_answers_is_right_for_nearly_all():
    """The bench's short answers (one or two sentences, ~40 characters): `bench_language_detection`
    prints the figure; the chosen detector must keep it."""
    answers = json.loads(SHORT_ANSWERS.read_text(encoding="utf-8"))["answers"]
    right = sum(detect_language(detection_text(text)) == language for language, text in answers)
    assert right >= 0.95 * len(answers), f"{right}/{len(answers)}"


@pytest.mark.parametrize(("answer", "passage", "locale", "amount"), [
    ("Hotelkosten werden bis zu 1.250,50 € erstattet, vgl. Abs. 1 [S1].", "Abs. 1: bis 1.250,50 € je Reise.",
     "de-DE", "1250.5 EUR"),
    ("宿泊費は1泊15,000円まで精算できます[S1]。", "第4条：宿泊費は１泊１５，０００円まで精算できます。",
     "ja-JP", "15000 JPY"),
    ("Hotelkosten werden bis zu 1.250,50 € erstattet, vgl. Abs. 1 [S1].", "Abs. 1: bis 1.250,50 € je Reise.",
     "", "1250.5 EUR"),  # no locale: the detected language reads the decimal comma
])
def test_figures_are_read_in_the_turns_language(answer, passage, locale, amount):
    from citecheck.core.model import Passage

    turn = Turn("t1", "c1", 0, None, "q", answer, "markers", (Passage("S1", passage),),
                {"locale": locale} if locale else {})
    (sentence,) = structure_turn(turn, DEFAULT).sentences
    amounts = [f for f in sentence.figures if f.kind == "amount"]
    assert [(f.value, f.traced) for f in amounts] == [(amount, True)]
