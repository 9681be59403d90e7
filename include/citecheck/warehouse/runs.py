"""The run ledger: the only writer of `runs`, one row per run of a day.

A run opens as `running`, collects per-step timings and statistics, becomes `validated` or
`failed_validation` (with the readable reason in `error`), `published` (set by the publish
transaction itself), and gets `finished_at` last. `runs.state` keeps what a retried task must
find again (the LLM batch id).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck.warehouse import tables as T
from citecheck.warehouse.serialize import jsonable


def open_run(engine: Engine, run_id: str, day: dt.date, *, config_hash: str, judge: str | None) -> None:
    """Start (or restart) the run's row: status `running`, nothing recorded yet."""
    with engine.begin() as conn:
        conn.execute(T.runs.delete().where(T.runs.c.run_id == run_id))
        conn.execute(T.runs.insert().values(
            run_id=run_id, day=day, status="running", started_at=dt.datetime.now(dt.UTC),
            config_hash=config_hash, judge=judge, timings={}, stats={}, state={}))


def run_row(engine: Engine, run_id: str) -> dict[str, Any] | None:
    """The run's row, or None."""
    with engine.connect() as conn:
        row = conn.execute(sa.select(T.runs).where(T.runs.c.run_id == run_id)).mappings().first()
    return dict(row) if row else None


def run_status(engine: Engine, run_id: str) -> str | None:
    """The run's status, or None when there is no such run."""
    with engine.connect() as conn:
        return conn.execute(sa.select(T.runs.c.status).where(T.runs.c.run_id == run_id)).scalar()


def _merge_json(engine: Engine, run_id: str, column: str, values: Mapping[str, Any], **more: Any) -> None:
    with engine.begin() as conn:
        current = conn.execute(sa.select(T.runs.c[column]).where(T.runs.c.run_id == run_id)).scalar() or {}
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(
            {column: {**current, **jsonable(dict(values))}, **more}))


def record_timing(engine: Engine, run_id: str, step: str, seconds: float) -> None:
    """A step's wall time, in seconds, under `runs.timings[step]`."""
    _merge_json(engine, run_id, "timings", {step: round(seconds, 3)})


def record_judged(engine: Engine, run_id: str, *, judge_stats: Mapping[str, Any], counts: Mapping[str, int],
                  judge_versions: str) -> None:
    """What aggregate learned: judge statistics and counts (`stats`), the judged shares, LLM usage."""
    llm = judge_stats.get("llm") if isinstance(judge_stats.get("llm"), Mapping) else {}
    answers = counts["answers"]
    _merge_json(engine, run_id, "stats", {"judge": judge_stats, "counts": counts},
                judge_versions=judge_versions, turns_judged=counts["judged_answers"],
                share_nli=counts["judged_answers"] / answers if answers else None,
                share_llm=(llm.get("answers_escalated", 0) / answers) if answers and llm else None,
                llm_input_tokens=llm.get("input_tokens"), llm_output_tokens=llm.get("output_tokens"),
                llm_cost_usd=llm.get("cost_usd"))


def record_validation(engine: Engine, run_id: str, *, success: bool, results: Any,
                      turn_counts: Mapping[str, int], error: str | None) -> None:
    """The validation verdict: status `validated` or `failed_validation`, results and reason."""
    with engine.begin() as conn:
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(
            status="validated" if success else "failed_validation", validation=jsonable(results),
            turns_read=turn_counts["turns_read"], turns_scored=turn_counts["turns_scored"],
            turns_skipped=turn_counts["turns_skipped"], error=None if success else (error or "")[:4000]))


def record_monitor(engine: Engine, run_id: str, stats: Mapping[str, Any]) -> None:
    """The monitor step's counts (alerts, outcomes, why none) under `stats["monitor"]`."""
    _merge_json(engine, run_id, "stats", {"monitor": dict(stats)})


def finish_run(engine: Engine, run_id: str, published: Mapping[str, int]) -> None:
    """The last write of a run: `finished_at`, and the published row counts in `stats`."""
    _merge_json(engine, run_id, "stats", {"published_rows": dict(published)}, finished_at=dt.datetime.now(dt.UTC))


class RunStateBatchStore:
    """LLM batch ids persisted in `runs.state`, so a retried run reattaches to its batch."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get(self, run_id: str) -> str | None:
        with self.engine.connect() as conn:
            state = conn.execute(sa.select(T.runs.c.state).where(T.runs.c.run_id == run_id)).scalar()
        return (state or {}).get("llm_batch_id")

    def put(self, run_id: str, batch_id: str) -> None:
        _merge_json(self.engine, run_id, "state", {"llm_batch_id": batch_id})
