"""The Anthropic judge through the real SDK, pointed at a local fake of the API (SPEC §4 LLM judge)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest

from citecheck.core.model import JudgeItem, Passage
from citecheck.judges import JudgeSpecError, judge_from_spec
from citecheck.judges.llm import (
    DEFAULT_MODEL,
    REPLY_SCHEMA,
    AnthropicJudge,
    JsonFileBatchStateStore,
    build_requests,
    config_from_spec,
    liu_credit,
    retry_after_s,
)
from helpers import load_fixture
from helpers.fake_anthropic import FakeAnthropic, entry, grade_by_id, request_input, serve_with_env

KEY = "sk-test-not-a-real-key-4711"
JOINT = (
    "When the conference hotel is sold out, anything above the cap is reimbursed only if your manager "
    "approved it in writing before you booked."
)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    yield from serve_with_env(monkeypatch, KEY)


def orbit_context() -> tuple[Passage, ...]:
    turn = load_fixture("orbit_labs.json")["turns"][0]
    return tuple(Passage(p["label"], p["text"], p["source"]) for p in turn["context"])


def orbit_items(turn_id: str = "orbit-1") -> list[JudgeItem]:
    """The check-worthy sentences of the fixture's orbit-1 answer, indexed as in the answer."""
    expected = load_fixture("orbit_labs.json")["expected"]["orbit-1"]["sentences"]
    context = orbit_context()
    return [
        JudgeItem(turn_id, i, s["text"], tuple(s["labels"]), context)
        for i, s in enumerate(expected)
        if s["check_worthy"]
    ]


def joint_item(turn_id: str = "joint-1", labels: tuple[str, ...] = ("S1", "S2")) -> JudgeItem:
    return JudgeItem(turn_id, 0, JOINT, labels, orbit_context())


def spec(**fields: Any) -> dict[str, Any]:
    return {"kind": "anthropic", "max_retries": 2, "backoff_base_s": 0.001, "timeout_s": 5, **fields}


def make(sleeps: list[float] | None = None, **fields: Any) -> AnthropicJudge:
    """A judge whose waits are recorded (and skipped) when `sleeps` is given."""
    sleep = sleeps.append if sleeps is not None else time.sleep
    return AnthropicJudge(config_from_spec(spec(**fields)), sleep=sleep)


# --------------------------------------------------------------------------------------------
# verdicts and quotes


def test_supported_with_good_quotes_through_the_sdk(fake: FakeAnthropic) -> None:
    item = orbit_items()[
        0
    ]  # "If the conference hotel is sold out, you may book the nearest available hotel." [S2]
    fake.grader = grade_by_id(
        {"0": entry(0, "supported", {"S2": "full"}, [("S2", "YOU MAY  book the nearest\navailable hotel")])}
    )
    fake.usage = {
        "input_tokens": 200,
        "output_tokens": 80,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 0,
    }
    judge = judge_from_spec(spec())
    [j] = judge.judge([item])

    assert j.judged and j.cited and j.judge == "anthropic" and j.judge_version == DEFAULT_MODEL
    assert j.credit == {"S2": True} and j.alone == {"S2": True} and j.rest == {}
    llm = j.detail["llm"]
    assert llm["status"] == "ok" and llm["quotes_verified"] and llm["verdict"] == "supported"
    assert llm["citations"] == [{"label": "S2", "support": "full"}]

    [request] = fake.message_requests()
    headers, body = request["headers"], request["body"]
    assert KEY in headers.get("x-api-key", "") + headers.get("authorization", "")
    assert "anthropic-beta" not in headers  # structured output is GA in this SDK: no beta header
    assert body["model"] == DEFAULT_MODEL and body["max_tokens"] == 1024
    assert body["output_config"]["format"] == {"type": "json_schema", "schema": REPLY_SCHEMA}
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    payload = request_input(body)
    assert payload["sentences"] == [{"id": "0", "text": item.sentence, "cites": ["S2"]}]
    assert [p["label"] for p in payload["passages"]] == ["S2"]  # only the cited passages are sent

    stats = judge.stats()
    assert stats["status"] == "ok" and stats["requests"] == 1 and stats["answers_sent"] == 1
    assert (stats["input_tokens"], stats["output_tokens"], stats["cache_read_input_tokens"]) == (
        200,
        80,
        1000,
    )
    assert stats["cost_usd"] == pytest.approx((200 * 2 + 80 * 10 + 1000 * 0.2) / 1e6)


