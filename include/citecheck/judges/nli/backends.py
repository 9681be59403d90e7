"""Where the NLI cross-encoder runs: torch, ONNX Runtime or OpenVINO; fp32 or int8; half precision on GPU.

Every backend loads through sentence-transformers' own `CrossEncoder(..., backend=...)`, and the
ONNX / OpenVINO files come from its exporters and optimum's quantizers (never a hand-written
`torch.onnx.export`):

| backend    | quantize | how                                                                     |
| ---------- | -------- | ----------------------------------------------------------------------- |
| `torch`    | null     | the saved weights; fp16/bf16 on CUDA when `precision` says so           |
| `torch`    | `int8`   | torch's dynamic int8 quantization of the Linear layers, CPU only        |
| `onnx`     | null     | `CrossEncoder(backend="onnx")` exports `onnx/model.onnx`                |
| `onnx`     | `int8`   | `export_dynamic_quantized_onnx_model` with the preset for this CPU      |
|            |          | (`arm64`, `avx512_vnni`, `avx512` or `avx2`: `onnx_int8_preset()`)      |
| `openvino` | null     | `CrossEncoder(backend="openvino")` exports `openvino/openvino_model.xml` |
| `openvino` | `int8`   | optimum-intel's `OVQuantizer` static int8 (what                         |
|            |          | `export_static_quantized_openvino_model` runs), calibrated on NLI pairs |

An export is written once and reused: beside a local model (in its `onnx/` or `openvino/` folder,
where sentence-transformers itself looks) or, for a Hub model or when the judge file sets
`export_dir`, in `<export_dir>/<model>/` as a complete saved cross-encoder. A half-written export
is never picked up: files are written to a temporary folder and moved into place.

`variant_tag` names the backend, quantization and precision; the judge appends it to its version
and to its cache key, so the judgment cache never mixes probabilities of different variants.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citecheck.judges.base import JudgeSpecError

BACKENDS = ("torch", "onnx", "openvino")
QUANTIZATIONS = (None, "int8")
PRECISIONS = ("auto", "fp32", "fp16", "bf16")
EXPORTED_FILES = {
    ("onnx", None): "onnx/model.onnx",
    ("openvino", None): "openvino/openvino_model.xml",
    ("openvino", "int8"): "openvino/openvino_model_qint8_quantized.xml",
}
"""Where sentence-transformers' exporters put each variant, relative to the saved model (ONNX int8:
`exported_file`, one file per CPU preset)."""

EXTRAS = {
    "onnx": (
        "optimum.onnxruntime",
        "sentence-transformers[onnx] (optimum-onnx[onnxruntime]; this project pins optimum-onnx 0.1.0, "
        "onnxruntime 1.32.0, transformers 4.57.6: see requirements.txt)",
    ),
    "openvino": (
        "optimum.intel.openvino",
        "sentence-transformers[openvino] (optimum-intel[openvino]; this project pins optimum-intel 1.27.0, "
        "openvino 2026.4.1, nncf 3.4.0, transformers 4.57.6: see requirements.txt)",
    ),
}
CALIBRATION_PAIRS = 128
"""Pairs that calibrate OpenVINO's static int8 activation ranges (in batches of 16). NNCF collects
statistics once per `If` body of the exported graph (DeBERTa-v3 has 12, so 25 passes): a bigger
set makes a DeBERTa export take tens of minutes on two cores."""


class BackendUnavailable(JudgeSpecError):
    """The judge file asks for a backend whose optional packages are not installed."""


@dataclass(frozen=True, slots=True)
class BackendChoice:
    """The judge file's backend fields."""

    backend: str = "torch"
    quantize: str | None = None
    precision: str = "auto"
    export_dir: str | None = None


