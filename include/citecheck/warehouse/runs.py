"""The run ledger: the only writer of `runs`, one row per run of a day.

A run opens as `running`, collects per-step timings and statistics, becomes `validated` or
`failed_validation` (with the readable reason in `error`), `published` (set by the publish
transaction itself), and gets `finished_at` last. `runs.state` keeps what a retried task must
find again (the LLM batch id). Every write of a run's row is fenced (`locks.fenced`): a run that
lost its day records nothing more.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck.warehouse import tables as T
from citecheck.warehouse.locks import fenced
from citecheck.warehouse.serialize import jsonable


def open_run(engine: Engine, run_id: str, day: dt.date, *, config_hash: str, judge: str | None,
             lock_generation: int | None) -> None:
    """Start (or restart) the run's row: status `running`, nothing recorded yet, the generation of
    the day's lock it took (its fencing token), and the highest load batch committed now
    (`source_load_id`, 0 before any load): the run reads the day after this, so a row of a later
    batch is input it may not have seen (`warehouse.freshness`)."""
    last_load = sa.select(sa.func.coalesce(sa.func.max(T.source_loads.c.load_id), 0)).scalar_subquery()
    with fenced(engine, run_id, day=day, generation=lock_generation) as conn:
        conn.execute(T.runs.delete().where(T.runs.c.run_id == run_id))
        conn.execute(T.runs.insert().values(
            run_id=run_id, day=day, status="running", started_at=dt.datetime.now(dt.UTC),
            config_hash=config_hash, judge=judge, timings={}, stats={}, state={}, completed_steps=[],
            lock_generation=lock_generation, source_load_id=last_load))


def lock_generation(engine: Engine, run_id: str) -> int | None:
    """The generation of the day's lock the run took last (what its steps renew and publish with)."""
    with engine.connect() as conn:
        return conn.execute(sa.select(T.runs.c.lock_generation).where(T.runs.c.run_id == run_id)).scalar()


def record_lock_generation(engine: Engine, run_id: str, day: dt.date, generation: int) -> None:
    """A run that takes its day again (to complete the steps after its publish): its new token."""
    with fenced(engine, run_id, day=day, generation=generation) as conn:
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(lock_generation=generation))


def run_row(engine: Engine, run_id: str) -> dict[str, Any] | None:
    """The run's row, or None."""
    with engine.connect() as conn:
        row = conn.execute(sa.select(T.runs).where(T.runs.c.run_id == run_id)).mappings().first()
    return dict(row) if row else None


def run_status(engine: Engine, run_id: str) -> str | None:
    """The run's status, or None when there is no such run."""
    with engine.connect() as conn:
        return conn.execute(sa.select(T.runs.c.status).where(T.runs.c.run_id == run_id)).scalar()


def _merge_json(engine: Engine, run_id: str, column: str, values: Mapping[str, Any], *,
                statuses: tuple[str, ...] | None = None, **more: Any) -> None:
    """Merge `values` into a JSON column of the run (and set `more`), only from `statuses` if given."""
    where = [T.runs.c.run_id == run_id, *([T.runs.c.status.in_(statuses)] if statuses else [])]
    with fenced(engine, run_id) as conn:
        # the row held until commit: parallel tasks of the run (shards) merge, never overwrite each other
        current = conn.execute(sa.select(T.runs.c[column]).where(*where).with_for_update()).scalar() or {}
        conn.execute(T.runs.update().where(*where).values({column: {**current, **jsonable(dict(values))}, **more}))


def record_timing(engine: Engine, run_id: str, step: str, seconds: float) -> None:
    """A step's wall time, in seconds, under `runs.timings[step]`."""
    _merge_json(engine, run_id, "timings", {step: round(seconds, 3)})


def record_judged(engine: Engine, run_id: str, *, judge_stats: Mapping[str, Any], counts: Mapping[str, int],
                  judge_versions: str) -> None:
    """What aggregate learned: judge statistics and counts (`stats`), the judged shares, and the
    run's whole LLM usage (`llm_cost_usd`, tokens): the escalation's, an LLM first stage's (summed
    over its shards) and the claim split's (`stats["claim_split"]["llm"]`, an earlier step)."""
    llm = judge_stats.get("llm") if isinstance(judge_stats.get("llm"), Mapping) else {}
    first = judge_stats.get("first") if isinstance(judge_stats.get("first"), Mapping) else {}
    split = (((run_row(engine, run_id) or {}).get("stats") or {}).get("claim_split") or {}).get("llm")
    spenders = [s for s in (llm, first if "cost_usd" in first else None, split) if isinstance(s, Mapping) and s]

    def total(key: str) -> Any:
        return sum(s.get(key) or 0 for s in spenders) if spenders else None

    answers = counts["answers"]
    _merge_json(engine, run_id, "stats", {"judge": judge_stats, "counts": counts},
                judge_versions=judge_versions, turns_judged=counts["selected_answers"],
                share_nli=counts["selected_answers"] / answers if answers else None,
                share_llm=(llm.get("answers_escalated", 0) / answers) if answers and llm else None,
                llm_input_tokens=total("input_tokens"), llm_output_tokens=total("output_tokens"),
                llm_cost_usd=total("cost_usd"))


