"""The job streams a day with flat memory: chunked extraction (a real server-side cursor on
PostgreSQL), conversation history per chunk with prior-day labels fetched per chunk, and
judgments joined per chunk in aggregate, all giving the same results as one big chunk."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from citecheck import demo, job
from citecheck import warehouse as W
from citecheck.core.structural import ConversationHistory
from citecheck.warehouse import tables as T

DAY = dt.date(2026, 11, 30)


def _turn(turn_id: str, conversation: str, index: int, at: str, labels: list[str], answer: str) -> dict:
    return {"turn_id": turn_id, "conversation_id": conversation, "turn_index": index, "answered_at": at,
            "question": "What is the rule?", "answer": answer, "answer_format": "markers",
            "context": [{"label": lab, "source": f"doc {lab}", "text": f"Passage {lab} says the rule is {i} days."}
                        for i, lab in enumerate(labels)], "attributes": {"model": "m"}}


# a: stale across midnight; b: stale within the day; c: prior-day label, conversation first seen in a
# later chunk; d: prior-day label reused two day-turns later (the day's turns straddle chunks)
TURNS = [
    _turn("a1", "a", 1, "2026-11-29T23:50:00Z", ["S1", "S2", "S3"], "The rule is 0 days [S1]."),
    _turn("a2", "a", 2, "2026-11-30T00:05:00Z", ["S1", "S2"], "The rule is 2 days [S3]."),
    _turn("b1", "b", 1, "2026-11-30T08:00:00Z", ["S1", "S2"], "The rule is 1 days [S2]."),
    _turn("b2", "b", 2, "2026-11-30T08:05:00Z", ["S1"], "The rule is 1 days [S2]."),
    _turn("bad", "bb", 1, "2026-11-30T09:00:00Z", ["S1"], "x") | {"answer": None},
    _turn("c0", "c", 1, "2026-11-28T10:00:00Z", ["S1", "S2", "S3", "S4"], "The rule is 3 days [S4]."),
    _turn("c1", "c", 2, "2026-11-30T10:00:00Z", ["S1"], "The rule is 3 days [S4]."),
    _turn("d0", "d", 1, "2026-11-29T12:00:00Z", ["S1", "S5"], "The rule is 1 days [S5]."),
    _turn("d1", "d", 2, "2026-11-30T12:00:00Z", ["S1"], "The rule is 0 days [S1]."),
    _turn("d2", "d", 3, "2026-11-30T12:05:00Z", ["S1"], "The rule is 1 days [S5][S1]."),
    _turn("e1", "e", 1, "2026-11-30T13:00:00Z", ["S1"], "The rule is 1 days [S2]."),
]
STALE = {("a2", "S3"), ("b2", "S2"), ("c1", "S4"), ("d2", "S5")}


class _WatchedHistory(ConversationHistory):
    """The real history, noting the most conversations it ever held."""

    most = 0

    def record(self, conversation_id, turn_index, labels):  # type: ignore[no-untyped-def]
        super().record(conversation_id, turn_index, labels)
        _WatchedHistory.most = max(_WatchedHistory.most, len(self))


@pytest.mark.parametrize("chunk", [1, 2, 3, 1000])
def test_stale_labels_across_midnight_and_chunk_boundaries(engine, monkeypatch, chunk):
    monkeypatch.setattr(job.steps, "STRUCTURAL_CHUNK", chunk)
    monkeypatch.setattr(job.steps, "ConversationHistory", _WatchedHistory)
    _WatchedHistory.most = 0
    W.load_turns(engine, TURNS)
    settings = job.JobSettings(judge_spec={"kind": "recorded", "judgments": []}, nli_share=0.0)
    result = job.run_day(engine, DAY, settings)
    assert result["structural"]["turns_read"] == 8 and result["structural"]["turns_skipped"] == 1
    with engine.connect() as conn:
        rows = conn.execute(sa.select(T.citation_verdicts.c.turn_id, T.citation_verdicts.c.label,
                                      T.citation_verdicts.c.status)).all()
        skipped = conn.execute(sa.select(T.skipped_turns.c.turn_id, T.skipped_turns.c.reason)).all()
    assert {(t, lab) for t, lab, status in rows if status == "stale"} == STALE
    assert ("e1", "S2", "unknown") in rows  # unknown, never seen in conversation e: not stale
    assert skipped == [("bad", "answer is missing")]
    # the history holds the chunk's conversations plus the one carried over, never the whole day
    assert _WatchedHistory.most <= min(chunk + 1, 6)


def test_history_forgets_a_finished_conversation():
    history = ConversationHistory()
    history.record("a", 1, ["S1"])
    history.record("b", 1, ["S2"])
    history.forget("a")
    assert "a" not in history and history.conversation_ids() == ("b",)
    assert not history.is_stale("a", 2, "S1") and history.is_stale("b", 2, "S2")


def _sample_settings(sample_data: demo.Sample, share: float) -> job.JobSettings:
    return job.JobSettings(judge_spec=demo.judge_spec(sample_data), config=demo.sample_config(), nli_share=share)


def _published(engine, day):
    """Every published row of the day, run ids and timestamps left out, in a stable order."""
    out = {}
    for name, table in (("sentence", T.sentence_verdicts), ("citation", T.citation_verdicts),
                        ("metric", T.daily_metrics), ("skipped", T.skipped_turns)):
        cols = [c for c in table.columns if c.name not in ("run_id", "computed_at")]
        with engine.connect() as conn:
            rows = conn.execute(sa.select(*cols).where(table.c.day == day)).mappings().all()
        out[name] = sorted((dict(r) for r in rows), key=repr)
    return out


def test_chunked_aggregate_gives_the_same_rows_as_one_chunk_on_the_sample_day(engine, monkeypatch):
    start = dt.date(2026, 11, 23)
    data = demo.generate(start, 2, 250, seed=3)
    day = start + dt.timedelta(days=1)
    broken = [dict(t, turn_id=f"broken-{i}", answer=None) for i, t in enumerate(data.turns)
              if t["answered_at"].startswith(day.isoformat())][:3]
    W.load_turns(engine, data.turns + broken)
    settings = _sample_settings(data, 0.6)
    monkeypatch.setattr(job.steps, "CHUNK", 100_000)
    monkeypatch.setattr(job.steps, "STRUCTURAL_CHUNK", 100_000)
    whole = job.run_day(engine, day, settings)
    one_chunk = _published(engine, day)
    monkeypatch.setattr(job.steps, "CHUNK", 7)
    monkeypatch.setattr(job.steps, "STRUCTURAL_CHUNK", 5)
    chunked = job.run_day(engine, day, settings)
    assert _published(engine, day) == one_chunk
    assert chunked["combine"] == whole["combine"] and whole["combine"]["judged_sentences"] > 100
    verdicts = {r["verdict"] for r in one_chunk["sentence"]}
    assert {"supported", "miscited", "not_selected", "not_check_worthy"} <= verdicts
    assert any(r["status"] == "stale" for r in one_chunk["citation"])
    assert len(one_chunk["metric"]) > 100 and len(one_chunk["skipped"]) == 3


def test_postgres_extract_streams_through_a_server_side_cursor(pg_warehouse_url):
    engine = W.make_engine(pg_warehouse_url)
    W.init_warehouse(engine)
    W.load_turns(engine, TURNS)
    with engine.connect() as conn:
        sizes, open_cursors = [], []
        for batch in W.extract_day_chunks(conn, DAY, chunk=3):
            sizes.append(len(batch))
            open_cursors.append(conn.exec_driver_sql("SELECT count(*) FROM pg_cursors").scalar_one())
    engine.dispose()
    assert sizes == [3, 3, 2]
    assert open_cursors[0] >= 1, "the extract must be a server-side cursor, not a fetch of the whole day"
