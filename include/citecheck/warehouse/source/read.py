"""Reading: one metric day back out of the source tables (its turns in conversation order, the
earlier labels of the same conversations, attribute counts, reader events, passages by label).
The SQL is in `citecheck/sql/` (`extract_turns.sql` and the queries over it, per dialect where
they differ)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.core.formats import NATIVE_FIELDS
from citecheck.core.reader_events import ReaderEvent
from citecheck.core.turns import attribute_text
from citecheck.warehouse import tables as T
from citecheck.warehouse.engine import chunked, in_parameter, read_sql


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
        **{key: row.get(key) for key in NATIVE_FIELDS},  # a user's older view may lack the newer ones
        "attributes": row["attributes"],
        "input_repairs": row.get("input_repairs"),
        "context": [
            {k: p[k] for k in ("label", "source", "text", "document_id", "version")} for p in passages
        ],
    }


def extract_day(conn: Connection, day: dt.date, timezone: str = "UTC", chunk: int = 2000, *,
                shard: int = 0, shards: int = 1) -> Iterator[dict[str, Any]]:
    """The day's turns (of shard `shard` of `shards`; default the whole day) as SPEC §1 dicts, in
    (conversation, turn index) order, streamed.

    The selection is `sql/extract_turns.sql`; edit it (or point it at a view) to map another
    schema onto the reference one.
    """
    for batch in extract_day_chunks(conn, day, timezone, chunk, shard=shard, shards=shards):
        yield from batch


def extract_day_chunks(conn: Connection, day: dt.date, timezone: str = "UTC", chunk: int = 2000, *,
                       shard: int = 0, shards: int = 1, through_load: int | None = None
                       ) -> Iterator[list[dict[str, Any]]]:
    """`extract_day` in lists of at most `chunk` turns, each list with its passages. With
    `through_load` (a run's `source_load_id`), without the turns of load batches committed after
    it: every shard of a run reads the source as it was when the run opened, whenever it reads.

    Streamed for real: a server-side cursor on PostgreSQL (`yield_per`), so memory holds one
    chunk whatever the day's size (psycopg would otherwise fetch the whole day at once).
    """
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} of {shards}: a shard is 0 to shards - 1")
    start, end = day_bounds(day, timezone)
    query = sa.text(read_sql("extract_turns.sql")).columns(
        *[sa.column(c.name, c.type) for c in T.source_turns.columns
          if c.name not in (*T.LANGUAGE_COLUMNS, *T.LEDGER_COLUMNS)]
    )
    params = _bounds(conn, start, end, shard=shard, shards=shards)
    result = conn.execute(query, params, execution_options={"yield_per": chunk}).mappings()
    cols = [T.source_passages.c[k] for k in ("turn_id", "label", "source", "text", "document_id", "version")]
    passages_query = sa.select(*cols).where(in_parameter(T.source_passages.c.turn_id, "ids", conn.dialect)).order_by(
        T.source_passages.c.turn_id, T.source_passages.c.position)
    while rows := result.fetchmany(chunk):
        if through_load is not None:
            later = loaded_after(conn, [r["turn_id"] for r in rows], through_load)
            if not (rows := [r for r in rows if r["turn_id"] not in later]):
                continue
        ids = [r["turn_id"] for r in rows]
        passages: dict[str, list[Mapping[str, Any]]] = {i: [] for i in ids}
        for p in conn.execute(passages_query, {"ids": ids}).mappings():
            passages[p["turn_id"]].append(p)
        yield [_turn_dict(r, passages[r["turn_id"]]) for r in rows]


def loaded_after(conn: Connection, turn_ids: Iterable[str], mark: int) -> set[str]:
    """Which of `turn_ids` a load batch after `mark` wrote (`source_turns.load_id`; rows another
    loader wrote, without one, are never "after")."""
    t = T.source_turns.c
    query = sa.select(t.turn_id).where(in_parameter(t.turn_id, "ids", conn.dialect), t.load_id > mark)
    ids = sorted(set(turn_ids))
    return {i for start in range(0, len(ids), 1000)
            for i in conn.execute(query, {"ids": _padded(ids[start:start + 1000])}).scalars()}


def _bounds(conn: Connection, start: dt.datetime, end: dt.datetime, *, shard: int = 0, shards: int = 1
            ) -> dict[str, Any]:
    """`extract_turns.sql`'s parameters: the day's bounds and the shard (default: the whole day)."""
    if conn.dialect.name == "sqlite":
        return {"start": start.replace(tzinfo=None).isoformat(" "), "end": end.replace(tzinfo=None).isoformat(" "),
                "shard": shard, "shards": shards}
    return {"start": start, "end": end, "shard": shard, "shards": shards}


def day_query(conn: Connection, name: str) -> sa.TextClause:
    """A query of `citecheck/sql/` over the day's turns: its `{day_turns}` placeholder (never in a
    comment) is `extract_turns.sql` as a subquery; the file for the connection's dialect
    (`NAME.postgresql.sql`) when there is one."""
    day_turns = "(" + read_sql("extract_turns.sql") + ")"
    return sa.text(read_sql(name, conn.dialect.name).replace("{day_turns}", day_turns))


def count_day_turns(conn: Connection, day: dt.date, timezone: str = "UTC") -> int:
    """How many turns `extract_turns.sql` selects for the day (`count_day_turns.sql`)."""
    start, end = day_bounds(day, timezone)
    return int(conn.execute(day_query(conn, "count_day_turns.sql"), _bounds(conn, start, end)).scalar_one())


def attribute_value_counts(conn: Connection, day: dt.date, timezone: str = "UTC") -> Iterator[tuple[str, str, int]]:
    """(attribute key, value as the job slices it, answers) of the day's turns, grouped by key
    (`attribute_value_counts.<dialect>.sql`): the database counts (GROUP BY over the JSON
    attributes), the rows stream, so `SliceCap.from_counts` sees each value once with flat memory
    whatever the number of values."""
    start, end = day_bounds(day, timezone)
    query = day_query(conn, "attribute_value_counts.sql")
    result = conn.execute(query, _bounds(conn, start, end), execution_options={"yield_per": 5000})
    for key, value, answers in result:
        text_key, text_value = attribute_text(key, json.loads(value))
        yield text_key, text_value, int(answers)


def prior_context_labels(conn: Connection, day: dt.date, timezone: str = "UTC", *,
                         conversations: Iterable[str]) -> Iterator[tuple[str, int, str]]:
    """(conversation, turn index, label) of earlier turns, before the day, of the given
    conversations: stale-label detection across midnight (`sql/prior_context_labels.sql`).

    The job asks per chunk of the day's turns, for that chunk's conversations, so it never holds
    the labels of the whole day's conversations at once.
    """
    start, _ = day_bounds(day, timezone)
    ids = sorted({str(c) for c in conversations if c is not None})
    if not ids:
        return
    query = sa.text(read_sql("prior_context_labels.sql")).bindparams(sa.bindparam("conversations", expanding=True))
    params = _bounds(conn, start, start)
    for row in conn.execute(query, {"start": params["start"], "conversations": _padded(ids)}):
        if row[2] is not None:
            yield str(row[0]), int(row[1] or 0), str(row[2])


def _padded(ids: list[str]) -> list[str]:
    """The list padded (repeating its last id) to a power of two: an IN list of every length is
    a new statement, and drivers cache statements per connection (SQLite: 128 per connection,
    hundreds of KiB each at 1,000 parameters), so a day of varying chunks would grow memory."""
    size = 16
    while size < len(ids):
        size *= 2
    return ids + [ids[-1]] * (size - len(ids))


def day_turn_ids(conn: Connection, day: dt.date, timezone: str = "UTC") -> sa.Select[Any]:
    """The ids of the day's turns as a subquery: THE day membership, `extract_turns.sql` itself
    (its bounds bound), so whatever it selects (a view, another schema) is the day everywhere:
    extract, the reader events of the day, staleness (`warehouse.freshness`)."""
    start, end = day_bounds(day, timezone)
    day_turns = sa.text(read_sql("extract_turns.sql")).bindparams(**_bounds(conn, start, end)).columns(
        sa.column("turn_id", T.source_turns.c.turn_id.type)).subquery("day_turns")
    return sa.select(day_turns.c.turn_id)


def day_has_reader_events(conn: Connection, day: dt.date, timezone: str = "UTC") -> bool:
    """Whether any reader event belongs to a turn of the day (else its reader metrics are null)."""
    e = T.reader_events.c
    query = sa.select(e.event_id).where(e.turn_id.in_(day_turn_ids(conn, day, timezone))).limit(1)
    return conn.execute(query).first() is not None


def reader_events_of(conn: Connection, turn_ids: Iterable[str]) -> dict[str, list[ReaderEvent]]:
    """turn id → its reader events (by time), for the given turns (the job asks per chunk)."""
    ids = sorted(set(turn_ids))
    out: dict[str, list[ReaderEvent]] = {}
    if not ids:
        return out
    e = T.reader_events.c
    query = sa.select(e.event_id, e.turn_id, e.event, e.occurred_at, e.label, e.sentence_index).where(
        in_parameter(e.turn_id, "ids", conn.dialect)).order_by(e.turn_id, e.occurred_at, e.event_id)
    for start in range(0, len(ids), 1000):
        for row in conn.execute(query, {"ids": _padded(ids[start:start + 1000])}):
            out.setdefault(row.turn_id, []).append(ReaderEvent(*row))
    return out


def passages_by_label(engine: Engine, turn_ids: Iterable[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """turn id → label → its `source_passages` row (label, text, source, document_id, version);
    the first passage wins when a label repeats."""
    ids = sorted(set(turn_ids))
    found: dict[str, dict[str, dict[str, Any]]] = {i: {} for i in ids}
    if not ids:
        return found
    c = T.source_passages.c
    with engine.connect() as conn:
        for start in range(0, len(ids), 500):
            query = (sa.select(c.turn_id, c.label, c.text, c.source, c.document_id, c.version)
                     .where(c.turn_id.in_(ids[start:start + 500])).order_by(c.turn_id, c.position))
            for row in conn.execute(query).mappings():
                if row["label"] is not None:
                    found[row["turn_id"]].setdefault(row["label"], dict(row))
    return found


def stored_turn_ids(engine: Engine, turn_ids: Iterable[str]) -> set[str]:
    """Which of `turn_ids` the source tables hold already (`load-traces` loads a trace's turn once)."""
    found: set[str] = set()
    with engine.connect() as conn:
        for chunk in chunked(sorted(set(turn_ids)), 500):
            found.update(conn.execute(sa.select(T.source_turns.c.turn_id).where(
                T.source_turns.c.turn_id.in_(chunk))).scalars())
    return found


def conversation_turn_times(engine: Engine,
                            conversation_ids: Iterable[str]) -> dict[str, list[tuple[str, dt.datetime]]]:
    """(turn id, answered_at) of the stored turns of each conversation: where a turn loaded from a
    trace falls in its conversation (`turn_index`)."""
    out: dict[str, list[tuple[str, dt.datetime]]] = {}
    t = T.source_turns.c
    with engine.connect() as conn:
        for chunk in chunked(sorted(set(conversation_ids)), 500):
            for conversation, turn_id, at in conn.execute(sa.select(t.conversation_id, t.turn_id, t.answered_at).where(
                    t.conversation_id.in_(chunk))):
                out.setdefault(conversation, []).append((turn_id, at))
    return out
