"""The bad-input corpus of reader events (`tests/bad_input/corpus.py: event_cases`) through
`citecheck load-events` and the daily job, on SQLite and PostgreSQL: every bad line is rejected
at its line number with its reason, nothing around it is lost, orphans are kept and counted."""

from __future__ import annotations

import datetime as dt
import json

import sqlalchemy as sa
from bad_input.corpus import DAY, EVENT_TURN, JUDGE, event_cases, turn, write_jsonl

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import EXIT_SKIPPED, main
from citecheck.job import JobSettings
from citecheck.warehouse import tables as T


def test_every_bad_event_line_is_rejected_with_its_line_and_the_rest_loads(engine, tmp_path, capsys):
    W.load_turns(engine, [turn(EVENT_TURN)])
    cases = event_cases()
    numbers = write_jsonl(cases, tmp_path / "events.jsonl")
    capsys.readouterr()
    assert main(["load-events", "--file", str(tmp_path / "events.jsonl")]) == EXIT_SKIPPED
    out = json.loads(capsys.readouterr().out)
    rejected = {r["line"]: r["reason"] for r in out["rejected"]}
    expected = {n: c for n, c in numbers.items() if c.outcome == "rejected"}
    assert sorted(rejected) == sorted(expected)
    for number, case in expected.items():
        assert case.reason in rejected[number], (case.kind, rejected[number])
    line_of = {c.event_id: n for n, c in sorted(numbers.items(), reverse=True) if c.event_id}
    assert out["duplicates"] == [{"event_id": c.event_id, "reason": f"repeats line {line_of[c.event_id]}"}
                                 for c in cases if c.outcome == "duplicate"]
    assert [(c["line"], c["event_id"], c["fields"], c["kept"]) for c in out["conflicts"]] == [
        (n, c.event_id, [c.reason], f"line {line_of[c.event_id]}")
        for n, c in numbers.items() if c.outcome == "conflict"]
    assert out["orphaned"] == [{"line": n, "event_id": c.event_id, "turn_id": "turn-logged-later"}
                               for n, c in numbers.items() if c.outcome == "orphaned"]
    stored = {c.event_id for c in cases if c.outcome in ("loaded", "orphaned")}
    assert out["loaded"] == len(stored)
    with engine.connect() as conn:
        rows = dict(conn.execute(sa.select(T.reader_events.c.event_id, T.reader_events.c.event)).all())
    assert set(rows) == stored and rows["ev-citation_shown"] == "citation_shown"  # the first version stays

    settings = JobSettings(judge_spec=JUDGE)
    job.run_day(engine, dt.date.fromisoformat(DAY), settings)
    metrics = {r["metric"]: r for r in W.day_metrics(engine, dt.date.fromisoformat(DAY))
               if r["slice_name"] == "all" and r["averaging"] == "micro"}
    # the day's one turn: S1 shown and opened, two reports (one without a label); the orphan counts nowhere
    assert (metrics["citation_open_rate"]["numerator"], metrics["citation_open_rate"]["denominator"]) == (1, 1)
    assert metrics["source_reports_per_1000_answers"]["numerator"] == 2000
    assert metrics["source_reports_per_1000_answers"]["denominator"] == 1
