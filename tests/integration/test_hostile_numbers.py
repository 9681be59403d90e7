"""A number no reader can take (Gemini `confidenceScores` of 1e400, a 400-digit integer, NaN,
infinity) skips its turn with a reason: never a traceback, never a failed run, and the day's
other turns are scored and published."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import EXIT_SKIPPED
from citecheck.core.formats import TurnError
from citecheck.core.turns import turn_from_dict
from citecheck.warehouse import tables as T
from helpers import load_fixture, orbit_settings

REPO = Path(__file__).resolve().parents[2]
DAY = dt.date(2026, 11, 30)
# how each hostile number is spelt in a JSON line, and what Python reads from it
SPELLINGS = {"1e400": "1e400", "400 digits": "1" + "0" * 400, "NaN": "NaN", "Infinity": "-Infinity"}


def _gemini_lines(score: str) -> list[str]:
    """The Gemini fixture's two turns as JSON lines, the first support of t1 scored with `score`."""
    turns = load_fixture("gemini.json")["turns"]
    turns[0]["response"]["groundingMetadata"]["groundingSupports"][0]["confidenceScores"] = ["HOSTILE"]
    return [json.dumps(t).replace('"HOSTILE"', score) for t in turns]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_unreadable_score_is_the_turns_skip_reason(spelling):
    hostile = json.loads(_gemini_lines(SPELLINGS[spelling])[0])
    unreadable = r"confidenceScores\[0\] is (a number out of range|not a finite number|not a number)"
    with pytest.raises(TurnError, match=unreadable):
        turn_from_dict(hostile)


def test_score_skips_the_turn_and_scores_the_other(tmp_path):
    turns = tmp_path / "turns.jsonl"
    turns.write_text("\n".join(_gemini_lines(SPELLINGS["1e400"])) + "\n")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(load_fixture("gemini.json")["judge"]))
    out = tmp_path / "out.json"
    done = subprocess.run([sys.executable, "-m", "citecheck", "score", "--turns", str(turns), "--judge", str(judge),
                           "--out", str(out)], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO / "include"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == EXIT_SKIPPED, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    scored = json.loads(out.read_text())
    assert [t["turn_id"] for t in scored["turns"]] == ["t2"]
    assert [(s["turn_id"], s["reason"]) for s in scored["skipped"]] == [
        ("t1", "groundingSupports confidenceScores[0] is not a finite number (inf)")]


@pytest.mark.parametrize("spelling", ["1e400", "400 digits"])
def test_the_job_publishes_the_day_without_the_hostile_turn(engine, spelling):
    W.load_turns(engine, [json.loads(line) for line in _gemini_lines(SPELLINGS[spelling])])
    settings = orbit_settings(judge_spec=load_fixture("gemini.json")["judge"])
    result = job.run_day(engine, DAY, settings)
    assert result["structural"]["turns_skipped"] == 1 and result["structural"]["turns_scored"] == 1
    with engine.connect() as conn:
        skipped = conn.execute(sa.select(T.skipped_turns.c.turn_id, T.skipped_turns.c.reason)).all()
        published = set(conn.execute(sa.select(T.sentence_verdicts.c.turn_id).distinct()).scalars())
    assert [s.turn_id for s in skipped] == ["t1"] and "confidenceScores[0]" in skipped[0].reason
    assert published == {"t2"}
