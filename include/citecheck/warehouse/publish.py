"""Publishing a day: its staged rows replace the published day in one transaction; reads of
what is published."""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.warehouse import locks
from citecheck.warehouse import tables as T

# --- publish --------------------------------------------------------------------------------

def publish_day(engine: Engine, day: dt.date, run_id: str) -> dict[str, int]:
    """Replace the day's rows in every output table with this run's staged rows, in ONE
    transaction: readers see the old version or the new one, never a mix."""
    with engine.begin() as conn:
        locks.assert_held(conn, day, run_id)  # a run that lost its day publishes nothing
        for final, stage in T.OUTPUT_TABLES.values():
            conn.execute(final.delete().where(final.c.day == day))
            cols = [c.name for c in final.columns]
            src = sa.select(*[_stage_col(stage, c, run_id, day) for c in cols]).where(stage.c.run_id == run_id)
            conn.execute(final.insert().from_select(cols, src))
        conn.execute(T.skipped_turns.delete().where(T.skipped_turns.c.day == day))
        run = conn.execute(sa.select(T.runs.c.config_hash, T.runs.c.judge_versions).where(
            T.runs.c.run_id == run_id)).one()
        skipped_cols = ["day", "turn_id", "reason", "run_id", "config_hash", "judge_versions"]
        conn.execute(T.skipped_turns.insert().from_select(skipped_cols, sa.select(
            sa.literal(day, sa.Date), T.stage_skipped.c.turn_id, T.stage_skipped.c.reason,
            sa.literal(run_id), sa.literal(run.config_hash), sa.literal(run.judge_versions),
        ).where(T.stage_skipped.c.run_id == run_id)))
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(status="published",
                                                                               completed_steps=[]))
        return published_row_counts(conn, day)


def published_row_counts(conn: Connection, day: dt.date) -> dict[str, int]:
    """Rows of the day per published table (what a publish reports, and the Asset's metadata)."""
    tables = {name: final for name, (final, _stage) in T.OUTPUT_TABLES.items()} | {"skipped_turns": T.skipped_turns}
    return {name: conn.execute(sa.select(sa.func.count()).select_from(t).where(t.c.day == day)).scalar_one()
            for name, t in tables.items()}


def _stage_col(stage: sa.Table, name: str, run_id: str, day: dt.date) -> Any:
    if name in stage.c:
        return stage.c[name]
    if name in ("config_hash", "judge_versions"):
        return sa.select(T.runs.c[name]).where(T.runs.c.run_id == run_id).scalar_subquery()
    raise KeyError(name)


def clean_staging(engine: Engine, run_id: str) -> None:
    with engine.begin() as conn:
        for table in T.STAGING_TABLES:
            conn.execute(table.delete().where(table.c.run_id == run_id))


def published_run_id(engine: Engine, day: dt.date) -> str | None:
    """The run whose rows the day is published with (None when it is not published)."""
    with engine.connect() as conn:
        return conn.execute(sa.select(T.daily_metrics.c.run_id).where(T.daily_metrics.c.day == day).limit(1)).scalar()


def published_config_hash(engine: Engine, day: dt.date) -> str | None:
    """The run configuration hash the day is published with (None when it is not published)."""
    with engine.connect() as conn:
        return conn.execute(sa.select(T.daily_metrics.c.config_hash).where(T.daily_metrics.c.day == day).limit(1)
                            ).scalar()


SUGGESTION_COLUMNS = ("day", "run_id", "turn_id", "sentence_index", "kind", "sentence", "cited_labels",
                      "suggested_labels", "source", "document_id", "version", "judge", "score", "quote",
                      "auto_apply", "caution")


def day_suggestions(engine: Engine, day: dt.date) -> list[dict[str, Any]]:
    """The day's published re-cite suggestions, by turn and sentence; `day` as an ISO date."""
    s = T.recite_suggestions.c
    query = sa.select(*[s[c] for c in SUGGESTION_COLUMNS]).where(s.day == day).order_by(s.turn_id, s.sentence_index)
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
    for row in rows:
        row["day"] = row["day"].isoformat()
        row["auto_apply"] = bool(row["auto_apply"])
    return rows


def day_metrics(engine: Engine, day: dt.date) -> list[dict[str, Any]]:
    """The day's published metric rows, sorted by slice, metric and averaging."""
    cols = [T.daily_metrics.c[c] for c in ("metric", "averaging", "slice_name", "slice_value", "numerator",
                                           "denominator", "value", "answers", "sentences", "ci_low", "ci_high",
                                           "run_id", "config_hash")]
    with engine.connect() as conn:
        rows = conn.execute(sa.select(*cols).where(T.daily_metrics.c.day == day).order_by(
            T.daily_metrics.c.slice_name, T.daily_metrics.c.slice_value, T.daily_metrics.c.metric,
            T.daily_metrics.c.averaging)).mappings()
        return [dict(r) for r in rows]
