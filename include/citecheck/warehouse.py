"""Warehouse I/O: the engine, the reference source tables, extraction of one day, and the
one-transaction publish of a day's outputs.

The URL comes from `CITECHECK_WAREHOUSE_URL` (inside Airflow the DAG resolves the
`citecheck_warehouse` connection and passes its URL); the embedded default is a local SQLite
file, so the job runs with nothing installed beyond the README setup.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck import tables as T
from citecheck.turns import Skipped

DEFAULT_WAREHOUSE_URL = "sqlite:///citecheck_warehouse.sqlite"
SQL_DIR = Path(__file__).resolve().parents[2] / "sql"


def warehouse_url(url: str | None = None) -> str:
    return url or os.environ.get("CITECHECK_WAREHOUSE_URL") or DEFAULT_WAREHOUSE_URL


def make_engine(url: str | None = None) -> Engine:
    """An engine with sane pooling; SQLite gets a busy timeout so parallel tasks wait, not fail."""
    url = warehouse_url(url)
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 60})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record):  # type: ignore[no-untyped-def]
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True)


def init_warehouse(engine: Engine) -> None:
    """Create every table that does not exist yet (idempotent)."""
    import citecheck.cache  # noqa: F401  (registers the judgment cache table)

    T.metadata.create_all(engine)
    with engine.begin() as conn:
        for statement in _sql_statements("views.sql"):
            conn.exec_driver_sql(statement)


def _sql_statements(name: str) -> list[str]:
    text = (SQL_DIR / name).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def read_sql(name: str) -> str:
    return (SQL_DIR / name).read_text(encoding="utf-8")


# --- loading turns into the reference source tables --------------------------------------

def _parse_ts(value: Any) -> dt.datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, dt.datetime):
        return value
    text = str(value).replace("Z", "+00:00")
    parsed = dt.datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def source_rows(turn: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A SPEC §1 turn dict → one `source_turns` row and its `source_passages` rows.

    Values are stored as given (wrong types included) so the job, not the loader, decides what
    is malformed and records why. Raises ValueError only for what cannot be stored at all.
    """
    turn_id = turn.get("turn_id")
    if not isinstance(turn_id, str) or not turn_id.strip():
        raise ValueError("turn_id is missing or not a string")
    context = turn.get("context")
    if context is not None and not isinstance(context, list):
        raise ValueError("context is not a list")
    try:
        answered_at = _parse_ts(turn.get("answered_at"))
    except ValueError as exc:
        raise ValueError(f"answered_at is not an ISO timestamp: {exc}") from exc

    def text_or_json(v: Any) -> str | None:
        return v if v is None or isinstance(v, str) else json.dumps(v)

    row = {
        "turn_id": turn_id,
        "conversation_id": None if turn.get("conversation_id") is None else str(turn["conversation_id"]),
        "turn_index": turn.get("turn_index") if isinstance(turn.get("turn_index"), int) else None,
        "answered_at": answered_at,
        "question": text_or_json(turn.get("question")),
        "answer": text_or_json(turn.get("answer")),
        "answer_format": text_or_json(turn.get("answer_format")),
        "answer_blocks": turn.get("answer_blocks"),
        "request_documents": turn.get("request_documents"),
        "attributes": turn.get("attributes"),
        "loaded_at": dt.datetime.now(dt.UTC),
    }
    passages = []
    for position, p in enumerate(context or []):
        p = p if isinstance(p, Mapping) else {}
        passages.append({
            "turn_id": turn_id, "position": position,
            "label": text_or_json(p.get("label")), "source": text_or_json(p.get("source")),
            "text": text_or_json(p.get("text")), "document_id": text_or_json(p.get("document_id")),
            "version": text_or_json(p.get("version")),
        })
    return row, passages


def load_turns(engine: Engine, turns: Iterable[Mapping[str, Any]]) -> int:
    """Upsert turns into the source tables (a reloaded turn replaces its earlier version)."""
    n = 0
    batch: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for turn in turns:
        batch.append(source_rows(turn))
        if len(batch) >= 1000:
            n += _write_source(engine, batch)
            batch = []
    if batch:
        n += _write_source(engine, batch)
    return n


def _write_source(engine: Engine, batch: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> int:
    ids = [row["turn_id"] for row, _ in batch]
    with engine.begin() as conn:
        conn.execute(T.source_passages.delete().where(T.source_passages.c.turn_id.in_(ids)))
        conn.execute(T.source_turns.delete().where(T.source_turns.c.turn_id.in_(ids)))
        conn.execute(T.source_turns.insert(), [row for row, _ in batch])
        passages = [p for _, ps in batch for p in ps]
        if passages:
            conn.execute(T.source_passages.insert(), passages)
    return len(batch)


# --- extraction -----------------------------------------------------------------------------

def day_bounds(day: dt.date, timezone: str = "UTC") -> tuple[dt.datetime, dt.datetime]:
    """[start, end) of a metric day in UTC, the day being a date in the configured zone."""
    tz = ZoneInfo(timezone)
    start = dt.datetime.combine(day, dt.time(), tz)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tz)
    return start.astimezone(dt.UTC), end.astimezone(dt.UTC)


