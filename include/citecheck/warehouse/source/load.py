"""Loading: validated turns (`source.rows`) and reader events into the source tables, with a
report of what each load replaced, repeated, contradicted or could not attach. Every batch is one
transaction and one entry of the `source_loads` ledger (`open_batch`): its id, taken in commit
order, is what tells a published day that input arrived after its run began reading."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.core.reader_events import ReaderEvent
from citecheck.warehouse import tables as T
from citecheck.warehouse.engine import bulk_insert, insert_ignoring_duplicates
from citecheck.warehouse.source.rows import source_rows


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
    """Replace a batch of distinct turns as one load batch (`open_batch`); note in `report` the ids
    an earlier load had stored, and record every turn it gives another answered_at in
    `source_turn_moves` (the day it left is stale until rerun)."""
    ids = [row["turn_id"] for row, _ in batch]
    written = written if written is not None else set()
    with engine.begin() as conn:
        load_id, loaded_at = open_batch(conn, "turns", len(batch))
        new_at = {row["turn_id"]: row["answered_at"] for row, _ in batch}
        earlier = list(conn.execute(sa.select(T.source_turns.c.turn_id, T.source_turns.c.answered_at).where(
            T.source_turns.c.turn_id.in_(ids))))
        if report is not None:
            report.replaced.extend(
                {"turn_id": turn_id, "previous_answered_at": _iso(at), "answered_at": _iso(new_at[turn_id])}
                for turn_id, at in earlier if turn_id not in written)
        moves = [{"turn_id": turn_id, "load_id": load_id, "left_answered_at": at, "answered_at": new_at[turn_id]}
                 for turn_id, at in earlier if at is not None and at != new_at[turn_id]]
        conn.execute(T.source_passages.delete().where(T.source_passages.c.turn_id.in_(ids)))
        conn.execute(T.source_turns.delete().where(T.source_turns.c.turn_id.in_(ids)))
        bulk_insert(conn, T.source_turns, [{**row, "load_id": load_id, "loaded_at": loaded_at} for row, _ in batch])
        bulk_insert(conn, T.source_passages, [p for _, ps in batch for p in ps])
        if moves:
            conn.execute(T.source_turn_moves.insert(), moves)
    written.update(ids)
    return len(batch)


def open_batch(conn: Connection, kind: str, rows: int) -> tuple[int, dt.datetime]:
    """Open one load batch in the transaction that writes its rows: the next `source_loads` id and
    the database's clock. Batches are serialised (PostgreSQL: an exclusive lock on `source_loads`
    held to the commit; SQLite has one writer at a time), so ids commit in increasing order: a run
    that records the highest committed id when it begins reading has seen every row of a lower id.
    Concurrent loads wait for each other's batch instead of racing on the same keys."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(
            f"LOCK TABLE {conn.dialect.identifier_preparer.format_table(T.source_loads)} IN EXCLUSIVE MODE")
    load_id, loaded_at = conn.execute(T.source_loads.insert().values(kind=kind, row_count=rows).returning(
        T.source_loads.c.load_id, T.source_loads.c.loaded_at)).one()
    return load_id, loaded_at


def _iso(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, dt.datetime) else value


@dataclass(frozen=True)
class EventConflict:
    """An event id given again with other content: the first version stays. `position`: the
    conflicting event in this load; `earlier`: the position of the first version in this load, or
    None when it was stored by an earlier load; `fields`: the fields that differ."""

    event_id: str
    position: int
    earlier: int | None
    fields: tuple[str, ...]


@dataclass
class EventLoadReport:
    """What one load of reader events did. `duplicates`: (event id, "already loaded" or the
    index of the earlier event of this load) for events given again unchanged (the first version
    stays, and with it its load batch); `conflicts`: events given again with other content
    (`EventConflict`; the first version stays); `orphaned`: (event id, turn id) of stored events
    whose turn is not in the warehouse (kept: a turn loaded later picks them up)."""

    loaded: int = 0
    duplicates: list[tuple[str, str | int]] = field(default_factory=list)
    conflicts: list[EventConflict] = field(default_factory=list)
    orphaned: list[tuple[str, str]] = field(default_factory=list)


def load_reader_events(engine: Engine, events: Iterable[ReaderEvent], batch_size: int = 1000) -> EventLoadReport:
    """Insert reader events, idempotent by event id: an event id already stored, or given twice
    in this load, is a duplicate when its content is the same and a conflict when it is not; the
    first version stays either way. Safe beside a concurrent load of the same events (an insert
    that finds the id stored meanwhile is a duplicate, never an error)."""
    report = EventLoadReport()
    first: dict[str, tuple[int, ReaderEvent]] = {}
    batch: list[tuple[int, ReaderEvent]] = []
    for position, event in enumerate(events):
        if event.event_id in first:
            earlier, kept = first[event.event_id]
            differ = _differing_fields(kept.as_row(), event.as_row())
            if differ:
                report.conflicts.append(EventConflict(event.event_id, position, earlier, differ))
            else:
                report.duplicates.append((event.event_id, earlier))
            continue
        first[event.event_id] = (position, event)
        batch.append((position, event))
        if len(batch) >= batch_size:
            _write_events(engine, batch, report)
            batch = []
    if batch:
        _write_events(engine, batch, report)
    return report


def _differing_fields(stored: Mapping[str, Any], given: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(key for key in given if stored.get(key) != given[key])


def _write_events(engine: Engine, batch: list[tuple[int, ReaderEvent]], report: EventLoadReport) -> None:
    e, t = T.reader_events.c, T.source_turns.c
    with engine.begin() as conn:
        load_id, loaded_at = open_batch(conn, "events", len(batch))
        insert = insert_ignoring_duplicates(T.reader_events, conn.dialect.name).returning(e.event_id)
        inserted = set(conn.execute(insert, [{**ev.as_row(), "load_id": load_id, "loaded_at": loaded_at}
                                             for _, ev in batch]).scalars())
        conn.execute(T.source_loads.update().where(T.source_loads.c.load_id == load_id).values(
            row_count=len(inserted)))
        known = [(position, ev) for position, ev in batch if ev.event_id not in inserted]
        if known:
            columns = [e[key] for key in known[0][1].as_row()]
            stored = {row.event_id: dict(row._mapping) for row in conn.execute(
                sa.select(*columns).where(e.event_id.in_([ev.event_id for _, ev in known])))}
            for position, ev in known:
                differ = _differing_fields(stored[ev.event_id], ev.as_row())
                if differ:
                    report.conflicts.append(EventConflict(ev.event_id, position, None, differ))
                else:
                    report.duplicates.append((ev.event_id, "already loaded"))
        fresh = [ev for _, ev in batch if ev.event_id in inserted]
        if not fresh:
            return
        turn_ids = sorted({ev.turn_id for ev in fresh})
        found = set(conn.execute(sa.select(t.turn_id).where(t.turn_id.in_(turn_ids))).scalars())
        report.orphaned.extend((ev.event_id, ev.turn_id) for ev in fresh if ev.turn_id not in found)
        report.loaded += len(fresh)
