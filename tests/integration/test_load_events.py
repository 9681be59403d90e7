"""`citecheck load-events` on SQLite and PostgreSQL: what it loads, idempotence by event id,
orphaned events kept and counted, rejected lines with their line numbers and reasons, exit codes."""

from __future__ import annotations

import json

import sqlalchemy as sa

from citecheck import warehouse as W
from citecheck.cli import EXIT_OK, EXIT_SKIPPED, EXIT_USAGE, main
from citecheck.warehouse import tables as T
from helpers import orbit_warehouse_turns

DAY = "2026-11-30"


def _event(n: int, turn: str = f"orbit-1@{DAY}", kind: str = "citation_shown", **extra) -> str:
    return json.dumps({"event_id": f"ev-{n}", "turn_id": turn, "event": kind, "label": "S2", "sentence_index": 0,
                       "occurred_at": f"{DAY}T12:00:{n:02d}Z", **extra})


LINES = [
    _event(1),
    _event(2, kind="citation_opened"),
    "{not json",  # line 3
    json.dumps({"event_id": "ev-x", "turn_id": f"orbit-1@{DAY}", "occurred_at": f"{DAY}T12:00:00Z"}),  # 4: no event
    _event(5, kind="citation_hovered"),  # line 5
    "",  # blank lines are no lines
    _event(1, kind="source_reported"),  # line 7: ev-1 of line 1 with another event type: a conflict
    _event(8, turn="turn-not-loaded-yet", kind="source_reported"),  # line 8: orphan
    json.dumps([1, 2]),  # line 9
    _event(2, kind="citation_opened"),  # line 10: repeats line 2 unchanged
]


def _load(tmp_path, capsys, lines) -> tuple[int, dict]:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    rc = main(["load-events", "--file", str(path)])
    return rc, json.loads(capsys.readouterr().out)


def _stored(engine) -> list[tuple]:
    e = T.reader_events.c
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.select(e.event_id, e.event, e.turn_id, e.loaded_at).order_by(
            e.event_id))]


def test_load_reports_loaded_duplicates_orphans_and_rejected_lines(engine, tmp_path, capsys):
    W.load_turns(engine, orbit_warehouse_turns(DAY))
    rc, out = _load(tmp_path, capsys, LINES)
    assert rc == EXIT_SKIPPED
    assert out["loaded"] == 3
    assert out["duplicates"] == [{"event_id": "ev-2", "reason": "repeats line 2"}]
    assert out["conflicts"] == [{"line": 7, "event_id": "ev-1", "fields": ["event"], "kept": "line 1"}]
    assert out["orphaned"] == [{"line": 8, "event_id": "ev-8", "turn_id": "turn-not-loaded-yet"}]
    rejected = {r["line"]: r["reason"] for r in out["rejected"]}
    assert sorted(rejected) == [3, 4, 5, 9]
    assert rejected[3].startswith("malformed line: invalid JSON")
    assert rejected[4] == "missing field: event"
    assert rejected[5].startswith("unknown event type 'citation_hovered'")
    assert rejected[9] == "malformed line: not a JSON object (list)"
    stored = _stored(engine)
    assert [(i, kind) for i, kind, *_ in stored] == [("ev-1", "citation_shown"), ("ev-2", "citation_opened"),
                                                    ("ev-8", "source_reported")]  # the first ev-1 stays
    assert ("ev-8", "source_reported", "turn-not-loaded-yet") in [r[:3] for r in stored]  # kept, never dropped


def test_a_reload_is_idempotent_by_event_id(engine, tmp_path, capsys):
    W.load_turns(engine, orbit_warehouse_turns(DAY))
    good = [_event(1), _event(2, kind="citation_opened"), _event(3, kind="source_reported")]
    assert _load(tmp_path, capsys, good)[0] == EXIT_OK
    first = _stored(engine)
    rc, out = _load(tmp_path, capsys, good)
    assert rc == EXIT_OK  # nothing skipped: every event is in the warehouse already
    assert out["loaded"] == 0 and out["rejected"] == [] and out["orphaned"] == [] and out["conflicts"] == []
    assert out["duplicates"] == [{"event_id": f"ev-{n}", "reason": "already loaded"} for n in (1, 2, 3)]
    assert _stored(engine) == first  # loaded_at kept: a reload does not make a published day stale