def record_validation(engine: Engine, run_id: str, *, success: bool, results: Any,
                      turn_counts: Mapping[str, int], error: str | None) -> bool:
    """The validation verdict of a `running` run: status `validated` or `failed_validation`,
    results and reason. False (nothing changed) when the run is no longer `running` (another run
    closed it as abandoned)."""
    with fenced(engine, run_id) as conn:
        return conn.execute(T.runs.update().where(T.runs.c.run_id == run_id, T.runs.c.status == "running").values(
            status="validated" if success else "failed_validation", validation=jsonable(results),
            turns_read=turn_counts["turns_read"], turns_scored=turn_counts["turns_scored"],
            turns_skipped=turn_counts["turns_skipped"], error=None if success else (error or "")[:4000])
        ).rowcount == 1


def record_stats(engine: Engine, run_id: str, values: Mapping[str, Any]) -> None:
    """Merge these entries into the run's `stats` (e.g. `slices_cut`, `input_repairs`)."""
    _merge_json(engine, run_id, "stats", values)


def record_monitor(engine: Engine, run_id: str, stats: Mapping[str, Any]) -> None:
    """The monitor step's counts (alerts, outcomes, why none) under `stats["monitor"]`."""
    _merge_json(engine, run_id, "stats", {"monitor": dict(stats)})


def finish_run(engine: Engine, run_id: str, published: Mapping[str, int]) -> None:
    """The last write of a run: `finished_at`, and the published row counts in `stats`."""
    _merge_json(engine, run_id, "stats", {"published_rows": dict(published)}, statuses=("published",),
                finished_at=dt.datetime.now(dt.UTC))


class RunStateBatchStore:
    """LLM batch ids persisted in the run's `runs.state`, so a retried task reattaches to its batch.

    One run submits several batches under their own keys (the judge's `<run id>`, the claim
    splitter's `<run id>/claims`): each key's id is kept under `state["llm_batch_ids"]` of the run's
    row (`run_id`; default: the key itself, for a store used by one judge of the run)."""

    def __init__(self, engine: Engine, run_id: str | None = None) -> None:
        self.engine = engine
        self.run_id = run_id

    def get(self, key: str) -> str | None:
        with self.engine.connect() as conn:
            state = conn.execute(sa.select(T.runs.c.state).where(T.runs.c.run_id == (self.run_id or key))).scalar()
        state = state or {}
        stored = (state.get("llm_batch_ids") or {}).get(key)
        if stored is None and key == (self.run_id or key):  # a row written before keys were kept apart
            stored = state.get("llm_batch_id")
        return stored

    def put(self, key: str, batch_id: str) -> None:
        run_id = self.run_id or key
        with fenced(self.engine, run_id) as conn:
            state = conn.execute(sa.select(T.runs.c.state).where(T.runs.c.run_id == run_id).with_for_update()
                                 ).scalar() or {}  # held: the shards' keys and the budget pool share `state`
            ids = {**(state.get("llm_batch_ids") or {}), key: batch_id}
            conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(
                state={**state, "llm_batch_ids": ids}))


class RunBudgetPool:
    """The LLM budget of one run, counted in its ledger row (`state["llm_budget"]`: the USD and
    answers every task of the run took: its claim split, each judge shard, its escalation), so the
    run spends one budget however many tasks or processes spend it (`judges.llm.SharedBudget`).
    Each take is one fenced transaction holding the row (PostgreSQL: FOR UPDATE; SQLite: the write
    lock), so two tasks never both take the last of it."""

    def __init__(self, engine: Engine, run_id: str) -> None:
        self.engine = engine
        self.run_id = run_id

    def take(self, usd: float, answers: int, limit_usd: float | None, limit_answers: int | None) -> bool:
        return self._add(usd, answers, limit_usd, limit_answers)

    def give_back(self, usd: float) -> None:
        self._add(-usd, 0, None, None)

    def taken(self) -> dict[str, float | int]:
        """What the run's tasks took so far (USD: spent, unknown outcomes and reservations; answers)."""
        state = (run_row(self.engine, self.run_id) or {}).get("state") or {}
        return {"usd": 0.0, "answers": 0, **(state.get("llm_budget") or {})}

    def _add(self, usd: float, answers: int, limit_usd: float | None, limit_answers: int | None) -> bool:
        c = T.runs.c
        with fenced(self.engine, self.run_id) as conn:
            state = conn.execute(sa.select(c.state).where(c.run_id == self.run_id).with_for_update()).first()
            if state is None:
                raise LookupError(f"run {self.run_id} is not in the run ledger: it has no LLM budget")
            state = state[0] or {}
            pool = {"usd": 0.0, "answers": 0, **(state.get("llm_budget") or {})}
            usd_after, answers_after = pool["usd"] + usd, pool["answers"] + answers
            if (limit_usd is not None and usd > 0 and usd_after > limit_usd + 1e-12) or (
                    limit_answers is not None and answers > 0 and answers_after > limit_answers):
                return False
            conn.execute(T.runs.update().where(c.run_id == self.run_id).values(
                state={**state, "llm_budget": {"usd": max(usd_after, 0.0), "answers": answers_after}}))
            return True


