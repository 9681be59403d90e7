"""Staging: one run's intermediate data, keyed by run id, read and written chunk by chunk.

Every step of the job first deletes what an earlier attempt of the same run staged (so each
step is idempotent), then writes its own rows here; `publish` moves the final rows out and
`clean_staging` removes the rest. Every write is fenced (`locks.fenced`): a run that lost its
day stages nothing more.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.core.model import Judgment, JudgmentKey, StructuredTurn
from citecheck.core.turns import Skipped
from citecheck.warehouse import tables as T
from citecheck.warehouse.engine import bulk_insert, in_parameter
from citecheck.warehouse.locks import fenced
from citecheck.warehouse.serialize import (
    jsonable,
    judgment_rows,
    judgments_of_row,
    structured_from_json,
)

FIRST, FINAL = "first", "final"  # judge stages (the `stage` column): the first-stage judge, the LLM over it


def as_text(column: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
    """A JSON column read as its stored text (decoded by `serialize` into the dataclasses it holds,
    not into dicts by the driver)."""
    return sa.cast(column, sa.Text)


def reset(engine: Engine, run_id: str, tables: Sequence[sa.Table]) -> None:
    """Delete the run's rows from the given staging tables (a step's retry starts clean)."""
    with fenced(engine, run_id) as conn:
        for table in tables:
            conn.execute(table.delete().where(table.c.run_id == run_id))


def clean_staging(engine: Engine, run_id: str) -> None:
    """Delete everything the run staged."""
    reset(engine, run_id, T.STAGING_TABLES)


def has_staging(conn: Connection, run_id: str) -> bool:
    """Whether any staged row of the run is left (publish reads them; clean_staging removes them)."""
    return any(conn.execute(sa.select(t.c.run_id).where(t.c.run_id == run_id).limit(1)).first()
               for t in T.STAGING_TABLES)


def reset_shard(engine: Engine, run_id: str, shard: int, tables: Sequence[sa.Table]) -> None:
    """Delete one shard's rows of the run from the given staging tables (a shard's step retried
    starts clean, the other shards' rows stay): `stage_turns` and `stage_skipped` by their `shard`,
    the tables of per-turn rows by the shard's staged turns."""
    turns = T.stage_turns.c
    shard_turns = sa.select(turns.turn_id).where(turns.run_id == run_id, turns.shard == shard)
    with engine.begin() as conn:
        for table in tables:
            q = table.delete().where(table.c.run_id == run_id)
            q = q.where(table.c.shard == shard) if "shard" in table.c else q.where(table.c.turn_id.in_(shard_turns))
            conn.execute(q)


def stage_structured(engine: Engine, run_id: str, turns: Iterable[tuple[StructuredTurn, int, bool]],
                     skipped: Iterable[Skipped], shard: int | None = None) -> None:
    """One transaction: structured turns as (turn, shard, selected), and the turns skipped (by
    the structural step of `shard`)."""
    rows = [{"run_id": run_id, "turn_id": st.turn_id, "shard": shard, "selected": selected,
             "structured": st} for st, shard, selected in turns]
    with fenced(engine, run_id) as conn:
        bulk_insert(conn, T.stage_turns, rows)
        record_skips(conn, run_id, skipped, shard)


def stage_partial(engine: Engine, run_id: str, step: str, shard: int, state: Any) -> None:
    """Replace the partial state one step staged for one shard (`T.DAY_STATE`: for the day)."""
    c = T.stage_partials.c
    with engine.begin() as conn:
        conn.execute(T.stage_partials.delete().where(c.run_id == run_id, c.step == step, c.shard == shard))
        conn.execute(T.stage_partials.insert(), [{"run_id": run_id, "step": step, "shard": shard,
                                                  "state": jsonable(state)}])


def staged_partials(engine: Engine, run_id: str, step: str) -> dict[int, Any]:
    """shard → the partial state `step` staged for it, in shard order."""
    c = T.stage_partials.c
    q = sa.select(c.shard, c.state).where(c.run_id == run_id, c.step == step).order_by(c.shard)
    with engine.connect() as conn:
        return {int(shard): state for shard, state in conn.execute(q)}


