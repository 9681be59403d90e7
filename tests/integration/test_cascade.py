"""The cascade judge: first stage (the Orbit Labs recorded judge), escalation, precedence, agreement keys."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from citecheck.core.model import JudgeItem, Passage
from citecheck.judges import JudgeSpecError, judge_from_spec
from citecheck.judges.cascade import CascadeJudge
from citecheck.judges.llm import MemoryBatchStateStore
from citecheck.stats.agreement import agreement
from citecheck.stats.ratio import Ratio
from citecheck.stats.sampling import sample_fraction
from helpers import REPO, load_fixture, score_dicts
from helpers.fake_anthropic import FakeAnthropic, entry, grade_by_id, request_input, serve_with_env

KEY = "sk-test-cascade-0815"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    yield from serve_with_env(monkeypatch, KEY)


ORBIT = load_fixture("orbit_labs.json")


def orbit_items(turn_id: str = "orbit-1") -> list[JudgeItem]:
    turn = ORBIT["turns"][0]
    context = tuple(Passage(p["label"], p["text"], p["source"]) for p in turn["context"])
    return [
        JudgeItem(turn_id, i, s["text"], tuple(s["labels"]), context)
        for i, s in enumerate(ORBIT["expected"]["orbit-1"]["sentences"])
        if s["check_worthy"]
    ]


def cascade_spec(**escalate: Any) -> dict[str, Any]:
    return {
        "kind": "cascade",
        "first": ORBIT["judge"],
        "escalate": {"kind": "anthropic", "backoff_base_s": 0.001, "max_retries": 1, **escalate},
    }


# Replies for the escalated Orbit Labs sentences (ids are sentence indices in the answer).
ORBIT_REPLIES = {
    "0": entry(0, "supported", {"S2": "full"}, [("S2", "you may book the nearest available hotel")]),
    "1": entry(1, "supported", {"S1": "full", "S3": "none"}, [("S1", "220 euros, or 300 euros in London")]),
    # S2 mentions the approval but not that it must be written and come before booking
    "2": entry(2, "partial", {"S2": "partial"}, [("S2", "reimbursed only with the approval")]),
    "3": entry(
        3, "contradicted", {"S3": "partial", "S4": "none"}, [("S3", "paid with the next monthly payroll")]
    ),
    # a fabricated quote: S3 says nothing about receipts
    "4": entry(4, "supported", {"S3": "full"}, [("S3", "an itemized hotel receipt for each night")]),
}


def test_rejections_are_escalated_and_verified_llm_verdicts_win(fake: FakeAnthropic) -> None:
    fake.grader = grade_by_id(ORBIT_REPLIES)
    judge = judge_from_spec(cascade_spec(sample_rate=0.0))
    results = judge.judge(orbit_items())

    assert [r.detail["escalation"] for r in results] == [None, None, "rejected", "rejected", "rejected", None]
    assert request_input(fake.message_requests()[0]["body"])["sentences"][0]["id"] == "2"
    assert [r.judge for r in results] == [
        "recorded",
        "recorded",
        "anthropic",
        "anthropic",
        "recorded",
        "recorded",
    ]

    partial, contradicted, fabricated = results[2], results[3], results[4]
    assert not partial.cited and partial.verdict == "partial" and partial.credit == {"S2": False}
    assert partial.elsewhere == ("S1",) and partial.faithful  # first-stage elsewhere kept: S1 is not cited
    assert partial.judge_version == "claude-sonnet-5-5"
    assert partial.detail["first_stage"] == {
        "judge": "recorded",
        "version": "1",
        "supported": False,
        "score": None,
    }
    assert partial.detail["llm"]["status"] == "ok" and partial.detail["llm"]["quotes_verified"]
    assert contradicted.verdict == "contradicted" and contradicted.credit == {"S3": False, "S4": False}
    assert not contradicted.faithful and contradicted.elsewhere == ()

    # unverified: the first stage's miscited judgment stands, with the LLM outcome recorded
    assert fabricated.judge == "recorded" and fabricated.elsewhere == ("S4",) and fabricated.credit is None
    assert fabricated.detail["llm"]["status"] == "unverified"
    assert not fabricated.detail["llm"]["quotes_verified"]

    assert results[0].detail["llm"] is None and results[0].detail["first_stage"]["supported"]
    stats = judge.stats()
    assert stats["first"] == {"statements": 10, "missing_statements": 0}
    assert stats["llm"]["sentences_ok"] == 2 and stats["llm"]["sentences_unverified"] == 1
    assert stats["sentences"]["escalated_rejected"] == 3 and stats["sentences"]["decided_by_anthropic"] == 2


def test_random_sample_covers_passed_and_rejected_sentences(fake: FakeAnthropic) -> None:
    fake.grader = grade_by_id(ORBIT_REPLIES)
    results = judge_from_spec(cascade_spec(sample_rate=1.0)).judge(orbit_items())
    # everything judged with citations is in the sample, whatever the first stage said
    assert [r.detail["escalation"] for r in results] == ["sample"] * 5 + [None]
    assert [r.detail["sampled"] for r in results] == [True] * 6
    # the uncited sentence is sampled but has no cited passage to send
    assert len(request_input(fake.message_requests()[0]["body"])["sentences"]) == 5


def test_judge_agreement_from_the_detail_keys(fake: FakeAnthropic) -> None:
    """The daily metric: first-stage false pass / false fail on the sample, LLM as reference."""
    replies = dict(ORBIT_REPLIES)
    replies["4"] = entry(4, "supported", {"S3": "full"}, [("S3", "Approved expense reports")])  # verifies
    fake.grader = grade_by_id(replies)
    results = judge_from_spec(cascade_spec(sample_rate=1.0)).judge(orbit_items())
    pairs = [
        (r.detail["llm"]["verdict"] == "supported", r.detail["first_stage"]["supported"])
        for r in results
        if r.detail["escalation"] == "sample" and r.detail["llm"]["status"] == "ok"
    ]
    a = agreement(pairs)
    assert a.false_pass == Ratio(0, 2) and a.false_fail == Ratio(1, 3) and a.agreement == Ratio(4, 5)


def test_sample_is_deterministic_and_salted() -> None:
    items = [
        JudgeItem(f"turn-{n}", s, f"Sentence {n}.{s}.", ("S1",), ()) for n in range(400) for s in range(3)
    ]
    judge = judge_from_spec(cascade_spec(sample_rate=0.2, salt="day-salt"))
    picked = {i.key for i in items if judge.sampled(i)}
    again = judge_from_spec(cascade_spec(sample_rate=0.2, salt="day-salt"))
    assert picked == {i.key for i in items if again.sampled(i)}
    assert picked == {
        i.key for i in items if sample_fraction(i.turn_id, i.sentence_index, salt="day-salt") < 0.2
    }
    assert 0.15 < len(picked) / len(items) < 0.25
    other = judge_from_spec(cascade_spec(sample_rate=0.2, salt="another"))
    assert picked != {i.key for i in items if other.sampled(i)}


def test_sample_fraction() -> None:
    values = [sample_fraction("turn", n, salt="s") for n in range(20_000)]
    assert all(0 <= v < 1 for v in values) and abs(sum(values) / len(values) - 0.5) < 0.01
    assert sample_fraction("t", 3, salt="s") == sample_fraction("t", "3", salt="s")
    assert sample_fraction("ab", "c", salt="s") != sample_fraction("a", "bc", salt="s")
    assert sample_fraction("t", 3, salt="s") != sample_fraction("t", 3, salt="t")


def test_no_key_keeps_every_first_stage_verdict(fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    judge = judge_from_spec(cascade_spec(sample_rate=0.0))
    results = judge.judge(orbit_items())
    first = judge_from_spec(ORBIT["judge"]).judge(orbit_items())
    assert [(r.cited, r.elsewhere, r.judge) for r in results] == [
        (f.cited, f.elsewhere, f.judge) for f in first
    ]
    assert results[2].detail["llm"] == {
        "verdict": None,
        "quotes_verified": False,
        "citations": [],
        "quotes": [],
        "status": "unjudged",
        "reason": "skipped_no_api_key",
    }
    assert judge.stats()["llm"]["status"] == "skipped_no_api_key" and not fake.requests


def test_escalate_reuses_first_stage_judgments(fake: FakeAnthropic) -> None:
    fake.grader = grade_by_id(ORBIT_REPLIES)
    judge = judge_from_spec(cascade_spec(sample_rate=0.0))
    assert isinstance(judge, CascadeJudge)
    items = orbit_items()
    firsts = judge_from_spec(ORBIT["judge"]).judge(items)
    finals = judge.escalate(items, firsts)
    assert [f.judge for f in finals] == [
        "recorded",
        "recorded",
        "anthropic",
        "anthropic",
        "recorded",
        "recorded",
    ]
    assert judge.stats()["first"]["statements"] == 10  # the first stage was not asked again
    with pytest.raises(ValueError):
        judge.escalate(items, firsts[:2])


def test_options_reach_both_stages() -> None:
    store = MemoryBatchStateStore()
    judge = judge_from_spec(
        cascade_spec(transport="batches"), run_id="run-42", batch_state=store, cache_path="x"
    )
    assert judge.llm.run_id == "run-42" and judge.llm.batch_state is store


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "cascade", "first": ORBIT["judge"]},
        {"kind": "cascade", "escalate": {}},
        {**cascade_spec(), "extra": 1},
        cascade_spec(sample_rate=1.5),
        cascade_spec(salt=3),
        cascade_spec(kind="recorded"),
        cascade_spec(transport="fax"),
        {**cascade_spec(), "first": {"kind": "recorded", "judgments": "nope"}},
    ],
)
def test_bad_cascade_specs(bad: dict) -> None:
    with pytest.raises(JudgeSpecError):
        judge_from_spec(bad)


def test_pipeline_scores_orbit_labs_with_the_cascade(fake: FakeAnthropic) -> None:
    fake.grader = grade_by_id(ORBIT_REPLIES)
    report = score_dicts([ORBIT["turns"][0]], cascade_spec(sample_rate=0.0))
    [turn] = report["turns"]
    verdicts = [s.get("verdict") for s in turn["sentences"]]
    assert verdicts[:6] == [
        "supported",
        "supported",
        "partial",
        "contradicted",
        "miscited",
        "uncited_supported",
    ]
    judged = [s["judge"] for s in turn["sentences"][:6]]
    assert judged == ["recorded", "recorded", "anthropic", "anthropic", "recorded", "recorded"]
    assert turn["sentences"][2]["llm"]["quotes_verified"] and turn["sentences"][2]["escalation"] == "rejected"
    assert turn["sentences"][4]["llm"]["status"] == "unverified"


def test_cli_score_with_a_cascade_judge_file(fake: FakeAnthropic, tmp_path) -> None:
    fake.grader = grade_by_id(ORBIT_REPLIES)
    turns = tmp_path / "turns.jsonl"
    turns.write_text("".join(json.dumps(t) + "\n" for t in ORBIT["turns"]), encoding="utf-8")
    judge_file = tmp_path / "judge.json"
    judge_file.write_text(
        json.dumps(
            cascade_spec(
                sample_rate=0.0,
                transport="batches",
                poll_interval_s=0.001,
                batch_state_path=str(tmp_path / "batches.json"),
            )
        )
    )
    out = tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": str(REPO / "include")}
    cmd = [
        sys.executable,
        "-m",
        "citecheck",
        "score",
        "--turns",
        str(turns),
        "--judge",
        str(judge_file),
        "--out",
        str(out),
        "--run-id",
        "cli-run",
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    payload = json.loads(out.read_text())
    orbit = next(t for t in payload["turns"] if t["turn_id"] == "orbit-1")
    assert [s.get("judge") for s in orbit["sentences"][2:4]] == ["anthropic", "anthropic"]
    assert fake.batch_creations == 1
    assert json.loads((tmp_path / "batches.json").read_text()) == {"cli-run": next(iter(fake.batches))}
    assert KEY not in done.stderr and KEY not in out.read_text()
