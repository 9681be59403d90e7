"""The check-worthiness filter's errors in both directions (Factcheck-GPT labels).

Data: `bench/data/factcheck_gpt_checkworthiness/sentences.jsonl`, 311 sentences of LLM
answers labelled `yes` (a check-worthy factual claim), `opinion`, `not_a_claim` or `other`.
The filter (`citecheck.core.structural.check_worthiness` with the default configuration) should drop
almost no `yes` sentence: a dropped claim escapes every later check, while a kept non-claim only
costs a judge call and, at worst, an `unsupported` verdict a reviewer can dismiss.

As a cross-check on real engine answers, the same filter runs on the 372 statements of
`bench/data/liu2023_verifiability` (markers removed) against the annotators'
`statement_is_verification_worthy`.

Run: `.venv/bin/python bench/bench_checkworthiness.py [--show N]`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from citecheck.core.config import Config
from citecheck.core.structural import check_worthiness

DATASETS = Path(__file__).resolve().parent / "data"
FACTCHECK = DATASETS / "factcheck_gpt_checkworthiness" / "sentences.jsonl"
LIU = DATASETS / "liu2023_verifiability" / "responses.json"
NON_CLAIMS = ("opinion", "not_a_claim", "other")
_MARKER = re.compile(r"\s*\[\d+\]")


def factcheck(config: Config, path: Path) -> tuple[Counter[str], list[tuple[str, str, str]], list[tuple[str, str]]]:
    """Counts per label and outcome, the dropped claims (label, reason, text), the kept non-claims."""
    counts: Counter[str] = Counter()
    dropped: list[tuple[str, str, str]] = []
    kept: list[tuple[str, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        label, text = row["checkworthy"], row["sentence"]
        worthy, reason = check_worthiness(text, config)
        counts[f"{label}:{'kept' if worthy else 'dropped'}"] += 1
        counts[label] += 1
        if label == "yes" and not worthy:
            dropped.append((label, reason or "", text))
        elif label in NON_CLAIMS and worthy:
            kept.append((label, text))
        elif label in NON_CLAIMS:
            counts[f"dropped_by:{reason}"] += 1
    return counts, dropped, kept


def liu(config: Config, path: Path) -> tuple[Counter[str], list[tuple[bool, str | None, str]]]:
    """Agreement with the Liu et al. annotators' verification-worthiness, and the disagreements."""
    counts: Counter[str] = Counter()
    wrong: list[tuple[bool, str | None, str]] = []
    for record in json.loads(path.read_text(encoding="utf-8")):
        for statement, note in record["annotation"]["statement_to_annotation"].items():
            text = _MARKER.sub("", statement).strip()
            worthy, reason = check_worthiness(text, config)
            human = bool(note["statement_is_verification_worthy"])
            counts[f"human_{'worthy' if human else 'not'}:{'kept' if worthy else 'dropped'}"] += 1
            if worthy != human:
                wrong.append((human, reason, text))
    return counts, wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--factcheck", type=Path, default=FACTCHECK)
    parser.add_argument("--liu", type=Path, default=LIU)
    parser.add_argument("--show", type=int, default=40, help="examples per error kind")
    args = parser.parse_args(argv)
    config = Config()
    counts, dropped, kept = factcheck(config, args.factcheck)
    n_yes = counts["yes"]
    n_non = sum(counts[k] for k in NON_CLAIMS)
    print(f"factcheck_gpt_checkworthiness: {n_yes + n_non} sentences "
          f"({n_yes} yes, " + ", ".join(f"{counts[k]} {k}" for k in NON_CLAIMS) + ")")
    print()
    print(f"{'label':<14}{'sentences':>10}{'kept':>8}{'dropped':>9}")
    for label in ("yes", *NON_CLAIMS):
        print(f"{label:<14}{counts[label]:>10}{counts[label + ':kept']:>8}{counts[label + ':dropped']:>9}")
    print()
    print(f"{'claims (yes) dropped — goal: very few':<44}{len(dropped):>4} / {n_yes}"
          f"  ({100 * len(dropped) / max(n_yes, 1):.1f}%)")
    print(f"{'non-claims kept':<44}{len(kept):>4} / {n_non}  ({100 * len(kept) / max(n_non, 1):.1f}%)")
    print(f"{'non-claims dropped, by rule':<44}" + ", ".join(
        f"{k.split(':', 1)[1]} {v}" for k, v in sorted(counts.items()) if k.startswith("dropped_by:")))
    print()
    print("claims dropped (the costly error):" + ("" if dropped else " none"))
    for _, reason, text in dropped[: args.show]:
        print(f"  [{reason}] {text}")
    print("non-claims kept (a judge call each; most need a model to tell, not a rule):")
    for label, text in kept[: args.show]:
        print(f"  [{label}] {text}")

    lcounts, wrong = liu(config, args.liu)
    print()
    print("cross-check, liu2023_verifiability statements vs the annotators' verification-worthiness:")
    print(f"{'annotators':<14}{'statements':>11}{'kept':>8}{'dropped':>9}")
    for human in ("worthy", "not"):
        k, d = lcounts[f"human_{human}:kept"], lcounts[f"human_{human}:dropped"]
        print(f"{human:<14}{k + d:>11}{k:>8}{d:>9}")
    for human, reason, text in wrong[: args.show]:
        print(f"  {'worthy, dropped' if human else 'not worthy, kept'} [{reason or '-'}] {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
