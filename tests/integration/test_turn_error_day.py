"""A day goes on past one turn that breaks the checks (issue 37 item 2), on SQLite and PostgreSQL:
that turn is skipped with the error as its reason, counted in the run and listed in the report's
"what could not be checked" section; the day's other turns are published."""

from __future__ import annotations

import datetime as dt

from citecheck import job
from citecheck import warehouse as W
from citecheck.core import pipeline
from citecheck.warehouse import read_model
from helpers import orbit_settings, orbit_warehouse_turns

DAY = dt.date(2026, 11, 30)


def test_a_turn_that_breaks_the_checks_is_skipped_and_reported(engine, monkeypatch):
    turns = [t for t in orbit_warehouse_turns(DAY.isoformat()) if t.get("answer")]
    broken = turns[0]["turn_id"]
    W.load_turns(engine, turns)
    real = pipeline.structure_turn

    def breaks_on_one(turn, config, history):
        if turn.turn_id == broken:
            raise ValueError("Unknown language(s): 'vo'")
        return real(turn, config, history)

    monkeypatch.setattr(pipeline, "structure_turn", breaks_on_one)
    result = job.run_day(engine, DAY, orbit_settings())
    assert result["run_id"] == read_model.published_run_id(engine, DAY)
    run = read_model.published_run(engine, DAY)
    assert run["turns_skipped"] == 1 and run["turns_scored"] == len(turns) - 1
    assert read_model.skipped_reasons(engine, DAY) == [
        {"reason": "unexpected error: ValueError: Unknown language(s): 'vo'", "turns": 1, "example": broken}]
    html = read_model.report_html(engine, DAY)
    section = html[html.index('id="unchecked"'):]
    assert "unexpected error: ValueError: Unknown language(s): &#39;vo&#39;" in section[:section.index("</section>")]
