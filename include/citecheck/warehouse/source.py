"""The reference source tables: loading logged turns into them, and reading one day back out
(the day's turns in conversation order, and earlier labels of the same conversations)."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.core.formats import NATIVE_FIELDS
from citecheck.core.formats.common import TurnError, replaced_characters
from citecheck.core.languages import turn_language
from citecheck.core.reader_events import ReaderEvent
from citecheck.core.turns import (
    MAX_ID_CHARS,
    MAX_LABEL_CHARS,
    attribute_text,
    clean_text,
    conversation_id,
    is_zoneless,
    parse_timestamp,
    turn_from_dict,
    turn_index,
)
from citecheck.warehouse import tables as T
from citecheck.warehouse.engine import read_sql

# --- loading turns into the reference source tables --------------------------------------

MAX_JSON_DEPTH = 100  # deeper JSON crashed the PostgreSQL insert (RecursionError at ~980 levels)


def storable(value: Any, key: str = "value", replaced: list[int] | None = None) -> Any:
    """A copy of a JSON value that every warehouse can store: NUL and lone surrogates become
    U+FFFD (`clean_text`; `replaced[0]` counts them when given), NaN and infinities become text
    ("nan", "inf"; PostgreSQL's json rejects them), tuples become lists. Iterative, and
    ValueError past `MAX_JSON_DEPTH` levels."""

    def text(v: str) -> str:
        cleaned = clean_text(v)
        if cleaned is not v and replaced is not None:
            replaced[0] += replaced_characters(v)
        return cleaned

    def leaf(v: Any) -> Any:
        if isinstance(v, str):
            return text(v)
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        return v

    def container(v: Any) -> dict[Any, Any] | list[Any] | None:
        return {} if isinstance(v, Mapping) else [] if isinstance(v, (list, tuple)) else None

    root = container(value)
    if root is None:
        return leaf(value)
    stack: list[tuple[Any, Any, int]] = [(value, root, 1)]
    while stack:
        src, dst, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"{key} is nested deeper than {MAX_JSON_DEPTH} levels")
        for k, v in (src.items() if isinstance(src, Mapping) else enumerate(src)):
            child = container(v)
            if child is None:
                child = leaf(v)
            else:
                stack.append((v, child, depth + 1))
            if isinstance(dst, dict):
                dst[text(k) if isinstance(k, str) else k] = child
            else:
                dst.append(child)
    return root


def _language(turn: Mapping[str, Any]) -> dict[str, str | None]:
    try:
        parsed = turn_from_dict(turn)
    except TurnError:
        return {"language": None, "language_source": None}
    found = turn_language(parsed.attributes, parsed.answer)
    return {"language": found.code, "language_source": found.source}


def _text_column(turn: Mapping[str, Any], key: str, width: int | None = None) -> str | None:
    """A text field as stored: a string or nothing. Another type would read back as text the job
    would then score (an answer of 5 as "5"), so it is refused here with the job's own wording."""
    value = turn.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key} is not a string ({type(value).__name__})")
    if value is not None and width is not None and len(value) > width:
        raise ValueError(f"{key} is longer than {width} characters ({len(value):,})")
    return value


