"""Speed of the rule claim splitter (SPEC §2.1) next to the structural pass, on one core.

The input is the bundled sample's traffic (`citecheck.demo.generate`, seeded): every turn goes
through the structural pass (`structure_turns`: parsing, resolution, check-worthiness), then its
check-worthy sentences through the rule splitter with its verification (`split_turn`). Both are
timed in the same run, pinned to one CPU, best of `--repeat` rounds; the claims pass should cost
at most 2x the structural pass (it runs on 100% of traffic in `[claims] mode = "rules"`).
Also prints how many sentences split and into how many claims.

Run: `.venv/bin/python bench/bench_claims.py [--days 3] [--turns-per-day 2000] [--repeat 3]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import time
from dataclasses import replace
from pathlib import Path

from bench_hot_spots import cpu_name  # the one CPU naming of bench/ (run as `python bench/NAME.py`)

from citecheck.core.claims import split_problem, split_turn
from citecheck.core.claims.rules import RulesSplitter, split_sentence
from citecheck.core.config import Config
from citecheck.core.pipeline import in_conversation_order, structure_turns
from citecheck.core.turns import turn_from_dict
from citecheck.demo.days import generate

GOAL_RATIO = 2.0
TABLE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "claim_splits.json"



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--turns-per-day", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    sample = generate(dt.date(2026, 11, 1), args.days, args.turns_per_day, seed=7)
    turns = in_conversation_order(turn_from_dict(t) for t in sample.turns)
    config = Config()
    claims_config = replace(config, claims_mode="rules")
    splitter = RulesSplitter()
    best_structural = best_claims = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        structured = list(structure_turns(turns, config))
        t1 = time.perf_counter()
        split = [split_turn(st, splitter, claims_config.claims_max) for st in structured]
        t2 = time.perf_counter()
        best_structural, best_claims = min(best_structural, t1 - t0), min(best_claims, t2 - t1)
    sentences = sum(len(st.sentences) for st in structured)
    worthy = sum(s.check_worthy for st in structured for s in st.sentences)
    claims = sum(len(v) for st in split for v in (st.claims or {}).values())
    split_sentences = sum(len(v) > 1 for st in split for v in (st.claims or {}).values())
    rejected = sum(st.claim_splits_rejected for st in split)
    print(f"CPU: {cpu_name()}, 1 core pinned; {len(turns)} turns, {sentences} sentences ({worthy} check-worthy)")
    print(f"structural pass : {sentences / best_structural:10.0f} sentences/s ({best_structural:.3f} s)")
    print(f"claims pass     : {sentences / best_claims:10.0f} sentences/s ({best_claims:.3f} s, rules splitter "
          f"on the check-worthy sentences, verification included)")
    ratio = best_claims / best_structural
    verdict = "met" if ratio <= GOAL_RATIO else "MISSED"
    print(f"claims / structural time: {ratio:.2f}x (goal <= {GOAL_RATIO:.0f}x): {verdict}")
    print(f"split: {split_sentences} of {worthy} check-worthy sentences ({split_sentences / max(worthy, 1):.1%}), "
          f"{claims} claims ({claims / max(worthy, 1):.3f} per sentence), {rejected} splits rejected")
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    hard = [sentence for part in table.values() if isinstance(part, list) for sentence, _ in part] * 20
    t0 = time.perf_counter()
    for sentence in hard:
        split_problem(sentence, split_sentence(sentence), claims_config.claims_max)
    elapsed = time.perf_counter() - t0
    print(f"worst case, every sentence coordinated (tests/fixtures/claim_splits.json x20): "
          f"{len(hard) / elapsed:.0f} sentences/s split and verified")


if __name__ == "__main__":
    main()
