"""The NLI judge file: its fields, validated before anything loads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from citecheck.judges.base import JudgeSpecError
from citecheck.judges.nli.backends import BackendChoice, parse_backend

DEFAULT_MODEL = "cross-encoder/nli-deberta-v3-base"
ANY_LANGUAGE = "*"  # the `"models"` key of the model for every language without its own
PREMISES = ("windows", "chunks")
"""How a passage becomes premises: one- and two-sentence windows (the default) or packed chunks."""
DEFAULT_CHUNK_TOKENS = 400
"""MiniCheck's chunk size (Tang et al., 2024), the claim included."""
MIN_CHUNK_TOKENS = 16
CHUNKS_TAG = "+chunks"
"""What a chunk-mode judge version carries (then `chunk_tokens`): `…+chunks400`."""
_FIELDS = frozenset(
    {
        "kind",
        "model",
        "models",
        "revision",
        "threshold",
        "batch_size",
        "device",
        "max_length",
        "quantize",
        "backend",
        "precision",
        "export_dir",
        "all_passages",
        "premise",
        "chunk_tokens",
        "support_label",
        "about",
    }
)


@dataclass(frozen=True, slots=True)
class NLISettings:
    """A validated NLI judge file."""

    model: str = DEFAULT_MODEL
    revision: str | None = None
    threshold: float = 0.5
    batch_size: int | None = None
    """None: chosen for the device (see `backends.auto_batch_size`)."""
    device: str | None = None
    max_length: int | None = None
    quantize: str | None = None
    all_passages: bool = False
    backend: str = "torch"
    precision: str = "auto"
    export_dir: str | None = None
    premise: str = "windows"
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS
    """Chunk mode only: the most model tokens of one (chunk, claim) pair, special tokens included."""
    support_label: str | int | None = None
    """The head's label that means "supported" (a name in `config.id2label` or an index); None: the
    label starting with 'entail'."""
    models: tuple[tuple[str, str], ...] = ()
    """The `"models"` map (SPEC §2.2), sorted: (language code or "*", model); () = `model` for every
    language. A sentence whose language has no entry (and no "*") is not judged by NLI."""

    def model_for(self, language: str) -> str | None:
        """The model that judges sentences of this language (None: none does)."""
        if not self.models:
            return self.model
        found = dict(self.models)
        return found.get(language, found.get(ANY_LANGUAGE))

    @property
    def backend_choice(self) -> BackendChoice:
        return BackendChoice(self.backend, self.quantize, self.precision, self.export_dir)

    @property
    def premise_tag(self) -> str:
        """'' for windows (the default), '+chunks<chunk_tokens>' for chunks: joins the judge version
        and the cache key, so scores of the two modes (or of two chunk sizes) never mix."""
        return "" if self.premise == "windows" else f"{CHUNKS_TAG}{self.chunk_tokens}"


def is_chunk_version(judge_version: str | None) -> bool:
    """Whether a judge version names chunk premises (its best premise per passage is a chunk)."""
    return CHUNKS_TAG in (judge_version or "")


def parse_spec(spec: Mapping[str, Any]) -> NLISettings:
    """Validate every field of an NLI judge file; unknown fields are an error."""
    unknown = set(spec) - _FIELDS
    if unknown:
        raise JudgeSpecError(f"nli judge: unknown fields {sorted(unknown)}; allowed: {sorted(_FIELDS)}")
    models = _models(spec)
    model = spec.get("model", dict(models).get(ANY_LANGUAGE) or (models[0][1] if models else DEFAULT_MODEL))
    if not isinstance(model, str) or not model.strip():
        raise JudgeSpecError("nli judge: 'model' must be a Hub model id or a local directory path")
    threshold = spec.get("threshold", 0.5)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
        raise JudgeSpecError(f"nli judge: 'threshold' must be a number in [0, 1], got {threshold!r}")
    choice = parse_backend(spec)
    all_passages = spec.get("all_passages", False)
    if not isinstance(all_passages, bool):
        raise JudgeSpecError("nli judge: 'all_passages' must be true or false")
    if not isinstance(spec.get("about", ""), str):
        raise JudgeSpecError("nli judge: 'about' must be a string")
    premise = spec.get("premise", "windows")
    if premise not in PREMISES:
        raise JudgeSpecError(f"nli judge: 'premise' must be one of {list(PREMISES)}, got {premise!r}")
    if "chunk_tokens" in spec and premise != "chunks":
        raise JudgeSpecError("nli judge: 'chunk_tokens' applies only with \"premise\": \"chunks\"")
    chunk_tokens = _positive_int(spec, "chunk_tokens", DEFAULT_CHUNK_TOKENS)
    if chunk_tokens is not None and chunk_tokens < MIN_CHUNK_TOKENS:
        raise JudgeSpecError(
            f"nli judge: 'chunk_tokens' must be at least {MIN_CHUNK_TOKENS} (the claim is counted in it), "
            f"got {chunk_tokens}"
        )
    return NLISettings(
        model=model.strip(),
        revision=_optional_str(spec, "revision"),
        threshold=float(threshold),
        batch_size=None if spec.get("batch_size", "auto") == "auto" else _positive_int(spec, "batch_size", 32),
        device=_optional_str(spec, "device"),
        max_length=_positive_int(spec, "max_length", None),
        quantize=choice.quantize,
        all_passages=all_passages,
        backend=choice.backend,
        precision=choice.precision,
        export_dir=choice.export_dir,
        premise=premise,
        chunk_tokens=chunk_tokens or DEFAULT_CHUNK_TOKENS,
        support_label=_support_label(spec),
        models=models,
    )


def _models(spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The `"models"` map: language code (ISO 639, lower case) or "*" → model id or directory.
    A lone `"model"` is `{"*": model}` (returned as (): one model for every language)."""
    if "models" not in spec:
        return ()
    if "model" in spec:
        raise JudgeSpecError("nli judge: give 'model' (one model for every language) or 'models' (per language), "
                             "not both")
    models = spec["models"]
    if not isinstance(models, Mapping) or not models:
        raise JudgeSpecError("nli judge: 'models' must be a non-empty object {language code or \"*\": model}")
    out = []
    for code, model in models.items():
        if code != ANY_LANGUAGE and not (isinstance(code, str) and code.isascii() and code.isalpha()
                                         and code.islower() and 2 <= len(code) <= 3):
            raise JudgeSpecError(f"nli judge: 'models' key {code!r} is not a language code (de, ja) or \"*\"")
        if not isinstance(model, str) or not model.strip():
            raise JudgeSpecError(f"nli judge: 'models' {code!r} must name a Hub model id or a local directory path")
        out.append((code, model.strip()))
    return tuple(sorted(out))


def _support_label(spec: Mapping[str, Any]) -> str | int | None:
    value = spec.get("support_label")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int) or (isinstance(value, int) and value < 0):
        raise JudgeSpecError(
            f"nli judge: 'support_label' must be a label name of the model's config.id2label or a "
            f"non-negative index, got {value!r}"
        )
    if isinstance(value, str) and not value.strip():
        raise JudgeSpecError("nli judge: 'support_label' must not be empty")
    return value


def _optional_str(spec: Mapping[str, Any], name: str) -> str | None:
    value = spec.get(name)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise JudgeSpecError(f"nli judge: '{name}' must be a non-empty string or null, got {value!r}")
    return value


def _positive_int(spec: Mapping[str, Any], name: str, default: int | None) -> int | None:
    value = spec.get(name, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise JudgeSpecError(f"nli judge: '{name}' must be a positive integer, got {value!r}")
    return value
