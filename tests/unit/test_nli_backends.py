"""NLI backends (issue 15): each loads a tiny local model through the real `CrossEncoder(..., backend=...)`
path, export included, and judges like torch fp32; missing extras and bad fields give clear errors.

ONNX Runtime (fp32 and dynamic int8 with this CPU's preset) and OpenVINO (fp32 and static int8) run
for real, through the extras `requirements.txt` installs.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from citecheck.core.model import JudgeItem, Passage
from citecheck.judges import JudgeSpecError
from citecheck.judges.cache import InMemoryCache
from citecheck.judges.nli import NLIJudge, from_spec, parse_spec
from citecheck.judges.nli import backends as B
from helpers.tiny_models import save_permuted, save_tiny_deberta_nli, save_tiny_nli

PASSAGES = (
    Passage("S1", "Expense reports must be submitted within two weeks. The manager must approve each claim."),
    Passage("S2", "Meals are paid by card. The finance team reviews reports each month."),
    Passage("S3", "Payroll is paid per month. A claim is not paid without a receipt."),
)
SENTENCES = (
    "Expense reports must be submitted within two weeks.",
    "A manager approves each claim.",
    "Meals are paid by card.",
    "Payroll is paid per month.",
    "Receipts are required for every claim.",
    "The finance team pays travel claims.",
)
CITES = ((), ("S1",), ("S2",), ("S1", "S3"))
TOLERANCE = {("onnx", None): 1e-3, ("onnx", "int8"): 0.05, ("openvino", None): 1e-3, ("openvino", "int8"): 0.05}
"""Largest entailment-probability difference against torch fp32 accepted per variant (int8 is
measured on a model with a realistic weight scale: the judge tests' model has weights of scale 1,
which no trained model has and which int8 cannot represent)."""


def items() -> list[JudgeItem]:
    return [
        JudgeItem(f"t{j}", i, sentence, cited, PASSAGES)
        for i, sentence in enumerate(SENTENCES)
        for j, cited in enumerate(CITES)
    ]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    # a narrower head than the judge tests' model, so int8 rounding moves few pairs across 0.5
    return save_tiny_nli(tmp_path_factory.mktemp("nli-backend-models") / "tiny", classifier_std=0.3)


@pytest.fixture(scope="module")
def realistic(tmp_path_factory) -> Path:
    return save_tiny_nli(tmp_path_factory.mktemp("nli-backend-models") / "realistic", initializer_range=0.1)


@pytest.fixture
def model_copy(tiny, tmp_path) -> Path:
    """A fresh copy per test, so every test exports beside its own model."""
    return Path(shutil.copytree(tiny, tmp_path / "model"))


def judge(path: Path, **fields) -> NLIJudge:
    return from_spec({"kind": "nli", "model": str(path), "batch_size": 8, **fields}, progress=False)


def entailment(j: NLIJudge, pairs: list[tuple[str, str]]) -> list[float]:
    return [p[j.scorer.entail_index] for p in j.scorer.probabilities(pairs)]


PAIRS = [(p.text, s) for p in PASSAGES for s in SENTENCES]


def runtime_class(backend: str) -> type:
    if backend == "onnx":
        from optimum.onnxruntime import ORTModelForSequenceClassification

        return ORTModelForSequenceClassification
    from optimum.intel.openvino import OVModelForSequenceClassification

    return OVModelForSequenceClassification


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
@pytest.mark.parametrize("quantize", [None, "int8"])
def test_a_backend_exports_beside_the_model_loads_through_crossencoder_and_agrees_with_torch(
    tiny, realistic, tmp_path, backend, quantize
):
    model_copy = Path(shutil.copytree(realistic if quantize else tiny, tmp_path / "model"))

    torch_judge = judge(model_copy)
    other = judge(model_copy, backend=backend, quantize=quantize)
    assert isinstance(other.scorer.model.model, runtime_class(backend))  # the real runtime
    assert (model_copy / B.exported_file(backend, quantize)).is_file()  # stored beside the model
    tag = {"onnx": f"+onnx-int8-{B.onnx_int8_preset()}", "openvino": "+openvino-int8"}[backend]
    assert other.version == str(model_copy) + (tag if quantize else f"+{backend}")
    assert other.scorer.labels == ("neutral", "entailment", "contradiction") and other.scorer.entail_index == 1
    reference, scored = entailment(torch_judge, PAIRS), entailment(other, PAIRS)
    tolerance = TOLERANCE[(backend, quantize)]
    assert max(abs(a - b) for a, b in zip(reference, scored, strict=True)) <= tolerance
    for a, b in zip(reference, scored, strict=True):  # a decision may only flip inside the tolerance
        assert (a >= 0.5) == (b >= 0.5) or abs(a - 0.5) <= tolerance
    if quantize is None:
        verdicts = [(x.cited, x.alone, x.faithful) for x in torch_judge.judge(items())]
        assert [(x.cited, x.alone, x.faithful) for x in other.judge(items())] == verdicts


@pytest.mark.parametrize(("backend", "quantize"), [("onnx", "int8"), ("openvino", "int8")])
def test_a_model_without_token_type_ids_quantizes_and_agrees_with_torch(tmp_path, backend, quantize):
    """DeBERTa-v3 NLI models take no token_type_ids, though their tokenizer may return them: the
    int8 calibration and the runtime feed only the inputs the exported model has."""
    model = save_tiny_deberta_nli(tmp_path / "deberta")
    reference = entailment(judge(model), PAIRS)
    other = judge(model, backend=backend, quantize=quantize)
    assert isinstance(other.scorer.model.model, runtime_class(backend))
    scored = entailment(other, PAIRS)
    assert max(abs(a - b) for a, b in zip(reference, scored, strict=True)) <= TOLERANCE[(backend, quantize)]


def test_onnx_int8_quantizes_with_the_preset_of_the_cpu():
    assert B.onnx_int8_preset(frozenset(), "aarch64") == "arm64"
    assert B.onnx_int8_preset(frozenset({"avx2", "avx512f", "avx512_vnni"}), "x86_64") == "avx512_vnni"
    assert B.onnx_int8_preset(frozenset({"avx2", "avx512f"}), "x86_64") == "avx512"
    assert B.onnx_int8_preset(frozenset({"avx2"}), "x86_64") == "avx2"
    assert B.exported_file("onnx", "int8") == f"onnx/model_int8_{B.onnx_int8_preset()}.onnx"
    assert B.has_bf16_units(frozenset({"avx512f", "avx512_bf16"})) and B.has_bf16_units(frozenset({"amx_bf16"}))
    assert not B.has_bf16_units(frozenset({"avx2", "avx512f"}))


def test_an_export_is_written_once_and_reused(model_copy, monkeypatch):
    judge(model_copy, backend="openvino")
    exported = model_copy / B.EXPORTED_FILES[("openvino", None)]
    stamp = exported.stat().st_mtime_ns

    def no_export(*args, **kwargs):
        raise AssertionError("exported again")

    monkeypatch.setattr(B, "export", no_export)
    again = judge(model_copy, backend="openvino")
    assert exported.stat().st_mtime_ns == stamp
    assert again.judge(items()[:3])


def test_a_configured_export_dir_holds_a_complete_model_and_leaves_the_model_alone(model_copy, tmp_path):
    before = sorted(p.name for p in model_copy.iterdir())
    ov = judge(model_copy, backend="openvino", export_dir=str(tmp_path / "exports"))
    assert sorted(p.name for p in model_copy.iterdir()) == before
    homes = list((tmp_path / "exports").iterdir())
    assert len(homes) == 1
    assert (homes[0] / B.EXPORTED_FILES[("openvino", None)]).is_file()
    assert (homes[0] / "config.json").is_file() and (homes[0] / "tokenizer_config.json").is_file()
    assert not list(homes[0].glob(".export-*"))  # the staging folder is gone
    assert ov.judge(items()[:2])


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_a_backend_reads_the_label_order_from_id2label(tiny, tmp_path, backend):
    permuted = save_permuted(tiny, tmp_path / "permuted", [2, 0, 1])
    plain = judge(Path(shutil.copytree(tiny, tmp_path / "plain")), backend=backend)
    moved = judge(permuted, backend=backend)
    assert moved.scorer.labels == ("contradiction", "neutral", "entailment") and moved.scorer.entail_index == 2
    fields = [(x.cited, x.alone, x.elsewhere, round(x.score or 0, 4)) for x in plain.judge(items())]
    assert [(x.cited, x.alone, x.elsewhere, round(x.score or 0, 4)) for x in moved.judge(items())] == fields


def test_the_judgment_cache_keeps_backends_apart(model_copy):
    cache = InMemoryCache()
    variants = [{}, {"backend": "onnx"}, {"backend": "onnx", "quantize": "int8"}, {"backend": "openvino"}]
    versions = set()
    for fields in variants:  # each variant scores every pair itself: nothing from another's probabilities
        first = from_spec({"kind": "nli", "model": str(model_copy), **fields}, cache=cache, progress=False)
        first.judge(items())
        assert first.stats()["cache_hits"] == 0 and first.stats()["pairs_scored"] > 0, fields
        versions.add(first.version)
    assert len(versions) == len(variants)
    again = from_spec({"kind": "nli", "model": str(model_copy), "backend": "openvino"}, cache=cache, progress=False)
    again.judge(items())
    assert again.stats()["pairs_scored"] == 0 and again.stats()["cache_hits"] == again.stats()["pairs_needed"] > 0


@pytest.mark.parametrize(
    ("backend", "module", "extra"),
    [
        ("openvino", "optimum.intel.openvino", "sentence-transformers[openvino]"),
        ("onnx", "optimum.onnxruntime", "sentence-transformers[onnx]"),
    ],
)
def test_a_missing_optional_package_names_the_extra(model_copy, monkeypatch, backend, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
    with pytest.raises(B.BackendUnavailable) as err:
        judge(model_copy, backend=backend)
    assert extra in str(err.value) and module in str(err.value)
    assert not (model_copy / backend).exists()  # nothing half-exported


@pytest.mark.parametrize(
    "fields",
    [
        {"backend": "tensorrt"},
        {"quantize": "int4"},
        {"precision": "fp8"},
        {"precision": "fp16", "backend": "openvino"},
        {"precision": "bf16", "quantize": "int8"},
        {"export_dir": ""},
        {"batch_size": 0},
        {"batch_size": "big"},
    ],
)
def test_invalid_backend_fields_are_rejected(fields):
    with pytest.raises(JudgeSpecError):
        parse_spec({"kind": "nli", **fields})


def test_half_precision_is_for_cuda_and_on_by_default_there(model_copy):
    assert B.resolve_precision("auto", "cuda:0") == "fp16"
    assert B.resolve_precision("auto", "cpu") == "fp32"
    assert B.resolve_precision("bf16", "cuda") == "bf16"
    with pytest.raises(JudgeSpecError, match="CUDA"):
        judge(model_copy, precision="fp16", device="cpu")
    choice = B.BackendChoice()
    assert B.variant_tag(choice, "fp32") == "" and B.variant_tag(choice, "bf16") == "+bf16"
    assert B.variant_tag(B.BackendChoice(quantize="int8"), "fp32") == "+int8"
    assert B.variant_tag(B.BackendChoice("onnx"), "fp32") == "+onnx"
    assert B.variant_tag(B.BackendChoice("onnx", "int8"), "fp32") == f"+onnx-int8-{B.onnx_int8_preset()}"


def test_batch_size_auto_is_chosen_for_the_device(model_copy):
    assert parse_spec({"kind": "nli"}).batch_size is None
    assert parse_spec({"kind": "nli", "batch_size": "auto"}).batch_size is None
    j = from_spec({"kind": "nli", "model": str(model_copy)}, progress=False)
    assert j.batch_size == B.auto_batch_size("cpu") == 32
    assert j.stats()["batch_size"] == 32


def test_sample_pairs_are_real_length_pairs_from_the_sample_traffic():
    pairs = B.sample_pairs(50)
    assert len(pairs) == 50 and len(set(pairs)) > 25
    assert all(len(premise.split()) >= 4 and len(hypothesis.split()) >= 4 for premise, hypothesis in pairs)


def test_the_bundled_sample_pairs_are_the_demo_traffics():
    """`judges/data/nli_pairs.json` is generated data, not a hand-made copy: it equals what the
    demo's generator gives (regenerate with `citecheck.demo.nli_pairs(128)` when the demo changes)."""
    from citecheck import demo

    assert B.sample_pairs(B.CALIBRATION_PAIRS) == demo.nli_pairs(B.CALIBRATION_PAIRS)
