"""How the answers of each shipped language split, with the language's own rules against the
generic rules (what a language without shipped rules gets: Unicode stops and questions with
`[segmentation]` and `[check_worthiness]`, which are also English's rules): sentences right / total
per language; then the structural pass on the bundled sample, this tree against a baseline tree
(today's main), side by side in one run.

Reads `tests/fixtures/language_answers.json` (the returns-answer pattern in the 30 shipped
languages: abbreviations, ordinal dots, markers before and after the stop, offers, questions,
refusals and figures; each sentence as a reader splits it, with its labels and non-claim reason).
A sentence is right when the parser gives one sentence with the same text, the same labels and the
same check-worthiness reason. The structural pass: `structure_turn` over a bundled sample day
(`citecheck.demo`, English and the demo's German, French, Spanish and Japanese turns), best of
`--repeat` runs (CPU time of the process, less shaken by a loaded machine than wall time), each
tree in its own process, alternating.

Run: `.venv/bin/python bench/bench_language_rules.py [--baseline /path/to/main/include] [--turns 3000]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bench_hot_spots import cpu_name

from citecheck.core.config import Config
from citecheck.core.languages import UNDETERMINED, turn_language
from citecheck.core.parsing import parse_answer
from citecheck.core.structural import check_worthiness

TABLE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "language_answers.json"
INCLUDE = Path(__file__).resolve().parents[1] / "include"


def _right(answer: str, want: list[list], config: Config, language: str | None) -> int:
    got = [[s.text, list(s.labels), check_worthiness(s.text, config, language)[1]]
           for s in parse_answer(answer, config, language)]
    pool = [json.dumps(w, ensure_ascii=False) for w in want]
    hits = 0
    for sentence in got:
        key = json.dumps(sentence, ensure_ascii=False)
        if key in pool:
            pool.remove(key)
            hits += 1
    return hits


def table() -> None:
    rows = json.loads(TABLE.read_text(encoding="utf-8"))["answers"]
    config = Config()
    totals: Counter[str] = Counter()
    own: Counter[str] = Counter()
    generic: Counter[str] = Counter()
    detected: Counter[str] = Counter()
    started = time.perf_counter()
    for row in rows:
        lang = row["language"]
        totals[lang] += len(row["sentences"])
        found = turn_language({}, row["answer"]).code
        own[lang] += _right(row["answer"], row["sentences"], config, found)
        generic[lang] += _right(row["answer"], row["sentences"], config, UNDETERMINED)
        detected[lang] += found == lang
    seconds = time.perf_counter() - started
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; {len(rows)} answers, {sum(totals.values())} sentences "
          f"({seconds:.2f} s); the language detected from the text, as for a turn that logs none")
    print(f"{'language':<9}{'answers':>8}{'detected':>10}{'own rules':>12}{'generic rules':>15}")
    for lang in totals:
        n = sum(1 for r in rows if r["language"] == lang)
        print(f"{lang:<9}{n:>8}{detected[lang]:>7}/{n:<2}{own[lang]:>8}/{totals[lang]:<3}"
              f"{generic[lang]:>11}/{totals[lang]:<3}")
    print(f"{'all':<9}{len(rows):>8}{sum(detected.values()):>7}/{len(rows):<2}{sum(own.values()):>8}/"
          f"{sum(totals.values()):<3}{sum(generic.values()):>11}/{sum(totals.values()):<3}")


_STRUCTURAL = """
import datetime as dt, json, sys, time
from citecheck import demo
from citecheck.core.config import Config
from citecheck.core.structural import ConversationHistory, structure_turn
from citecheck.core.turns import turn_from_dict
sample = demo.generate(dt.date(2026, 11, 2), 1, {turns}, language_turns={languages})
turns = [turn_from_dict(t) for t in sample.turns]
config = Config()
best = None
for _ in range({repeat}):
    history = ConversationHistory()
    started = time.process_time()
    sentences = sum(len(structure_turn(t, config, history).sentences) for t in turns)
    took = time.process_time() - started
    best = took if best is None else min(best, took)
print(json.dumps({{"turns": len(turns), "sentences": sentences, "seconds": best}}))
"""


def structural(baseline: str, turns: int, repeat: int) -> None:
    """The structural pass on the bundled sample: this tree and the baseline, alternating."""
    code = _STRUCTURAL.format(turns=turns, languages=turns // 10, repeat=repeat)
    results: dict[str, list[dict]] = {"this tree": [], "baseline": []}
    for _ in range(3):
        for name, include in (("baseline", baseline), ("this tree", str(INCLUDE))):
            env = {**os.environ, "PYTHONPATH": include}
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            results[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    load = os.getloadavg()[0]
    print(f"\nstructural pass on the bundled sample (CPU: {cpu_name()}, load average {load:.2f}), best of "
          f"{repeat} × 3 processes each, CPU seconds:")
    base = min(r["seconds"] for r in results["baseline"])
    for name in ("baseline", "this tree"):
        best = min(r["seconds"] for r in results[name])
        first = results[name][0]
        print(f"  {name:<10} {first['turns']} turns, {first['sentences']} sentences: {best:.3f} s "
              f"({first['turns'] / best:,.0f} turns/s), {best / base - 1:+.1%} against the baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="the include/ folder of the tree to compare with (today's main)")
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table()
    if args.baseline:
        structural(args.baseline, args.turns, args.repeat)


if __name__ == "__main__":
    main()
