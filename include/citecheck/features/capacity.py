"""Sizing a day of NLI judging (`citecheck plan`, issue 15).

Wall time = pairs the judge must score ÷ pairs/s of one worker ÷ workers. Both come from
measurements, never from constants:

- **pairs**: the real `NLIJudge` is run over two days of the bundled sample traffic with a
  scorer that answers from the sample's recorded judgments (so it asks for uncited passages only
  where a perfect model would) and counts: model pairs per check-worthy sentence before dedupe,
  after the judge's within-day dedupe, and after the second day's judgment-cache hits.
- **pairs/s**: a rates file written by `bench/bench_nli.py --rates-out` (every backend variant
  measured side by side on this machine), or a short calibration run of a judge file here, or,
  given neither, the latest rates measured for the project (shipped as package data; an estimate
  for any other machine, and the plan says where and when they were measured).
  One GPU worker's rate is a measured figure only when the rates file holds one; otherwise it is
  an estimate from the model's FLOPs per pair and an assumed effective GPU throughput, and is
  printed as such.

The sample traffic draws on a small knowledge base, so its dedupe and cache hit rate are far higher
than a real corpus gives: the recommendation is sized on the no-cache row.

`--premise windows|chunks` sizes either premise mode (SPEC §4): the profile runs the judge in that
mode. A chunk is as long as the passages it packs, so a chunk pair's rate is the rates file's
measured `chunk_pairs_per_second` carried to the sample's chunk length at the measured tokens per
second, or, without one, the window rate scaled by the two modes' tokens per pair on the sample
traffic (printed as an estimate).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from time import perf_counter
from typing import Any

from citecheck.core.config import Config, ConfigError

WORKER_COUNTS = (1, 2, 4, 8)
SHARDS_PER_SLOT = 3
"""docs/scaling.md: two to four shards per pool slot."""
GPU_EFFECTIVE_TFLOPS = 25.0
"""Assumed sustained fp16 throughput of one data-centre GPU on encoder inference (an estimate)."""
ENCODER_FLOPS_PER_TOKEN = {"deberta": 2 * 86e6 * 1.3, "minilm": 2 * 11e6 * 1.3}
"""2 × non-embedding parameters × 1.3 (attention and relative-position terms), per token."""
FAITHFUL_FLIPS = 0.01
"""Issue 15: a backend is faithful when it flips at most 1% of the decisions of torch fp32."""
PACKAGED_RATES_DIR = "data"
"""`features/data/`: a copy of the newest rates file of `bench/results/` (a test keeps them equal)."""
_TOKEN = re.compile(r"\w+|[^\w\s]")


class PlanError(ConfigError):
    """A rates file, judge file or figure that cannot give a plan."""


@dataclass(frozen=True, slots=True)
class TrafficProfile:
    """What the judge asks of the model on the sample traffic, per check-worthy sentence."""

    answers: int
    sentences: int
    pairs_undeduped: int
    pairs_deduped: int
    second_day_cache_hit_rate: float
    premise: str = "windows"
    pair_tokens: float | None = None
    """Mean model tokens of a scored pair (the profile's approximate tokenizer)."""

    @property
    def sentences_per_answer(self) -> float:
        return self.sentences / self.answers if self.answers else 0.0

    def pairs_per_sentence(self, scenario: str) -> float:
        """'no dedupe', 'dedupe' or 'dedupe + cache' pairs per check-worthy sentence."""
        base = self.pairs_undeduped if scenario == "no dedupe" else self.pairs_deduped
        per = base / self.sentences if self.sentences else 0.0
        return per * (1 - self.second_day_cache_hit_rate) if scenario == "dedupe + cache" else per


class _RecordedPairScorer:
    """A stand-in for `CrossEncoderScorer` that counts: a window entails a sentence iff it lies in
    a passage that the sample's recorded judgments say supports that sentence."""

    model_id = "plan:recorded"
    revision = None
    variant = ""
    device = "cpu"
    max_length = 512
    special_tokens = 3
    entail_index, contra_index = 1, 2
    labels = ("neutral", "entailment", "contradiction")

    def __init__(self) -> None:
        self.support: dict[str, list[str]] = {}
        self.pairs_seen = 0

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return [math.ceil(len(_TOKEN.findall(t)) * 1.2) for t in texts]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in _TOKEN.finditer(text)]

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float, float]]:
        """A premise inside a supporting passage (a window, a chunk of it) or holding one (a chunk
        over several passages) entails."""
        self.pairs_seen += len(pairs)
        return [
            (0.02, 0.96, 0.02)
            if any(premise in text or text in premise for text in self.support.get(sentence, ()))
            else (0.9, 0.05, 0.05)
            for premise, sentence in pairs
        ]