def source_rows(turn: Mapping[str, Any], assume_zone: str = "UTC") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A SPEC §1 turn dict → one `source_turns` row and its `source_passages` rows.

    What a column holds faithfully is stored as given, so the job, not the loader, decides what
    is malformed and records why with the day (answer missing or empty, label missing, labels
    twice with different texts, bad native blocks or attributes). Raises ValueError, with the
    reason, for what a column cannot hold faithfully: no turn id or one longer than its column,
    a text field of another type, a turn_index that is no 32-bit integer, no timestamp (the turn
    would belong to no day and never be read) or one that is not ISO 8601, a markers turn
    without a context list, JSON nested too deeply, a timestamp without a zone when `assume_zone`
    (`[day] assume_zone`) is "refuse".

    The turn's language (SPEC §2.2) is stored with it (`language`, `language_source`), as the job
    reads it: from the turn as `turn_from_dict` builds it (a native format's answer text is its
    normalised text); null for a turn the job will skip as malformed.

    What the load repaired goes with the row (`input_repairs`, counted per day by the job): the
    characters replaced (`replaced_characters`) and, for a timestamp without a zone, the zone it was
    read in (`assumed_zone`).
    """
    if not isinstance(turn, Mapping):
        raise ValueError(f"turn is not a JSON object ({type(turn).__name__})")
    replaced = [0]
    turn = storable(turn, "turn", replaced)
    turn_id = turn.get("turn_id")
    if not isinstance(turn_id, str) or not turn_id.strip():
        raise ValueError("turn_id is missing or not a string")
    if len(turn_id) > MAX_ID_CHARS:
        raise ValueError(f"turn_id is longer than {MAX_ID_CHARS} characters ({len(turn_id):,})")
    answer_format = _text_column(turn, "answer_format", T.source_turns.c.answer_format.type.length)
    context = turn.get("context")
    if context is None and (answer_format or "markers") == "markers":
        raise ValueError("context is missing")
    if context is not None and not isinstance(context, list):
        raise ValueError(f"context is not a list ({type(context).__name__})")
    answered_at = parse_timestamp(turn.get("answered_at"), assume_zone=assume_zone)  # ValueError: not ISO 8601
    repairs = {"replaced_characters": replaced[0]} if replaced[0] else {}
    if is_zoneless(turn.get("answered_at")):
        repairs["assumed_zone"] = assume_zone
    if answered_at is None:
        raise ValueError("answered_at is missing: the turn would belong to no metric day")
    row = {
        "turn_id": turn_id,
        "conversation_id": conversation_id(turn.get("conversation_id")),
        "turn_index": turn_index(turn.get("turn_index")),
        "answered_at": answered_at,
        "question": _text_column(turn, "question"),
        "answer": _text_column(turn, "answer"),
        "answer_format": answer_format,
        **{key: turn.get(key) for key in NATIVE_FIELDS},
        "attributes": turn.get("attributes"),
        "loaded_at": dt.datetime.now(dt.UTC),
        "input_repairs": repairs or None,
        **_language(turn),
    }
    passages = []
    for position, p in enumerate(context or []):
        if not isinstance(p, Mapping):
            raise ValueError(f"context[{position}] is not an object")
        passages.append({
            "turn_id": turn_id, "position": position,
            "label": _passage_text(p, "label", position, MAX_LABEL_CHARS),
            "text": _passage_text(p, "text", position),
            "source": _metadata(p, "source", position, None),
            "document_id": _metadata(p, "document_id", position, T.source_passages.c.document_id.type.length),
            "version": _metadata(p, "version", position, T.source_passages.c.version.type.length),
        })
    return row, passages


def _passage_text(passage: Mapping[str, Any], key: str, position: int, width: int | None = None) -> str | None:
    try:
        return _text_column(passage, key, width)
    except ValueError as exc:
        raise ValueError(f"context[{position}].{exc}") from None


def _metadata(passage: Mapping[str, Any], key: str, position: int, width: int | None) -> str | None:
    """A passage's source / document id / version as text (a number is fine as its digits)."""
    value = passage.get(key)
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value)
    if width is not None and len(text) > width:
        raise ValueError(f"context[{position}].{key} is longer than {width} characters")
    return text


@dataclass
class LoadReport:
    """What one load did: rows written, and every turn id that replaced another version.

    `duplicates`: ids given more than once in this load (the last one is stored).
    `replaced`: ids already in the source table, with the answered_at they had, so a turn that
    moved to another day shows which published day still counts it until that day is rerun.
    """

    loaded: int = 0
    duplicates: list[str] = field(default_factory=list)
    replaced: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"loaded": self.loaded, "duplicates": self.duplicates, "replaced": self.replaced}


def load_turns(engine: Engine, turns: Iterable[Mapping[str, Any]], assume_zone: str = "UTC") -> int:
    """Upsert turns into the source tables (a reloaded turn replaces its earlier version); the
    number of distinct turns written. `load_turns_report` says what was replaced."""
    return load_turns_report(engine, turns, assume_zone=assume_zone).loaded


def load_turns_report(engine: Engine, turns: Iterable[Mapping[str, Any]], batch_size: int = 1000,
                      assume_zone: str = "UTC") -> LoadReport:
    """`load_turns` with its report."""
    return load_source_rows(engine, (source_rows(turn, assume_zone) for turn in turns), batch_size)


def load_source_rows(engine: Engine, rows: Iterable[tuple[dict[str, Any], list[dict[str, Any]]]],
                     batch_size: int = 1000) -> LoadReport:
    """Upsert `source_rows` results. The same id twice in one load: the later one wins (what a
    second load of it would do), where one INSERT of both broke the primary key."""
    report = LoadReport()
    written: set[str] = set()
    batch: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for row, passages in rows:
        turn_id = row["turn_id"]
        if turn_id in batch or turn_id in written:
            report.duplicates.append(turn_id)
            batch.pop(turn_id, None)  # the later version takes the later place
        batch[turn_id] = (row, passages)
        if len(batch) >= batch_size:
            _write_source(engine, list(batch.values()), report, written)
            batch = {}
    if batch:
        _write_source(engine, list(batch.values()), report, written)
    report.loaded = len(written)
    return report


