"""Loading: validated turns (`source.rows`) and reader events into the source tables, with a
report of what each load replaced, repeated or could not attach."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck.core.reader_events import ReaderEvent
from citecheck.warehouse import tables as T
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
