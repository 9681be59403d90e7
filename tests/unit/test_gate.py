"""`citecheck gate` and `score --criteria` (SPEC §5.1): identical, better and worse candidates,
non-inferiority on the paired difference, no_data, invalid input, exit codes 0 / 3 / 2."""

from __future__ import annotations

import json

import pytest

from citecheck.cli import main
from helpers import REPO
from helpers.gate_cases import CRITERIA_TOML, ONE_SOURCE_RULE, judge, plan, write_case, write_example

EXAMPLE = REPO / "docs" / "examples" / "one_source_rule"


def scored(tmp_path, name, kinds, capsys, criteria=None):
    turns = write_case(tmp_path, name, kinds, version="v1")
    judge_file = tmp_path / "judge.json"
    judge_file.write_text(json.dumps(judge(len(kinds))), encoding="utf-8")
    out = tmp_path / f"{name}.json"
    argv = ["score", "--turns", str(turns), "--judge", str(judge_file), "--out", str(out)]
    assert main([*argv, *(["--criteria", str(criteria)] if criteria else [])]) == 0
    capsys.readouterr()
    return out


@pytest.fixture
def criteria(tmp_path):
    path = tmp_path / "criteria.toml"
    path.write_text(CRITERIA_TOML, encoding="utf-8")
    return path


def gate(capsys, *argv):
    code = main(["gate", *map(str, argv)])
    return code, capsys.readouterr()


def test_the_one_source_rule_example_fails_the_gate(tmp_path, capsys, criteria):
    base = scored(tmp_path, "base", plan(ONE_SOURCE_RULE["base"]), capsys)
    cand = scored(tmp_path, "candidate", plan(ONE_SOURCE_RULE["candidate"]), capsys)
    code, out = gate(capsys, "--base", base, "--candidate", cand, "--criteria", criteria)
    assert code == 3
    lines = out.out.strip().splitlines()
    assert lines[0].startswith("PASS") and "citation_precision 0.680" in lines[0]
    assert lines[1].startswith("FAIL") and "vs base 0.810: -0.150" in lines[1] and "max_drop 0.05" in lines[1]
    assert lines[-1] == "release decision: fail"
    code, out = gate(capsys, "--base", base, "--candidate", cand, "--criteria", criteria, "--json")
    result = json.loads(out.out)
    assert code == 3 and result["decision"] == "fail"
    recall = result["criteria"][1]
    assert recall["value"] == pytest.approx(0.66) and recall["versus_base"]["difference"] == pytest.approx(-0.15)
    assert recall["versus_base"]["ci_low"] < -0.05 and recall["versus_base"]["ci_high"] < 0
    assert result["criteria_hash"] and result["paired_by"] == "turn_id"


def test_an_identical_candidate_passes(tmp_path, capsys, criteria):
    base = scored(tmp_path, "base", plan(ONE_SOURCE_RULE["base"]), capsys)
    code, out = gate(capsys, "--base", base, "--candidate", base, "--criteria", criteria, "--json")
    result = json.loads(out.out)
    assert code == 0 and result["decision"] == "pass"
    versus = result["criteria"][1]["versus_base"]
    assert (versus["difference"], versus["ci_low"], versus["ci_high"]) == pytest.approx((0, 0, 0), abs=1e-12)


def test_a_better_candidate_passes(tmp_path, capsys, criteria):
    base = scored(tmp_path, "base", plan(ONE_SOURCE_RULE["candidate"]), capsys)  # recall 0.66
    cand = scored(tmp_path, "candidate", plan(ONE_SOURCE_RULE["base"]), capsys)  # recall 0.81
    code, out = gate(capsys, "--base", base, "--candidate", cand, "--criteria", criteria)
    assert code == 0, out.out
    assert out.out.strip().splitlines()[-1] == "release decision: pass"


def test_a_worse_candidate_fails_its_own_bound_without_a_base(tmp_path, capsys):
    cand = scored(tmp_path, "candidate", ["miscited"] * 6 + ["single"] * 4, capsys)
    path = tmp_path / "c.toml"
    path.write_text('[[criteria]]\nname = "recall"\nmetric = "citation_recall"\nmin = 0.8\nanswers = true\n',
                    encoding="utf-8")
    code, out = gate(capsys, "--candidate", cand, "--criteria", path, "--json")
    result = json.loads(out.out)
    assert code == 3 and result["decision"] == "fail"
    assert sorted(result["answers_failing"]) == [f"q{i:03d}" for i in range(6)]