def traffic_profile(
    days: Sequence[tuple[Sequence[Mapping[str, Any]], Mapping[str, Any]]], config: Config, premise: str = "windows"
) -> TrafficProfile:
    """Run the NLI judge's own pair selection (in that premise mode) over two consecutive days of
    traffic, each given as (turns as SPEC §1 dicts, its recorded judge spec): the second day
    measures the cache's hits (`citecheck plan` passes `citecheck.demo.plan_traffic()`)."""
    from citecheck.core.pipeline import in_conversation_order, judge_items, structure_turns
    from citecheck.core.text import normalise_statement
    from citecheck.core.turns import turn_from_dict
    from citecheck.judges import judge_from_spec
    from citecheck.judges.cache import InMemoryCache
    from citecheck.judges.nli import NLIJudge, NLISettings

    judged_days = []
    for raw_turns, spec in days:
        turns = in_conversation_order(turn_from_dict(t) for t in raw_turns)
        items = [item for st in structure_turns(turns, config) for item in judge_items(st)]
        judged_days.append((items, judge_from_spec(spec), len(turns)))
    cache = InMemoryCache()
    scorer = _RecordedPairScorer()
    counts = []
    for items, recorded, _ in judged_days:
        for item, judgment in zip(items, recorded.judge(items), strict=True):
            labels = {lab for lab, ok in (judgment.alone or {}).items() if ok} | set(judgment.elsewhere or ())
            texts = [normalise_statement(p.text) for p in item.context if p.label in labels]
            scorer.support.setdefault(normalise_statement(item.sentence), []).extend(texts)
        undeduped = _undeduped_pairs(scorer, items, premise)
        settings = NLISettings(model=scorer.model_id, batch_size=64, premise=premise)
        judge = NLIJudge(scorer, settings, cache=cache, progress=False)  # type: ignore[arg-type]
        judge.judge(items)
        counts.append((undeduped, judge.stats()))
    (undeduped, first), (_, second) = counts
    hit_rate = second["cache_hits"] / second["pairs_needed"] if second["pairs_needed"] else 0.0
    return TrafficProfile(
        answers=judged_days[0][2],
        sentences=len(judged_days[0][0]),
        pairs_undeduped=undeduped,
        pairs_deduped=first["pairs_scored"],
        second_day_cache_hit_rate=hit_rate,
        premise=premise,
        pair_tokens=first["tokens"] / first["pairs_scored"] if first["pairs_scored"] else None,
    )


def _undeduped_pairs(scorer: _RecordedPairScorer, items: Sequence[Any], premise: str = "windows") -> int:
    """Pairs the judge would send with every item judged alone (no cross-item dedupe)."""
    from citecheck.judges.nli import NLIJudge, NLISettings

    total = 0
    for item in items:
        judge = NLIJudge(scorer, NLISettings(model=scorer.model_id, premise=premise), progress=False)  # type: ignore[arg-type]
        judge.judge([item])
        total += judge.stats()["pairs_scored"]
    return total


@dataclass(frozen=True, slots=True)
class Rates:
    """Pairs/s of one worker per backend variant, and where the figures come from."""

    model: str
    cpu: dict[str, float]
    cpu_threads: int | None
    source: str
    gpu: float | None = None
    gpu_source: str = ""
    pair_tokens: float | None = None
    flip_share: dict[str, float] | None = None
    """Share of decisions each variant flips against torch fp32, where measured."""
    chunk_cpu: dict[str, float] | None = None
    """Pairs/s on chunk pairs (`"premise": "chunks"`) per variant, where measured."""
    chunk_pair_tokens: float | None = None
    estimate: bool = False
    """Measured elsewhere (the rates shipped with the package): an estimate for this machine."""

    def fastest_faithful(self) -> str:
        return fastest_faithful(self.cpu, self.flip_share or {})


