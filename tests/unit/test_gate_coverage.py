"""The gate counts what it could not score (issue 37 item 3): the candidate's skipped turns and,
with `--base`, the turns of either side without a partner. A release never passes while more of
them than the criteria file's `[gate]` allows were left out (unstated: none); `score --criteria`
bounds its skipped turns the same way."""

from __future__ import annotations

import json

import pytest

from citecheck.cli import main
from citecheck.cli.common import EXIT_DECISION_FAILED, EXIT_OK, EXIT_SKIPPED, EXIT_USAGE
from helpers.gate_cases import judge, statement, turns

RECALL_MAY_NOT_DROP = """\
[[criteria]]
name = "recall may not drop"
metric = "citation_recall"
min = 0.6
max_drop = 0.05
"""
RUNAWAY = 6000  # characters: over the config's max_answer_chars, so `score` skips the answer


def _score(tmp_path, name, rows, criteria=None):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in rows), encoding="utf-8")
    judge_file = tmp_path / "judge.json"
    judge_file.write_text(json.dumps(judge(400)), encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text("[segmentation]\nmax_answer_chars = 5000\n", encoding="utf-8")
    out = tmp_path / f"{name}.json"
    argv = ["score", "--turns", str(path), "--judge", str(judge_file), "--config", str(config), "--out", str(out)]
    code = main([*argv, *(["--criteria", str(criteria)] if criteria else [])])
    return code, out


def _criteria(tmp_path, gate_table=""):
    path = tmp_path / "criteria.toml"
    path.write_text(RECALL_MAY_NOT_DROP + gate_table, encoding="utf-8")
    return path


def _runaway(rows, bad):
    """The `bad` answers miscite and run away (a loop of the same sentence): too long to score."""
    for i in bad:
        rows[i] = dict(rows[i], answer=f"{statement(i)} [S2]. " + "And so on and so forth. " * (RUNAWAY // 24))
    return rows


def _gate(capsys, *argv):
    capsys.readouterr()
    code = main(["gate", *map(str, argv)])
    return code, capsys.readouterr().out


def test_a_candidate_whose_bad_answers_were_skipped_does_not_pass(tmp_path, capsys):
    """142 of 297 answers miscite at runaway length: `score` skips them; what is left scores as
    well as the base's paired turns. Before: `release decision: pass`, exit 0."""
    base_rows = turns(["single"] * 297, "base")
    assert _score(tmp_path, "base", base_rows)[0] == EXIT_OK
    bad = range(0, 284, 2)
    code, candidate = _score(tmp_path, "candidate", _runaway(turns(["single"] * 297, "candidate"), bad))
    assert code == EXIT_SKIPPED and len(json.loads(candidate.read_text())["skipped"]) == 142
    criteria = _criteria(tmp_path)
    code, out = _gate(capsys, "--base", tmp_path / "base.json", "--candidate", candidate, "--criteria", criteria)
    assert code == EXIT_DECISION_FAILED
    lines = out.strip().splitlines()
    assert lines[0].startswith("PASS    recall may not drop")  # what it saw passes …
    assert "FAIL    candidate turns skipped: 142 of 297 (47.8%), allowed 0.0% ([gate] max_skipped_share)" in lines
    assert "FAIL    base turns unpaired: 142 of 297 (47.8%), allowed 0.0% ([gate] max_unpaired_share)" in lines
    assert "PASS    candidate turns unpaired: 0 of 155 (0.0%), allowed 0.0% ([gate] max_unpaired_share)" in lines
    assert lines[-1] == "release decision: fail"  # … but not what it could not see
    code, out = _gate(capsys, "--candidate", candidate, "--criteria", criteria, "--json")
    result = json.loads(out)
    assert code == EXIT_DECISION_FAILED and result["decision"] != "pass"
    assert [(c["check"], c["turns"], c["of"], c["decision"]) for c in result["coverage"]] == [
        ("candidate turns skipped", 142, 297, "fail")]
    # allowed explicitly, the same files pass
    loose = _criteria(tmp_path, "\n[gate]\nmax_skipped_share = 0.5\nmax_unpaired_share = 0.5\n")
    code, out = _gate(capsys, "--base", tmp_path / "base.json", "--candidate", candidate, "--criteria", loose)
    assert code == EXIT_OK and out.strip().endswith("release decision: pass")


def test_a_five_turn_candidate_against_a_297_turn_base_does_not_pass(tmp_path, capsys):
    _score(tmp_path, "base", turns(["single"] * 297, "base"))
    _score(tmp_path, "candidate", turns(["single"] * 5, "candidate"))
    code, out = _gate(capsys, "--base", tmp_path / "base.json", "--candidate", tmp_path / "candidate.json",
                      "--criteria", _criteria(tmp_path), "--json")
    result = json.loads(out)
    assert code == EXIT_DECISION_FAILED and result["decision"] == "fail"
    unpaired = {c["check"]: c for c in result["coverage"] if c["measure"] == "unpaired_share"}
    assert (unpaired["base turns unpaired"]["turns"], unpaired["base turns unpaired"]["of"]) == (292, 297)
    assert unpaired["candidate turns unpaired"]["decision"] == "pass"


def test_score_with_criteria_bounds_its_skipped_turns(tmp_path):
    rows = _runaway(turns(["single"] * 20, "v1"), [3])
    code, out = _score(tmp_path, "scored", rows, _criteria(tmp_path))
    payload = json.loads(out.read_text())
    assert code == EXIT_SKIPPED and payload["criteria"][0]["decision"] == "pass"
    assert payload["decision"] == "fail"
    assert payload["coverage"] == [{"check": "turns skipped", "measure": "skipped_share", "turns": 1, "of": 20,
                                    "share": 0.05, "max_share": 0.0, "decision": "fail"}]
    code, out = _score(tmp_path, "scored", rows, _criteria(tmp_path, "\n[gate]\nmax_skipped_share = 0.05\n"))
    assert json.loads(out.read_text())["decision"] == "pass"


@pytest.mark.parametrize(("table", "message"), [
    ("[gate]\nmax_skipped_share = 1.5\n", "max_skipped_share must be a share from 0 to 1"),
    ("[gate]\nmax_skiped_share = 0.1\n", "unknown key(s) max_skiped_share"),
    ("[gate]\nmax_unpaired_share = \"none\"\n", "max_unpaired_share must be a number"),
])
def test_invalid_gate_limits_exit_2(tmp_path, capsys, table, message):
    _score(tmp_path, "candidate", turns(["single"] * 5, "candidate"))
    capsys.readouterr()
    criteria = _criteria(tmp_path, table)
    code = main(["gate", "--candidate", str(tmp_path / "candidate.json"), "--criteria", str(criteria)])
    assert code == EXIT_USAGE and message in capsys.readouterr().err
