"""One turn never sinks the rest (issue 37 item 2): an error the checks did not expect while
checking one turn skips that turn, with the error as its reason, and the others are scored; an
unexpected error of a command itself exits with its own code (6), never 1 ("some lines skipped")."""

from __future__ import annotations

import json

from citecheck.cli import EXIT_INTERNAL_ERROR, EXIT_OK, main
from citecheck.core import pipeline
from citecheck.core.config import config_from_mapping
from citecheck.core.turns import turn_from_dict

TURNS = [
    {"turn_id": f"t{i}", "conversation_id": f"c{i}", "turn_index": 0, "timestamp": "2026-01-05T10:00:00Z",
     "question": "fee?", "answer": f"The fee was {10 + i} euros on 19/2/2018. [S1]",
     "context": [{"label": "S1", "text": f"The fee was {10 + i} euros on 19 February 2018."}],
     "attributes": {"language": language}}
    for i, language in enumerate(("en", "vo", "no", "la"))
]


def test_a_turn_in_any_detected_language_is_scored():
    report = pipeline.score([turn_from_dict(t) for t in TURNS], None, config_from_mapping({}))
    assert [s.turn_id for s in report.scored] == ["t0", "t1", "t2", "t3"] and report.skipped == []


def test_an_unexpected_error_in_one_turn_skips_that_turn_with_its_reason(monkeypatch):
    real = pipeline.structure_turn

    def breaks_on_t1(turn, config, history):
        if turn.turn_id == "t1":
            raise KeyError("a bug met by this turn's text")
        return real(turn, config, history)

    monkeypatch.setattr(pipeline, "structure_turn", breaks_on_t1)
    report = pipeline.score([turn_from_dict(t) for t in TURNS], None, config_from_mapping({}))
    assert [s.turn_id for s in report.scored] == ["t0", "t2", "t3"]
    (skip,) = report.skipped
    assert skip.turn_id == "t1"
    assert skip.reason == 'unexpected error: KeyError: "a bug met by this turn\'s text"'
    assert report.to_json(judged=False)["run"]["turns_skipped"] == 1


def test_an_unexpected_error_of_a_command_exits_6_not_1(monkeypatch, tmp_path, capsys):
    turns = tmp_path / "turns.jsonl"
    turns.write_text("".join(json.dumps(t) + "\n" for t in TURNS))
    assert main(["parse", "--turns", str(turns), "--out", str(tmp_path / "out.json")]) == EXIT_OK

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(pipeline, "score", broken)
    capsys.readouterr()
    assert main(["parse", "--turns", str(turns), "--out", str(tmp_path / "out.json")]) == EXIT_INTERNAL_ERROR == 6
    assert "parse: unexpected error (ZeroDivisionError: division by zero)" in capsys.readouterr().err
