"""The NLI judge (SPEC §4): a sentence-transformers `CrossEncoder` scoring premises of passages.

With window premises (the default, `windows.py`) each sentence is scored against windows of one
and two consecutive sentences inside one passage, and a passage's score is its best window's
entailment probability. A passage supports the sentence iff that score is at least `threshold`; a
label set supports it iff some member does. That makes `cited` "some single cited passage
supports it", stricter than ALCE's joint judgment of the cited set.

With chunk premises (`"premise": "chunks"`, `chunks.py`) the sentences of a passage set are
packed in order into chunks of `chunk_tokens` model tokens (the claim included) and a set's score
is its best chunk's: `alone` from that passage's chunks, `cited` and `rest` from the chunks of
the set in citation order (a chunk may join two of its passages), `elsewhere` from each other
passage's chunks. Either way the set answers become a judgment through `judges.derive`.

One `judge(items)` call collects every distinct (premise, sentence) pair any decision needs
(the same sentence and premise in two turns is one pair), asks the cache, scores the rest once,
sorted by token length so batches carry little padding, and derives `cited`, `alone`, `rest`,
`elsewhere` and faithfulness from those scores. Uncited passages are scored only for sentences
whose citations do not support them (faithfulness is already decided otherwise, and `elsewhere`
is then the best cited passage), unless `all_passages` asks for every passage.

Nothing is truncated: a premise that does not fit the model's max length (or the chunk budget)
next to the sentence is split and counted in `stats()["splits"]`. A batch that fails is halved and
retried; a pair that still fails leaves its sentence unjudged with the reason.

The judge file's `backend` (torch, onnx, openvino), `quantize` (null, int8), `precision` (auto:
fp16 on CUDA) and `batch_size` ("auto": by device) choose how the model runs (`backends`); the
variant's tag and the premise mode's tag join the judge version and the cache key.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

from citecheck.core.model import JudgeItem, Judgment, Passage, unjudged
from citecheck.core.text import normalise_statement
from citecheck.judges.base import JudgeSpecError
from citecheck.judges.cache import InMemoryCache, JudgmentCache, Probabilities, cache_key
from citecheck.judges.derive import derive_judgment
from citecheck.judges.nli.backends import auto_batch_size
from citecheck.judges.nli.chunks import ChunkPremises
from citecheck.judges.nli.languages import LanguageNLIJudge
from citecheck.judges.nli.premises import PremiseBuilder, TextUnits
from citecheck.judges.nli.scorer import CrossEncoderScorer, Pair, load_scorer
from citecheck.judges.nli.settings import ANY_LANGUAGE, NLISettings, parse_spec
from citecheck.judges.nli.windows import WindowPremises

MIN_PREMISE_TOKENS = 8
"""A sentence that leaves fewer premise tokens than this is too long to judge without truncation."""
_CACHE_FLUSH_PAIRS = 4096

Labels = tuple[str, ...]
"""A passage set in citation order (one label: a passage alone)."""
SetScore = tuple[float, float | None, str | None]
"""(best support probability, max contradiction, best premise) of a passage set."""


@dataclass(slots=True)
class _Plan:
    """One item's sentence, its premise budget and its passages."""

    item: JudgeItem
    sentence: str = ""
    hypothesis_tokens: int = 0
    passages: dict[str, Passage] = field(default_factory=dict)
    cited: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def resolved(self) -> Labels:
        """The cited labels that name a passage of the context, in citation order."""
        return tuple(lab for lab in self.cited if lab in self.passages)

    def ordered(self, labels: frozenset[str]) -> Labels:
        """A set of labels as premises see it: cited ones in citation order, then the others."""
        cited = [lab for lab in self.cited if lab in labels and lab in self.passages]
        return (*cited, *(lab for lab in self.passages if lab in labels and lab not in self.cited))


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
    """Cross-encoder support judgments over windows or chunks; see the module docstring."""

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
        # backend, quantization, precision and premise mode: the cache never mixes them
        suffix = scorer.variant + settings.premise_tag
        self._cache_model = scorer.model_id + suffix
        support = f"+support-{scorer.support_label}" if getattr(scorer, "support_label", None) else ""
        self.version = scorer.model_id + (f"@{scorer.revision}" if scorer.revision else "") + suffix + support
        self.batch_size = settings.batch_size or auto_batch_size(scorer.device)
        self._progress = progress
        self._units = TextUnits(scorer)
        self.premises: PremiseBuilder = (
            ChunkPremises(self._units, min(settings.chunk_tokens, scorer.max_length))
            if settings.premise == "chunks"
            else WindowPremises(self._units, scorer.max_length)
        )
        self._n = _Counters()

    # -- the Judge protocol ---------------------------------------------------------------------

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        """One judgment per item, in order; every pair any of them needs is scored at most once."""
        started = perf_counter()
        self._units.remember([normalise_statement(item.sentence) for item in items])
        plans = [self._plan(item) for item in items]
        live = [p for p in plans if p.reason is None]
        self.premises.prepare(p.passages[label].text for p in live for label in p.resolved)
        scores: dict[Pair, Probabilities] = {}
        failures: dict[Pair, str] = {}
        split_pairs: set[Pair] = set()
        needed = self._pairs(live, cited_only=True, split_pairs=split_pairs)
        self._score(needed, scores, failures)
        second = [p for p in live if self._needs_uncited(p, scores, failures)]
        self.premises.prepare(ps.text for p in second for label, ps in p.passages.items() if label not in p.cited)
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
            "premise": self.settings.premise,
            "chunk_tokens": self.settings.chunk_tokens if self.settings.premise == "chunks" else None,
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
        plan.hypothesis_tokens = self._units.length(plan.sentence)
        if self._room(plan) < MIN_PREMISE_TOKENS:
            limit = (
                f"the model's max length {self.scorer.max_length}"
                if self.premises.budget == self.scorer.max_length
                else f"chunk_tokens {self.premises.budget}"
            )
            plan.reason = (
                f"sentence is {plan.hypothesis_tokens} tokens; {limit} leaves no room for a premise "
                "without truncation"
            )
            return plan
        for passage in item.context:
            plan.passages.setdefault(passage.label, passage)
        plan.cited = tuple(dict.fromkeys(item.cited))
        return plan

    def _room(self, plan: _Plan) -> int:
        return self.premises.budget - self.scorer.special_tokens - plan.hypothesis_tokens

    def _sets(self, plan: _Plan, *, cited_only: bool) -> list[Labels]:
        """The passage sets whose premises a decision needs: each cited passage alone and, where
        premises may join passages, the cited set and each set of the others without one citation;
        or each uncited passage alone."""
        if not cited_only:
            return [(lab,) for lab in plan.passages if lab not in plan.cited]
        resolved = plan.resolved
        sets: list[Labels] = [(lab,) for lab in resolved]
        if self.premises.joint and len(resolved) > 1:
            sets.append(resolved)
            if len(resolved) > 2:
                sets += [tuple(lab for lab in resolved if lab != c) for c in resolved]
        return sets

    def _set_premises(self, plan: _Plan, labels: Labels) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
        return self.premises.premises(tuple(plan.passages[lab].text for lab in labels), self._room(plan))

    def _pairs(self, plans: Sequence[_Plan], *, cited_only: bool, split_pairs: set[Pair]) -> dict[Pair, int]:
        """Every distinct (premise, sentence) pair the plans need, with its token length."""
        needed: dict[Pair, int] = {}
        for plan in plans:
            fixed = self.scorer.special_tokens + plan.hypothesis_tokens
            for labels in self._sets(plan, cited_only=cited_only):
                premises, over = self._set_premises(plan, labels)
                for premise, n in premises:
                    needed.setdefault((premise, plan.sentence), n + fixed)
                split_pairs.update((unit, plan.sentence) for unit in over)
        return needed

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

    def _set_score(
        self, plan: _Plan, labels: Labels, scores: Mapping[Pair, Probabilities], failures: Mapping[Pair, str]
    ) -> SetScore | str | None:
        """(best support, max contradiction, best premise) of a passage set; a failure reason; None
        if not scored."""
        if not all(lab in plan.passages for lab in labels):
            return (0.0, None, None)
        premises, _ = self._set_premises(plan, labels)
        best: SetScore = (0.0, None, None)
        contra: float | None = None
        for premise, _n in premises:
            pair = (premise, plan.sentence)
            if pair in failures:
                return failures[pair]
            if pair not in scores:
                return None
            probs = scores[pair]
            entail = probs[self.scorer.entail_index]
            if best[2] is None or entail > best[0]:
                best = (entail, None, premise)
            if self.scorer.contra_index is not None:
                c = probs[self.scorer.contra_index]
                contra = c if contra is None else max(contra, c)
        return (best[0], contra, best[2])

    def _needs_uncited(
        self, plan: _Plan, scores: Mapping[Pair, Probabilities], failures: Mapping[Pair, str]
    ) -> bool:
        """Whether the uncited passages must be scored: only when the citations do not support."""
        results = [self._set_score(plan, labels, scores, failures) for labels in self._sets(plan, cited_only=True)]
        results += [(0.0, None, None) for lab in plan.cited if lab not in plan.passages]
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
            result = self._set_score(plan, (label,), scores, failures)
            if isinstance(result, str):
                return unjudged(f"model failed on a pair: {result}", self.name, self.version)
            if result is not None:
                entail[label], contra[label], best_window[label] = result
        joint: dict[Labels, float] = {}
        for labels in self._sets(plan, cited_only=True):
            if len(labels) > 1:
                result = self._set_score(plan, labels, scores, failures)
                if isinstance(result, str):
                    return unjudged(f"model failed on a pair: {result}", self.name, self.version)
                joint[labels] = result[0] if result else 0.0
        thr = self.threshold

        def set_score(labels: frozenset[str]) -> float:
            """A set's score: its best member's with windows; its own chunks' with chunks."""
            ordered = plan.ordered(labels)
            if len(ordered) > 1 and self.premises.joint:
                return joint.get(ordered, 0.0)
            return max((entail.get(lab, 0.0) for lab in ordered), default=0.0)

        pool = list(plan.resolved) or list(entail)
        contras = [c for lab in pool if (c := contra.get(lab)) is not None]
        detail: dict[str, Any] = {
            "passage_scores": entail,
            "passage_contradiction": contra,
            "best_windows": best_window,
            "threshold": thr,
        }
        if self.premises.joint:
            detail["premise"] = "chunks"
            detail["set_scores"] = {"+".join(labels): score for labels, score in joint.items()}
        # `elsewhere` prefers the best cited passage, then the best other one.
        others = [lab for lab in plan.passages if lab not in plan.cited]
        return derive_judgment(
            plan.cited,
            lambda labels: set_score(labels) >= thr,
            judge=self.name,
            judge_version=self.version,
            prefer=sorted([*plan.cited, *others], key=lambda lab: (lab not in plan.cited, -entail.get(lab, 0.0))),
            score=set_score(frozenset(plan.cited)) if plan.cited else None,
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


def from_spec(spec: Mapping[str, Any], **options: Any) -> NLIJudge | LanguageNLIJudge:
    """Build the NLI judge of a judge file; options: `cache` (a `JudgmentCache`; default in memory), `progress`.
    A `"models"` map other than `{"*": model}` gives a `LanguageNLIJudge` (a model per language)."""
    settings = parse_spec(spec)
    cache = _cache_from_options(options)

    def build(one: NLISettings) -> NLIJudge:
        return NLIJudge(load_scorer(one), one, cache=cache, progress=options.get("progress"))

    if settings.models and [code for code, _ in settings.models] != [ANY_LANGUAGE]:
        return LanguageNLIJudge(settings, build)
    return build(dataclasses.replace(settings, models=()))
