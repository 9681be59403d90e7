"""The NLI judge (SPEC §4): a sentence-transformers `CrossEncoder` scoring sentence windows.

Each sentence is scored against windows of one and two consecutive sentences inside one
passage (never across passages, so citation order cannot change a score) and a passage's score
is its best window's entailment probability. A passage supports the sentence iff that score is
at least `threshold`; a label set supports it iff some member does. That makes `cited` "some
single cited passage supports it", stricter than ALCE's joint judgment of the cited set:
support that needs two passages together is the LLM judge's job.

One `judge(items)` call collects every distinct (window, sentence) pair any decision needs
(the same sentence and window in two turns is one pair), asks the cache, scores the rest once,
sorted by token length so batches carry little padding, and derives `cited`, `alone`, `rest`,
`elsewhere` and faithfulness from those scores. Uncited passages are scored only for sentences
whose cited passages do not support them (faithfulness is already decided otherwise, and
`elsewhere` is then the best cited passage), unless `all_passages` asks for every passage.

Nothing is truncated: a window that does not fit the model's max length next to the sentence is
split (a two-sentence window into its one-sentence windows, an over-long sentence into
overlapping token chunks) and counted in `stats()["splits"]`. A batch that fails is halved and
retried; a pair that still fails leaves its sentence unjudged with the reason.

The judge file's `backend` (torch, onnx, openvino), `quantize` (null, int8), `precision` (auto:
fp16 on CUDA) and `batch_size` ("auto": by device) choose how the model runs; `nli_backends` loads
and exports them, and the variant's tag joins the judge version and the cache key.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from time import perf_counter
from typing import Any

from citecheck.core.model import JudgeItem, Judgment, Passage, unjudged
from citecheck.core.text import normalise_statement
from citecheck.judges.base import JudgeSpecError
from citecheck.judges.cache import InMemoryCache, JudgmentCache, Probabilities, cache_key
from citecheck.judges.derive import derive_judgment
from citecheck.judges.nli_backends import (
    BackendChoice,
    apply_precision,
    auto_batch_size,
    load_cross_encoder,
    parse_backend,
    resolve_precision,
    variant_tag,
)

DEFAULT_MODEL = "cross-encoder/nli-deberta-v3-base"
MIN_PREMISE_TOKENS = 8
"""A sentence that leaves fewer premise tokens than this is too long to judge without truncation."""
_CACHE_FLUSH_PAIRS = 4096
_MEMO_LIMIT = 200_000
_FIELDS = frozenset(
    {
        "kind",
        "model",
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
        "about",
    }
)

Pair = tuple[str, str]
"""(window, sentence): premise first, as NLI cross-encoders expect."""


class ModelLoadError(JudgeSpecError):
    """The judge file names a model that cannot be loaded or is not an NLI classifier."""


@dataclass(frozen=True, slots=True)
class NLISettings:
    """A validated NLI judge file."""

    model: str = DEFAULT_MODEL
    revision: str | None = None
    threshold: float = 0.5
    batch_size: int | None = None
    """None: chosen for the device (see `nli_backends.auto_batch_size`)."""
    device: str | None = None
    max_length: int | None = None
    quantize: str | None = None
    all_passages: bool = False
    backend: str = "torch"
    precision: str = "auto"
    export_dir: str | None = None

    @property
    def backend_choice(self) -> BackendChoice:
        return BackendChoice(self.backend, self.quantize, self.precision, self.export_dir)


def parse_spec(spec: Mapping[str, Any]) -> NLISettings:
    """Validate every field of an NLI judge file; unknown fields are an error."""
    unknown = set(spec) - _FIELDS
    if unknown:
        raise JudgeSpecError(f"nli judge: unknown fields {sorted(unknown)}; allowed: {sorted(_FIELDS)}")
    model = spec.get("model", DEFAULT_MODEL)
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
    )


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


def label_indices(id2label: Mapping[Any, str]) -> tuple[int, int | None]:
    """(entailment, contradiction) indices read from `config.id2label`, never assumed."""
    labels = {int(i): str(name).lower() for i, name in id2label.items()}
    entail = [i for i, name in labels.items() if name.startswith("entail")]
    contra = [i for i, name in labels.items() if name.startswith("contra")]
    if len(entail) != 1:
        raise ModelLoadError(
            f"nli judge: the model's config.id2label {dict(id2label)} has "
            f"{'no' if not entail else 'more than one'} entailment label; an NLI cross-encoder must "
            "name exactly one label starting with 'entail' (e.g. cross-encoder/nli-deberta-v3-base)"
        )
    if len(contra) > 1:
        raise ModelLoadError(f"nli judge: config.id2label {dict(id2label)} has several contradiction labels")
    return entail[0], (contra[0] if contra else None)


class CrossEncoderScorer:
    """A loaded NLI cross-encoder: its label order, its token counts and softmax probabilities."""

    def __init__(
        self,
        model: Any,
        *,
        model_id: str,
        revision: str | None,
        max_length: int | None,
        variant: str = "",
    ) -> None:
        self.model = model
        self.model_id = model_id
        self.revision = revision
        self.variant = variant
        """'' for torch fp32, else the backend/quantization/precision tag (`nli_backends.variant_tag`)."""
        self.tokenizer = model.tokenizer
        if self.tokenizer is None:
            raise ModelLoadError(f"nli judge: model {model_id!r} has no text tokenizer")
        config = model.model.config
        id2label = dict(config.id2label or {})
        self.labels = tuple(str(id2label[i]) for i in sorted(id2label))
        self.entail_index, self.contra_index = label_indices(id2label)
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


@dataclass(slots=True)
class _Units:
    """A passage's sentences and its two-sentence windows, with their token lengths."""

    singles: tuple[tuple[str, int], ...]
    doubles: tuple[tuple[str, int], ...]


