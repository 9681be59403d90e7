"""Storage of re-cite suggestions: staged with the run (`stage_recite_suggestions`), published with
the day (`recite_suggestions`, one of `tables.OUTPUT_TABLES`), read back per day."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.warehouse import tables as T

SUGGESTION_COLUMNS = ("day", "run_id", "turn_id", "sentence_index", "kind", "sentence", "cited_labels",
                      "suggested_labels", "source", "document_id", "version", "judge", "score", "quote",
                      "auto_apply", "caution")


def clear_staged_suggestions(conn: Connection, run_id: str) -> None:
    """Drop what an earlier attempt of the run staged (steps are idempotent)."""
    conn.execute(T.stage_recite_suggestions.delete().where(T.stage_recite_suggestions.c.run_id == run_id))


def stage_suggestions(conn: Connection, run_id: str, day: dt.date, rows: Iterable[Mapping[str, Any]]) -> int:
    """Stage suggestion rows (`citecheck.suggestions.build_suggestions` output) for the run."""
    staged = [{**row, "run_id": run_id, "day": day} for row in rows]
    if staged:
        conn.execute(T.stage_recite_suggestions.insert(), staged)
    return len(staged)


def suggestions_for(engine: Engine, day: dt.date) -> list[dict[str, Any]]:
    """The published suggestions of a day, by turn and sentence; `day` as an ISO date."""
    s = T.recite_suggestions.c
    query = sa.select(*[s[c] for c in SUGGESTION_COLUMNS]).where(s.day == day).order_by(s.turn_id, s.sentence_index)
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
    for row in rows:
        row["day"] = row["day"].isoformat()
        row["auto_apply"] = bool(row["auto_apply"])
    return rows
