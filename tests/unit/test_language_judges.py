"""Judges per language (SPEC §2.2): the NLI judge file's `"models"` map, `language_unsupported`,
escalation of such sentences to the LLM judge, and quote verification across Unicode forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from citecheck.core.languages import LANGUAGE_UNSUPPORTED
from citecheck.core.model import JudgeItem, Passage
from citecheck.core.text import find_span, quote_in_passage
from citecheck.judges import JudgeSpecError, judge_from_spec
from citecheck.judges.nli import LanguageNLIJudge, NLIJudge, parse_spec
from helpers.fake_anthropic import FakeAnthropic, entry, grade_by_id, request_input, serve_with_env
from helpers.tiny_models import save_tiny_nli

KEY = "sk-test-languages-4711"
CONTEXT = (Passage("S1", "hotel expenses are paid within two weeks of the claim."),
           Passage("S2", "meal expenses per day must be submitted with a receipt."))
JA_CONTEXT = (Passage("S1", "出張規定: ホテル代は１泊２２０ユーロまで精算できます。"),)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_nli(tmp_path_factory.mktemp("nli") / "tiny")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    yield from serve_with_env(monkeypatch, KEY)


def _items() -> list[JudgeItem]:
    return [
        JudgeItem("t-en", 0, "hotel expenses are paid within two weeks.", ("S1",), CONTEXT, language="en"),
        JudgeItem("t-de", 0, "Hotelkosten werden binnen zwei Wochen erstattet.", ("S1",), CONTEXT, language="de"),
        JudgeItem("t-en", 1, "meal expenses need a receipt.", ("S2",), CONTEXT, language="en"),
        JudgeItem("t-und", 0, "42.", ("S1",), CONTEXT, language="und"),
    ]


def test_a_lone_model_is_the_model_of_every_language(tiny: Path):
    judge = judge_from_spec({"kind": "nli", "model": str(tiny)})
    assert isinstance(judge, NLIJudge) and judge.version == str(tiny)
    assert all(j.judged for j in judge.judge(_items()))
    star = judge_from_spec({"kind": "nli", "models": {"*": str(tiny)}})
    assert isinstance(star, NLIJudge) and star.version == judge.version  # {"*": m} is "model": m


def test_a_model_mapped_to_one_language_leaves_the_others_unjudged_and_counted(tiny: Path):
    judge = judge_from_spec({"kind": "nli", "models": {"en": str(tiny)}})
    assert isinstance(judge, LanguageNLIJudge)
    judgments = judge.judge(_items())
    assert [j.unjudged_reason for j in judgments] == [None, LANGUAGE_UNSUPPORTED, None, LANGUAGE_UNSUPPORTED]
    assert judgments[0].judge_version == str(tiny)  # judged by the English model itself
    alone = judge_from_spec({"kind": "nli", "model": str(tiny)}).judge([_items()[0], _items()[2]])
    assert [j.score for j in (judgments[0], judgments[2])] == [j.score for j in alone]
    stats = judge.stats()
    assert stats[LANGUAGE_UNSUPPORTED] == 2
    assert stats["sentences_by_language"] == {"de": 1, "en": 2, "und": 1}
    assert stats["pairs_scored"] == stats["by_model"][str(tiny)]["pairs_scored"] > 0


def test_a_language_without_a_sentence_loads_no_model(tiny: Path, tmp_path: Path):
    judge = judge_from_spec({"kind": "nli", "models": {"en": str(tiny), "de": str(tmp_path / "not-a-model")}})
    judge.judge([_items()[0]])  # the German model is never needed, so never loaded
    assert list(judge.stats()["by_model"]) == [str(tiny)]


@pytest.mark.parametrize(("spec", "match"), [
    ({"model": "a", "models": {"*": "b"}}, "not both"),
    ({"models": {}}, "non-empty"),
    ({"models": {"DE": "a"}}, "language code"),
    ({"models": {"de": ""}}, "model id"),
    ({"models": ["a"]}, "object"),
])
def test_a_bad_models_map_is_refused_before_anything_loads(spec, match):
    with pytest.raises(JudgeSpecError, match=match):
        parse_spec({"kind": "nli", **spec})


def test_a_sentence_no_nli_model_reads_goes_to_the_llm_and_a_full_width_quote_verifies(
        tiny: Path, fake: FakeAnthropic):
    """The Japanese sentence has no NLI model; the cascade sends it to the LLM (the real SDK
    against the fake server), whose quote is written in half-width digits where the passage has
    full-width ones: NFKC makes them the same text, so the verdict is verified and counts."""
    fake.grader = grade_by_id({"0": entry(0, "supported", {"S1": "full"}, [("S1", "ホテル代は1泊220ユーロまで")])})
    spec = {"kind": "cascade", "first": {"kind": "nli", "models": {"en": str(tiny)}},
            "escalate": {"kind": "anthropic", "sample_rate": 0.0, "backoff_base_s": 0.001, "max_retries": 1}}
    judge = judge_from_spec(spec)
    ja = JudgeItem("t-ja", 0, "ホテル代は1泊220ユーロまで精算できます。", ("S1",), JA_CONTEXT, language="ja")
    uncited = JudgeItem("t-ja", 1, "出張は上長が承認します。", (), JA_CONTEXT, language="ja")
    final_ja, final_uncited = judge.judge([ja, uncited])
    assert final_ja.detail["escalation"] == "language" and final_ja.detail["first_stage"] is None
    assert final_ja.judge == "anthropic" and final_ja.cited
    assert final_ja.detail["llm"]["quotes_verified"] and final_ja.detail["llm"]["status"] == "ok"
    asked = request_input(fake.message_requests()[0]["body"])["sentences"]
    assert [s["id"] for s in asked] == ["0"]
    # nothing cited: nothing to send, the reason stays
    assert final_uncited.unjudged_reason == LANGUAGE_UNSUPPORTED and final_uncited.detail["escalation"] is None


def test_without_an_llm_judge_the_sentence_stays_unjudged(tiny: Path):
    judge = judge_from_spec({"kind": "nli", "models": {"en": str(tiny)}})
    ja = JudgeItem("t-ja", 0, "ホテル代は1泊220ユーロまでです。", ("S1",), JA_CONTEXT, language="ja")
    assert judge.judge([ja])[0].unjudged_reason == LANGUAGE_UNSUPPORTED


@pytest.mark.parametrize(("quote", "passage"), [
    ("1泊220ユーロ", "ホテル代は１泊２２０ユーロまで"),  # full-width digits in the passage
    ("１泊２２０ユーロ", "ホテル代は1泊220ユーロまで"),  # full-width digits in the quote
    ("ＡＢＣ社の規定", "abc社の規定によると"),  # full-width Latin letters, case
    ("ﾎﾃﾙ代", "ホテル代は"),  # half-width katakana
    ("最大２２０ユーロ（税込）", "最大220ユーロ(税込)まで"),  # full-width brackets
])
def test_quotes_verify_across_unicode_forms(quote, passage):
    assert quote_in_passage(quote, passage)
    start, end = find_span(passage, quote)
    assert quote_in_passage(passage[start:end], quote)  # the span is the quoted text in the passage's form


def test_a_quote_that_is_not_there_still_fails():
    assert not quote_in_passage("１泊３００ユーロ", "ホテル代は1泊220ユーロまで")
    assert find_span("ホテル代は1泊220ユーロまで", "１泊３００ユーロ") is None