def _turn_dict(row: Mapping[str, Any], passages: list[Mapping[str, Any]]) -> dict[str, Any]:
    answered_at = row["answered_at"]
    return {
        "turn_id": row["turn_id"],
        "conversation_id": row["conversation_id"],
        "turn_index": row["turn_index"],
        "answered_at": answered_at.isoformat() if isinstance(answered_at, dt.datetime) else answered_at,
        "question": row["question"],
        "answer": row["answer"],
        "answer_format": row["answer_format"] or "markers",
        "answer_blocks": row["answer_blocks"],
        "request_documents": row["request_documents"],
        "attributes": row["attributes"],
        "context": [
            {k: p[k] for k in ("label", "source", "text", "document_id", "version")} for p in passages
        ],
    }


def extract_day(conn: Connection, day: dt.date, timezone: str = "UTC", chunk: int = 2000
                ) -> Iterator[dict[str, Any]]:
    """The day's turns as SPEC §1 dicts, in (conversation, turn index) order, streamed.

    The selection is `sql/extract_turns.sql`; edit it (or point it at a view) to map another
    schema onto the reference one.
    """
    start, end = day_bounds(day, timezone)
    query = sa.text(read_sql("extract_turns.sql")).columns(
        *[sa.column(c.name, c.type) for c in T.source_turns.columns]
    )
    params = _bounds(conn, start, end)
    result = conn.execute(query, params).mappings()
    while rows := result.fetchmany(chunk):
        ids = [r["turn_id"] for r in rows]
        passages: dict[str, list[Mapping[str, Any]]] = {i: [] for i in ids}
        q = sa.select(T.source_passages).where(T.source_passages.c.turn_id.in_(ids)).order_by(
            T.source_passages.c.turn_id, T.source_passages.c.position)
        for p in conn.execute(q).mappings():
            passages[p["turn_id"]].append(p)
        for r in rows:
            yield _turn_dict(r, passages[r["turn_id"]])


def _bounds(conn: Connection, start: dt.datetime, end: dt.datetime) -> dict[str, Any]:
    if conn.dialect.name == "sqlite":
        return {"start": start.replace(tzinfo=None).isoformat(" "), "end": end.replace(tzinfo=None).isoformat(" ")}
    return {"start": start, "end": end}


def prior_context_labels(conn: Connection, day: dt.date, timezone: str = "UTC"
                         ) -> Iterator[tuple[str, int, str]]:
    """(conversation, turn index, label) of earlier turns, before the day, of the day's
    conversations: stale-label detection across midnight (`sql/prior_context_labels.sql`)."""
    start, end = day_bounds(day, timezone)
    for row in conn.execute(sa.text(read_sql("prior_context_labels.sql")), _bounds(conn, start, end)):
        if row[2] is not None:
            yield str(row[0]), int(row[1] or 0), str(row[2])


# --- publish --------------------------------------------------------------------------------

def publish_day(engine: Engine, day: dt.date, run_id: str) -> dict[str, int]:
    """Replace the day's rows in every output table with this run's staged rows, in ONE
    transaction: readers see the old version or the new one, never a mix."""
    counts: dict[str, int] = {}
    with engine.begin() as conn:
        for name, (final, stage) in T.OUTPUT_TABLES.items():
            conn.execute(final.delete().where(final.c.day == day))
            cols = [c.name for c in final.columns]
            src = sa.select(*[_stage_col(stage, c, run_id, day) for c in cols]).where(stage.c.run_id == run_id)
            conn.execute(final.insert().from_select(cols, src))
            counts[name] = conn.execute(
                sa.select(sa.func.count()).select_from(final).where(final.c.day == day)).scalar_one()
        conn.execute(T.skipped_turns.delete().where(T.skipped_turns.c.day == day))
        run = conn.execute(sa.select(T.runs.c.config_hash, T.runs.c.judge_versions).where(
            T.runs.c.run_id == run_id)).one()
        skipped_cols = ["day", "turn_id", "reason", "run_id", "config_hash", "judge_versions"]
        conn.execute(T.skipped_turns.insert().from_select(skipped_cols, sa.select(
            sa.literal(day, sa.Date), T.stage_skipped.c.turn_id, T.stage_skipped.c.reason,
            sa.literal(run_id), sa.literal(run.config_hash), sa.literal(run.judge_versions),
        ).where(T.stage_skipped.c.run_id == run_id)))
        counts["skipped_turns"] = conn.execute(sa.select(sa.func.count()).select_from(T.skipped_turns).where(
            T.skipped_turns.c.day == day)).scalar_one()
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(status="published"))
    return counts


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


def record_skips(conn: Connection, run_id: str, skipped: Iterable[Skipped]) -> None:
    rows = [{"run_id": run_id, "turn_id": s.turn_id or f"line-{s.line}", "reason": s.reason} for s in skipped]
    if rows:
        conn.execute(T.stage_skipped.insert(), rows)
