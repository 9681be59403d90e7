"""Which turns belong to a day is `extract_turns.sql` alone (issue 35): the day's reader events
and the staleness check read the day through it, so a user who edits the query (or points it at a
view) gets the same day in extract, in the reader metrics and in `stale`."""

from __future__ import annotations

import datetime as dt

from citecheck import job
from citecheck import warehouse as W
from citecheck.core.reader_events import reader_event
from citecheck.warehouse.source import read as source_read
from helpers import orbit_settings, orbit_warehouse_turns

DAY = dt.date(2026, 11, 29)
LEFT_OUT = f"orbit-1@{DAY}"


def _late_event(n: int):
    return [reader_event({"event_id": f"late-{i}", "turn_id": LEFT_OUT, "event": "citation_opened", "label": "S1",
                          "occurred_at": f"{DAY}T23:00:00Z"}) for i in range(n)]


def _query_without_one_turn(monkeypatch):
    """The user's edit: their `extract_turns.sql` leaves one turn out of the day."""
    original = source_read.read_sql

    def edited(name: str, dialect: str | None = None) -> str:
        text = original(name, dialect)
        if name == "extract_turns.sql":
            text = text.replace("WHERE answered_at", f"WHERE turn_id <> '{LEFT_OUT}' AND answered_at")
        return text

    monkeypatch.setattr(source_read, "read_sql", edited)


def test_the_day_of_the_query_is_the_day_of_the_reader_events_and_of_staleness(engine, monkeypatch):
    W.load_turns(engine, orbit_warehouse_turns(DAY.isoformat()))
    job.backfill(engine, [DAY], orbit_settings())
    W.load_reader_events(engine, _late_event(2))
    with engine.connect() as conn:
        turns = W.count_day_turns(conn, DAY)
        assert source_read.day_has_reader_events(conn, DAY)
    (stale,) = job.stale_days(engine, [DAY])
    assert (stale.late_turns, stale.late_events) == (0, 2)

    _query_without_one_turn(monkeypatch)
    with engine.connect() as conn:
        assert W.count_day_turns(conn, DAY) == turns - 1  # extract's day
        assert not source_read.day_has_reader_events(conn, DAY)  # the events are of a turn off the day
        ids = {row[0] for row in conn.execute(source_read.day_turn_ids(conn, DAY))}
    assert LEFT_OUT not in ids and len(ids) == turns - 1
    assert job.stale_days(engine, [DAY]) == []  # the late events are of a turn the query does not count