def test_no_data_is_not_a_pass(tmp_path, capsys):
    cand = scored(tmp_path, "candidate", ["single"] * 5, capsys)
    path = tmp_path / "c.toml"
    path.write_text('[[criteria]]\nname = "pay answers"\nmetric = "citation_recall"\nmin = 0.8\n'
                    'where = { topic = "pay" }\n\n'
                    '[[criteria]]\nname = "no drop"\nmetric = "citation_recall"\nmax_drop = 0.05\n', encoding="utf-8")
    code, out = gate(capsys, "--candidate", cand, "--criteria", path, "--json")
    result = json.loads(out.out)
    assert code == 3 and result["decision"] == "no_data"
    assert [c["decision"] for c in result["criteria"]] == ["no_data", "no_data"]
    assert result["criteria"][1]["versus_base"]["reason"] == "max_drop / max_rise need --base"


@pytest.mark.parametrize(("text", "message"), [
    ("[[criteria]\nname = 'x'", "not valid TOML"),
    ('[[criteria]]\nname = "x"\nmetric = "citation_recal"\nmin = 0.5\n', "unknown metric 'citation_recal'"),
    ('[[criteria]]\nname = ""\nmetric = "citation_recall"\nmin = 0.5\n', "non-empty name"),
    ('[[criteria]]\nname = "x"\nmetric = "citation_recall"\nmin = 0.5\nmax = 0.9\n', "not both"),
])
def test_invalid_criteria_exit_2(tmp_path, capsys, text, message):
    cand = scored(tmp_path, "candidate", ["single"] * 3, capsys)
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    code, out = gate(capsys, "--candidate", cand, "--criteria", path)
    assert code == 2 and message in out.err and not out.out


def test_invalid_score_files_exit_2(tmp_path, capsys, criteria):
    not_json = tmp_path / "x.json"
    not_json.write_text("{", encoding="utf-8")
    code, out = gate(capsys, "--candidate", not_json, "--criteria", criteria)
    assert code == 2 and "not JSON" in out.err
    not_score = tmp_path / "y.json"
    not_score.write_text('{"rows": []}', encoding="utf-8")
    code, out = gate(capsys, "--candidate", not_score, "--criteria", criteria)
    assert code == 2 and "not a `citecheck score` output" in out.err
    code, out = gate(capsys, "--candidate", tmp_path / "missing.json", "--criteria", criteria)
    assert code == 2


def test_score_with_criteria_adds_the_decision(tmp_path, capsys, criteria):
    out = scored(tmp_path, "base", plan(ONE_SOURCE_RULE["base"]), capsys, criteria=criteria)
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["decision"] == "pass"
    assert [c["criterion"] for c in payload["criteria"]] == ["precision at least 0.6",
                                                              "recall may not drop by more than 5 points"]
    assert payload["criteria"][1]["value"] == pytest.approx(0.81) and payload["criteria_hash"]


def test_score_with_an_invalid_criteria_file_scores_nothing(tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_text("not toml [", encoding="utf-8")
    turns = write_case(tmp_path, "t", ["single"])
    judge_file = tmp_path / "judge.json"
    judge_file.write_text(json.dumps(judge(1)), encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["score", "--turns", str(turns), "--judge", str(judge_file), "--criteria", str(path),
                 "--out", str(out)]) == 2
    assert not out.exists()


def test_the_committed_example_is_what_the_generator_writes(tmp_path):
    write_example(tmp_path)
    for name in ("base.jsonl", "candidate.jsonl", "judge.json", "criteria.toml"):
        assert (tmp_path / name).read_text(encoding="utf-8") == (EXAMPLE / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize(("max_drop", "code", "decision"), [(0.2, 3, "fail"), (0.25, 0, "pass")])
def test_the_example_with_a_looser_recall_bound_as_docs_gate_says(tmp_path, capsys, max_drop, code, decision):
    # docs/gate.md: the difference's interval [-0.221, -0.079] fails max_drop 0.2 and passes 0.25
    loose = tmp_path / "loose.toml"
    loose.write_text(CRITERIA_TOML.replace("max_drop = 0.05", f"max_drop = {max_drop}"), encoding="utf-8")
    assert f"max_drop = {max_drop}" in loose.read_text(encoding="utf-8")
    base = scored(tmp_path, "base", plan(ONE_SOURCE_RULE["base"]), capsys)
    cand = scored(tmp_path, "candidate", plan(ONE_SOURCE_RULE["candidate"]), capsys)
    got, out = gate(capsys, "--base", base, "--candidate", cand, "--criteria", loose)
    assert got == code and out.out.strip().splitlines()[-1] == f"release decision: {decision}"