@dataclass(slots=True)
class _Plan:
    """One item's sentence, its premise budget and its passages."""

    item: JudgeItem
    sentence: str = ""
    hypothesis_tokens: int = 0
    passages: dict[str, Passage] = field(default_factory=dict)
    cited: tuple[str, ...] = ()
    reason: str | None = None


@dataclass(slots=True)
class _Counters:
    calls: int = 0
    sentences: int = 0
    unjudged: int = 0
    pairs_needed: int = 0
    cache_hits: int = 0
    pairs_scored: int = 0
    pairs_failed: int = 0
    tokens: int = 0
    padded_tokens: int = 0
    splits: int = 0
    batches: int = 0
    batch_retries: int = 0
    model_seconds: float = 0.0
    judge_seconds: float = 0.0


class NLIJudge:
    """Windowed cross-encoder support judgments; see the module docstring for the rules."""

    name = "nli"

    def __init__(
        self,
        scorer: CrossEncoderScorer,
        settings: NLISettings,
        *,
        cache: JudgmentCache | None = None,
        progress: bool | None = None,
    ) -> None:
        self.scorer = scorer
        self.settings = settings
        self.cache: JudgmentCache = cache if cache is not None else InMemoryCache()
        self.threshold = settings.threshold
        suffix = scorer.variant  # backend, quantization and precision: the cache never mixes them
        self._cache_model = scorer.model_id + suffix
        self.version = scorer.model_id + (f"@{scorer.revision}" if scorer.revision else "") + suffix
        self.batch_size = settings.batch_size or auto_batch_size(scorer.device)
        self._progress = progress
        self._units: dict[str, _Units] = {}
        self._windows: dict[tuple[str, int], tuple[tuple[tuple[str, int], ...], tuple[str, ...]]] = {}
        self._lengths: dict[str, int] = {}
        self._n = _Counters()

    # -- the Judge protocol ---------------------------------------------------------------------

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        """One judgment per item, in order; every pair any of them needs is scored at most once."""
        started = perf_counter()
        self._remember_lengths([normalise_statement(item.sentence) for item in items])
        plans = [self._plan(item) for item in items]
        live = [p for p in plans if p.reason is None]
        self._prepare(p.passages[label].text for p in live for label in p.cited if label in p.passages)
        scores: dict[Pair, Probabilities] = {}
        failures: dict[Pair, str] = {}
        split_pairs: set[Pair] = set()
        needed = self._pairs(live, cited_only=True, split_pairs=split_pairs)
        self._score(needed, scores, failures)
        second = [p for p in live if self._needs_uncited(p, scores, failures)]
        self._prepare(ps.text for p in second for label, ps in p.passages.items() if label not in p.cited)
        more = self._pairs(second, cited_only=False, split_pairs=split_pairs)
        self._score({pair: n for pair, n in more.items() if pair not in needed}, scores, failures)
        judgments = [self._judgment(p, scores, failures) for p in plans]
        n = self._n
        n.calls += 1
        n.sentences += len(items)
        n.unjudged += sum(1 for j in judgments if not j.judged)
        n.splits += len(split_pairs)
        n.judge_seconds += perf_counter() - started
        return judgments

    def stats(self) -> dict[str, Any]:
        """Counters for the runs table and the CLI's `stats` (cumulative over `judge` calls)."""
        n = self._n
        return {
            "judge": self.name,
            "model": self.scorer.model_id,
            "revision": self.scorer.revision,
            "version": self.version,
            "labels": list(self.scorer.labels),
            "device": self.scorer.device,
            "quantize": self.settings.quantize,
            "threshold": self.threshold,
            "batch_size": self.batch_size,
            "max_length": self.scorer.max_length,
            "cache": self.cache.describe(),
            "sentences": n.sentences,
            "unjudged": n.unjudged,
            "pairs_needed": n.pairs_needed,
            "cache_hits": n.cache_hits,
            "pairs_scored": n.pairs_scored,
            "pairs_failed": n.pairs_failed,
            "tokens": n.tokens,
            "padded_tokens": n.padded_tokens,
            "padding_share": (n.padded_tokens - n.tokens) / n.padded_tokens if n.padded_tokens else 0.0,
            "splits": n.splits,
            "batches": n.batches,
            "batch_retries": n.batch_retries,
            "model_seconds": round(n.model_seconds, 3),
            "judge_seconds": round(n.judge_seconds, 3),
            "pairs_per_second": n.pairs_scored / n.judge_seconds if n.judge_seconds else 0.0,
            "model_pairs_per_second": n.pairs_scored / n.model_seconds if n.model_seconds else 0.0,
        }

    # -- planning -------------------------------------------------------------------------------

    def _plan(self, item: JudgeItem) -> _Plan:
        plan = _Plan(item=item, sentence=normalise_statement(item.sentence))
        if not plan.sentence:
            plan.reason = "empty sentence"
            return plan
        plan.hypothesis_tokens = self._length(plan.sentence)
        room = self.scorer.max_length - self.scorer.special_tokens - plan.hypothesis_tokens
        if room < MIN_PREMISE_TOKENS:
            plan.reason = (
                f"sentence is {plan.hypothesis_tokens} tokens; the model's max length "
                f"{self.scorer.max_length} leaves no room for a premise without truncation"
            )
            return plan
        for passage in item.context:
            plan.passages.setdefault(passage.label, passage)
        plan.cited = tuple(dict.fromkeys(item.cited))
        return plan

    def _length(self, text: str) -> int:
        if text not in self._lengths:
            self._remember_lengths([text])
        return self._lengths[text]

    def _remember_lengths(self, texts: Sequence[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self._lengths))
        if len(self._lengths) + len(missing) > 4 * _MEMO_LIMIT:
            self._lengths.clear()
        self._lengths.update(zip(missing, self.scorer.token_lengths(missing), strict=True))

    def _prepare(self, texts: Iterable[str]) -> None:
        """Segment new passages and count the tokens of all their windows in one tokenizer call."""
        from citecheck.core.parsing import split_sentences

        new = [t for t in dict.fromkeys(texts) if t not in self._units]
        if not new:
            return
        if len(self._units) + len(new) > _MEMO_LIMIT:
            self._units.clear()
            self._windows.clear()
        segmented = {}
        for text in new:
            sentences = [normalise_statement(s) for s in split_sentences(text)]
            segmented[text] = [s for s in sentences if s]
        doubles = {t: [f"{a} {b}" for a, b in pairwise(s)] for t, s in segmented.items()}
        self._remember_lengths([w for t in new for w in segmented[t] + doubles[t]])
        for text in new:
            self._units[text] = _Units(
                singles=tuple((s, self._lengths[s]) for s in segmented[text]),
                doubles=tuple((d, self._lengths[d]) for d in doubles[text]),
            )

    def _passage_windows(self, text: str, room: int) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
        """(windows with token lengths, the over-long windows that were split) for a premise budget."""
        if text not in self._units:
            self._prepare([text])
        units = self._units[text]
        longest = max((n for _, n in units.singles + units.doubles), default=0)
        key = (text, room if longest > room else -1)  # a passage that fits is the same for every sentence
        if key not in self._windows:
            if len(self._windows) > _MEMO_LIMIT:
                self._windows.clear()
            windows: dict[str, int] = {}
            over: list[str] = []
            for sentence, n in units.singles:
                if n <= room:
                    windows.setdefault(sentence, n)
                else:
                    over.append(sentence)
                    windows.update(
                        (piece, m) for piece, m in self._chunks(sentence, room) if piece not in windows
                    )
            for double, n in units.doubles:
                if n <= room:
                    windows.setdefault(double, n)
                else:
                    over.append(double)  # its one-sentence windows (or their chunks) are already there
            self._windows[key] = (tuple(windows.items()), tuple(over))
        return self._windows[key]

    def _chunks(self, text: str, room: int) -> list[tuple[str, int]]:
        """Overlapping pieces of an over-long sentence, cut at token boundaries, each within `room`."""
        offsets = self.scorer.token_offsets(text)
        overlap = max(1, room // 4)
        pieces: list[tuple[str, int]] = []
        start = 0
        while start < len(offsets):
            end = min(start + room, len(offsets))
            while True:
                piece = text[offsets[start][0] : offsets[end - 1][1]].strip()
                n = self.scorer.token_lengths([piece])[0]
                if n <= room or end - start <= 1:
                    break
                end -= max(1, n - room)
            if piece and n <= room:
                pieces.append((piece, n))
            if end >= len(offsets):
                break
            start = max(start + 1, end - overlap)
        return pieces

    def _pairs(self, plans: Sequence[_Plan], *, cited_only: bool, split_pairs: set[Pair]) -> dict[Pair, int]:
        """Every distinct (window, sentence) pair the plans need, with its token length."""
        needed: dict[Pair, int] = {}
        for plan in plans:
            labels = plan.cited if cited_only else [lab for lab in plan.passages if lab not in plan.cited]
            for label in labels:
                passage = plan.passages.get(label)
                if passage is None:
                    continue
                windows, over = self._passage_windows(passage.text, self._room(plan))
                fixed = self.scorer.special_tokens + plan.hypothesis_tokens
                for window, n in windows:
                    needed.setdefault((window, plan.sentence), n + fixed)
                split_pairs.update((window, plan.sentence) for window in over)
        return needed

    def _room(self, plan: _Plan) -> int:
        return self.scorer.max_length - self.scorer.special_tokens - plan.hypothesis_tokens

    # -- scoring --------------------------------------------------------------------------------

    def _score(
        self, needed: Mapping[Pair, int], scores: dict[Pair, Probabilities], failures: dict[Pair, str]
    ) -> None:
        """Fill `scores` for `needed`: cache first, then the model on length-sorted batches."""
        if not needed:
            return
        keys = {pair: cache_key(self._cache_model, self.scorer.revision, pair[1], pair[0]) for pair in needed}
        cached = self.cache.get_many(keys.values())
        todo = []
        for pair, key in keys.items():
            if key in cached:
                scores[pair] = cached[key]
            else:
                todo.append(pair)
        self._n.pairs_needed += len(needed)
        self._n.cache_hits += len(needed) - len(todo)
        todo.sort(key=needed.__getitem__)
        pending: dict[Pair, Probabilities] = {}
        from tqdm import tqdm

        show = self._progress if self._progress is not None else sys.stderr.isatty()
        with tqdm(total=len(todo), unit="pair", desc="nli judge", disable=not show) as bar:
            size = self.batch_size
            for start in range(0, len(todo), size):
                batch = todo[start : start + size]
                self._run_batch(batch, needed, pending, failures)
                bar.update(len(batch))
                if len(pending) >= _CACHE_FLUSH_PAIRS:
                    self._flush(pending, keys, scores)
        self._flush(pending, keys, scores)

    def _flush(
        self, pending: dict[Pair, Probabilities], keys: Mapping[Pair, Any], scores: dict[Pair, Probabilities]
    ) -> None:
        if pending:
            self.cache.put_many({keys[pair]: probs for pair, probs in pending.items()})
            scores.update(pending)
            pending.clear()

    def _run_batch(
        self,
        batch: list[Pair],
        lengths: Mapping[Pair, int],
        out: dict[Pair, Probabilities],
        failures: dict[Pair, str],
    ) -> None:
        """Score one batch; on failure (e.g. out of memory) halve it, down to single pairs."""
        started = perf_counter()
        try:
            probs = self.scorer.probabilities(batch)
        except (RuntimeError, MemoryError, ValueError) as exc:
            self._n.model_seconds += perf_counter() - started
            _release_accelerator_memory()
            if len(batch) == 1:
                failures[batch[0]] = f"{type(exc).__name__}: {exc}"[:300]
                self._n.pairs_failed += 1
                return
            self._n.batch_retries += 1
            half = len(batch) // 2
            self._run_batch(batch[:half], lengths, out, failures)
            self._run_batch(batch[half:], lengths, out, failures)
            return
        self._n.model_seconds += perf_counter() - started
        sizes = [lengths[pair] for pair in batch]
        self._n.batches += 1
        self._n.pairs_scored += len(batch)
        self._n.tokens += sum(sizes)
        self._n.padded_tokens += max(sizes) * len(batch)
        out.update(zip(batch, probs, strict=True))

    # -- deriving judgments ---------------------------------------------------------------------

    def _passage_score(
        self, plan: _Plan, label: str, scores: Mapping[Pair, Probabilities], failures: Mapping[Pair, str]
    ) -> tuple[float, float | None, str | None] | str | None:
        """(best entailment, max contradiction, best window); a failure reason; None if not scored."""
        passage = plan.passages.get(label)
        if passage is None:
            return (0.0, None, None)
        windows, _ = self._passage_windows(passage.text, self._room(plan))
        best: tuple[float, float | None, str | None] = (0.0, None, None)
        contra: float | None = None
        for window, _n in windows:
            pair = (window, plan.sentence)
            if pair in failures:
                return failures[pair]
            if pair not in scores:
                return None
            probs = scores[pair]
            entail = probs[self.scorer.entail_index]
            if best[2] is None or entail > best[0]:
                best = (entail, None, window)
            if self.scorer.contra_index is not None:
                c = probs[self.scorer.contra_index]
                contra = c if contra is None else max(contra, c)
        return (best[0], contra, best[2])

    def _needs_uncited(
        self, plan: _Plan, scores: Mapping[Pair, Probabilities], failures: Mapping[Pair, str]
    ) -> bool:
        """Whether the uncited passages must be scored: only when no cited passage supports."""
        results = [self._passage_score(plan, label, scores, failures) for label in plan.cited]
        if any(isinstance(r, str) for r in results):
            return False  # a cited pair failed: the sentence is unjudged whatever the rest says
        return self.settings.all_passages or not any(r and r[0] >= self.threshold for r in results)

    def _judgment(
        self, plan: _Plan, scores: Mapping[Pair, Probabilities], failures: Mapping[Pair, str]
    ) -> Judgment:
        if plan.reason is not None:
            return unjudged(plan.reason, self.name, self.version)
        entail: dict[str, float] = {}
        contra: dict[str, float | None] = {}
        best_window: dict[str, str | None] = {}
        for label in plan.passages:
            result = self._passage_score(plan, label, scores, failures)
            if isinstance(result, str):
                return unjudged(f"model failed on a pair: {result}", self.name, self.version)
            if result is not None:
                entail[label], contra[label], best_window[label] = result
        thr = self.threshold
        pool = [lab for lab in plan.cited if lab in plan.passages] or list(entail)
        contras = [c for lab in pool if (c := contra.get(lab)) is not None]
        detail = {
            "passage_scores": entail,
            "passage_contradiction": contra,
            "best_windows": best_window,
            "threshold": thr,
        }
        # A set supports the sentence when some member entails it; `elsewhere` prefers the best
        # cited passage, then the best other one.
        others = [lab for lab in plan.passages if lab not in plan.cited]
        return derive_judgment(
            plan.cited,
            lambda labels: any(entail.get(lab, 0.0) >= thr for lab in labels),
            judge=self.name,
            judge_version=self.version,
            prefer=sorted([*plan.cited, *others], key=lambda lab: (lab not in plan.cited, -entail.get(lab, 0.0))),
            score=max((entail.get(lab, 0.0) for lab in plan.cited), default=None),
            contradiction=max(contras) if contras else None,
            detail=detail,
        )


def _release_accelerator_memory() -> None:
    """After an out-of-memory error, give cached CUDA blocks back before the retry."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def _cache_from_options(options: Mapping[str, Any]) -> JudgmentCache:
    cache = options.get("cache")
    if cache is None:
        return InMemoryCache()
    if not all(callable(getattr(cache, name, None)) for name in ("get_many", "put_many", "describe")):
        raise JudgeSpecError("nli judge: 'cache' must have get_many, put_many and describe")
    return cache


def from_spec(spec: Mapping[str, Any], **options: Any) -> NLIJudge:
    """Build the NLI judge of a judge file; options: `cache` (a `JudgmentCache`; default in memory), `progress`."""
    settings = parse_spec(spec)
    cache = _cache_from_options(options)
    return NLIJudge(load_scorer(settings), settings, cache=cache, progress=options.get("progress"))