def test_one_request_covers_all_sentences_of_an_answer(fake: FakeAnthropic) -> None:
    judge = judge_from_spec(spec())
    results = judge.judge(orbit_items() + orbit_items("orbit-copy"))
    assert len(fake.message_requests()) == 2
    ids = sorted(s["id"] for s in request_input(fake.message_requests()[0]["body"])["sentences"])
    assert ids == ["0", "1", "2", "3", "4"]  # sentence 5 cites nothing: nothing to judge
    assert results[5].unjudged_reason == "llm unjudged: no resolved citations to judge"
    assert judge.stats()["sentences_without_citations"] == 2


def test_fabricated_quote_is_unverified_and_does_not_count(fake: FakeAnthropic) -> None:
    fake.grader = grade_by_id(
        {"0": entry(0, "supported", {"S2": "full"}, [("S2", "you may book any hotel you like")])}
    )
    [j] = judge_from_spec(spec()).judge([orbit_items()[0]])
    assert not j.judged and not j.cited
    assert j.detail["llm"]["status"] == "unverified" and not j.detail["llm"]["quotes_verified"]
    assert j.detail["llm"]["quotes"][0]["verified"] is False
    assert "quote from S2 not found" in j.unjudged_reason


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (entry(0, "supported", {"S2": "full"}, []), "no quotes for a supported verdict"),
        (entry(0, "supported", {"S2": "full"}, [("S4", "Upload an itemized hotel receipt")]), "uncited S4"),
        (entry(0, "not_supported", {"S2": "full"}, [("S2", "you may book")]), "a full citation with verdict"),
        (entry(0, "supported", {"S2": "none"}, [("S2", "you may book")]), "supported with no supporting"),
        # a paraphrase is not a quote: no fuzzy matching
        (
            entry(0, "supported", {"S2": "full"}, [("S2", "you are allowed to book the closest hotel")]),
            "not found",
        ),
    ],
)
def test_replies_that_do_not_verify(fake: FakeAnthropic, reply: dict, problem: str) -> None:
    fake.grader = grade_by_id({"0": reply})
    [j] = judge_from_spec(spec()).judge([orbit_items()[0]])
    assert j.detail["llm"]["status"] == "unverified" and not j.judged
    assert problem in j.detail["llm"]["reason"]


def test_partial_support_across_two_passages_credits_both(fake: FakeAnthropic) -> None:
    quotes = [
        ("S1", "needs written approval from your manager before you book"),
        ("S2", "If the official conference hotel is sold out"),
    ]
    fake.grader = grade_by_id({"0": entry(0, "supported", {"S1": "partial", "S2": "partial"}, quotes)})
    [j] = judge_from_spec(spec()).judge([joint_item()])
    assert j.cited and j.credit == {"S1": True, "S2": True}  # jointly supported: both credited
    assert j.alone == {"S1": False, "S2": False}


def test_partial_next_to_a_full_citation_is_not_credited(fake: FakeAnthropic) -> None:
    quotes = [("S1", "needs written approval"), ("S2", "the official conference hotel is sold out")]
    fake.grader = grade_by_id({"0": entry(0, "supported", {"S1": "full", "S2": "partial"}, quotes)})
    [j] = judge_from_spec(spec()).judge([joint_item()])
    assert j.cited and j.credit == {"S1": True, "S2": False}


def test_partial_verdict_credits_no_partial_citation(fake: FakeAnthropic) -> None:
    fake.grader = grade_by_id(
        {"0": entry(0, "partial", {"S1": "partial"}, [("S1", "needs written approval")])}
    )
    [j] = judge_from_spec(spec()).judge([joint_item(labels=("S1",))])
    assert j.judged and not j.cited and j.verdict == "partial" and j.credit == {"S1": False}


def test_liu_credit_rule() -> None:
    assert liu_credit("supported", {"A": "full", "B": "none"}) == {"A": True, "B": False}
    assert liu_credit("supported", {"A": "partial", "B": "partial"}) == {"A": True, "B": True}
    assert liu_credit("supported", {"A": "full", "B": "partial"}) == {"A": True, "B": False}
    assert liu_credit("partial", {"A": "partial"}) == {"A": False}


# --------------------------------------------------------------------------------------------
# malformed replies, ids


