"""Interval benchmark (issue 11): coverage on simulated days with known true rates, and cost.

1. Coverage. Each simulated day draws answers of 1–12 sentences; answer i has its own support
   probability p_i ~ Beta(κ·μ(L), κ·(1 − μ(L))), μ(L) = 0.92 − 0.04·L (long answers are worse, so
   micro and macro differ), and its own credit probability q_i ~ Beta(8, 2); each sentence carries
   1–3 citations, credited with probability q_i when the sentence is supported. Sentences of one
   answer are therefore correlated (κ small = strong correlation). A deterministic share of the
   day's answers is judged (`nli_share`); the intervals come from the judged answers, through the
   real fold (`AnswerFold`). True rates are exact expectations of that process:
       micro recall    = E[L·μ(L)] / E[L]        macro recall    = E[μ(L)]
       micro precision = micro recall · E[q]      macro precision = macro recall · E[q]
   Printed per day size: coverage of the true value by the 95% interval and mean width, next to a
   sentence-level binomial (Wilson) interval on the same days that ignores the clustering.

2. Cost, side by side in one run (best of `--repeats`, interleaved; CPU seconds of this process,
   which a busy shared machine disturbs less than wall time, and wall time beside them):
   a. the job's fold_shard and combine steps (`job.fold_shard`, `job.combine`: decide verdicts,
      stage sentence and citation rows, accumulate metrics, stage metric rows) on one generated day
      of `--job-turns` turns in a SQLite warehouse, every turn judged by the sample's recorded
      judge, run with and without intervals on the same staged run;
   b. its in-memory part alone (every turn into `AnswerFold`, then its metric rows) on `--turns`
      simulated judged turns with 2 attribute slices: the stricter ratio, as the step's other work
      is left out.

Run:
  PYTHONPATH=include .venv/bin/python bench/bench_intervals.py                 # everything
  PYTHONPATH=include .venv/bin/python bench/bench_intervals.py --days 40 --turns 20000 --job-turns 5000
"""

from __future__ import annotations

import argparse
import functools
import gc
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "include"))

from citecheck.core.config import Config
from citecheck.core.fold import AnswerFold
from citecheck.core.metrics import ScoredTurn
from citecheck.core.model import Sentence, StructuredTurn, Turn
from citecheck.core.verdicts import SentenceVerdict
from citecheck.core.vocabulary import SUPPORTED, UNSUPPORTED
from citecheck.stats.intervals import proportion_interval

KAPPA = 3.0  # Beta concentration of the per-answer support probability: small = strong correlation
Q_ALPHA, Q_BETA = 8.0, 2.0
LENGTHS = range(1, 13)
CHECKED = (("micro", "citation_recall"), ("macro", "citation_recall"),
           ("micro", "citation_precision"), ("macro", "citation_precision"))


def mu(length: int) -> float:
    return 0.92 - 0.04 * length


def true_rates() -> dict[tuple[str, str], float]:
    """Exact expectations of the simulated process (lengths uniform on 1..12)."""
    mean_q = Q_ALPHA / (Q_ALPHA + Q_BETA)
    micro_recall = sum(n * mu(n) for n in LENGTHS) / sum(LENGTHS)
    macro_recall = statistics.fmean(mu(n) for n in LENGTHS)
    return {("micro", "citation_recall"): micro_recall, ("macro", "citation_recall"): macro_recall,
            ("micro", "citation_precision"): micro_recall * mean_q,
            ("macro", "citation_precision"): macro_recall * mean_q}


def simulated_turn(rng: random.Random, turn_id: str, attributes: dict[str, str] | None = None) -> ScoredTurn:
    """One judged answer of the simulated process, as the accumulator receives it."""
    length = rng.choice(LENGTHS)
    m = mu(length)
    p = rng.betavariate(KAPPA * m, KAPPA * (1 - m))
    q = rng.betavariate(Q_ALPHA, Q_BETA)
    verdicts = []
    for i in range(length):
        labels = tuple(f"S{k}" for k in range(1, rng.randint(1, 3) + 1))
        supported = rng.random() < p
        text = f"Claim {i} holds." if i % 3 == 0 else "A claim holds."
        sentence = Sentence(i, text, 0, len(text), labels, markers=len(labels))
        credited = {lab: supported and rng.random() < q for lab in labels}
        verdicts.append(SentenceVerdict(sentence, SUPPORTED if supported else UNSUPPORTED, None, credited, ()))
    turn = Turn(turn_id, turn_id, 0, None, "q", "a", "markers", (), attributes or {})
    return ScoredTurn(StructuredTurn(turn, tuple(v.sentence for v in verdicts), False), tuple(verdicts))


