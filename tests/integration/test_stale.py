"""Late data restated, on SQLite and PostgreSQL: a published day whose turns or reader events were
loaded after its published run began is stale (`citecheck stale`), and `backfill` republishes
stale days and days of another configuration, saying for each day why it ran or was skipped."""

from __future__ import annotations

import datetime as dt
import json

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import main
from citecheck.core.reader_events import reader_event
from helpers import orbit_settings, orbit_warehouse_turns

D1, D2 = dt.date(2026, 11, 29), dt.date(2026, 11, 30)


def _events(day: dt.date, n: int, prefix: str = "late"):
    return [reader_event({"event_id": f"{prefix}-{day}-{i}", "turn_id": f"orbit-1@{day}", "event": "source_reported",
                          "label": "S2", "sentence_index": 2, "occurred_at": f"{day}T23:00:00Z"}) for i in range(n)]


def _publish(engine, days):
    for day in days:
        W.load_turns(engine, orbit_warehouse_turns(day.isoformat()))
    return job.backfill(engine, days, orbit_settings())


def _overall(engine, day, metric):
    (row,) = [r for r in W.day_metrics(engine, day) if r["metric"] == metric and r["slice_name"] == "all"
              and r["averaging"] == "micro"]
    return row


def test_late_events_and_late_turns_make_a_day_stale_and_backfill_restates_it(engine):
    report = _publish(engine, [D1, D2])
    assert report.published == [D1.isoformat(), D2.isoformat()]
    assert report.reasons == {D1.isoformat(): "not published yet", D2.isoformat(): "not published yet"}
    assert job.stale_days(engine, [D1, D2]) == []
    assert _overall(engine, D2, "source_reports_per_1000_answers")["value"] is None  # no event logged yet

    W.load_reader_events(engine, _events(D2, 3))
    (stale,) = job.stale_days(engine, [D1, D2])
    assert (stale.day, stale.late_turns, stale.late_events) == (D2, 0, 3)

    report = job.backfill(engine, [D1, D2], orbit_settings())
    assert report.published == [D2.isoformat()] and report.up_to_date == [D1.isoformat()]
    assert report.reasons[D2.isoformat()].startswith("stale: 0 turn(s) and 3 reader event(s) loaded after run ")
    assert report.reasons[D1.isoformat()].startswith("up to date: published by run ")
    assert job.stale_days(engine, [D1, D2]) == []
    reports = _overall(engine, D2, "source_reports_per_1000_answers")
    assert (reports["numerator"], reports["denominator"]) == (3000, 3)  # 3 reports, 3 answers (the bad one skipped)
    assert _overall(engine, D1, "source_reports_per_1000_answers")["value"] is None  # D1 logged none

    late_turn = dict(orbit_warehouse_turns(D1.isoformat())[0], turn_id="late-turn", conversation_id="late-conv")
    W.load_turns(engine, [late_turn])
    assert [(d.day, d.late_turns, d.late_events) for d in job.stale_days(engine, [D1, D2])] == [(D1, 1, 0)]


def test_backfill_reruns_a_day_of_another_configuration_and_force_reruns_all(engine):
    _publish(engine, [D1])
    other = orbit_settings(nli_share=0.5)
    report = job.backfill(engine, [D1], other)
    assert report.published == [D1.isoformat()]
    assert report.reasons[D1.isoformat()].startswith(f"published with config {orbit_settings().run_config_hash}")
    assert job.backfill(engine, [D1], other, force=True).reasons == {D1.isoformat(): "forced"}


def test_an_orphaned_event_makes_its_day_stale_once_its_turn_arrives(engine):
    _publish(engine, [D1])
    W.load_reader_events(engine, [reader_event({"event_id": "o1", "turn_id": "late-turn", "event": "citation_shown",
                                                "label": "S1", "occurred_at": f"{D1}T12:00:00Z"})])
    assert job.stale_days(engine, [D1]) == []  # its turn is on no day yet
    W.load_turns(engine, [dict(orbit_warehouse_turns(D1.isoformat())[0], turn_id="late-turn",
                               conversation_id="late-conv")])
    assert [(d.late_turns, d.late_events) for d in job.stale_days(engine, [D1])] == [(1, 1)]


def test_the_stale_and_backfill_commands_say_why(engine, tmp_path, capsys, monkeypatch):
    judge = tmp_path / "judge.json"
    from helpers import load_fixture

    data = load_fixture("orbit_labs.json")
    judge.write_text(json.dumps(data["judge"]))
    config = tmp_path / "config.toml"
    config.write_text(f'[check_worthiness]\nrefusals = [{json.dumps(data["refusal_text"])}]\n')
    monkeypatch.setenv("CITECHECK_JUDGE", str(judge))
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    for day in (D1, D2):
        W.load_turns(engine, orbit_warehouse_turns(day.isoformat()))
    assert main(["backfill", "--from", str(D1), "--to", str(D2)]) == 0
    W.load_reader_events(engine, _events(D1, 2))
    capsys.readouterr()
    assert main(["stale", "--from", str(D1), "--to", str(D2), "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert (listed["day"], listed["late_turns"], listed["late_events"], listed["stale"]) == (str(D1), 0, 2, True)
    assert main(["stale", "--from", str(D1), "--to", str(D2)]) == 0
    text = capsys.readouterr().out
    assert f"{D1}  stale: 0 turn(s) and 2 reader event(s) loaded after run" in text and "1 stale day(s)" in text
    assert main(["backfill", "--from", str(D1), "--to", str(D2)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{D1}  published by run ")
    assert "ran because: stale: 0 turn(s) and 2 reader event(s)" in out[0]
    assert out[1].startswith(f"{D2}  skipped: up to date")
    assert out[2] == (f"backfill {D1}..{D2}: 1 published, 1 already up to date, 0 failed validation, "
                      "0 locked (not run), 0 failed")
    assert main(["stale", "--from", str(D2), "--to", str(D1)]) == 2
