"""Speed of the figures pass (SPEC §3 item 5) next to the rest of the structural pass, on one core.

The input is the bundled sample's traffic (`citecheck.demo.generate`, seeded). The structural
pass (`structure_turns`: parsing, resolution, check-worthiness, and the figures of every
check-worthy sentence traced against its resolved cited passages) is timed whole; the figures
pass alone (`structural.sentence_figures` on every check-worthy sentence of the same turns, its
caches emptied first, as a fresh worker starts a day) is timed in the same run. The rest of the
structural pass is the difference. Goal: the figures pass adds at most 50% to it. Best of
`--repeat` rounds, pinned to one CPU. Also prints how many sentences have figures and how many of
those have an untraced one.

Run: `.venv/bin/python bench/bench_figures.py [--days 3] [--turns-per-day 2000] [--repeat 3]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import time

from bench_hot_spots import cpu_name  # the one CPU naming of bench/ (run as `python bench/NAME.py`)

from citecheck.core import figures
from citecheck.core.config import Config
from citecheck.core.pipeline import in_conversation_order, structure_turns
from citecheck.core.structural import sentence_figures
from citecheck.core.turns import turn_from_dict
from citecheck.demo.days import generate

GOAL_RATIO = 0.5



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
    best_total = best_figures = float("inf")
    for _ in range(args.repeat):
        figures.clear_caches()
        t0 = time.perf_counter()
        structured = list(structure_turns(turns, config))
        t1 = time.perf_counter()
        figures.clear_caches()
        t2 = time.perf_counter()
        for st in structured:
            for s in st.sentences:
                if s.check_worthy:
                    sentence_figures(s.text, s.resolved_labels, st.turn, figures.DEFAULT_LANGUAGE)
        t3 = time.perf_counter()
        best_total, best_figures = min(best_total, t1 - t0), min(best_figures, t3 - t2)
    rest = best_total - best_figures
    sentences = sum(len(st.sentences) for st in structured)
    worthy = [s for st in structured for s in st.sentences if s.check_worthy]
    with_figures = [s for s in worthy if s.figures]
    untraced = sum(any(f.traced is False for f in s.figures) for s in with_figures)
    print(f"CPU: {cpu_name()}, 1 core pinned; {len(turns)} turns, {sentences} sentences ({len(worthy)} check-worthy)")
    print(f"structural pass, figures included : {sentences / best_total:10.0f} sentences/s ({best_total:.3f} s)")
    print(f"figures pass alone                : {sentences / best_figures:10.0f} sentences/s ({best_figures:.3f} s)")
    print(f"structural pass without figures   : {sentences / rest:10.0f} sentences/s ({rest:.3f} s, the difference)")
    ratio = best_figures / rest
    verdict = "met" if ratio <= GOAL_RATIO else "MISSED"
    print(f"figures add {ratio:.0%} to the structural pass (goal <= {GOAL_RATIO:.0%}): {verdict}")
    print(f"figures: {len(with_figures)} of {len(worthy)} check-worthy sentences have one "
          f"({len(with_figures) / max(len(worthy), 1):.1%}); {untraced} of those have an untraced figure")


if __name__ == "__main__":
    main()