def restage_turns(engine: Engine, run_id: str, turns: Sequence[StructuredTurn]) -> int:
    """Replace staged structured turns (keeping their shard and selection) in one transaction, e.g.
    with the claims the LLM claim splitter found; the number replaced."""
    if not turns:
        return 0
    c = T.stage_turns.c
    stmt = T.stage_turns.update().where(c.run_id == run_id, c.turn_id == sa.bindparam("b_turn_id")).values(
        structured=sa.bindparam("b_structured"))
    with fenced(engine, run_id) as conn:
        return conn.execute(stmt, [{"b_turn_id": st.turn_id, "b_structured": st}
                                   for st in turns]).rowcount


def record_skips(conn: Connection, run_id: str, skipped: Iterable[Skipped], shard: int | None = None) -> None:
    """Stage skipped turns with their reasons (published with the day in `skipped_turns`)."""
    rows = [{"run_id": run_id, "turn_id": s.turn_id or f"line-{s.line}", "reason": s.reason, "shard": shard}
            for s in skipped]
    bulk_insert(conn, T.stage_skipped, rows)


def staged_turns(engine: Engine, run_id: str, *, shard: int | None = None, selected_only: bool = False,
                 chunk: int = 500) -> Iterator[list[tuple[StructuredTurn, bool]]]:
    """The run's structured turns as (turn, selected), in turn id order, `chunk` at a time."""
    c = T.stage_turns.c
    q = sa.select(as_text(c.structured), c.selected).where(c.run_id == run_id)
    if shard is not None:
        q = q.where(c.shard == shard)
    if selected_only:
        q = q.where(c.selected.is_(True))
    q = q.order_by(c.turn_id)
    with engine.connect() as conn:
        result = conn.execution_options(yield_per=chunk).execute(q)
        while rows := result.fetchmany(chunk):
            yield [(structured_from_json(r[0]), bool(r[1])) for r in rows]


def drop_judgments(engine: Engine, run_id: str, *, judge_stage: str | None = None, shard: int | None = None) -> None:
    """Delete the run's staged judgments of one judge stage, or of one shard's turns."""
    c = T.stage_judgments.c
    q = T.stage_judgments.delete().where(c.run_id == run_id)
    if judge_stage is not None:
        q = q.where(c.stage == judge_stage)
    if shard is not None:
        q = q.where(c.turn_id.in_(sa.select(T.stage_turns.c.turn_id).where(
            T.stage_turns.c.run_id == run_id, T.stage_turns.c.shard == shard)))
    with fenced(engine, run_id) as conn:
        conn.execute(q)


def stage_judgments(engine: Engine, run_id: str, judge_stage: str, judged: Iterable[tuple[JudgmentKey, Judgment]]
                    ) -> int:
    """Write ((turn id, sentence index[, claim index]), judgment) pairs of one judge stage to staging
    (a sentence's claims in one row, `serialize.judgment_rows`); how many judgments."""
    judged = list(judged)
    rows = [{"run_id": run_id, "turn_id": key[0], "sentence_index": key[1], "stage": judge_stage, "judgment": value}
            for key, value in judgment_rows(judged)]
    if rows:
        with fenced(engine, run_id) as conn:
            bulk_insert(conn, T.stage_judgments, rows)
    return len(judged)


def staged_judgments(engine: Engine, run_id: str, judge_stage: str, turn_range: tuple[str, str] | None = None
                     ) -> dict[JudgmentKey, Judgment]:
    """Staged judgments of one stage, keyed (turn, sentence): of the run, or of the turns from
    `turn_range[0]` to `turn_range[1]` (a chunk of `staged_turns`, which is ordered by turn id,
    so the range holds exactly the chunk's turns, compared in the database's own collation)."""
    c = T.stage_judgments.c
    q = _judgments_query(run_id).where(c.stage == judge_stage)
    if turn_range is not None:
        q = q.where(c.turn_id >= turn_range[0], c.turn_id <= turn_range[1])
    with engine.connect() as conn:
        return _keyed_judgments(conn.execute(q))