# --- after the publish commit: what completed, and what a later run of the day completes ----
OPEN_STATUSES = ("running", "validated")  # a run still working towards its publish


def mark_completed(engine: Engine, run_id: str, step: str) -> None:
    """Record that a step after the publish commit completed for the (published) run
    (`completed_steps`)."""
    c = T.runs.c
    with fenced(engine, run_id) as conn:
        done = conn.execute(sa.select(c.completed_steps).where(c.run_id == run_id)).scalar() or []
        if step not in done:
            conn.execute(T.runs.update().where(c.run_id == run_id, c.status == "published").values(
                completed_steps=[*done, step]))


def missing_after_publish(engine: Engine, run_id: str, after_publish: Sequence[str]) -> list[str]:
    """Which of `after_publish` (the job's steps after the publish commit, in order) the published
    run has not completed (none for a run that finished, or one that is not in the ledger)."""
    with engine.connect() as conn:
        row = conn.execute(sa.select(T.runs.c.status, T.runs.c.finished_at, T.runs.c.completed_steps).where(
            T.runs.c.run_id == run_id)).first()
    if row is None or row.status != "published" or row.finished_at is not None:
        return []
    done = set(row.completed_steps or ())
    return [step for step in after_publish if step not in done]


def close_open_runs(engine: Engine, day: dt.date, *, keep: str | None, status: str, reason: str,
                    generation: int | None = None) -> list[str]:
    """Mark the day's open runs other than `keep` (`running` or `validated`) with `status` and the
    reason, and remove the staging of every run of the day other than `keep`. The caller holds the
    day's lock (so those runs no longer do): the run `keep` that took it with `generation` (the
    write is fenced with it), or `citecheck gc` (no generation). Returns the run ids it closed."""
    c = T.runs.c
    others = sa.and_(c.day == day, c.run_id != keep) if keep else c.day == day
    with fenced(engine, keep if generation is not None else None, day=day, generation=generation) as conn:
        closed = list(conn.execute(sa.select(c.run_id).where(others, c.status.in_(OPEN_STATUSES))).scalars())
        if closed:  # only from an open status: a run that published meanwhile keeps its row
            conn.execute(T.runs.update().where(c.run_id.in_(closed), c.status.in_(OPEN_STATUSES)).values(
                status=status, error=reason, finished_at=dt.datetime.now(dt.UTC)))
        day_runs = sa.select(c.run_id).where(others).scalar_subquery()
        for table in T.STAGING_TABLES:
            conn.execute(table.delete().where(table.c.run_id.in_(day_runs)))
    return closed


def close_failed(engine: Engine, run_id: str, reason: str) -> None:
    """A run that stopped on an error before its publish: status `failed`, the reason, finished."""
    with fenced(engine, run_id) as conn:
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id, T.runs.c.status.in_(OPEN_STATUSES)).values(
            status="failed", error=reason[:4000], finished_at=dt.datetime.now(dt.UTC)))


LEDGER_COLUMNS = ("run_id", "day", "status", "started_at", "finished_at", "completed_steps", "error")


def day_ledger(engine: Engine, day: dt.date) -> list[dict[str, Any]]:
    """The day's runs, oldest first, with their staged rows (what `citecheck runs --day` shows)."""
    c = T.runs.c
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(sa.select(*[c[n] for n in LEDGER_COLUMNS]).where(c.day == day)
                                              .order_by(c.started_at, c.run_id)).mappings()]
        for row in rows:
            row["staged_rows"] = sum(conn.execute(sa.select(sa.func.count()).select_from(t).where(
                t.c.run_id == row["run_id"])).scalar_one() for t in T.STAGING_TABLES)
    return rows


def orphan_staging(engine: Engine) -> int:
    """Delete staged rows of run ids the ledger does not know (a run that died before opening its
    row, or whose row was removed); how many went."""
    removed = 0
    with engine.begin() as conn:
        known = sa.select(T.runs.c.run_id)
        for table in T.STAGING_TABLES:
            removed += conn.execute(table.delete().where(table.c.run_id.not_in(known))).rowcount or 0
    return removed


def open_run_days(engine: Engine) -> list[dt.date]:
    """Days with an open run or staged rows (what `citecheck gc` looks at)."""
    c = T.runs.c
    with engine.connect() as conn:
        days = set(conn.execute(sa.select(c.day).where(c.status.in_(OPEN_STATUSES)).distinct()).scalars())
        for table in T.STAGING_TABLES:
            days |= set(conn.execute(sa.select(c.day).where(c.run_id.in_(sa.select(table.c.run_id).distinct()))
                                     .distinct()).scalars())
    return sorted(days)
