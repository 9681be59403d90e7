"""Parser behaviour of SPEC §2: sentences, list items, markers and who owns them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citecheck.core.config import Config, ConfigError, config_from_mapping
from citecheck.core.parsing import parse_answer, split_sentences

DEFAULT = Config()


def texts(answer: str, config: Config | None = None) -> list[str]:
    return [s.text for s in parse_answer(answer, config)]


def labels(answer: str, config: Config | None = None) -> list[tuple[str, ...]]:
    return [s.labels for s in parse_answer(answer, config)]


# --- sentence segmentation -------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [
    "Pack light layers, e.g. the fleece from the kit list.",
    "The transfer takes approx. 40 minutes from the airport.",
    "The U.S. Army ran the programme until 1954.",
    "Dwight D. Eisenhower signed the act in 1956.",
    "Refunds arrive within 2.5 days of approval.",
    "Costs rose 3.5% vs. the year before, i.e. the second rise in a row.",
    "Dr. Maria Lopez reviewed the claim at 9 a.m. on Monday.",
])
def test_abbreviations_initials_and_decimals_do_not_split(answer):
    assert texts(answer) == [answer]


def test_real_sentence_ends_still_split():
    assert texts("The rate is 2.5 days. The cap is $50. Dr. Lopez agreed!") == [
        "The rate is 2.5 days.", "The cap is $50.", "Dr. Lopez agreed!"]


def test_an_abbreviation_before_a_capitalised_word_does_not_end_the_sentence():
    assert texts("Bring a form, e.g. Form A2 from the portal. Then wait.") == [
        "Bring a form, e.g. Form A2 from the portal.", "Then wait."]


def test_lines_and_list_items_are_sentences_and_bullets_are_removed():
    answer = ("The policy covers:\n- hotels up to 3 nights [S1]\n* meals up to $50 [S2]\n"
              "1. taxis after 10 pm\n2) parking [S3]\n\u2022 rail fares")
    parsed = parse_answer(answer)
    assert [s.text for s in parsed] == ["The policy covers:", "hotels up to 3 nights", "meals up to $50",
                                        "taxis after 10 pm", "parking", "rail fares"]
    assert [s.labels for s in parsed] == [(), ("S1",), ("S2",), (), ("S3",), ()]


def test_bullet_glyphs_inside_a_line_start_new_items():
    answer = "Ways to save:\u2022 Book early[1]\u2022 Share rooms[2]\u2022Use rail[3]"
    assert texts(answer) == ["Ways to save:", "Book early", "Share rooms", "Use rail"]
    assert labels(answer) == [(), ("1",), ("2",), ("3",)]


def test_a_hyphen_inside_a_line_is_not_a_bullet():
    assert texts("The fee is - as agreed - 40 euros.") == ["The fee is - as agreed - 40 euros."]


def test_blank_lines_and_whitespace_only_lines_give_no_sentences():
    assert texts("First point.\n\n   \nSecond point.") == ["First point.", "Second point."]


def test_split_sentences_on_passages():
    passage = ("Employees may book hotels for up to 3 nights. Meals are capped at approx. $50 per day, "
               "e.g. the dinner allowance.\nThe U.S. office follows the same rule. Dwight D. Eisenhower "
               "Hall is exempt.")
    assert split_sentences(passage) == [
        "Employees may book hotels for up to 3 nights.",
        "Meals are capped at approx. $50 per day, e.g. the dinner allowance.",
        "The U.S. office follows the same rule.",
        "Dwight D. Eisenhower Hall is exempt.",
    ]
    assert split_sentences("") == []


# --- markers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "expected"), [
    ("Hotels are capped at 3 nights [S1][S3].", ("S1", "S3")),
    ("Hotels are capped at 3 nights [S1, S3].", ("S1", "S3")),
    ("Hotels are capped at 3 nights [S1,S3;S4].", ("S1", "S3", "S4")),
    ("Hotels are capped at 3 nights [1].", ("1",)),
    ("Hotels are capped at 3 nights [2][10].", ("2", "10")),
    ("Hotels are capped at 3 nights [DOC12].", ("DOC12",)),
    ("Hotels are capped at 3 nights [ab3].", ("ab3",)),
])
def test_marker_styles(answer, expected):
    parsed = parse_answer(answer)
    assert [s.text for s in parsed] == ["Hotels are capped at 3 nights."]
    assert parsed[0].labels == expected


@pytest.mark.parametrize("not_a_marker", ["[ABCD1]", "[S]", "[see above]", "[1a]"])
def test_bracketed_text_that_is_not_a_marker_stays(not_a_marker):
    parsed = parse_answer(f"The cap is 3 nights {not_a_marker}.")
    assert parsed[0].labels == ()
    assert not_a_marker in parsed[0].text


def test_configurable_marker_pattern_from_toml_mapping():
    config = config_from_mapping({"markers": {"pattern": r"\u3010(?P<labels>\d+(?:\s*,\s*\d+)*)\u3011"}})
    parsed = parse_answer("Hotels are capped at 3 nights\u30102, 5\u3011. Meals at $50 [S1].", config)
    assert [s.text for s in parsed] == ["Hotels are capped at 3 nights.", "Meals at $50 [S1]."]
    assert [s.labels for s in parsed] == [("2", "5"), ()]


def test_marker_pattern_needs_a_labels_group_and_must_compile():
    with pytest.raises(ConfigError):
        config_from_mapping({"markers": {"pattern": r"\[(\d+)\]"}})
    with pytest.raises(ConfigError):
        config_from_mapping({"markers": {"pattern": r"\[(?P<labels>\d+"}})


def test_marker_after_the_full_stop_with_a_space_belongs_to_the_sentence_before():
    parsed = parse_answer("Meals are capped at $50 per day. [S3] Reports are due monthly. [S4]")
    assert [s.text for s in parsed] == ["Meals are capped at $50 per day.", "Reports are due monthly."]
    assert [s.labels for s in parsed] == [("S3",), ("S4",)]
    assert [s.markers_after_stop for s in parsed] == [1, 1]


def test_marker_after_the_full_stop_without_a_space():
    parsed = parse_answer("Meals are capped at $50 per day.[S3] Reports are due monthly.[S4][S5]")
    assert [s.labels for s in parsed] == [("S3",), ("S4", "S5")]
    assert [s.markers_after_stop for s in parsed] == [1, 2]


def test_marker_glued_to_the_next_sentence_belongs_to_the_one_before():
    parsed = parse_answer("The unit was led by Gen. John J. Pershing.[3]Five of these units served in France.[4]")
    assert [s.text for s in parsed] == ["The unit was led by Gen. John J. Pershing.",
                                        "Five of these units served in France."]
    assert [s.labels for s in parsed] == [("3",), ("4",)]


def test_markers_glued_to_the_next_sentence_in_a_chain():
    parsed = parse_answer("There are over 130 clubs.[1][2][3]The chain operates 136 clubs.[4]")
    assert [s.labels for s in parsed] == [("1", "2", "3"), ("4",)]


def test_marker_glued_between_words_keeps_the_words_apart():
    parsed = parse_answer("He was born in 1970[2]and moved to Berlin in 1990[3].")
    assert [s.text for s in parsed] == ["He was born in 1970 and moved to Berlin in 1990."]
    assert parsed[0].labels == ("2", "3")


def test_marker_glued_to_a_capitalised_word_without_a_stop_is_a_lost_line_break():
    parsed = parse_answer("Be honest with your housemates[3]It is wise to take things slowly[5].")
    assert [s.text for s in parsed] == ["Be honest with your housemates", "It is wise to take things slowly."]
    assert [s.labels for s in parsed] == [("3",), ("5",)]


def test_space_before_final_punctuation_goes_with_the_marker():
    parsed = parse_answer("The hotel cap is 3 nights [S2]. Is it per trip [S1]?")
    assert [s.text for s in parsed] == ["The hotel cap is 3 nights.", "Is it per trip?"]


def test_markers_inside_a_sentence_belong_to_it():
    parsed = parse_answer("Some argue it costs more[1][2], while others disagree [3]. Next.")
    assert [s.text for s in parsed] == ["Some argue it costs more, while others disagree.", "Next."]
    assert parsed[0].labels == ("1", "2", "3")


def test_duplicate_labels_count_once_and_are_recorded():
    parsed = parse_answer("Meals are capped at $50 [S1][S1]. Taxis are allowed [S2, S2][S3][S2].")
    assert [s.labels for s in parsed] == [("S1",), ("S2", "S3")]
    assert [s.duplicate_labels for s in parsed] == [("S1",), ("S2",)]
    assert [s.markers for s in parsed] == [2, 4]


def test_nested_marker_text_never_reaches_the_judge():
    parsed = parse_answer("The cap is 3 nights [S1[S2]]. Meals are $50 [S3].")
    assert [s.text for s in parsed] == ["The cap is 3 nights.", "Meals are $50."]
    assert [s.labels for s in parsed] == [("S2",), ("S3",)]


def test_offsets_point_into_the_marker_free_text():
    answer = "Hotels are capped at 3 nights [S1]. Meals are $50. [S2]"
    parsed = parse_answer(answer)
    clean = "Hotels are capped at 3 nights. Meals are $50."
    assert [clean[s.start:s.end] for s in parsed] == [s.text for s in parsed]


def test_an_answer_without_words_has_no_sentences():
    assert parse_answer("") == []
    assert parse_answer("[S1] \n - \n ...") == []


# --- properties ------------------------------------------------------------------------------------

_MARKERISH = st.sampled_from(["[S1]", "[S2]", "[1]", "[S1, S3]", "[S1][S1]", "[ABC12]", "[", "]", "S", "1", ",",
                              " ", ".", "!", "?", "\n", "- ", "\u2022", "e.g.", "U.S.", "2.5", "Dr.", "a", "The",
                              "\u201d", "(", ")", "\t", ";"])
_ANSWERS = st.one_of(st.text(max_size=200), st.lists(_MARKERISH, max_size=40).map("".join))


def _input_labels(answer: str, config: Config) -> set[str]:
    found: set[str] = set()
    for match in config.marker_re.finditer(answer):
        found.update(lab for lab in re.split(config.label_separator, match.group("labels").strip()) if lab)
    return found


@settings(max_examples=300, deadline=None)
@given(_ANSWERS)
def test_parse_answer_never_crashes_and_never_invents_labels_or_leaves_markers(answer):
    parsed = parse_answer(answer)
    allowed = _input_labels(answer, DEFAULT)
    for sentence in parsed:
        assert sentence.text and sentence.text == sentence.text.strip()
        assert DEFAULT.marker_re.search(sentence.text) is None, sentence.text
        assert set(sentence.labels) <= allowed
        assert len(set(sentence.labels)) == len(sentence.labels)
        assert set(sentence.duplicate_labels) <= set(sentence.labels)
        assert sentence.markers >= len(sentence.labels)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_split_sentences_never_crashes_and_keeps_text_in_order(text):
    sentences = split_sentences(text)
    position = 0
    for sentence in sentences:
        assert sentence.strip() == sentence and sentence
        position = text.index(sentence, position) + len(sentence)


# --- default check-worthiness rules (config.DEFAULT_*; judged on parsed sentences) -----------------


@pytest.mark.parametrize(("sentence", "reason"), [
    ("As an AI language model, I do not have access to current news.", "refusal"),
    ("As a language model, I cannot see the image you sent.", "refusal"),
    ("Sure, here are some other hotels near the venue.", "offer"),
    ("Here are the steps:", "offer"),
    ("Some reasons for this include:", "offer"),
    ("For the latest figures, I recommend checking the official site.", "offer"),
    ("I'd suggest contacting HR directly.", "offer"),
    ("Would you like the form?", "question"),
])
def test_default_rules_drop_disclaimers_preambles_and_advice(sentence, reason):
    from citecheck.core.structural import check_worthiness

    assert check_worthiness(sentence, DEFAULT) == (False, reason)


@pytest.mark.parametrize("sentence", [
    "As an AI language model, I don't have opinions, but the tower is 330 metres tall.",
    "As a rule, hotels are capped at 3 nights.",
    "Here are the facts: the cap is 3 nights.",
    "Some hotels are exempt from the cap.",
    "Doctors recommend you drink two litres of water a day.",
    "The board suggested that staff book early.",
    "Here is the key date: the policy changed in 2021.",
])
def test_default_rules_keep_claims_that_look_like_them(sentence):
    from citecheck.core.structural import check_worthiness

    assert check_worthiness(sentence, DEFAULT) == (True, None)


def test_time_abbreviations_do_not_end_a_sentence():
    from citecheck.core.parsing import split_sentences

    text = "The desk is staffed from 5:30 a.m. to 2:30 a.m. Monday [S1]. It is closed on Sundays [S2]."
    assert split_sentences(text) == ["The desk is staffed from 5:30 a.m. to 2:30 a.m. Monday [S1].",
                                     "It is closed on Sundays [S2]."]
    assert split_sentences("Calls after 6 p.m. go to voicemail. Leave a message.") == [
        "Calls after 6 p.m. go to voicemail.", "Leave a message."]