def parse_backend(spec: dict[str, Any] | Any) -> BackendChoice:
    """Validate `backend`, `quantize`, `precision` and `export_dir` of an NLI judge file."""
    backend = spec.get("backend", "torch")
    if backend not in BACKENDS:
        raise JudgeSpecError(f"nli judge: 'backend' must be one of {list(BACKENDS)}, got {backend!r}")
    quantize = spec.get("quantize")
    if quantize not in QUANTIZATIONS:
        raise JudgeSpecError(f"nli judge: 'quantize' must be null or \"int8\", got {quantize!r}")
    precision = spec.get("precision", "auto")
    if precision not in PRECISIONS:
        raise JudgeSpecError(f"nli judge: 'precision' must be one of {list(PRECISIONS)}, got {precision!r}")
    if precision == "fp16" and (backend != "torch" or quantize):
        raise JudgeSpecError("nli judge: 'precision' \"fp16\" applies to the torch backend (CUDA) without quantize")
    if precision == "bf16" and (backend == "onnx" or (backend == "torch" and quantize)):
        raise JudgeSpecError(
            "nli judge: 'precision' \"bf16\" applies to torch on CUDA or to OpenVINO (CPUs with bf16 units)"
        )
    export_dir = spec.get("export_dir")
    if export_dir is not None and (not isinstance(export_dir, str) or not export_dir.strip()):
        raise JudgeSpecError("nli judge: 'export_dir' must be a folder path or null")
    return BackendChoice(backend, quantize, precision, export_dir)


def resolve_precision(precision: str, device: str, backend: str = "torch") -> str:
    """fp32, fp16 or bf16 for this device: `auto` is fp16 on CUDA and fp32 elsewhere. OpenVINO
    takes bf16 on CPU (AMX / AVX-512 BF16); it is never chosen by `auto`, since it moves scores."""
    if backend != "torch":
        return "fp32" if precision == "auto" else precision
    if precision == "auto":
        return "fp16" if device.startswith("cuda") else "fp32"
    if precision in ("fp16", "bf16") and not device.startswith("cuda"):
        raise JudgeSpecError(
            f"nli judge: 'precision' {precision!r} is for CUDA devices; this model is on {device}. "
            'Use "precision": "auto" or "fp32"'
        )
    return precision


def variant_tag(choice: BackendChoice, precision: str) -> str:
    """'' for torch fp32 (the reference), else e.g. '+int8', '+openvino-int8', '+onnx', '+fp16'."""
    if choice.backend == "torch":
        return "+int8" if choice.quantize else ("" if precision == "fp32" else f"+{precision}")
    if choice.backend == "onnx" and choice.quantize:  # each preset rounds differently
        return f"+onnx-int8-{onnx_int8_preset()}"
    return f"+{choice.backend}" + ("-int8" if choice.quantize else "") + ("-bf16" if precision == "bf16" else "")


def onnx_int8_preset(flags: frozenset[str] | None = None, machine: str | None = None) -> str:
    """optimum's dynamic-quantization preset for this CPU. `avx2` (and `avx512` without VNNI) quantize
    weights to 7 bits, since those instruction sets can saturate 8-bit products; a VNNI model run on
    such a CPU moves probabilities about twice as far."""
    import platform

    if (machine or platform.machine()).lower() in ("aarch64", "arm64"):
        return "arm64"
    flags = cpu_flags() if flags is None else flags
    if "avx512_vnni" in flags or "avx512vnni" in flags:
        return "avx512_vnni"
    return "avx512" if "avx512f" in flags else "avx2"


def has_bf16_units(flags: frozenset[str] | None = None) -> bool:
    """Whether the CPU computes bf16 natively (AMX or AVX-512 BF16); without, OpenVINO's bf16 hint runs fp32."""
    return bool({"amx_bf16", "avx512_bf16"} & (cpu_flags() if flags is None else flags))


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from /proc/cpuinfo (empty where there is none), read once a process:
    a model load asks for them for the variant tag, the export file and the bf16 check."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            line = next((row for row in info if row.startswith("flags")), "")
    except OSError:
        return frozenset()
    return frozenset(line.partition(":")[2].split())


def exported_file(backend: str, quantize: str | None) -> str:
    """The backend file for a variant, relative to the saved model."""
    if (backend, quantize) == ("onnx", "int8"):
        return f"onnx/model_int8_{onnx_int8_preset()}.onnx"
    return EXPORTED_FILES[(backend, quantize)]