def _write_source(engine: Engine, batch: list[tuple[dict[str, Any], list[dict[str, Any]]]],
                  report: LoadReport | None = None, written: set[str] | None = None) -> int:
    """Replace a batch of distinct turns; note in `report` the ids an earlier load had stored."""
    ids = [row["turn_id"] for row, _ in batch]
    written = written if written is not None else set()
    with engine.begin() as conn:
        if report is not None:
            new_at = {row["turn_id"]: row["answered_at"] for row, _ in batch}
            earlier = conn.execute(sa.select(T.source_turns.c.turn_id, T.source_turns.c.answered_at).where(
                T.source_turns.c.turn_id.in_(ids)))
            report.replaced.extend(
                {"turn_id": turn_id, "previous_answered_at": _iso(at), "answered_at": _iso(new_at[turn_id])}
                for turn_id, at in earlier if turn_id not in written)
        conn.execute(T.source_passages.delete().where(T.source_passages.c.turn_id.in_(ids)))
        conn.execute(T.source_turns.delete().where(T.source_turns.c.turn_id.in_(ids)))
        conn.execute(T.source_turns.insert(), [row for row, _ in batch])
        passages = [p for _, ps in batch for p in ps]
        if passages:
            conn.execute(T.source_passages.insert(), passages)
    written.update(ids)
    return len(batch)


def _iso(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, dt.datetime) else value


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
        **{key: row.get(key) for key in NATIVE_FIELDS},  # a user's older view may lack the newer ones
        "attributes": row["attributes"],
        "input_repairs": row.get("input_repairs"),
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
    for batch in extract_day_chunks(conn, day, timezone, chunk):
        yield from batch


def extract_day_chunks(conn: Connection, day: dt.date, timezone: str = "UTC", chunk: int = 2000
                       ) -> Iterator[list[dict[str, Any]]]:
    """`extract_day` in lists of at most `chunk` turns, each list with its passages.

    Streamed for real: a server-side cursor on PostgreSQL (`yield_per`), so memory holds one
    chunk whatever the day's size (psycopg would otherwise fetch the whole day at once).
    """
    start, end = day_bounds(day, timezone)
    query = sa.text(read_sql("extract_turns.sql")).columns(
        *[sa.column(c.name, c.type) for c in T.source_turns.columns if c.name not in T.LANGUAGE_COLUMNS]
    )
    params = _bounds(conn, start, end)
    result = conn.execute(query, params, execution_options={"yield_per": chunk}).mappings()
    cols = [T.source_passages.c[k] for k in ("turn_id", "label", "source", "text", "document_id", "version")]
    while rows := result.fetchmany(chunk):
        ids = [r["turn_id"] for r in rows]
        passages: dict[str, list[Mapping[str, Any]]] = {i: [] for i in ids}
        q = sa.select(*cols).where(T.source_passages.c.turn_id.in_(ids)).order_by(
            T.source_passages.c.turn_id, T.source_passages.c.position)
        for p in conn.execute(q).mappings():
            passages[p["turn_id"]].append(p)
        yield [_turn_dict(r, passages[r["turn_id"]]) for r in rows]


def _bounds(conn: Connection, start: dt.datetime, end: dt.datetime) -> dict[str, Any]:
    if conn.dialect.name == "sqlite":
        return {"start": start.replace(tzinfo=None).isoformat(" "), "end": end.replace(tzinfo=None).isoformat(" ")}
    return {"start": start, "end": end}


def count_day_turns(conn: Connection, day: dt.date, timezone: str = "UTC") -> int:
    """How many turns `extract_turns.sql` selects for the day."""
    start, end = day_bounds(day, timezone)
    query = sa.text("SELECT count(*) FROM (" + read_sql("extract_turns.sql") + ") AS day_turns")
    return int(conn.execute(query, _bounds(conn, start, end)).scalar_one())


