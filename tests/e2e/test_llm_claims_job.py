"""The LLM claim splitter in the daily job (`[claims] mode = "llm"`, SPEC §2.1, issue 28): the
split_claims step splits the day's selected answers through ONE Message Batch of the real SDK against
the local fake Anthropic server, on SQLite and Postgres. A good reply publishes the claims; a split
that adds a figure is rejected and counted; a reply malformed twice leaves its sentence whole,
counted; the daily budget is shared with the escalation (spent: sentences whole, counted); a task
killed after submitting reattaches to its batch on retry; a rerun of the day asks nothing (the
warehouse's split cache); and the daily DAG runs end to end in this mode."""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import time
from typing import Any

import pytest
import sqlalchemy as sa

from citecheck.core.claims import ClaimsError
from citecheck.core.config import config_from_mapping
from citecheck.job import DayRun, JobSettings, open_run, run_day, run_steps, split_claims
from citecheck.warehouse import load_turns, runs
from citecheck.warehouse import tables as T
from helpers import load_fixture, run_steps_until
from helpers.fake_anthropic import FakeAnthropic, claim_splits_as, serve_with_env

FIXTURE = load_fixture("claims.json")
DAY = dt.date(2026, 11, 30)
SENTENCE = FIXTURE["claims"]["claims"][0]["sentence"]
CLAIMS = FIXTURE["claims"]["claims"][0]["claims"]
LLM_MODE = config_from_mapping({"claims": {"mode": "llm"}})


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    yield from serve_with_env(monkeypatch, "sk-test-claims-job")


def llm_spec(**escalate: Any) -> dict[str, Any]:
    """The seed answers' recorded first stage, escalating to the LLM judge through Message Batches."""
    return {"kind": "cascade", "first": FIXTURE["judge"], "escalate": {
        "kind": "anthropic", "transport": "batches", "sample_rate": 0.0, "poll_interval_s": 0.001,
        "max_retries": 1, "backoff_base_s": 0.001, "timeout_s": 5, **escalate}}


def settings(**escalate: Any) -> JobSettings:
    return JobSettings(judge_spec=llm_spec(**escalate), config=LLM_MODE, min_turns=1)


def loaded(engine) -> Any:
    load_turns(engine, list(FIXTURE["turns"].values()))
    return engine


def worthy_sentences() -> dict[str, list[str]]:
    """The check-worthy sentence texts of each seed answer (what the splitter is asked about)."""
    from citecheck.core.pipeline import structure_turns
    from citecheck.core.turns import turn_from_dict

    turns = [turn_from_dict(t) for t in FIXTURE["turns"].values()]
    return {st.turn_id: [s.text for s in st.sentences if s.check_worthy] for st in structure_turns(turns, LLM_MODE)}


def claim_texts(engine, turn_id: str) -> list[str]:
    c = T.claim_verdicts.c
    with engine.connect() as conn:
        return list(conn.execute(sa.select(c.text).where(c.turn_id == turn_id)
                                 .order_by(c.sentence_index, c.claim_index)).scalars())


def split_stats(engine, run_id: str) -> dict[str, Any]:
    return runs.run_row(engine, run_id)["stats"]["claim_split"]


def cached_splits(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(T.claim_split_cache)).scalar_one()


