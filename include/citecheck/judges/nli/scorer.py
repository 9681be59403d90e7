"""The loaded cross-encoder: its support label, its token counts and its softmax probabilities."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from citecheck.judges.base import JudgeSpecError
from citecheck.judges.cache import Probabilities
from citecheck.judges.nli.backends import apply_precision, load_cross_encoder, resolve_precision, variant_tag
from citecheck.judges.nli.settings import NLISettings

Pair = tuple[str, str]
"""(premise, sentence): premise first, as NLI cross-encoders expect."""


class ModelLoadError(JudgeSpecError):
    """The judge file names a model that cannot be loaded or whose support label is unknown."""


def label_indices(id2label: Mapping[Any, str], support_label: str | int | None = None) -> tuple[int, int | None]:
    """(support, contradiction) indices read from `config.id2label`, never assumed.

    Support is the label `support_label` names (a label name, or an index) or, without it, the one
    label starting with 'entail'. A head whose labels are not NLI's (MiniCheck's two labels
    `LABEL_0` / `LABEL_1`) needs `support_label`; without it the model is refused."""
    labels = {int(i): str(name) for i, name in id2label.items()}
    contra = [i for i, name in labels.items() if name.lower().startswith("contra")]
    if len(contra) > 1:
        raise ModelLoadError(f"nli judge: config.id2label {dict(id2label)} has several contradiction labels")
    if support_label is not None:
        support = _named_label(labels, support_label)
        return support, (contra[0] if contra and contra[0] != support else None)
    entail = [i for i, name in labels.items() if name.lower().startswith("entail")]
    if len(entail) != 1:
        raise ModelLoadError(
            f"nli judge: the model's config.id2label {dict(id2label)} has "
            f"{'no' if not entail else 'more than one'} entailment label; an NLI cross-encoder must "
            "name exactly one label starting with 'entail' (e.g. cross-encoder/nli-deberta-v3-base). "
            'For a fact-checking head whose labels are not NLI\'s, set "support_label" in the judge file '
            'to the label that means supported, by name or index (MiniCheck: "support_label": "LABEL_1")'
        )
    return entail[0], (contra[0] if contra else None)


def _named_label(labels: Mapping[int, str], support_label: str | int) -> int:
    """The index `support_label` names: an index of the head, or a label name (exact, else the one
    case-insensitive match)."""
    listed = ", ".join(f"{i}: {name!r}" for i, name in sorted(labels.items()))
    if isinstance(support_label, int):
        if support_label not in labels:
            raise ModelLoadError(
                f"nli judge: 'support_label' {support_label} is not an index of the model's labels ({listed})"
            )
        return support_label
    exact = [i for i, name in labels.items() if name == support_label]
    folded = [i for i, name in labels.items() if name.casefold() == support_label.casefold()]
    found = exact or folded
    if not found and support_label.strip().isdigit() and int(support_label) in labels:
        return int(support_label)  # an index written as a string
    if len(found) != 1:
        raise ModelLoadError(
            f"nli judge: 'support_label' {support_label!r} names {'no' if not found else 'more than one'} "
            f"label of the model ({listed}); give a label name or an index"
        )
    return found[0]


class CrossEncoderScorer:
    """A loaded cross-encoder: its label order, its token counts and softmax probabilities."""

    def __init__(
        self,
        model: Any,
        *,
        model_id: str,
        revision: str | None,
        max_length: int | None,
        variant: str = "",
        support_label: str | int | None = None,
    ) -> None:
        self.model = model
        self.model_id = model_id
        self.revision = revision
        self.variant = variant
        """'' for torch fp32, else the backend/quantization/precision tag (`backends.variant_tag`)."""
        self.tokenizer = model.tokenizer
        if self.tokenizer is None:
            raise ModelLoadError(f"nli judge: model {model_id!r} has no text tokenizer")
        config = model.model.config
        id2label = dict(config.id2label or {})
        self.labels = tuple(str(id2label[i]) for i in sorted(id2label))
        self.entail_index, self.contra_index = label_indices(id2label, support_label)
        """`entail_index`: the support label (entailment, or the judge file's `support_label`)."""
        self.support_label = None if support_label is None else self.labels[self.entail_index]
        limit = _model_length_limit(self.tokenizer, config)
        if max_length is not None and limit is not None and max_length > limit:
            raise ModelLoadError(
                f"nli judge: max_length {max_length} exceeds the model's limit of {limit} tokens"
            )
        resolved = max_length or limit
        if resolved is None:
            raise ModelLoadError(f"nli judge: model {model_id!r} states no max length; set 'max_length'")
        self.max_length = resolved
        model.max_seq_length = resolved
        self.special_tokens = self.tokenizer.num_special_tokens_to_add(pair=True)

    @property
    def device(self) -> str:
        return str(self.model.device)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text without special tokens (what it adds to a pair)."""
        if not texts:
            return []
        encoded = self.tokenizer(list(texts), add_special_tokens=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of each token, to cut a long text at token boundaries."""
        encoded = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [tuple(span) for span in encoded["offset_mapping"]]

    def probabilities(self, pairs: Sequence[Pair]) -> list[Probabilities]:
        """Softmax over the model's raw logits (any saved activation is bypassed)."""
        import torch

        logits = self.model.predict(
            list(pairs),
            batch_size=max(1, len(pairs)),
            activation_fn=torch.nn.Identity(),
            convert_to_tensor=True,
            show_progress_bar=False,
        )
        probs = torch.softmax(logits.float().reshape(len(pairs), -1), dim=-1).cpu().tolist()
        return [tuple(row) for row in probs]


def _model_length_limit(tokenizer: Any, config: Any) -> int | None:
    """The longest input the model takes: the tokenizer's limit, capped by its position table."""
    limits = []
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        limits.append(tok_max)
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        offset = 2 if getattr(config, "model_type", "") in {"roberta", "xlm-roberta", "camembert"} else 0
        limits.append(positions - offset)
    return min(limits) if limits else None


def load_scorer(settings: NLISettings) -> CrossEncoderScorer:
    """Load the configured cross-encoder through `CrossEncoder` on the configured backend; never fall
    back to another model or backend."""
    looks_local = settings.model.startswith(("/", "./", "../", "~")) or Path(settings.model).exists()
    path = Path(settings.model).expanduser()
    if looks_local and not path.exists():
        raise ModelLoadError(_load_help(settings, f"no such directory: {path}"))
    choice = settings.backend_choice
    try:
        model = load_cross_encoder(
            str(path) if looks_local else settings.model,
            revision=settings.revision,
            device=settings.device,
            choice=choice,
            local=path.resolve() if looks_local else None,
        )
    except JudgeSpecError:
        raise  # already says what to install, export or set
    except Exception as exc:  # any loader failure becomes one clear, actionable error
        raise ModelLoadError(_load_help(settings, f"{type(exc).__name__}: {exc}")) from exc
    precision = "fp32" if choice.quantize == "int8" and choice.backend == "torch" else (
        resolve_precision(choice.precision, str(model.device), choice.backend)
    )
    if choice.backend == "torch":
        apply_precision(model, precision)
    return CrossEncoderScorer(
        model,
        model_id=settings.model,
        revision=settings.revision,
        max_length=settings.max_length,
        variant=variant_tag(choice, precision),
        support_label=settings.support_label,
    )


def _load_help(settings: NLISettings, cause: str) -> str:
    rev = f" --revision {settings.revision}" if settings.revision else ""
    return (
        f'nli judge: cannot load model {settings.model!r} ({cause}). Set "model" in the judge file to a '
        "local directory that holds a saved NLI cross-encoder (config.json, weights, tokenizer files), or "
        "to a Hugging Face Hub id that is already in the local cache (HF_HOME / HF_HUB_CACHE). To "
        f"pre-download it where the Hub is reachable: `huggingface-cli download {settings.model}{rev}` "
        f"(or `hf download {settings.model}{rev}`), or save it with "
        f'`CrossEncoder({settings.model!r}).save_pretrained(DIR)` and point "model" at DIR; then set '
        "HF_HUB_OFFLINE=1 so no run tries the network. The judge never falls back to another model."
    )
