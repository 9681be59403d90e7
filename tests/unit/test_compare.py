"""`citecheck compare` (issue 11): two score outputs of the same questions, paired by a key."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from citecheck.cli import main
from citecheck.core.metrics import SCORED_HEADLINE_METRICS
from helpers import score_dicts

N_TURNS = 24


def _sentence_count(t: int) -> int:
    return t % 5 + 1


def _base_supports(t: int, j: int) -> bool:
    return (t + j) % 3 != 0


def _candidate_supports(t: int, j: int) -> bool:
    return _base_supports(t, j) or t % 4 == 0  # the candidate fixes every answer of one question in four


def _turns() -> list[dict]:
    turns = []
    for t in range(N_TURNS):
        n = _sentence_count(t)
        answer = " ".join(f"Item {j} of order {t} costs {t * 10 + j} euros [P{j}]." for j in range(1, n + 1))
        turns.append({"turn_id": f"t{t}", "conversation_id": f"c{t}", "question": f"What does order {t} cost?",
                      "answer": answer, "attributes": {"qid": f"q{t}"},
                      "context": [{"label": f"P{j}", "text": f"Price list entry {j}."} for j in range(1, n + 1)]})
    return turns


def _judge(supports) -> dict:
    rows = [{"statement": f"Item {j} of order {t} costs {t * 10 + j} euros.",
             "supported_by": [f"P{j}"] if supports(t, j) else []}
            for t in range(N_TURNS) for j in range(1, _sentence_count(t) + 1)]
    return {"kind": "recorded", "judgments": rows}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    turns = _turns()
    paths = {}
    for name, supports in (("base", _base_supports), ("candidate", _candidate_supports)):
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(score_dicts(turns, _judge(supports))), encoding="utf-8")
    return paths


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_identical_files_give_zero_difference_with_an_interval_holding_zero(outputs, capsys):
    code, out, _ = _run(capsys, "--base", str(outputs["base"]), "--candidate", str(outputs["base"]), "--json")
    assert code == 0
    result = json.loads(out)
    assert result["paired"] == N_TURNS and result["dropped"] == 0
    assert result["dropped_keys"] == {"base": [], "candidate": []}
    assert set(result["metrics"]) == set(SCORED_HEADLINE_METRICS)
    for metric, by in result["metrics"].items():
        for averaging in ("micro", "macro"):
            r = by[averaging]
            if r["base"] is None:
                continue
            assert r["difference"] == 0, (metric, averaging)
            assert r["ci_low"] <= 0 <= r["ci_high"]
            assert r["p_value"] == 1.0


def test_a_known_change_gives_the_exact_difference(outputs, capsys):
    code, out, _ = _run(capsys, "--base", str(outputs["base"]), "--candidate", str(outputs["candidate"]), "--json")
    assert code == 0
    result = json.loads(out)
    recall = result["metrics"]["citation_recall"]
    # independent: from the generating rules, not from the score outputs
    cells = [(t, j) for t in range(N_TURNS) for j in range(1, _sentence_count(t) + 1)]
    base = sum(_base_supports(t, j) for t, j in cells) / len(cells)
    cand = sum(_candidate_supports(t, j) for t, j in cells) / len(cells)
    assert recall["micro"]["base"] == pytest.approx(base, rel=1e-12)
    assert recall["micro"]["candidate"] == pytest.approx(cand, rel=1e-12)
    assert recall["micro"]["difference"] == pytest.approx(cand - base, rel=1e-12)
    assert recall["micro"]["ci_low"] < cand - base < recall["micro"]["ci_high"]
    assert 0 < recall["micro"]["p_value"] < 0.05 and recall["micro"]["ci_low"] > 0
    # macro: the paired t-test on the per-answer recalls, by scipy
    b = np.array([np.mean([_base_supports(t, j) for j in range(1, _sentence_count(t) + 1)]) for t in range(N_TURNS)])
    c = np.array([np.mean([_candidate_supports(t, j) for j in range(1, _sentence_count(t) + 1)])
                  for t in range(N_TURNS)])
    test = stats.ttest_rel(c, b)
    ci = test.confidence_interval(0.95)
    macro = recall["macro"]
    assert macro["difference"] == pytest.approx(float(np.mean(c - b)), rel=1e-12)
    assert (macro["ci_low"], macro["ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-9)
    assert macro["p_value"] == pytest.approx(test.pvalue, rel=1e-9)
    assert macro["items"] == N_TURNS
    # attachment does not depend on the judge: no change, and no doubt about it
    assert result["metrics"]["attachment_rate"]["micro"]["difference"] == 0


def test_micro_interval_agrees_with_a_paired_bootstrap(outputs, capsys):
    _, out, _ = _run(capsys, "--base", str(outputs["base"]), "--candidate", str(outputs["candidate"]), "--json")
    micro = json.loads(out)["metrics"]["citation_recall"]["micro"]
    turns = range(N_TURNS)
    n = np.array([_sentence_count(t) for t in turns])
    yb = np.array([sum(_base_supports(t, j) for j in range(1, _sentence_count(t) + 1)) for t in turns])
    yc = np.array([sum(_candidate_supports(t, j) for j in range(1, _sentence_count(t) + 1)) for t in turns])
    boot = stats.bootstrap((yb, yc, n), lambda b, c, x: c.sum() / x.sum() - b.sum() / x.sum(), paired=True,
                           vectorized=False, n_resamples=3000, rng=np.random.default_rng(3))
    se = (micro["ci_high"] - micro["ci_low"]) / 2 / stats.t.ppf(0.975, N_TURNS - 1)
    assert se == pytest.approx(boot.standard_error, rel=0.2)


def test_items_without_a_partner_are_dropped_and_listed(outputs, tmp_path, capsys):
    data = json.loads(outputs["candidate"].read_text())
    data["turns"] = [t for t in data["turns"] if t["turn_id"] not in ("t3", "t7")]
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(data))
    code, out, _ = _run(capsys, "--base", str(outputs["base"]), "--candidate", str(partial), "--json")
    assert code == 0
    result = json.loads(out)
    assert result["paired"] == N_TURNS - 2 and result["dropped"] == 2
    assert result["dropped_keys"] == {"base": ["t3", "t7"], "candidate": []}
    code, text, _ = _run(capsys, "--base", str(outputs["base"]), "--candidate", str(partial))
    assert code == 0
    assert "paired 22 items by turn_id; dropped 2" in text and "only in base: t3, t7" in text
    assert "citation_recall" in text and "micro" in text and "macro" in text


def test_pairing_by_question_and_by_attribute(outputs, capsys):
    for key in ("question", "attributes.qid"):
        code, out, _ = _run(capsys, "--base", str(outputs["base"]), "--candidate", str(outputs["candidate"]),
                            "--key", key, "--json")
        assert code == 0
        result = json.loads(out)
        assert result["key"] == key and result["paired"] == N_TURNS
    code, _, err = _run(capsys, "--base", str(outputs["base"]), "--candidate", str(outputs["candidate"]),
                        "--key", "attributes.missing")
    assert code == 2 and "has no attributes.missing" in err


def test_duplicated_keys_are_an_error(outputs, tmp_path, capsys):
    data = json.loads(outputs["base"].read_text())
    data["turns"].append(dict(data["turns"][5]))
    doubled = tmp_path / "doubled.json"
    doubled.write_text(json.dumps(data))
    code, out, err = _run(capsys, "--base", str(doubled), "--candidate", str(outputs["candidate"]), "--json")
    assert code == 2 and out == ""
    assert "base" in err and "'t5'" in err and "more than once" in err


def test_files_that_are_not_score_outputs_are_an_error(outputs, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": []}')
    code, _, err = _run(capsys, "--base", str(bad), "--candidate", str(outputs["candidate"]))
    assert code == 2 and "not a `citecheck score` output" in err
    bad.write_text("not json")
    code, _, err = _run(capsys, "--base", str(bad), "--candidate", str(outputs["candidate"]))
    assert code == 2 and "not JSON" in err
    code, _, err = _run(capsys, "--base", str(tmp_path / "nope.json"), "--candidate", str(outputs["candidate"]))
    assert code == 2