def test_a_day_splits_through_one_batch_and_publishes_the_claims(engine, fake: FakeAnthropic):
    fake.grader = claim_splits_as({SENTENCE: CLAIMS})
    out = run_day(loaded(engine), DAY, settings())
    worthy = worthy_sentences()
    assert claim_texts(engine, "claims-plan") == CLAIMS
    assert claim_texts(engine, "claims-hardware") == worthy["claims-hardware"]  # whole: the model kept them
    [batch] = fake.split_batches()  # one batch for the day's answers, no direct Messages call
    assert len(batch.requests) == len(worthy) and fake.split_messages() == []
    for request in batch.requests:
        params = request["params"]
        assert params["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert params["output_config"]["format"]["type"] == "json_schema"
    stats = split_stats(engine, out["run_id"])
    assert stats["answers_asked"] == len(worthy)
    assert stats["sentences_split_by_model"] == sum(map(len, worthy.values()))
    assert stats["claim_splits_rejected"] == stats["claim_splits_skipped_budget"] == stats["claim_splits_failed"] == 0
    assert stats["llm"]["batches_created"] == 1 and stats["spend"]["usd"] > 0
    assert runs.run_row(engine, out["run_id"])["state"]["llm_batch_ids"][f"{out['run_id']}/claims"] == batch.id
    llm = runs.run_row(engine, out["run_id"])["stats"]["judge"]["llm"]
    assert llm["budget_booked_usd"] == pytest.approx(stats["spend"]["usd"], abs=1e-6)  # one daily budget
    assert cached_splits(engine) == sum(map(len, worthy.values()))


def test_a_rerun_of_the_day_asks_nothing(engine, fake: FakeAnthropic):
    fake.grader = claim_splits_as({SENTENCE: CLAIMS})
    loaded(engine)
    run_day(engine, DAY, settings())
    asked = len(fake.split_batches())
    again = run_day(engine, DAY, settings())
    assert len(fake.split_batches()) == asked == 1 and fake.split_messages() == []  # no split request at all
    stats = split_stats(engine, again["run_id"])
    assert stats["answers_asked"] == 0 and stats["sentences_cached"] == sum(map(len, worthy_sentences().values()))
    assert stats["spend"] == {"usd": 0.0, "answers": 0}
    assert claim_texts(engine, "claims-plan") == CLAIMS


def test_a_split_that_adds_a_figure_is_rejected_and_counted(engine, fake: FakeAnthropic):
    fake.grader = claim_splits_as({SENTENCE: ["The Starter plan costs 45 units a month.", CLAIMS[1]]})
    out = run_day(loaded(engine), DAY, settings())
    assert claim_texts(engine, "claims-plan") == [SENTENCE]
    assert split_stats(engine, out["run_id"])["claim_splits_rejected"] == 1
    assert runs.run_row(engine, out["run_id"])["stats"]["counts"]["claim_splits_rejected"] == 1


def test_a_reply_malformed_twice_keeps_the_sentences_whole_and_is_counted(engine, fake: FakeAnthropic):
    fake.grader = claim_splits_as("not json at all")
    out = run_day(loaded(engine), DAY, settings())
    worthy = worthy_sentences()
    assert claim_texts(engine, "claims-plan") == worthy["claims-plan"]
    stats = split_stats(engine, out["run_id"])
    assert stats["claim_splits_failed"] == sum(map(len, worthy.values()))
    assert stats["failures"] == {"malformed reply twice": sum(map(len, worthy.values()))}
    assert len(fake.split_messages()) == len(worthy)  # each answer re-asked once, directly
    assert cached_splits(engine) == 0  # a failure is not cached: the next run asks again


def test_the_budget_stop_keeps_sentences_whole_and_counts_them(engine, fake: FakeAnthropic):
    fake.grader = claim_splits_as({SENTENCE: CLAIMS})
    out = run_day(loaded(engine), DAY, settings(budget_usd=0.000001))
    worthy = worthy_sentences()
    assert fake.split_batches() == [] and claim_texts(engine, "claims-plan") == [SENTENCE]
    stats = split_stats(engine, out["run_id"])
    assert stats["claim_splits_skipped_budget"] == sum(map(len, worthy.values()))
    assert stats["llm"]["status"] == "budget_reached"


def test_splitting_and_judging_share_one_daily_budget(engine, fake: FakeAnthropic):
    """An answer budget the split uses up: the escalation that follows has none left."""
    fake.grader = claim_splits_as({SENTENCE: CLAIMS})
    worthy = worthy_sentences()
    out = run_day(loaded(engine), DAY, settings(budget_answers=len(worthy)))
    assert claim_texts(engine, "claims-plan") == CLAIMS  # the split had room
    assert split_stats(engine, out["run_id"])["spend"]["answers"] == len(worthy)
    llm = runs.run_row(engine, out["run_id"])["stats"]["judge"]["llm"]
    assert llm["budget_booked_answers"] == len(worthy)
    assert llm["status"] == "budget_reached" and llm["answers_sent"] == 0 and llm["answers_left_out"] > 0
    assert len(fake.batches) == 1  # the claims batch only: the escalation sent nothing


def _split_claims_in_child(url: str, run_id: str, base_url: str) -> None:
    import os

    from citecheck import warehouse as W

    os.environ["ANTHROPIC_BASE_URL"] = base_url
    engine = W.make_engine(url)
    split_claims(DayRun(engine, DAY, run_id, settings(batch_max_wait_s=3600)))


def test_a_task_killed_after_submitting_reattaches_to_its_batch_on_retry(engine, fake: FakeAnthropic):
    fake.grader = claim_splits_as({SENTENCE: CLAIMS})
    fake.polls_until_ended = 10**9  # the batch never ends while the first attempt polls
    url = engine.url.render_as_string(hide_password=False)
    run = DayRun(loaded(engine), DAY, "2026-11-30-killed", settings())
    first = run_steps_until(run, "structural")
    child = multiprocessing.get_context("spawn").Process(
        target=_split_claims_in_child, args=(url, run.run_id, fake.url), daemon=True)
    child.start()
    store = runs.RunStateBatchStore(engine, run.run_id)
    deadline = time.monotonic() + 120
    while store.get(f"{run.run_id}/claims") is None and child.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.get(f"{run.run_id}/claims") is not None, "the first attempt never submitted its batch"
    child.kill()
    child.join()
    assert fake.batch_creations == 1
    fake.polls_until_ended = 0
    out = split_claims(run)  # the retry of the killed task
    assert fake.batch_creations == 1 and out["claim_split"]["sentences_split_by_model"] > 0
    assert split_stats(engine, run.run_id)["llm"]["batches_reattached"] == 1
    done = {**first, "split_claims": out}  # the rest of the day's steps, as the DAG goes on

    def call(name, step, *args):
        if name == "structural":
            return done[name][args[1]]  # (run, shard)
        return done[name] if name in done else step(*args)

    run_steps(run, call)
    assert claim_texts(engine, "claims-plan") == CLAIMS


def test_llm_mode_without_a_key_fails_the_split_claims_step_clearly(engine, fake: FakeAnthropic, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    run = DayRun(loaded(engine), DAY, "2026-11-30-nokey", settings())
    open_run(run)
    with pytest.raises(ClaimsError, match="no Anthropic API key"):
        split_claims(run)
    assert fake.requests == []


@pytest.mark.parametrize("spec", [FIXTURE["judge"], {"kind": "anthropic", "model": ""}],
                         ids=["no LLM judge", "no model"])
def test_llm_mode_without_an_llm_judge_is_refused_before_the_run(spec):
    with pytest.raises(ClaimsError, match=r"claims\.mode"):
        JobSettings(judge_spec=spec, config=LLM_MODE)


@pytest.mark.slow
def test_the_daily_dag_end_to_end_in_the_llm_claims_mode(tmp_path, fake: FakeAnthropic):
    """`dag.test()` of the daily DAG with `[claims] mode = "llm"`: the structural task splits the
    seed answers through the fake server's batch; the plan sentence's two claims are published."""
    from citecheck import warehouse as W
    from helpers.dags import dag_test

    fake.grader = claim_splits_as({SENTENCE: CLAIMS})
    url = f"sqlite:///{tmp_path}/wh.sqlite"
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    loaded(engine)
    engine.dispose()
    judge, config = tmp_path / "llm_judge.json", tmp_path / "claims.toml"
    judge.write_text(json.dumps(llm_spec()), encoding="utf-8")
    config.write_text('[claims]\nmode = "llm"\n', encoding="utf-8")
    out = dag_test(tmp_path, url, DAY.isoformat(), CITECHECK_JUDGE=str(judge), CITECHECK_CONFIG=str(config),
                   CITECHECK_MIN_TURNS="1", ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-test-claims-job")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    engine = W.make_engine(url)
    assert claim_texts(engine, "claims-plan") == CLAIMS
    assert len(fake.split_batches()) == 1
    with engine.connect() as conn:
        [stats] = conn.execute(sa.select(T.runs.c.stats).where(T.runs.c.status == "published")).scalars()
    assert stats["claim_split"]["sentences_split_by_model"] == sum(map(len, worthy_sentences().values()))