def fastest_faithful(pairs_per_second: Mapping[str, float], flip_share: Mapping[str, float]) -> str:
    """The fastest variant that flips at most `FAITHFUL_FLIPS` of the decisions (all count if unknown)."""
    faithful = [v for v in pairs_per_second if flip_share.get(v, 0.0) <= FAITHFUL_FLIPS] or list(pairs_per_second)
    return max(faithful, key=pairs_per_second.__getitem__)


def rates_from_file(path: str | Path, model: str) -> Rates:
    """Rates written by `bench/bench_nli.py --rates-out` for `model` ('deberta' or 'minilm')."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise PlanError(f"plan: cannot read the rates file {path}: {exc}") from exc
    return _rates(doc, model, str(path))


def packaged_rates(model: str) -> Rates:
    """The latest rates measured for the project (the newest `bench/results/nli_rates*.json`, shipped
    in `features/data/`): what `citecheck plan` sizes on without --rates or --judge. They were
    measured on another machine, so for this one they are an estimate, and the source says so."""
    from importlib.resources import files

    shipped = [f for f in files(__package__).joinpath(PACKAGED_RATES_DIR).iterdir()
               if f.name.startswith("nli_rates") and f.name.endswith(".json")]
    if not shipped:
        raise PlanError("plan: this install ships no measured rates; give --rates FILE or --judge FILE")
    docs = [(json.loads(f.read_text(encoding="utf-8")), f.name) for f in shipped]
    doc, name = max(docs, key=lambda d: str(d[0].get("measured_at", "")))
    rates = _rates(doc, model, f"bench/results/{name}")
    return replace(rates, estimate=True, source=(
        f"ESTIMATE: the latest rates shipped with citecheck, {rates.source}, not measured on this machine "
        "(measure yours: --judge FILE, or bench/bench_nli.py --rates-out FILE then --rates FILE)"))


def _rates(doc: Any, model: str, where: str) -> Rates:
    """A parsed rates document (`citecheck-nli-rates/1`) → `model`'s rates; `where` names it in errors."""
    if not isinstance(doc, dict) or doc.get("format") != "citecheck-nli-rates/1":
        raise PlanError(f"plan: {where} is not a rates file written by bench/bench_nli.py --rates-out")
    rates = doc.get("pairs_per_second", {}).get(model)
    if not rates:
        raise PlanError(f"plan: {where} has no rates for model {model!r}; it has {sorted(doc['pairs_per_second'])}")
    gpu = (doc.get("gpu") or {}).get(model)
    on = f" on {doc['cpu']}" if doc.get("cpu") else ""
    return Rates(
        model=model,
        cpu=dict(rates),
        cpu_threads=doc.get("cpu_threads_per_worker"),
        source=f"{where} (measured {doc.get('measured_at', '?')}{on}, {doc.get('pairs', '?')} pairs)",
        gpu=gpu,
        gpu_source="measured" if gpu else "",
        pair_tokens=doc.get("pair_tokens_mean"),
        flip_share=(doc.get("flip_share") or {}).get(model),
        chunk_cpu=(doc.get("chunk_pairs_per_second") or {}).get(model),
        chunk_pair_tokens=doc.get("chunk_pair_tokens_mean"),
    )