def test_reply_that_is_not_json_is_reasked_then_unjudged(fake: FakeAnthropic) -> None:
    fake.script.extend([{"text": "Sure! Here is my verdict: supported"}, {"text": '{"sentences": 5}'}])
    judge = judge_from_spec(spec())
    [j] = judge.judge([orbit_items()[0]])
    assert not j.judged and j.detail["llm"]["status"] == "unjudged"
    assert "malformed reply twice" in j.unjudged_reason and "not valid JSON" in j.unjudged_reason
    _, second = fake.message_requests()
    assert len(second["body"]["messages"][0]["content"]) == 2  # the re-ask carries a note
    assert "could not be used" in second["body"]["messages"][0]["content"][1]["text"]
    assert judge.stats()["reasks"] == 1 and judge.stats()["errors"]["malformed reply twice"] == 1


def test_malformed_then_good_reply_is_judged(fake: FakeAnthropic) -> None:
    fake.script.append({"text": '{"sentences": [{"id": "0"}]}'})  # breaks the schema
    [j] = judge_from_spec(spec()).judge([orbit_items()[0]])
    assert j.judged and j.cited and len(fake.message_requests()) == 2


def test_cut_off_reply_is_malformed(fake: FakeAnthropic) -> None:
    fake.script.extend([{"stop_reason": "max_tokens"}, {"stop_reason": "max_tokens"}])
    [j] = judge_from_spec(spec()).judge([orbit_items()[0]])
    assert "reply cut off (max_tokens)" in j.unjudged_reason


def test_ids_not_asked_and_missing_ids(fake: FakeAnthropic) -> None:
    items = orbit_items()[:2]
    quote = [("S2", "you may book the nearest available hotel")]
    fake.grader = grade_by_id(
        {
            "0": entry(0, "supported", {"S2": "full"}, quote),
            "1": entry(99, "supported", {"S1": "full"}, [("S1", "220 euros")]),
        }
    )
    judge = judge_from_spec(spec())
    first, second = judge.judge(items)
    assert first.judged and first.cited
    assert second.unjudged_reason == "llm unjudged: sentence missing from the reply"
    assert judge.stats()["unasked_ids"] == 1


# --------------------------------------------------------------------------------------------
# transport failures


def test_429_with_retry_after_is_honoured(fake: FakeAnthropic) -> None:
    fake.script.append({"status": 429, "headers": {"retry-after": "1"}})
    sleeps: list[float] = []
    judge = make(sleeps)
    [j] = judge.judge([orbit_items()[0]])
    assert j.judged and j.cited
    assert sleeps == [1.0]  # the server's wait, not the 1 ms backoff
    assert len(fake.message_requests()) == 2 and judge.stats()["retries"] == 1
    assert judge.stats()["errors"] == {"http 429": 1}


def test_overloaded_and_retry_after_ms_really_wait(fake: FakeAnthropic) -> None:
    fake.script.extend([{"status": 529, "headers": {"retry-after-ms": "150"}}, {"status": 503}])
    waits: list[float] = []

    def really_sleep(seconds: float) -> None:  # the real wait, recorded: no clock in the assertion
        waits.append(seconds)
        time.sleep(seconds)

    judge = AnthropicJudge(config_from_spec(spec()), sleep=really_sleep)
    [j] = judge.judge([orbit_items()[0]])
    assert j.judged and len(waits) == 2 and waits[0] == 0.15  # retry-after-ms honoured, then the backoff
    assert len(fake.message_requests()) == 3