def test_an_unreadable_file_is_unusable_input(engine, tmp_path, capsys):
    assert main(["load-events", "--file", str(tmp_path / "missing.jsonl")]) == EXIT_USAGE
    assert main(["load-events", "--file", str(tmp_path)]) == EXIT_USAGE  # a folder
    assert _stored(engine) == []


def test_an_event_id_reloaded_with_other_content_is_a_conflict_and_the_first_stays(engine, tmp_path, capsys):
    W.load_turns(engine, orbit_warehouse_turns(DAY))
    assert _load(tmp_path, capsys, [_event(1), _event(2)])[0] == EXIT_OK
    first = _stored(engine)
    rc, out = _load(tmp_path, capsys, [_event(1, turn=f"orbit-2@{DAY}"), _event(2, kind="source_reported"),
                                       _event(3)])
    assert rc == EXIT_SKIPPED  # not everything given was stored as given
    assert out["loaded"] == 1 and out["duplicates"] == []
    assert out["conflicts"] == [
        {"line": 1, "event_id": "ev-1", "fields": ["turn_id"], "kept": "the event already loaded"},
        {"line": 2, "event_id": "ev-2", "fields": ["event"], "kept": "the event already loaded"}]
    assert _stored(engine)[:2] == first  # the first versions, untouched


def test_two_concurrent_loads_of_one_file_both_succeed_and_store_every_event_once(engine, tmp_path):
    """Two real `load-events` processes started together on the same file (many batches each)."""
    import os
    import subprocess
    import sys

    W.load_turns(engine, orbit_warehouse_turns(DAY))
    n = 12000
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps({"event_id": f"ev-{i}", "turn_id": f"orbit-1@{DAY}",
                                          "event": "citation_shown", "label": "S2", "sentence_index": 0,
                                          "occurred_at": f"{DAY}T12:00:00Z"}) for i in range(n)) + "\n")
    command = [sys.executable, "-m", "citecheck", "load-events", "--file", str(path)]
    files = [(tmp_path / f"out{k}.json", tmp_path / f"err{k}.txt") for k in range(2)]
    procs = [subprocess.Popen(command, env=dict(os.environ), stdout=out.open("w"), stderr=err.open("w"))
             for out, err in files]
    codes = [p.wait(timeout=600) for p in procs]
    assert codes == [EXIT_OK, EXIT_OK], [err.read_text()[-2000:] for _, err in files]
    reports = [json.loads(out.read_text()) for out, _ in files]
    assert sum(r["loaded"] for r in reports) == n  # each event stored by exactly one of them
    assert sum(len(r["duplicates"]) for r in reports) == n and all(r["conflicts"] == [] for r in reports)
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(T.reader_events)).scalar_one() == n


def test_a_zoneless_event_time_follows_assume_zone(engine, tmp_path, capsys, monkeypatch):
    W.load_turns(engine, orbit_warehouse_turns(DAY))
    lines = [_event(1), _event(2, occurred_at=f"{DAY}T12:00:00")]  # line 2: no zone
    config = tmp_path / "config.toml"
    config.write_text('[day]\nassume_zone = "refuse"\n')
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    rc, out = _load(tmp_path, capsys, lines)
    assert rc == EXIT_SKIPPED and out["loaded"] == 1
    (rejected,) = out["rejected"]
    assert rejected["line"] == 2 and "occurred_at has no time zone" in rejected["reason"]
    assert [r[0] for r in _stored(engine)] == ["ev-1"]

    config.write_text('[day]\nassume_zone = "Europe/Berlin"\n')
    rc, out = _load(tmp_path, capsys, lines)
    assert rc == EXIT_OK and out["loaded"] == 1 and out["rejected"] == []
    with engine.connect() as conn:
        at = conn.execute(sa.select(T.reader_events.c.occurred_at).where(T.reader_events.c.event_id == "ev-2")
                          ).scalar_one()
    assert at.isoformat() == f"{DAY}T11:00:00+00:00"  # 12:00 in Berlin (CET)