def attribute_value_counts(conn: Connection, day: dt.date, timezone: str = "UTC") -> Iterator[tuple[str, str, int]]:
    """(attribute key, value as the job slices it, answers) of the day's turns (`extract_turns.sql`),
    grouped by key: the database counts (GROUP BY over the JSON attributes), the rows stream, so
    `SliceCap.from_counts` sees each value once with flat memory whatever the number of values."""
    start, end = day_bounds(day, timezone)
    day_turns = "(" + read_sql("extract_turns.sql") + ") AS day_turns"
    if conn.dialect.name == "sqlite":  # the JSON text of each value: decoded the way the turn's attributes are
        query = (f"SELECT e.key, CASE WHEN e.type IN ('true', 'false', 'null') THEN e.type "
                 f"WHEN e.type IN ('object', 'array') THEN e.value ELSE json_quote(e.value) END AS v, count(*) "
                 f"FROM {day_turns}, json_each(day_turns.attributes) AS e "
                 f"WHERE json_type(day_turns.attributes) = 'object' GROUP BY e.key, v ORDER BY e.key")
    else:
        query = (f"SELECT e.key, e.value::text AS v, count(*) FROM {day_turns} "
                 f"CROSS JOIN LATERAL json_each(CASE WHEN json_typeof(day_turns.attributes::json) = 'object' "
                 f"THEN day_turns.attributes::json END) AS e GROUP BY e.key, v ORDER BY e.key")
    result = conn.execute(sa.text(query), _bounds(conn, start, end), execution_options={"yield_per": 5000})
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


# --- reader events (SPEC §1) ------------------------------------------------------------------

@dataclass
class EventLoadReport:
    """What one load of reader events did. `duplicates`: (event id, "already loaded" or the
    index of the earlier event of this load) for events not stored again (the first version
    stays, and with it its `loaded_at`); `orphaned`: (event id, turn id) of stored events whose
    turn is not in the warehouse (kept: a turn loaded later picks them up)."""

    loaded: int = 0
    duplicates: list[tuple[str, str | int]] = field(default_factory=list)
    orphaned: list[tuple[str, str]] = field(default_factory=list)


def load_reader_events(engine: Engine, events: Iterable[ReaderEvent], batch_size: int = 1000) -> EventLoadReport:
    """Insert reader events, idempotent by event id: an event id already stored, or given twice
    in this load, is a duplicate and the first version stays."""
    report = EventLoadReport()
    seen: dict[str, int] = {}
    batch: list[ReaderEvent] = []
    for position, event in enumerate(events):
        if event.event_id in seen:
            report.duplicates.append((event.event_id, seen[event.event_id]))
            continue
        seen[event.event_id] = position
        batch.append(event)
        if len(batch) >= batch_size:
            _write_events(engine, batch, report)
            batch = []
    if batch:
        _write_events(engine, batch, report)
    return report


def _write_events(engine: Engine, batch: list[ReaderEvent], report: EventLoadReport) -> None:
    e, t = T.reader_events.c, T.source_turns.c
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as conn:
        ids = [ev.event_id for ev in batch]
        stored = set(conn.execute(sa.select(e.event_id).where(e.event_id.in_(ids))).scalars())
        fresh = [ev for ev in batch if ev.event_id not in stored]
        report.duplicates.extend((i, "already loaded") for i in ids if i in stored)
        if not fresh:
            return
        conn.execute(T.reader_events.insert(), [{**ev.as_row(), "loaded_at": now} for ev in fresh])
        turn_ids = sorted({ev.turn_id for ev in fresh})
        known = set(conn.execute(sa.select(t.turn_id).where(t.turn_id.in_(turn_ids))).scalars())
        report.orphaned.extend((ev.event_id, ev.turn_id) for ev in fresh if ev.turn_id not in known)
        report.loaded += len(fresh)


def _day_turn_ids(day: dt.date, timezone: str) -> sa.Select[Any]:
    start, end = day_bounds(day, timezone)
    t = T.source_turns.c
    return sa.select(t.turn_id).where(t.answered_at >= start, t.answered_at < end)


def day_has_reader_events(conn: Connection, day: dt.date, timezone: str = "UTC") -> bool:
    """Whether any reader event belongs to a turn of the day (else its reader metrics are null)."""
    e = T.reader_events.c
    query = sa.select(e.event_id).where(e.turn_id.in_(_day_turn_ids(day, timezone))).limit(1)
    return conn.execute(query).first() is not None


def reader_events_of(conn: Connection, turn_ids: Iterable[str]) -> dict[str, list[ReaderEvent]]:
    """turn id → its reader events (by time), for the given turns (the job asks per chunk)."""
    ids = sorted(set(turn_ids))
    out: dict[str, list[ReaderEvent]] = {}
    if not ids:
        return out
    e = T.reader_events.c
    query = sa.select(e.event_id, e.turn_id, e.event, e.occurred_at, e.label, e.sentence_index).where(
        e.turn_id.in_(sa.bindparam("ids", expanding=True))).order_by(e.turn_id, e.occurred_at, e.event_id)
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
