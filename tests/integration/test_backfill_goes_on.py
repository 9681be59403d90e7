"""A backfill goes on past a day it cannot run (issue 37 items 2 and 6), on SQLite and PostgreSQL:
a day another run holds is skipped at once with `--lock-wait 0` and listed, a day whose run fails
is listed with its error, and every later day is still published; the exit code says the worst."""

from __future__ import annotations

import datetime as dt
import json

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import EXIT_DAY_LOCKED, EXIT_INTERNAL_ERROR, main
from citecheck.warehouse import locks
from helpers import load_fixture, orbit_settings, orbit_warehouse_turns

D1, D2, D3 = dt.date(2026, 11, 28), dt.date(2026, 11, 29), dt.date(2026, 11, 30)


def _load(engine, days):
    for day in days:
        W.load_turns(engine, orbit_warehouse_turns(day.isoformat()))


def _cli_env(tmp_path, monkeypatch):
    data = load_fixture("orbit_labs.json")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(data["judge"]))
    config = tmp_path / "config.toml"
    config.write_text(f'[check_worthiness]\nrefusals = [{json.dumps(data["refusal_text"])}]\n')
    monkeypatch.setenv("CITECHECK_JUDGE", str(judge))
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))


def test_backfill_skips_a_locked_day_lists_it_and_goes_on(engine, tmp_path, monkeypatch, capsys):
    _cli_env(tmp_path, monkeypatch)
    _load(engine, [D1, D2, D3])
    assert locks.try_acquire(engine, D2, "someone-else") is None
    code = main(["backfill", "--from", str(D1), "--to", str(D3), "--lock-wait", "0"])
    out = capsys.readouterr().out
    assert code == EXIT_DAY_LOCKED
    assert f"{D2}  locked, not run: day {D2} is locked by run someone-else" in out
    assert f"locked by another run, not run: {D2}" in out
    assert "2 published" in out and "1 locked (not run)" in out
    assert [W.published_run_id(engine, d) is not None for d in (D1, D2, D3)] == [True, False, True]


def test_backfill_goes_on_after_a_day_fails_and_says_which(engine, tmp_path, monkeypatch, capsys):
    _load(engine, [D1, D2, D3])
    real = job.run_day

    def failing_on_d1(engine_, day, settings, *args, **kwargs):
        if day == D1:
            raise RuntimeError("a bug met by this day")
        return real(engine_, day, settings, *args, **kwargs)

    monkeypatch.setattr(job, "run_day", failing_on_d1)
    seen = []
    report = job.backfill(engine, [D1, D2, D3], orbit_settings(), on_day=lambda o: seen.append(o.line()))
    assert report.failed == [D1.isoformat()] and report.published == [D2.isoformat(), D3.isoformat()]
    assert seen[0] == f"{D1}  failed, nothing of it published unless its publish committed: " \
                      "RuntimeError: a bug met by this day"
    _cli_env(tmp_path, monkeypatch)
    code = main(["backfill", "--from", str(D1), "--to", str(D3), "--force"])
    out = capsys.readouterr().out
    assert code == EXIT_INTERNAL_ERROR
    assert f"failed: {D1}" in out and "2 published" in out