def calibrate(judge_file: str | Path, pairs: int = 96) -> Rates:
    """Load an NLI judge file here and time its scorer on real-length pairs from the sample traffic."""
    from citecheck.judges.nli import from_spec
    from citecheck.judges.nli.backends import sample_pairs

    spec = json.loads(Path(judge_file).read_text(encoding="utf-8"))
    if spec.get("kind") != "nli":
        raise PlanError(f"plan: {judge_file} is not an NLI judge file (kind {spec.get('kind')!r})")
    if isinstance(spec.get("models"), dict) and len(spec["models"]) > 1:
        raise PlanError(f"plan: {judge_file} maps languages to models; plan each model with a judge file of "
                        "its own (\"model\": …) on its language's share of the traffic")
    judge = from_spec(spec, progress=False)
    batch = sample_pairs(pairs)
    judge.scorer.probabilities(batch[: min(16, len(batch))])  # warm-up
    started = perf_counter()
    for i in range(0, len(batch), judge.batch_size):
        judge.scorer.probabilities(batch[i : i + judge.batch_size])
    rate = len(batch) / (perf_counter() - started)
    import torch

    name = spec.get("backend", "torch") + ("-int8" if spec.get("quantize") else "")
    return Rates(model=str(spec.get("model")), cpu={name: rate}, cpu_threads=torch.get_num_threads(),
                 source=f"calibration run of {judge_file} here ({len(batch)} pairs)")


def gpu_estimate(model: str, pair_tokens: float | None) -> float | None:
    """Pairs/s of one GPU worker from FLOPs per pair at `GPU_EFFECTIVE_TFLOPS` (an estimate)."""
    per_token = ENCODER_FLOPS_PER_TOKEN.get(model)
    if per_token is None or not pair_tokens:
        return None
    return GPU_EFFECTIVE_TFLOPS * 1e12 / (per_token * pair_tokens)


def plan(
    answers: int,
    rates: Rates,
    profile: TrafficProfile,
    *,
    sentences_per_answer: float | None = None,
    variant: str | None = None,
    window_hours: float = 6.0,
    window_profile: TrafficProfile | None = None,
) -> dict[str, Any]:
    """Wall hours per scenario and worker count, and the shards / pool size to use, in the profile's
    premise mode. For chunks without a measured chunk rate, `window_profile` (the windows profile of
    the same traffic) scales the window rate by tokens per pair."""
    if answers < 1:
        raise PlanError("plan: --answers must be at least 1")
    chosen = variant or rates.fastest_faithful()
    if chosen not in rates.cpu:
        raise PlanError(f"plan: no measured rate for backend {chosen!r}; measured: {sorted(rates.cpu)}")
    rate, rate_note, pair_tokens = rates.cpu[chosen], "", rates.pair_tokens
    gpu = rates.gpu
    if profile.premise == "chunks":
        rate, rate_note, pair_tokens, gpu = _chunk_rate(rates, chosen, profile, window_profile)
    spa = sentences_per_answer if sentences_per_answer is not None else profile.sentences_per_answer
    gpu = gpu or gpu_estimate(rates.model, pair_tokens)
    scenarios = {}
    for scenario in ("no dedupe", "dedupe", "dedupe + cache"):
        pairs = answers * spa * profile.pairs_per_sentence(scenario)
        scenarios[scenario] = {
            "pairs": round(pairs),
            "cpu_hours": {w: pairs / (rate * w) / 3600 for w in WORKER_COUNTS},
            "gpu_hours": pairs / gpu / 3600 if gpu else None,
        }
    sizing = scenarios["dedupe"]["pairs"]
    workers = max(1, math.ceil(sizing / (rate * window_hours * 3600)))
    return {
        "answers": answers,
        "sentences_per_answer": spa,
        "premise": profile.premise,
        "variant": chosen,
        "cpu_pairs_per_second": rate,
        "cpu_rate_note": rate_note,
        "cpu_threads_per_worker": rates.cpu_threads,
        "rates_source": rates.source,
        "rates_estimate": rates.estimate,
        "gpu_pairs_per_second": gpu,
        "gpu_source": rates.gpu_source or (
            f"estimate ({GPU_EFFECTIVE_TFLOPS:g} effective TFLOP/s fp16, not measured)" if gpu else "unknown"
        ),
        "profile": {
            "sample_answers": profile.answers,
            "sample_sentences": profile.sentences,
            "pairs_per_sentence": {s: profile.pairs_per_sentence(s) for s in scenarios},
            "second_day_cache_hit_rate": profile.second_day_cache_hit_rate,
            "pair_tokens": profile.pair_tokens,
        },
        "scenarios": scenarios,
        "window_hours": window_hours,
        "cpu_workers_for_window": workers,
        "pool_slots": workers,
        "shards": workers * SHARDS_PER_SLOT,
    }