def test_retry_after_parsing() -> None:
    assert retry_after_s({"retry-after": "3"}) == 3.0
    assert retry_after_s({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a past date: no wait
    assert retry_after_s({}) is None


def test_500s_until_the_retry_limit_leave_that_answer_unjudged(fake: FakeAnthropic) -> None:
    def fail_copy(body: dict, _: int) -> dict | None:
        return {"status": 500} if "Approved reports" in json.dumps(body) else None

    fake.on_message = fail_copy
    sleeps: list[float] = []
    judge = make(sleeps, max_retries=2, backoff_base_s=0.5)
    good = orbit_items()[:1]
    bad = [i for i in orbit_items("orbit-bad") if i.sentence_index == 3]
    results = judge.judge(good + bad)
    assert results[0].judged and results[0].cited  # the run completes for the other answer
    assert results[1].unjudged_reason == "llm unjudged: http 500: api_error"
    assert judge.stats()["errors"] == {"http 500": 3}
    assert len(sleeps) == 2 and 0.375 <= sleeps[0] <= 0.5 and 0.75 <= sleeps[1] <= 1.0  # exponential backoff


def test_client_errors_are_not_retried(fake: FakeAnthropic) -> None:
    fake.script.append({"status": 400})
    judge = judge_from_spec(spec())
    [j] = judge.judge([orbit_items()[0]])
    assert "http 400: invalid_request_error" in j.unjudged_reason and len(fake.message_requests()) == 1


def test_timeout_is_unjudged_and_its_cost_kept_as_unconfirmed(fake: FakeAnthropic) -> None:
    fake.script.append({"delay": 1.0})
    judge = judge_from_spec(spec(timeout_s=0.2, max_retries=0))
    [j] = judge.judge([orbit_items()[0]])
    assert j.unjudged_reason == "llm unjudged: timeout"
    stats = judge.stats()
    assert stats["errors"] == {"timeout": 1} and stats["cost_usd"] == 0
    assert stats["cost_usd_unconfirmed"] > 0  # it may have been billed: the budget counts it


def test_timeout_then_success_on_retry(fake: FakeAnthropic) -> None:
    fake.script.append({"delay": 1.0})
    judge = judge_from_spec(spec(timeout_s=0.2, max_retries=1))
    [j] = judge.judge([orbit_items()[0]])
    assert j.judged and judge.stats()["retries"] == 1 and len(fake.message_requests()) == 2


# --------------------------------------------------------------------------------------------
# batches


def test_batch_with_mixed_results(fake: FakeAnthropic, tmp_path) -> None:
    kinds = ["succeeded", "errored", "expired", "canceled"]
    fake.polls_until_ended = 2
    items = [i for n in range(4) for i in orbit_items(f"turn-{n}")[:2]]
    requests, _ = build_requests(config_from_spec(spec()), items)
    position = {r.custom_id: n for n, r in enumerate(requests)}
    fake.batch_outcome = lambda custom_id, _: kinds[position[custom_id]]
    judge = judge_from_spec(
        spec(transport="batches", poll_interval_s=0.001, batch_state_path=str(tmp_path / "batches.json")),
        run_id="run-1",
    )
    results = judge.judge(items)

    assert [r.judged for r in results] == [True, True] + [False] * 6
    assert results[2].unjudged_reason == "llm unjudged: batch request errored: api_error"
    assert results[4].unjudged_reason == "llm unjudged: batch request expired"
    assert results[6].unjudged_reason == "llm unjudged: batch request canceled"
    stats = judge.stats()
    assert stats["batch_results"] == {"succeeded": 1, "errored": 1, "expired": 1, "canceled": 1}
    assert stats["batches_created"] == 1 and fake.batch_creations == 1 and not fake.message_requests()
    assert stats["cost_usd"] == pytest.approx(
        (100 * 2 + 50 * 10) / 1e6 * 0.5
    )  # half price, one billed answer
    [batch] = fake.batches.values()
    assert sorted(r["custom_id"] for r in batch.requests) == sorted(position)
    assert all(r["params"]["output_config"]["format"]["type"] == "json_schema" for r in batch.requests)
    assert JsonFileBatchStateStore(tmp_path / "batches.json").get("run-1") == batch.id


def test_a_retried_run_reattaches_to_its_batch(fake: FakeAnthropic, tmp_path) -> None:
    store = JsonFileBatchStateStore(tmp_path / "state.json")
    items = orbit_items()
    fake.polls_until_ended = 10**6  # the first attempt gives up waiting (the worker died, say)
    first = judge_from_spec(
        spec(transport="batches", poll_interval_s=0.001, batch_max_wait_s=0.05),
        run_id="run-7",
        batch_state=store,
    )
    assert all(not j.judged for j in first.judge(items))
    assert first.stats()["status"] == "batch_pending"
    [batch_id] = first.stats()["batch_ids"]

    fake.polls_until_ended = 0
    retry = judge_from_spec(
        spec(transport="batches", poll_interval_s=0.001), run_id="run-7", batch_state=store
    )
    results = retry.judge(items)
    assert fake.batch_creations == 1  # never a second batch for the same run
    assert retry.stats()["batches_reattached"] == 1 and retry.stats()["batch_ids"] == [batch_id]
    assert [j.judged for j in results] == [True] * 5 + [False]


def test_without_a_run_id_runs_never_share_a_batch(fake: FakeAnthropic, tmp_path) -> None:
    store = JsonFileBatchStateStore(tmp_path / "state.json")
    for _ in range(2):
        judge = judge_from_spec(spec(transport="batches", poll_interval_s=0.001), batch_state=store)
        assert all(j.judged for j in judge.judge(orbit_items()[:2]))
    assert fake.batch_creations == 2


def test_a_malformed_batch_result_is_reasked_directly(fake: FakeAnthropic) -> None:
    fake.grader = lambda sentences, passages: (
        "not json" if not fake.message_requests() else grade_ok(sentences)
    )
    judge = judge_from_spec(spec(transport="batches", poll_interval_s=0.001))
    [j] = judge.judge(orbit_items()[:1])
    assert j.judged and len(fake.message_requests()) == 1 and judge.stats()["reasks"] == 1


def test_a_reask_without_budget_left_does_not_hang(fake: FakeAnthropic) -> None:
    items = [i for n in range(2) for i in orbit_items(f"t{n}")[:1]]
    fake.grader = lambda sentences, passages: "not json"
    budget = 2 * worst_cases(items, batch=True, transport="batches")[0]  # both fit at half price, no re-ask
    judge = judge_from_spec(spec(transport="batches", poll_interval_s=0.001, budget_usd=budget))
    results = judge.judge(items)
    assert all("no budget left to re-ask" in r.unjudged_reason for r in results)
    assert not fake.message_requests() and judge.stats()["cost_usd"] <= budget


def grade_ok(sentences: list[dict]) -> dict:
    return {
        "sentences": [
            entry(s["id"], "supported", {"S2": "full"}, [("S2", "you may book")]) for s in sentences
        ]
    }


# --------------------------------------------------------------------------------------------
# budget and key


def worst_cases(items: list[JudgeItem], *, batch: bool, **fields: Any) -> list[float]:
    config = config_from_spec(spec(**fields))
    requests, _ = build_requests(config, items)
    return [r.estimate.worst_case_usd(config, batch=batch) for r in requests]


def test_budget_stops_escalation_exactly_at_its_limit(fake: FakeAnthropic) -> None:
    items = [i for n in range(6) for i in orbit_items(f"t{n}")[:1]]
    fake.usage = {"input_tokens": 1500, "output_tokens": 300}
    actual = (1500 * 2 + 300 * 10) / 1e6
    worst = worst_cases(items, batch=False)
    assert len(set(worst)) == 1 and worst[0] > actual
    budget = 2 * actual + worst[0]  # the third answer fits exactly; a fourth would not
    judge = judge_from_spec(spec(concurrency=1, budget_usd=budget))
    results = judge.judge(items)
    stats = judge.stats()
    assert len(fake.message_requests()) == 3 and [j.judged for j in results] == [True] * 3 + [False] * 3
    assert results[3].unjudged_reason == "llm unjudged: budget_reached"
    assert stats["status"] == "budget_reached" and stats["answers_left_out"] == 3
    assert stats["sentences_left_out"] == 3 and stats["cost_usd"] <= budget


def test_budget_with_concurrency_is_never_exceeded(fake: FakeAnthropic) -> None:
    items = [i for n in range(40) for i in orbit_items(f"t{n}")[:2]]
    fake.usage = {"input_tokens": 1500, "output_tokens": 300}
    budget = 10 * worst_cases(items, batch=False)[0]
    judge = judge_from_spec(spec(concurrency=6, budget_usd=budget))
    judge.judge(items)
    stats = judge.stats()
    assert stats["cost_usd"] + stats["cost_usd_unconfirmed"] <= budget
    assert stats["answers_sent"] + stats["answers_left_out"] == 40 and stats["answers_left_out"] > 0


def test_answer_budget_and_batch_budget(fake: FakeAnthropic) -> None:
    items = [i for n in range(5) for i in orbit_items(f"t{n}")[:1]]
    judge = judge_from_spec(spec(budget_answers=2))
    assert [j.judged for j in judge.judge(items)] == [True, True, False, False, False]

    budget = 3 * worst_cases(items, batch=True, transport="batches")[0]
    batch_judge = judge_from_spec(spec(transport="batches", poll_interval_s=0.001, budget_usd=budget))
    assert [j.judged for j in batch_judge.judge(items)] == [True] * 3 + [False] * 2
    [batch] = fake.batches.values()
    assert len(batch.requests) == 3 and batch_judge.stats()["status"] == "budget_reached"


def test_no_key_skips_escalation(fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    judge = judge_from_spec(spec())
    results = judge.judge(orbit_items())
    assert not fake.requests
    assert all(r.unjudged_reason.endswith("skipped_no_api_key") for r in results[:5])
    assert judge.stats()["status"] == "skipped_no_api_key"


def test_a_key_given_to_the_judge_is_used_without_the_environment(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    judge = judge_from_spec(spec(), api_key="sk-given-" + KEY)
    judge.judge(orbit_items())
    assert fake.message_requests() and judge.stats()["status"] == "ok"
    sent = {r["headers"].get("x-api-key") or r["headers"].get("authorization", "").removeprefix("Bearer ")
            for r in fake.message_requests()}
    assert sent == {"sk-given-" + KEY}


def test_logs_carry_no_text_and_no_key(fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    fake.script.extend(
        [{"status": 500}, {"status": 500}, {"status": 500}, {"text": "no json"}, {"text": "x"}]
    )
    items = orbit_items() + orbit_items("t2")
    with caplog.at_level(logging.DEBUG, logger="citecheck"):
        judge_from_spec(spec(backoff_base_s=0.0, concurrency=1)).judge(items)
    assert caplog.records  # the failures were logged …
    for item in items:  # … without the texts or the key
        assert item.sentence not in caplog.text
    assert all(p.text[:30] not in caplog.text for p in orbit_context()) and KEY not in caplog.text


# --------------------------------------------------------------------------------------------
# scale


def scale_items(n: int) -> list[JudgeItem]:
    context = orbit_context()
    return [
        JudgeItem(
            f"turn-{i:04d}", s, f"Claim {i} part {s} is paid with the next monthly payroll.", ("S3",), context
        )
        for i in range(n)
        for s in range(2)
    ]


def test_scale_messages_1000_answers_with_20_percent_errors(fake: FakeAnthropic) -> None:
    def errors(body: dict, _: int) -> dict | None:
        claim = int(request_input(body)["sentences"][0]["text"].split()[1])
        return {"status": 500} if claim % 5 == 0 else None

    fake.on_message = errors
    fake.grader = lambda sentences, passages: {
        "sentences": [
            entry(s["id"], "supported", {"S3": "full"}, [("S3", "paid with the next monthly payroll")])
            for s in sentences
        ]
    }
    items = scale_items(1000)
    budget = 0.5  # 800 good answers would cost 0.56 USD (errors are not billed): it runs out
    judge = judge_from_spec(spec(max_retries=1, concurrency=8, budget_usd=budget))
    results = judge.judge(items)
    stats = judge.stats()
    judged = sum(j.judged for j in results)
    assert stats["status"] == "budget_reached" and stats["cost_usd"] <= budget
    assert stats["answers_sent"] + stats["answers_left_out"] == 1000 and stats["answers_left_out"] > 0
    assert stats["errors"]["http 500"] == 2 * (stats["answers_sent"] - judged // 2)  # failed twice each
    assert judged == 2 * round(stats["cost_usd"] / 0.0007)


def test_scale_batch_1000_answers_with_20_percent_errors(fake: FakeAnthropic) -> None:
    fake.batch_outcome = lambda custom_id, position: "errored" if position % 5 == 0 else "succeeded"
    judge = judge_from_spec(spec(transport="batches", poll_interval_s=0.001, budget_usd=None))
    results = judge.judge(scale_items(1000))
    stats = judge.stats()
    assert stats["batch_results"] == {"succeeded": 800, "errored": 200}
    assert sum(j.judged for j in results) == 1600 and stats["cost_usd"] == pytest.approx(800 * 0.00035)


# --------------------------------------------------------------------------------------------
# spec


@pytest.mark.parametrize(
    "bad",
    [
        {"temperature": 0},
        {"transport": "carrier-pigeon"},
        {"model": "claude-unknown"},
        {"max_tokens": 0},
        {"budget_usd": -1},
        {"concurrency": 1.5},
        {"pricing": {"m": {"input_per_mtok": 1}}},
        {"pricing": {"m": {"input_per_mtok": 1, "output_per_mtok": 2, "per_call": 3}}},
        {"effort": "extreme"},
    ],
)
def test_bad_specs_fail_before_any_work(bad: dict) -> None:
    with pytest.raises(JudgeSpecError):
        judge_from_spec({"kind": "anthropic", **bad})


def test_spec_defaults_and_custom_pricing() -> None:
    config = config_from_spec({"kind": "anthropic"})
    assert config.model == DEFAULT_MODEL and config.transport == "messages" and config.prompt_caching
    assert config.price.input_per_mtok == 2.0 and config.price.output_per_mtok == 10.0
    custom = config_from_spec(
        {
            "kind": "anthropic",
            "model": "m",
            "budget_usd": None,
            "pricing": {"m": {"input_per_mtok": 1, "output_per_mtok": 5}},
        }
    )
    assert custom.budget_usd is None and custom.price.cache_read_per_mtok == pytest.approx(0.1)
    assert custom.price.cache_write_per_mtok == pytest.approx(1.25)