def simulate_day(seed: int, answers: int, share: float) -> tuple[dict, dict]:
    """(intervals, values) of one day: `answers` turns, each judged with probability `share`."""
    rng = random.Random(f"bench-intervals:{seed}")
    fold = AnswerFold(Config())
    for k in range(answers):
        scored = simulated_turn(rng, f"d{seed}-t{k}")
        if rng.random() >= share:  # not selected for judging: structure only
            scored = ScoredTurn(scored.structured, scored.verdicts, selected=False)
        fold.add(scored)
    rows = {(r["averaging"], r["metric"]): r for r in fold.metrics.rows() if r["slice_name"] == "all"}
    return rows, {}


def binomial(row: dict) -> tuple[float, float]:
    """Sentence-level Wilson interval: every judged sentence (or citation) an independent draw."""
    from statsmodels.stats.proportion import proportion_confint

    n = row["sentences"] if row["metric"] == "citation_recall" else None
    if n is None:  # precision's draws are citations: the micro denominator of the same slice
        n = row["_citations"]
    low, high = proportion_confint(row["value"] * n, n, alpha=0.05, method="wilson")
    return float(low), float(high)


def coverage(days: int) -> None:
    truth = true_rates()
    print(f"coverage of the true rate by 95% intervals, {days} simulated days per size "
          f"(κ = {KAPPA}; truths: " + ", ".join(f"{a} {m.split('_')[1]} {v:.4f}" for (a, m), v in truth.items()) + ")")
    print(f"{'answers/day':>11} {'share':>5} {'judged':>6}  {'metric':<24}{'cover':>7}{'width':>8}"
          f"{'binomial cover':>16}{'width':>8}")
    sizes = ((40, 1.0), (120, 0.5), (300, 1.0), (1200, 0.25))
    for answers, share in sizes:
        hits = {key: [] for key in CHECKED}
        widths = {key: [] for key in CHECKED}
        bin_hits = {key: [] for key in CHECKED}
        bin_widths = {key: [] for key in CHECKED}
        judged = []
        for d in range(days):
            rows, _ = simulate_day(d * 1009 + answers, answers, share)
            citations = rows[("micro", "citation_precision")]["denominator"]
            judged.append(rows[("micro", "citation_recall")]["answers"])
            for key in CHECKED:
                row = dict(rows[key])
                row["_citations"] = citations
                hits[key].append(row["ci_low"] <= truth[key] <= row["ci_high"])
                widths[key].append(row["ci_high"] - row["ci_low"])
                low, high = binomial(row)
                bin_hits[key].append(low <= truth[key] <= high)
                bin_widths[key].append(high - low)
        for key in CHECKED:
            print(f"{answers:>11} {share:>5.2f} {statistics.fmean(judged):>6.0f}  {key[0] + ' ' + key[1]:<24}"
                  f"{statistics.fmean(hits[key]):>7.1%}{statistics.fmean(widths[key]):>8.4f}"
                  f"{statistics.fmean(bin_hits[key]):>16.1%}{statistics.fmean(bin_widths[key]):>8.4f}")
    print()


