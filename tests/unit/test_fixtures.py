"""Every number of every fixture in tests/fixtures, reproduced through the real pipeline."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from citecheck.core.config import config_from_mapping
from citecheck.core.parsing import parse_answer
from citecheck.core.structural import check_worthiness
from citecheck.core.sufficiency import evidence_sufficiency
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from citecheck.stats.agreement import agreement
from helpers import load_fixture, score_dicts

ORBIT = load_fixture("orbit_labs.json")
TOL = 5e-4


def _orbit_config():
    return config_from_mapping({"check_worthiness": {"refusals": [ORBIT["refusal_text"]]}})


@pytest.fixture(scope="module")
def orbit_output():
    return score_dicts(ORBIT["turns"], ORBIT["judge"], _orbit_config())


@pytest.mark.parametrize("turn_id", ["orbit-1", "orbit-refusal", "orbit-2"])
def test_orbit_turns(orbit_output, turn_id):
    expected = ORBIT["expected"][turn_id]
    turn = next(t for t in orbit_output["turns"] if t["turn_id"] == turn_id)
    assert turn["is_refusal"] == expected.get("is_refusal", False)
    assert len(turn["sentences"]) == len(expected["sentences"])
    for got, want in zip(turn["sentences"], expected["sentences"], strict=True):
        assert got["text"] == want["text"]
        assert got["labels"] == want["labels"]
        assert got["check_worthy"] == want["check_worthy"]
        assert got["verdict"] == want["verdict"]
        assert got["credited"] == want["credited"]
        assert got["unknown_labels"] == want.get("unknown_labels", [])
        assert got["stale_labels"] == want.get("stale_labels", [])
        if "supported_elsewhere_by" in want:
            assert got["supported_elsewhere_by"] == want["supported_elsewhere_by"]
    for key, value in expected["counts"].items():
        assert turn["counts"][key] == value, key
    for key, value in expected["metrics"].items():
        if value is None:
            assert turn["metrics"][key] is None, key
        else:
            assert turn["metrics"][key] == pytest.approx(value, abs=TOL), key


def test_orbit_day_micro(orbit_output):
    for key, value in ORBIT["expected"]["day_micro"].items():
        if key != "note":
            assert orbit_output["metrics"]["micro"][key] == pytest.approx(value, abs=TOL), key
    assert orbit_output["invariant_violations"] == []


def test_orbit_refusal_scored_through_a_toml_config(tmp_path):
    """A refusal sentence the default patterns do not know is a claim until the config names it."""
    from citecheck.cli import main

    turn = dict(ORBIT["turns"][1], answer="That is not covered by the travel policy.")
    turns = tmp_path / "turns.jsonl"
    turns.write_text(json.dumps(turn) + "\n")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(ORBIT["judge"] | {"judgments": [
        *ORBIT["judge"]["judgments"], {"statement": turn["answer"], "supported_by": []}]}))
    config = tmp_path / "config.toml"
    config.write_text('[check_worthiness]\nrefusals = ["That is not covered by the travel policy."]\n')
    results = {}
    for name, extra in (("default", []), ("configured", ["--config", str(config)])):
        out = tmp_path / f"{name}.json"
        assert main(["score", "--turns", str(turns), "--judge", str(judge), "--out", str(out), *extra]) == 0
        results[name] = json.loads(out.read_text())["turns"][0]
    assert results["default"]["is_refusal"] is False
    assert results["default"]["sentences"][0]["check_worthy"] is True
    configured = results["configured"]
    assert configured["is_refusal"] is True
    assert configured["sentences"][0]["verdict"] == "not_check_worthy"
    assert all(configured["metrics"][m] is None for m in ORBIT["expected"]["orbit-refusal"]["metrics"])


@pytest.mark.parametrize("joint, recall, precision, credited", [
    (True, 1.0, 0.667, {"S1": True, "S2": True, "S4": False}),
    (False, 0.0, 0.0, None),
])
def test_orbit_your_turn_joint_vs_best_single(joint, recall, precision, credited):
    case = ORBIT["extra_cases"]["your_turn"]
    out = score_dicts([case["turn"]], ORBIT["judge"] | {"joint": joint})
    metrics = out["turns"][0]["metrics"]
    assert metrics["citation_recall"] == pytest.approx(recall, abs=TOL)
    assert metrics["citation_precision"] == pytest.approx(precision, abs=TOL)
    if credited:
        assert out["turns"][0]["sentences"][0]["credited"] == credited


@pytest.mark.parametrize("case", ["marker_after_full_stop", "malformed_marker_list"])
def test_orbit_parsing_cases(case):
    data = ORBIT["extra_cases"][case]
    got = [(s.text, list(s.labels)) for s in parse_answer(data["answer"])]
    assert got == [(e["text"], e["labels"]) for e in data["expected"]]


def test_orbit_check_worthiness_per_sentence():
    data = ORBIT["extra_cases"]["check_worthiness_per_sentence"]
    config = _orbit_config()
    got = [(s.text, check_worthiness(s.text, config)[0]) for s in parse_answer(data["answer"])]
    assert got == [(e["text"], e["check_worthy"]) for e in data["expected"]]


DESK = load_fixture("citation_desk.json")


@pytest.mark.parametrize("name", sorted(DESK["scenarios"]))
def test_citation_desk_scenarios(name):
    scenario = DESK["scenarios"][name]
    out = score_dicts([scenario["turn"]], DESK["judge"])
    turn = out["turns"][0]
    ratios = {r["metric"]: r for r in out["rows"] if r["slice_name"] == "all" and r["averaging"] == "micro"}
    for metric, want in scenario["expected"].items():
        if metric == "unknown_labels":
            assert [lab for s in turn["sentences"] for lab in s["unknown_labels"]] == want
            continue
        row = ratios[metric]
        if want is None:
            assert row["value"] is None and row["denominator"] == 0
        else:
            assert [row["numerator"], row["denominator"]] == want, metric
            assert Fraction(int(row["numerator"]), int(row["denominator"])) == Fraction(*want)


def test_micro_vs_macro():
    data = load_fixture("micro_macro.json")
    out = score_dicts(data["turns"], data["judge"])
    assert out["metrics"]["micro"]["citation_recall"] == pytest.approx(data["expected"]["citation_recall_micro"])
    assert out["metrics"]["macro"]["citation_recall"] == pytest.approx(data["expected"]["citation_recall_macro"])


NATIVE = load_fixture("anthropic_native.json")


def _native_turn(documents):
    return {"turn_id": "native", "conversation_id": "native", "turn_index": 2,
            "answered_at": "2026-11-30T10:00:00Z", "question": "", "answer": "",
            "answer_format": "anthropic_blocks", "answer_blocks": NATIVE["response_content"],
            "request_documents": documents, "context": [], "attributes": {}}


def test_native_citations_indexed_across_the_chat():
    out = score_dicts([_native_turn(NATIVE["request_documents_across_chat"])], NATIVE["judge"])
    turn = out["turns"][0]
    assert turn["pointer_problems"] == NATIVE["expected"]["pointer_problems_when_indexed_across_chat"]
    got = [(s["text"], s["labels"], s["verdict"]) for s in turn["sentences"]]
    assert got == [(e["text"], e["labels"], e["verdict"]) for e in NATIVE["expected"]["sentences"]]
    assert turn["counts"]["unknown_labels"] == 0
    assert 0 < turn["metrics"]["cited_char_share"] < 1


def test_native_citations_indexed_from_this_turn_only_are_pointer_problems():
    out = score_dicts([_native_turn(NATIVE["request_documents_this_turn_only"])], NATIVE["judge"])
    turn = out["turns"][0]
    got = [{"document_index": p["document_index"], "recorded_title": p["recorded_title"]}
           for p in turn["pointer_problems"]]
    assert got == NATIVE["expected"]["pointer_problems_when_indexed_from_this_turn"]
    assert turn["counts"]["unknown_labels"] == 3
    assert turn["metrics"]["unknown_label_rate"] == 1.0
    assert all(not s["attached"] for s in turn["sentences"])
    assert turn["metrics"]["cited_char_share"] == 0.0


def test_judge_calibration():
    data = load_fixture("judge_calibration.json")
    result = agreement((row["human"], row["judge"]) for row in data["rows"]).as_dict()
    assert result == {k: list(v) for k, v in data["expected"].items()}


def test_judge_calibration_through_the_cli(tmp_path, capsys):
    from citecheck.cli import main

    path = tmp_path / "labels.json"
    path.write_text(json.dumps(load_fixture("judge_calibration.json")))
    assert main(["calibrate", "--labels", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"] == {k: list(v) for k, v in load_fixture("judge_calibration.json")["expected"].items()}


@pytest.mark.parametrize("variant", ["full_context", "without_S1"])
def test_evidence_sufficiency(variant):
    data = load_fixture("evidence_sufficiency.json")
    context = data["context"] if variant == "full_context" else [p for p in data["context"] if p["label"] != "S1"]
    turn = turn_from_dict({"turn_id": "ev", "answer": "x", "context": context})
    result = evidence_sufficiency(data["key_facts"], turn.context, judge_from_spec(data["judge"]))
    assert result["sufficiency"] == pytest.approx(data["expected"][variant]["sufficiency"])
    assert result["missing"] == data["expected"][variant]["missing"]
