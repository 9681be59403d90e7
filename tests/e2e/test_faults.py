"""Crash safety on the real warehouse: dropped connections, a SIGKILLed publish, a failed
validation inside Airflow and a failing NLI batch never lose a turn or publish half a day.

Each test starts from a day an earlier run published (the first Orbit turn only), loads the
late turns, and runs again: "old version intact" and "new version complete" are both visible.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.warehouse import tables as T
from helpers import orbit_settings, orbit_warehouse_turns
from helpers.faults import (
    DropConnection,
    published_rows,
    published_run_ids,
    published_then_late,
    run_status,
    run_steps,
    staged_rows,
    wait_for,
)

DAY = dt.date(2026, 11, 30)
TESTS = Path(__file__).resolve().parents[1]


def _warehouse_with_an_old_version(url: str) -> tuple[sa.Engine, str, dict[str, list[tuple]]]:
    """The day published from its first turn only; then the late turns arrive in the source."""
    engine, old = published_then_late(url, DAY)
    return engine, old, published_rows(engine, DAY, keep_run_id=True)


def _assert_one_clean_version(engine: sa.Engine, run_id: str) -> dict[str, list[tuple]]:
    """Every row of the day carries `run_id`, staging is empty, and a clean rerun of the same
    source publishes exactly the same rows (so the counts are a clean run's)."""
    versions = published_run_ids(engine, DAY)
    assert all(set(v) == {run_id} for v in versions.values()), versions
    assert run_status(engine, run_id) == "published" and staged_rows(engine) == 0
    rows = published_rows(engine, DAY)
    job.run_day(engine, DAY, orbit_settings())
    assert published_rows(engine, DAY) == rows, "the retried run differs from a clean run"
    return rows


# the moment the connection drops: (step, first statement pattern or None for its commit, nth,
# which version readers must see before the retry)
DROPS = {
    "open_run: opening the run": ("open_run", r"(?:--[^\n]*\n)*SELECT count\(\*\) FROM ", 1, "old"),
    "structural: mid extraction, 2nd passage read": ("structural", r"SELECT .*FROM source_passages", 2, "old"),
    "judge_shard: staging judgments": ("judge_shard", r"COPY stage_judgments", 1, "old"),
    "combine: staging metric rows": ("combine", r"COPY stage_daily_metrics", 1, "old"),
    "validate: storing the verdict": ("validate", r"UPDATE runs SET status", 1, "old"),
    "publish: mid transaction": ("publish", r"INSERT INTO daily_metrics", 1, "old"),
    "publish: at its commit": ("publish", None, 1, "old"),
    "publish: cleaning staging after the commit": ("publish", r"DELETE FROM stage_turns", 1, "new"),
}


# a failed step's abandoned reader (a suspended `_staged_turns` generator) rolls back on its
# killed connection when garbage-collected; harmless, and not what these tests are about
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("case", list(DROPS))
def test_a_dropped_connection_fails_one_step_and_its_retry_publishes_the_whole_day(pg_warehouse_url, monkeypatch,
                                                                                   case):
    step, pattern, nth, visible = DROPS[case]
    monkeypatch.setattr(job.steps, "STRUCTURAL_CHUNK", 2)  # several extract chunks: a drop between two of them
    engine, _old, old_rows = _warehouse_with_an_old_version(pg_warehouse_url)
    new = job.new_run_id(DAY)
    fault = DropConnection(step, pattern and f"(?s){pattern}", nth)
    seen: list[str] = []

    def between(name: str, exc: Exception) -> None:
        assert isinstance(exc, sa.exc.OperationalError) and exc.connection_invalidated, exc
        now = published_run_ids(engine, DAY)
        if visible == "old":
            assert published_rows(engine, DAY, keep_run_id=True) == old_rows, f"{name} left a partial publish"
            assert run_status(engine, new) != "published"
        else:
            assert all(set(v) == {new} for v in now.values()), now
        seen.append(name)

    failures = run_steps(pg_warehouse_url, DAY, orbit_settings(), new, fault=fault, after_failure=between)
    assert fault.killed and failures == seen == [step], (fault, failures)
    rows = _assert_one_clean_version(engine, new)
    assert len(rows["sentence_verdicts"]) > len(old_rows["sentence_verdicts"]), "the late turns are published"
    engine.dispose()


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_a_publish_retried_after_its_cleanup_changes_nothing(request, tmp_path, backend):
    """The task died after its commit and cleanup (before Airflow saw success): the retry
    must not republish the emptied staging, which would wipe the day."""
    url = request.getfixturevalue("pg_warehouse_url") if backend == "postgresql" else f"sqlite:///{tmp_path}/w.db"
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    W.load_turns(engine, orbit_warehouse_turns())
    result = job.run_day(engine, DAY, orbit_settings())
    before = published_rows(engine, DAY, keep_run_id=True)
    retry = W.make_engine(url)
    assert job.publish(job.DayRun(retry, DAY, result["run_id"], orbit_settings())) == result["publish"]
    assert published_rows(engine, DAY, keep_run_id=True) == before
    retry.dispose()
    engine.dispose()


@pytest.mark.parametrize(("backend", "hold_after"), [
    ("postgresql", "DELETE FROM sentence_verdicts"),
    ("postgresql", "INSERT INTO daily_metrics"),
    ("sqlite", "INSERT INTO daily_metrics"),
])
def test_sigkill_mid_publish_keeps_the_previous_version_and_the_retry_publishes(request, tmp_path, backend,
                                                                                hold_after):
    url = request.getfixturevalue("pg_warehouse_url") if backend == "postgresql" else f"sqlite:///{tmp_path}/w.db"
    engine, old, old_rows = _warehouse_with_an_old_version(url)
    new = job.new_run_id(DAY)
    run_steps(url, DAY, orbit_settings(), new, until="validate")
    assert run_status(engine, new) == "validated"
    marker = tmp_path / "held"
    env = {**os.environ, "CITECHECK_FAULT_HOLD_AFTER": hold_after, "CITECHECK_FAULT_MARKER": str(marker)}
    child = subprocess.Popen([sys.executable, str(TESTS / "helpers" / "faults.py"), url, DAY.isoformat(), new], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: marker.exists() or child.poll() is not None, "the publish to reach its hold point")
        assert marker.exists(), f"the child exited with {child.returncode}: {child.stderr.read()[-2000:]}"
        held = marker.read_text().split()
        # a reader during the half-done publish still sees the old day, whole
        assert published_rows(engine, DAY, keep_run_id=True) == old_rows
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    if backend == "postgresql":  # the server notices the dead client and rolls its transaction back
        pid = int(held[1])

        def gone() -> bool:
            with engine.connect() as conn:
                return not conn.execute(sa.text("SELECT 1 FROM pg_stat_activity WHERE pid = :p"), {"p": pid}).first()

        wait_for(gone, "the killed publish's backend to end", timeout=15)
    assert published_rows(engine, DAY, keep_run_id=True) == old_rows
    assert run_status(engine, new) == "validated" and run_status(engine, old) == "published"
    retry = W.make_engine(url)
    counts = job.publish(job.DayRun(retry, DAY, new, orbit_settings()))
    job.complete_published(job.DayRun(retry, DAY, new, orbit_settings()))  # its later tasks: monitor … record_run
    retry.dispose()
    assert {k: n for k, n in counts.items() if n} == {name: sum(v.values())
                                                      for name, v in published_run_ids(engine, DAY).items()}
    _assert_one_clean_version(engine, new)
    engine.dispose()


def test_a_failed_validation_in_airflow_publishes_nothing_and_says_why(pg_warehouse_url, tmp_path):
    """`dag.test()` with a judge that knows no statement: every sentence is unjudged, over the
    limit. The validate task fails once (no pointless retries), publish never runs, and the
    readable summary is in the task log and in `runs`."""
    from helpers.dags import dag_test

    engine, old, old_rows = _warehouse_with_an_old_version(pg_warehouse_url)
    empty = tmp_path / "knows_nothing.json"
    empty.write_text(json.dumps({"kind": "recorded", "judgments": []}))
    out = dag_test(tmp_path, pg_warehouse_url, DAY.isoformat(), timeout=120, CITECHECK_JUDGE=str(empty))
    logs = out.stdout + out.stderr
    assert out.returncode == 1, logs[-3000:]
    assert "nothing published" in logs
    assert "FAIL unjudged_share_within_limit" in logs and "unjudged_sentences=8 selected_sentences=8" in logs
    airflow_db = sa.create_engine(f"sqlite:///{tmp_path}/airflow.db")
    with airflow_db.connect() as conn:
        tis = {r.task_id: (r.state, r.try_number) for r in conn.execute(sa.text(
            "SELECT task_id, state, try_number FROM task_instance"))}
    airflow_db.dispose()
    assert tis["validate"] == ("failed", 1) and tis["publish"][0] == "upstream_failed", tis
    assert published_rows(engine, DAY, keep_run_id=True) == old_rows
    with engine.connect() as conn:
        failed = conn.execute(sa.select(T.runs).where(T.runs.c.run_id != old)).mappings().one()
    assert failed["status"] == "failed_validation"
    assert "FAIL unjudged_share_within_limit" in failed["error"] and "unjudged_share=1" in failed["error"]
    assert failed["validation"]["success"] is False
    assert failed["validation"]["failed_rules"] == ["unjudged_share_within_limit"]
    engine.dispose()


def test_an_nli_batch_that_keeps_failing_leaves_its_sentence_unjudged_and_the_day_publishes(
        pg_warehouse_url, tmp_path, monkeypatch):
    """The real NLI judge (a tiny local cross-encoder) inside the job: batches over 4 pairs run
    out of memory and are halved; every pair of one sentence fails even alone. That sentence is
    unjudged and counted; the run still validates and publishes."""
    from citecheck.judges.nli import CrossEncoderScorer
    from helpers.tiny_models import save_tiny_nli

    poisoned = "paid within 5 business days"
    real = CrossEncoderScorer.probabilities

    def out_of_memory(self, pairs):
        if len(pairs) > 4:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        if any(poisoned in hypothesis for _premise, hypothesis in pairs):
            raise RuntimeError("CUDA out of memory (even alone)")
        return real(self, pairs)

    monkeypatch.setattr(CrossEncoderScorer, "probabilities", out_of_memory)
    model = save_tiny_nli(tmp_path / "tiny_nli", max_length=512)
    settings = orbit_settings(judge_spec={"kind": "nli", "model": str(model), "batch_size": 16})
    engine, _old, _old_rows = _warehouse_with_an_old_version(pg_warehouse_url)
    result = job.run_day(engine, DAY, settings)
    assert result["combine"]["unjudged_sentences"] == 1
    with engine.connect() as conn:
        verdicts = conn.execute(sa.select(T.sentence_verdicts.c.text, T.sentence_verdicts.c.verdict,
                                          T.sentence_verdicts.c.reason, T.sentence_verdicts.c.judge).where(
            T.sentence_verdicts.c.day == DAY, T.sentence_verdicts.c.check_worthy.is_(True))).all()
        run = conn.execute(sa.select(T.runs).where(T.runs.c.run_id == result["run_id"])).mappings().one()
    unjudged = [v for v in verdicts if v.verdict == "unjudged"]
    assert len(unjudged) == 1 and poisoned in unjudged[0].text and "out of memory" in unjudged[0].reason
    assert all(v.judge == "nli" for v in verdicts if v.verdict != "unjudged")
    assert run["status"] == "published"
    first = run["stats"]["judge"]["first"]
    assert first["batch_retries"] > 0 and first["pairs_failed"] > 0 and first["unjudged"] == 1
    micro = {r["metric"]: r for r in job.day_metrics(engine, DAY)
             if r["slice_name"] == "all" and r["averaging"] == "micro"}
    assert micro["unjudged_rate"]["numerator"] == 1
    assert all(r["run_id"] == result["run_id"] for r in job.day_metrics(engine, DAY))
    engine.dispose()