def _timed(fn) -> tuple[float, float, object]:
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    result = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def job_cost(turns: int, repeats: int) -> None:
    """The job's fold_shard and combine steps on a staged, fully judged day, with and without intervals."""
    import sys as _sys
    import tempfile

    from citecheck import demo, job
    from citecheck import warehouse as W

    _sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_warehouse_load import DAY, load

    with tempfile.TemporaryDirectory(prefix="citecheck-intervals-") as tmp:
        url = f"sqlite:///{tmp}/warehouse.sqlite"
        started = time.perf_counter()
        load(url, turns)
        settings = job.JobSettings(judge_spec=demo.full_judge_spec(), nli_share=1.0, config=demo.sample_config())
        engine = W.make_engine(url)
        run = job.DayRun(engine, DAY, job.new_run_id(DAY), settings)
        every = range(settings.shards)
        job.open_run(run)
        structural = job.steps.shard_totals([job.structural(run, shard) for shard in every])
        shards = [job.judge_shard(run, shard) for shard in every]
        escalation = job.escalate(run)
        print(f"job fold_shard ×{settings.shards} and combine steps, {structural['turns_scored']:,} turns all judged "
              f"(load + structural + judging took {time.perf_counter() - started:.0f} s, not counted):")
        proportion_interval(0.5, 0.01, 10)  # warm-up: the first interval imports scipy and statsmodels
        home = _sys.modules[AnswerFold.__module__]  # the module whose MetricAccumulator the fold builds
        real = home.MetricAccumulator
        times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        try:
            for _ in range(repeats):
                for with_intervals in (False, True):
                    # the fold passes `intervals` itself: this one replaces it
                    home.MetricAccumulator = functools.partial(_with_intervals, real, with_intervals)
                    cpu, wall, result = _timed(lambda: [job.fold_shard(run, s) for s in every]
                                               and job.combine(run, shards, escalation))
                    times[with_intervals].append((cpu, wall))
        finally:
            home.MetricAccumulator = real
        engine.dispose()
    print("  all runs (cpu, wall):", {k: [(round(c, 2), round(w, 2)) for c, w in v] for k, v in times.items()})
    _print_pair(times, f"{result['metric_rows']} metric rows")


def _with_intervals(real: Any, with_intervals: bool, *args: Any, intervals: bool = True, **kwargs: Any) -> Any:
    """`real` (the accumulator class) built with `with_intervals`, whatever the caller asked for."""
    return real(*args, intervals=with_intervals, **kwargs)


def _print_pair(times: dict[bool, list[tuple[float, float]]], what: str) -> None:
    base_cpu, full_cpu = min(c for c, _ in times[False]), min(c for c, _ in times[True])
    base_wall, full_wall = min(w for _, w in times[False]), min(w for _, w in times[True])
    print(f"  without intervals {base_cpu:8.2f} s CPU {base_wall:8.2f} s wall")
    print(f"  with intervals    {full_cpu:8.2f} s CPU {full_wall:8.2f} s wall   ({what})")
    print(f"  extra             {full_cpu / base_cpu - 1:8.1%} CPU {full_wall / base_wall - 1:8.1%} wall")


def cost(turns: int, repeats: int) -> None:
    rng = random.Random("bench-intervals-cost")
    models, prompts = ("m-a", "m-b", "m-c"), ("p1", "p2", "p3", "p4")
    day = [simulated_turn(rng, f"t{k}", {"model": rng.choice(models), "prompt": rng.choice(prompts)})
           for k in range(turns)]
    config = Config()
    times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    rows: dict[bool, list] = {}

    def accumulate(with_intervals: bool) -> list:
        fold = AnswerFold(config, intervals=with_intervals)
        for scored in day:
            fold.add(scored)
        return fold.metrics.rows()

    accumulate(True)  # warm-up: the first interval computation imports scipy and statsmodels
    for _ in range(repeats):
        for with_intervals in (False, True):
            cpu, wall, rows[with_intervals] = _timed(functools.partial(accumulate, with_intervals))
            times[with_intervals].append((cpu, wall))
    print(f"metric accumulation alone, {turns:,} simulated judged turns, {len(rows[True])} metric rows:")
    _print_pair(times, f"{sum(r['ci_low'] is not None for r in rows[True])} rows with an interval")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=200, help="simulated days per day size")
    parser.add_argument("--turns", type=int, default=100_000, help="simulated turns for the accumulator cost (0: skip)")
    parser.add_argument("--job-turns", type=int, default=100_000,
                        help="turns for the job's aggregate step cost (0: skip)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-coverage", action="store_true")
    parser.add_argument("--skip-cost", action="store_true")
    args = parser.parse_args()
    if not args.skip_coverage:
        coverage(args.days)
    if not args.skip_cost:
        if args.job_turns:
            job_cost(args.job_turns, args.repeats)
        if args.turns:
            cost(args.turns, args.repeats)


if __name__ == "__main__":
    main()