def auto_batch_size(device: str) -> int:
    """A batch size for the device: 32 on CPU; on CUDA by memory (256 from 40 GiB, 128 from 16 GiB, else 64)."""
    if not device.startswith("cuda"):
        return 32
    import torch

    total = torch.cuda.get_device_properties(torch.device(device)).total_memory / 2**30
    return 256 if total >= 40 else 128 if total >= 16 else 64


def require_extra(backend: str) -> None:
    """Raise `BackendUnavailable` naming the extra to install when the backend's packages are missing."""
    if backend == "torch":
        return
    module, extra = EXTRAS[backend]
    try:
        __import__(module)
    except ImportError as exc:
        raise BackendUnavailable(
            f'nli judge: "backend": "{backend}" needs {module}, which is not importable ({exc}). '
            f"Install {extra}."
        ) from exc


def export_home(model: str, revision: str | None, export_dir: str | None, local: Path | None) -> Path:
    """The folder that holds (or will hold) the exported model files for this model."""
    if export_dir is None and local is not None:
        return local
    root = Path(export_dir).expanduser() if export_dir else default_export_root()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "--", (str(local) if local else model).strip("/"))
    return root / (slug + (f"@{revision}" if revision else ""))


def default_export_root() -> Path:
    """`$CITECHECK_NLI_EXPORTS`, else `$XDG_CACHE_HOME/citecheck/nli-exports` (~/.cache by default)."""
    if os.environ.get("CITECHECK_NLI_EXPORTS"):
        return Path(os.environ["CITECHECK_NLI_EXPORTS"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "citecheck" / "nli-exports"


def load_cross_encoder(
    source: str, *, revision: str | None, device: str | None, choice: BackendChoice, local: Path | None
) -> Any:
    """A `CrossEncoder` for the choice, exporting (once) what the backend needs first."""
    from sentence_transformers import CrossEncoder

    if choice.backend == "torch":
        model = CrossEncoder(source, revision=revision, device=device)
        if choice.quantize == "int8":
            quantize_torch_int8(model)
        return model
    require_extra(choice.backend)
    if device is not None and not device.startswith("cpu"):
        raise JudgeSpecError(f'nli judge: "backend": "{choice.backend}" runs on CPU here; drop "device" {device!r}')
    home = export_home(source, revision, choice.export_dir, local)
    file_name = exported_file(choice.backend, choice.quantize)
    if not (home / file_name).exists():
        try:
            export(source, revision=revision, choice=choice, home=home, local=local)
        except PermissionError as exc:
            raise JudgeSpecError(
                f"nli judge: cannot write the {choice.backend} export to {home} ({exc}); "
                'set "export_dir" in the judge file to a writable folder'
            ) from exc
    kwargs: dict[str, Any] = {"file_name": file_name}
    if choice.precision == "bf16" and not has_bf16_units():
        warnings.warn(
            "nli judge: \"precision\": \"bf16\" asks for bf16 units (AMX / AVX-512 BF16), which this CPU lacks; "
            "OpenVINO runs fp32 here",
            stacklevel=2,
        )
    if choice.backend == "openvino":
        # OpenVINO's CPU plugin computes in bf16 by default where the CPU has bf16 units; that moves
        # probabilities by up to ~0.1, so fp32 is asked for unless the judge file says bf16.
        kwargs["ov_config"] = {"INFERENCE_PRECISION_HINT": "bf16" if choice.precision == "bf16" else "f32"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CrossEncoder(str(home), backend=choice.backend, model_kwargs=kwargs, device="cpu")


def export(source: str, *, revision: str | None, choice: BackendChoice, home: Path, local: Path | None) -> None:
    """Write the backend's files for `choice` under `home` (through a temporary folder)."""
    from sentence_transformers import CrossEncoder

    home.mkdir(parents=True, exist_ok=True)
    fp32_file = exported_file(choice.backend, None)
    with tempfile.TemporaryDirectory(prefix=".export-", dir=home) as tmp:
        staged = Path(tmp)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if (home / fp32_file).exists():
                model = CrossEncoder(str(home), backend=choice.backend, model_kwargs={"file_name": fp32_file})
            else:
                model = CrossEncoder(source, revision=revision, backend=choice.backend)
            model.save_pretrained(str(staged))  # config, tokenizer and the fp32 backend file
            if choice.quantize == "int8" and choice.backend == "onnx":
                from sentence_transformers import export_dynamic_quantized_onnx_model

                preset = onnx_int8_preset()
                export_dynamic_quantized_onnx_model(model, preset, str(staged), file_suffix=f"int8_{preset}")
            elif choice.quantize == "int8":
                quantize_openvino_int8(model, staged)
        keep = (
            [p for p in staged.rglob("*") if p.is_file()]
            if home != local
            else [p for p in (staged / choice.backend).rglob("*") if p.is_file()]
        )
        for path in sorted(keep, key=lambda p: p.suffix in (".xml", ".onnx")):  # the loaders' files last
            target = home / path.relative_to(staged)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)


def quantize_openvino_int8(model: Any, staged: Path, pairs: Sequence[tuple[str, str]] | None = None) -> None:
    """Static int8 through optimum-intel's `OVQuantizer`, calibrated on (premise, hypothesis) pairs.

    This is what sentence-transformers' `export_static_quantized_openvino_model` runs, with NLI
    pairs from the bundled sample traffic (`sample_pairs`) as the calibration set instead of a
    Hub dataset of single sentences (no Hub here, and a cross-encoder sees pairs).
    """
    import nncf
    from optimum.intel import OVConfig, OVQuantizationConfig, OVQuantizer

    pairs = list(pairs) if pairs is not None else sample_pairs()
    tokenizer = model.tokenizer
    inputs = set(model.model.input_names)  # e.g. no token_type_ids for DeBERTa-v3 (type_vocab_size 0)
    samples = []
    for start in range(0, len(pairs), 16):
        batch = pairs[start : start + 16]
        enc = tokenizer(
            [p for p, _ in batch], [h for _, h in batch], padding=True, truncation=True, return_tensors="np"
        )
        samples.append({name: array for name, array in enc.items() if name in inputs})
    quantizer = OVQuantizer.from_pretrained(model.model)
    config = OVConfig(quantization_config=OVQuantizationConfig(num_samples=len(samples)))
    out = staged / ".int8"
    quantizer.quantize(calibration_dataset=nncf.Dataset(samples), save_directory=str(out), ov_config=config)
    target = staged / EXPORTED_FILES[("openvino", "int8")]
    target.parent.mkdir(parents=True, exist_ok=True)
    written = out / "openvino" if (out / "openvino").is_dir() else out  # sentence-transformers' save subfolder
    for suffix in (".bin", ".xml"):
        os.replace(written / f"openvino_model{suffix}", target.with_suffix(suffix))
    shutil.rmtree(out, ignore_errors=True)


def sample_pairs(limit: int = CALIBRATION_PAIRS) -> list[tuple[str, str]]:
    """Up to `limit` (two-sentence window of a cited passage, answer sentence) pairs of real length
    from the bundled sample traffic (`data/nli_pairs.json`, written by `citecheck.demo.nli_pairs`)."""
    import json
    from importlib.resources import files

    rows = json.loads(files("citecheck.judges").joinpath("data/nli_pairs.json").read_text(encoding="utf-8"))
    return [(premise, hypothesis) for premise, hypothesis in rows[:limit]]


def quantize_torch_int8(model: Any) -> None:
    """Dynamic int8 quantization of the Linear layers (CPU only), in place."""
    import torch

    if model.device.type != "cpu":
        raise JudgeSpecError(
            f'nli judge: quantize "int8" runs on CPU, but the model is on {model.device}; '
            'set "device": "cpu" or "quantize": null'
        )
    with warnings.catch_warnings():  # torch.ao's eager API is deprecated in favour of torchao, not installed
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        torch.ao.quantization.quantize_dynamic(model.model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)


def apply_precision(model: Any, precision: str) -> None:
    """Cast a torch model on CUDA to fp16 or bf16 (softmax is still taken in fp32 by the scorer)."""
    import torch

    if precision in ("fp16", "bf16"):
        model.model.to(torch.float16 if precision == "fp16" else torch.bfloat16)