def _chunk_rate(
    rates: Rates, chosen: str, profile: TrafficProfile, window_profile: TrafficProfile | None
) -> tuple[float, str, float | None, float | None]:
    """(pairs/s of chunk pairs, where it comes from, tokens per chunk pair, measured GPU rate or None)."""
    if rates.chunk_cpu and chosen in rates.chunk_cpu:
        rate = rates.chunk_cpu[chosen]
        if not rates.chunk_pair_tokens or not profile.pair_tokens:
            return rate, "measured on chunk pairs", rates.chunk_pair_tokens, None
        # A chunk is as long as the passages it packs: the rate is carried to the sample's chunk
        # length at the measured tokens per second.
        scale = rates.chunk_pair_tokens / profile.pair_tokens
        note = (
            f"measured on chunk pairs of {rates.chunk_pair_tokens:.0f} tokens ({rate:.2f} pairs/s), carried to "
            f"the sample's {profile.pair_tokens:.0f}-token chunk pairs at the same tokens/s"
        )
        return rate * scale, note, profile.pair_tokens, None
    if window_profile is None or not window_profile.pair_tokens or not profile.pair_tokens:
        raise PlanError(
            f"plan: the rates have no chunk rate for {chosen!r} and no windows profile to scale one from; "
            "write rates with bench/bench_nli.py --premises --rates-out"
        )
    scale = window_profile.pair_tokens / profile.pair_tokens
    tokens = rates.pair_tokens / scale if rates.pair_tokens else None
    note = (
        f"estimate: the window rate × {scale:.3f} ({window_profile.pair_tokens:.0f} → "
        f"{profile.pair_tokens:.0f} tokens per pair on the sample traffic), not measured on chunk pairs"
    )
    return rates.cpu[chosen] * scale, note, tokens, None


def render(result: Mapping[str, Any]) -> str:
    """The plan as the table `citecheck plan` prints."""
    p = result["profile"]
    premise = result.get("premise", "windows")
    lines = [
        f"NLI plan: {result['answers']:,} answers/day × {result['sentences_per_answer']:.2f} check-worthy "
        f"sentences, backend {result['variant']} at {result['cpu_pairs_per_second']:.1f} pairs/s per CPU "
        f"worker ({result['cpu_threads_per_worker']} threads)"
        + ("" if premise == "windows" else f", {premise} premises"),
        f"rates: {result['rates_source']}" + (f"; {note}" if (note := result.get("cpu_rate_note")) else ""),
        f"{premise} pairs per sentence on the sample traffic ({p['sample_answers']} answers): "
        + ", ".join(f"{k} {v:.2f}" for k, v in p["pairs_per_sentence"].items())
        + f"; day-over-day cache hits {p['second_day_cache_hit_rate']:.0%}",
        "",
    ]
    header = ["scenario", "pairs/day"] + [f"{w} CPU" for w in WORKER_COUNTS] + ["1 GPU"]
    rows = [header]
    mark = "" if result["gpu_source"] == "measured" else "*"
    for name, s in result["scenarios"].items():
        gpu = "-" if s["gpu_hours"] is None else _hours(s["gpu_hours"]) + mark
        rows.append([name, f"{s['pairs']:,}"] + [_hours(s["cpu_hours"][w]) for w in WORKER_COUNTS] + [gpu])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if result["gpu_pairs_per_second"]:
        lines.append(f"* 1 GPU: {result['gpu_pairs_per_second']:.0f} pairs/s, {result['gpu_source']}")
    lines.append(
        f"to finish the 'dedupe' day within {result['window_hours']:g} h: {result['cpu_workers_for_window']} CPU "
        f"worker(s) like this one → `airflow pools set nli {result['pool_slots']} \"NLI judging\"`, "
        f"shards {result['shards']} (conf {{\"shards\": {result['shards']}}})"
    )
    return "\n".join(lines)


def _hours(hours: float) -> str:
    return f"{hours * 60:.0f} min" if hours < 1 else f"{hours:.1f} h"
