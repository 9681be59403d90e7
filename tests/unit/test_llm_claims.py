"""The LLM claim splitter (`[claims] mode = "llm"`, SPEC §2.1) through the real SDK against the
local fake Anthropic server: a good reply, a split that adds a figure, a malformed reply twice, the
budget stop, a retried run reattaching to its split batch, and the cache (a rerun asks nothing)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from citecheck.core.config import Config
from citecheck.core.pipeline import score, structure_turns
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from citecheck.judges.llm.batch_state import JsonFileBatchStateStore
from citecheck.judges.llm.claims import SPLIT_PROMPT_VERSION, split_key
from helpers import load_fixture
from helpers.fake_anthropic import FakeAnthropic, serve_with_env
from helpers.fake_anthropic import claim_splits_as as splits_as

FIXTURE = load_fixture("claims.json")
PLAN = FIXTURE["turns"]["plan"]
SENTENCE = FIXTURE["claims"]["claims"][0]["sentence"]
CLAIMS = FIXTURE["claims"]["claims"][0]["claims"]
LLM_MODE = replace(Config(), claims_mode="llm")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    yield from serve_with_env(monkeypatch, "sk-test-claims")


def spec(**fields: Any) -> dict[str, Any]:
    return {"kind": "anthropic", "max_retries": 1, "backoff_base_s": 0.001, "timeout_s": 5, **fields}


def _structured():
    return list(structure_turns([turn_from_dict(PLAN)], LLM_MODE))


def _split_requests(fake: FakeAnthropic) -> list[dict[str, Any]]:
    return fake.split_messages()


def test_a_good_reply_splits_the_sentence_with_a_cached_prompt_and_a_schema(fake: FakeAnthropic):
    fake.grader = splits_as({SENTENCE: CLAIMS})
    judge = judge_from_spec(spec())
    splitter = judge.claim_splitter()
    [st] = splitter.split_turns(_structured())
    assert st.claims == {0: tuple(CLAIMS)} and st.claim_splits_rejected == 0
    [request] = _split_requests(fake)
    assert request["body"]["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert request["body"]["output_config"]["format"]["type"] == "json_schema"
    assert judge.stats()["input_tokens"] > 0  # booked in the judge's ledger: one budget
    again = judge.claim_splitter(cache=splitter.cache)
    again.split_turns(_structured())
    assert len(_split_requests(fake)) == 1 and again.stats()["sentences_cached"] == 1  # a rerun asks nothing
    assert split_key(judge.config.model, SENTENCE) in splitter.cache and SPLIT_PROMPT_VERSION in next(
        iter(splitter.cache))


def test_score_in_llm_mode_judges_each_claim(fake: FakeAnthropic):
    fake.grader = splits_as({SENTENCE: CLAIMS})
    report = score([turn_from_dict(PLAN)], judge_from_spec(spec()), LLM_MODE)
    out = report.to_json()
    [sentence] = out["turns"][0]["sentences"]
    assert [c["text"] for c in sentence["claims"]] == CLAIMS
    assert [c["verdict"] for c in sentence["claims"]] == ["supported", "supported"]
    assert out["stats"]["claim_splitter"]["sentences_split_by_model"] == 1


def test_a_split_that_adds_a_figure_is_rejected_and_counted(fake: FakeAnthropic):
    fake.grader = splits_as({SENTENCE: ["The Starter plan costs 45 units a month.", CLAIMS[1]]})
    [st] = judge_from_spec(spec()).claim_splitter().split_turns(_structured())
    assert st.claims == {0: (SENTENCE,)} and st.claim_splits_rejected == 1


def test_a_reply_malformed_twice_keeps_the_sentence_whole(fake: FakeAnthropic):
    fake.grader = splits_as({SENTENCE: CLAIMS})
    fake.script.extend([{"text": "not json at all"}, {"text": '{"sentences": [{"id": "0"}]}'}])
    splitter = judge_from_spec(spec()).claim_splitter()
    [st] = splitter.split_turns(_structured())
    assert st.claims == {0: (SENTENCE,)}
    assert splitter.stats()["claim_split_failures:malformed reply twice"] == 1
    assert len(_split_requests(fake)) == 2  # asked, then re-asked once
    assert splitter.cache == {}  # a failure is not cached: the next run asks again


def test_the_budget_stop_keeps_sentences_whole_and_counts_them(fake: FakeAnthropic):
    fake.grader = splits_as({SENTENCE: CLAIMS})
    judge = judge_from_spec(spec(budget_usd=0.000001))
    splitter = judge.claim_splitter()
    [st] = splitter.split_turns(_structured())
    assert st.claims == {0: (SENTENCE,)} and _split_requests(fake) == []
    assert splitter.stats()["claim_split_failures:budget_reached"] == 1
    assert judge.stats()["status"] == "budget_reached"  # the day's budget is the judge's


def test_a_retried_run_reattaches_to_its_split_batch(fake: FakeAnthropic, tmp_path):
    fake.grader = splits_as({SENTENCE: CLAIMS})
    store = JsonFileBatchStateStore(tmp_path / "state.json")
    fake.polls_until_ended = 10**6
    first = judge_from_spec(spec(transport="batches", poll_interval_s=0.001, batch_max_wait_s=0.05),
                            run_id="run-9", batch_state=store).claim_splitter()
    [st] = first.split_turns(_structured())
    assert st.claims == {0: (SENTENCE,)}  # pending: whole for now
    assert store.get("run-9/claims") is not None and store.get("run-9") is None  # its own key
    fake.polls_until_ended = 0
    retry = judge_from_spec(spec(transport="batches", poll_interval_s=0.001), run_id="run-9",
                            batch_state=store).claim_splitter()
    [st] = retry.split_turns(_structured())
    assert st.claims == {0: tuple(CLAIMS)}
    assert fake.batch_creations == 1


def test_llm_mode_without_an_llm_judge_is_a_clear_error():
    from citecheck.core.claims import ClaimsError

    with pytest.raises(ClaimsError, match="anthropic judge"):
        score([turn_from_dict(PLAN)], judge_from_spec(FIXTURE["judge"]), LLM_MODE)


TOO_MANY = [f"The Starter plan costs forty units, part {n}." for n in range(21)]


@pytest.mark.parametrize("claims", [[CLAIMS[0], ""], TOO_MANY], ids=["an empty claim", "21 claims"])
def test_a_reply_with_an_empty_claim_or_too_many_is_rejected(fake: FakeAnthropic, claims):
    fake.grader = splits_as({SENTENCE: claims})
    [st] = judge_from_spec(spec()).claim_splitter().split_turns(_structured())
    assert st.claims == {0: (SENTENCE,)} and st.claim_splits_rejected == 1
