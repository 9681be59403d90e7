"""`support_label` (SPEC §4): a fact-checking head whose labels are not NLI's (MiniCheck's two labels
`LABEL_0` / `LABEL_1`) judges through the real `CrossEncoder` path once the judge file names its
supporting label, by name or index; without it the model is refused before any work (exit 2)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from citecheck.core.model import JudgeItem, Passage
from citecheck.judges import JudgeSpecError, judge_from_spec
from citecheck.judges.nli import ModelLoadError, from_spec
from helpers import write_turns_file
from helpers.tiny_models import save_tiny_nli

REPO = Path(__file__).resolve().parents[2]
MINICHECK_LABELS = ("LABEL_0", "LABEL_1")
PASSAGES = (
    Passage("S1", "Expense reports must be submitted within two weeks. The manager must approve each claim."),
    Passage("S2", "Meals are paid by card. The finance team reviews reports each month."),
)
ITEMS = [
    JudgeItem(f"t{j}", i, sentence, cited, PASSAGES)
    for i, sentence in enumerate(("A manager approves each claim.", "Meals are paid by card.", "Payroll is paid."))
    for j, cited in enumerate(((), ("S1",), ("S2",), ("S1", "S2")))
]


@pytest.fixture(scope="module")
def two_label(tmp_path_factory) -> Path:
    return save_tiny_nli(tmp_path_factory.mktemp("nli-support") / "minicheck-like", labels=MINICHECK_LABELS)


@pytest.fixture(scope="module", params=["torch", "onnx"])
def backend_model(request, two_label, tmp_path_factory) -> tuple[str, Path]:
    if request.param == "torch":
        return "torch", two_label
    return "onnx", Path(shutil.copytree(two_label, tmp_path_factory.mktemp("nli-support-onnx") / "model"))


def verdict_fields(j) -> tuple:
    return (j.cited, j.alone, j.rest, j.elsewhere, j.faithful, j.score)


def make(path: Path, **fields):
    return from_spec({"kind": "nli", "model": str(path), "batch_size": 8, **fields}, progress=False)


def direct_support(path: Path, pairs: list[tuple[str, str]], index: int) -> list[float]:
    """The support probability straight from a fresh CrossEncoder (softmax over its two logits)."""
    import torch
    from sentence_transformers import CrossEncoder

    probs = CrossEncoder(str(path)).predict(pairs, activation_fn=torch.nn.Identity(), apply_softmax=True)
    return [float(row[index]) for row in probs]


@pytest.mark.parametrize("premise", ["windows", "chunks"])
def test_support_label_by_name_and_by_index_judge_alike(backend_model, two_label, premise):
    backend, path = backend_model
    by_name = make(path, backend=backend, premise=premise, support_label="LABEL_1")
    by_index = make(path, backend=backend, premise=premise, support_label=1)
    assert by_name.scorer.entail_index == by_index.scorer.entail_index == 1
    assert by_name.scorer.contra_index is None  # a two-label head has no contradiction
    assert by_name.version == by_index.version and "+support-LABEL_1" in by_name.version
    named, indexed = by_name.judge(ITEMS), by_index.judge(ITEMS)
    assert [j.judged for j in named] == [True] * len(ITEMS)
    for a, b in zip(named, indexed, strict=True):
        assert verdict_fields(a) == verdict_fields(b)
    # a passage's score is LABEL_1's probability of its best premise, as the model gives it
    judgment = named[1]
    best = judgment.detail["best_windows"]["S1"]
    expected = direct_support(two_label, [(best, ITEMS[1].sentence)], 1)[0]
    assert judgment.detail["passage_scores"]["S1"] == pytest.approx(expected, abs=1e-3)


def test_an_index_written_as_a_string_names_that_label(two_label):
    assert make(two_label, support_label="1").scorer.entail_index == 1


def test_support_label_other_than_the_last_reads_that_probability(two_label):
    zero = make(two_label, support_label="label_0")  # a case-insensitive name
    one = make(two_label, support_label=1)
    [a], [b] = zero.judge(ITEMS[1:2]), one.judge(ITEMS[1:2])
    assert zero.scorer.entail_index == 0
    assert a.detail["passage_scores"]["S1"] != pytest.approx(b.detail["passage_scores"]["S1"])


def test_a_head_without_entailment_and_without_support_label_is_refused_naming_it(two_label):
    with pytest.raises(ModelLoadError) as err:
        judge_from_spec({"kind": "nli", "model": str(two_label)})
    message = str(err.value)
    assert "support_label" in message and "entailment" in message and "LABEL_1" in message


@pytest.mark.parametrize("value", ["LABEL_7", 2, "entailment"])
def test_a_support_label_the_head_does_not_have_is_refused_listing_its_labels(two_label, value):
    with pytest.raises(JudgeSpecError, match="support_label") as err:
        make(two_label, support_label=value)
    assert "'LABEL_0'" in str(err.value) and "'LABEL_1'" in str(err.value)


def test_an_nli_model_may_name_its_entailment_label_too(tmp_path):
    nli = save_tiny_nli(tmp_path / "nli")  # neutral, entailment, contradiction
    default, named = make(nli), make(nli, support_label="entailment")
    assert default.scorer.entail_index == named.scorer.entail_index == 1
    assert named.scorer.contra_index == default.scorer.contra_index == 2


def test_the_cli_exits_2_before_any_work_without_support_label(two_label, tmp_path):
    turns = write_turns_file(tmp_path / "turns.jsonl", "cli-1", "Meals are paid by card. [S2]", PASSAGES)
    judge_file = tmp_path / "judge.json"
    judge_file.write_text(json.dumps({"kind": "nli", "model": str(two_label), "premise": "chunks"}))
    out = tmp_path / "out.json"
    args = ["score", "--turns", turns, "--judge", judge_file, "--out", out]
    proc = subprocess.run([sys.executable, "-m", "citecheck", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "support_label" in proc.stderr
    assert not out.exists()
