"""A split keeps its sentence's meaning (issue 37 item 5): a claim whose polarity differs from its
sentence (negation cues per language, `core/claims/data/negations.txt`), a claim much longer than
its sentence, and a claims file or LLM reply that names one sentence twice are rejected: the
sentence stays whole and the rejection is counted."""

from __future__ import annotations

import pytest

from citecheck.core.claims import RecordedSplitter, RejectedSplit, apply_splits, split_problem, split_turn
from citecheck.core.claims.verify import negation_cues, negations
from citecheck.core.config import Config
from citecheck.core.pipeline import structure_turns
from citecheck.core.turns import turn_from_dict
from citecheck.judges.llm.claims import SPLIT_READER, split_request
from citecheck.judges.llm.config import LLMConfig


def _turn(answer: str, language: str = "en"):
    [st] = structure_turns([turn_from_dict({
        "turn_id": "t", "conversation_id": "c", "turn_index": 1, "answered_at": "2026-11-30T10:00:00Z",
        "question": "Can I return it?", "answer": answer, "answer_format": "markers",
        "context": [{"label": "S1", "source": "Returns", "text": "Clearance items cannot be returned."}],
        "attributes": {"language": language}})], Config())
    return st


@pytest.mark.parametrize(("language", "sentence", "claims"), [
    ("en", "Clearance items cannot be returned.", ["Clearance items can always be returned."]),
    ("en", "Refunds are issued within 5 days.", ["Refunds are never issued within 5 days."]),
    ("en", "Items can't be exchanged and are final.", ["Items can be exchanged.", "Items are final."]),
    ("de", "Reduzierte Artikel können nicht zurückgegeben werden.",
     ["Reduzierte Artikel können zurückgegeben werden."]),
    ("fr", "Les articles soldés ne sont pas remboursés.", ["Les articles soldés sont remboursés."]),
    ("es", "Los artículos rebajados no se devuelven.", ["Los artículos rebajados se devuelven."]),
    ("ja", "セール品は返品できません。", ["セール品は返品できます。"]),
])
def test_a_claim_whose_polarity_differs_is_rejected(language, sentence, claims):
    problem = split_problem(sentence, claims, 20, language)
    assert problem is not None and "polarity differs" in problem


@pytest.mark.parametrize(("language", "sentence", "claims"), [
    ("en", "The plan is not cheap and it includes support.", ["The plan is not cheap.", "The plan includes support."]),
    ("en", "Items cannot be returned or exchanged.", ["Items can't be returned.", "Items cannot be exchanged."]),
    ("de", "Der Plan ist nicht billig und enthält Support.",
     ["Der Plan ist nicht billig.", "Der Plan enthält Support."]),
    ("xx", "Clearance items cannot be returned.", ["Clearance items can be returned."]),  # no cue list: not read
])
def test_a_split_that_keeps_each_negation_is_kept(language, sentence, claims):
    assert split_problem(sentence, claims, 20, language) is None


def test_every_language_of_the_cue_list_has_cues_and_a_stated_source():
    from importlib import resources

    text = resources.files("citecheck.core.claims").joinpath("data/negations.txt").read_text(encoding="utf-8")
    assert "Source:" in text
    cues = negation_cues()
    assert {"en", "de", "fr", "es", "it", "pt", "nl", "ja", "zh"} <= set(cues)
    assert all(c.words for c in cues.values())
    assert negations("Il n\u2019existe pas.", "fr") == {"ne"} and negations("Can\u2019t.", "en-GB") == {"not"}


def test_a_claim_much_longer_than_its_sentence_is_rejected():
    sentence = "Clearance items cannot be returned."  # 35 characters
    assert "longer than its sentence" in split_problem(sentence, ["x" * 700_000], 20)
    assert "longer than its sentence" in split_problem(sentence, [sentence + " " + "y" * 40], 20)
    assert split_problem("The Starter plan is cheap; it cannot be paused.",
                         ["The Starter plan is cheap.", "the Starter plan cannot be paused."],
                         20) is None  # a resolved subject fits


def test_a_claims_file_naming_one_sentence_twice_keeps_it_whole_and_counts_it(tmp_path):
    sentence = "The Starter plan costs forty units a month and includes weekend support."
    splitter = RecordedSplitter.from_data({"claims": [
        {"sentence": sentence, "claims": ["The Starter plan costs forty units a month.",
                                          "The Starter plan includes weekend support."]},
        {"sentence": sentence + " ", "claims": ["The Starter plan costs forty units a month."]},
    ]})
    [proposed] = splitter.split([sentence])
    assert isinstance(proposed, RejectedSplit) and "more than once" in proposed.reason
    st = split_turn(_turn(sentence + " [S1]"), splitter, 20)
    assert st.claims == {0: (sentence,)} and st.claim_splits_rejected == 1


def test_an_llm_reply_naming_one_sentence_twice_keeps_it_whole_and_counts_it():
    sentence = "The Starter plan costs forty units a month and includes weekend support."
    request = split_request(LLMConfig(), "t", [("0", sentence)])
    reply = {"sentences": [{"id": "0", "claims": ["The Starter plan costs forty units a month."]},
                           {"id": "0", "claims": ["The Starter plan includes weekend support."]}]}
    outcomes, extra = SPLIT_READER.assess(request, reply)
    assert isinstance(outcomes["0"], RejectedSplit) and extra == 0
    st = apply_splits(_turn(sentence + " [S1]"), {0: outcomes["0"]}, 20)
    assert st.claims == {0: (sentence,)} and st.claim_splits_rejected == 1