def deciding_judgments(engine: Engine, run_id: str, turn_ids: Sequence[str]) -> dict[JudgmentKey, Judgment]:
    """The deciding judgment of each sentence of a chunk's turns (given in turn id order): the
    final stage (LLM) over the first; only those turns' (a shard's chunk spans other shards' ids),
    in one query."""
    if not turn_ids:
        return {}
    c = T.stage_judgments.c
    with engine.connect() as conn:
        q = (_judgments_query(run_id)
             .where(c.stage.in_((FIRST, FINAL)), c.turn_id >= turn_ids[0], c.turn_id <= turn_ids[-1],
                    in_parameter(c.turn_id, "turn_ids", conn.dialect))
             .order_by(sa.case((c.stage == FINAL, 1), else_=0)))  # the final stage read last, so it wins
        return _keyed_judgments(conn.execute(q, {"turn_ids": list(turn_ids)}))


def _judgments_query(run_id: str) -> sa.Select[Any]:
    """The run's staged judgments as (turn, sentence, JSON text), for `_keyed_judgments`."""
    c = T.stage_judgments.c
    return sa.select(c.turn_id, c.sentence_index, as_text(c.judgment)).where(c.run_id == run_id)


def _keyed_judgments(rows: Iterable[Any]) -> dict[JudgmentKey, Judgment]:
    """`_judgments_query`'s rows decoded and keyed as the pipeline keys them (a later row wins)."""
    return {key: j for r in rows for key, j in judgments_of_row(r[0], r[1], r[2])}


# The judge's detail in a sentence row (`core.records.sentence_row`), stored as plain JSON.
SENTENCE_DETAIL_COLUMNS = ("llm", "first_stage")


def stage_verdict_rows(engine: Engine, run_id: str, day: dt.date, sentence_rows: list[dict[str, Any]],
                       citation_rows: list[dict[str, Any]], claim_rows: Sequence[dict[str, Any]] = (),
                       link_rows: Sequence[dict[str, Any]] = ()) -> None:
    """One transaction: a chunk's sentence and citation verdict rows (`core.records`), and in a
    claims mode its claim and link rows (`records.claim_rows`), keyed by the run and the day."""
    if not sentence_rows:
        return
    keys = {"run_id": run_id, "day": day}
    sentences = [{**row, **detail} if (detail := {c: jsonable(row[c]) for c in SENTENCE_DETAIL_COLUMNS
                                                  if row.get(c) is not None}) else row
                 for row in sentence_rows]
    with fenced(engine, run_id) as conn:
        bulk_insert(conn, T.stage_sentence_verdicts, sentences, keys)
        bulk_insert(conn, T.stage_claim_verdicts, claim_rows, keys)
        bulk_insert(conn, T.stage_claim_citation_verdicts, link_rows, keys)
        bulk_insert(conn, T.stage_citation_verdicts, citation_rows, keys)


def stage_rows(engine: Engine, table: sa.Table, rows: list[dict[str, Any]], run_id: str, day: dt.date) -> None:
    """Insert rows into a staging table, keyed by the run and the day (nothing when empty)."""
    if rows:
        with fenced(engine, run_id) as conn:
            bulk_insert(conn, table, rows, {"run_id": run_id, "day": day})


def staged_metric_rows(engine: Engine, run_id: str) -> list[dict[str, Any]]:
    """The run's staged `daily_metrics` rows."""
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(T.stage_daily_metrics).where(
            T.stage_daily_metrics.c.run_id == run_id)).mappings()]


def staged_turn_counts(engine: Engine, run_id: str) -> dict[str, int]:
    """Turns read / scored / skipped as staged: what validation checks the metrics against."""
    with engine.connect() as conn:
        skipped = conn.execute(sa.select(sa.func.count()).select_from(T.stage_skipped).where(
            T.stage_skipped.c.run_id == run_id)).scalar_one()
        scored = conn.execute(sa.select(sa.func.count()).select_from(T.stage_turns).where(
            T.stage_turns.c.run_id == run_id)).scalar_one()
    return {"turns_read": scored + skipped, "turns_scored": scored, "turns_skipped": skipped}
