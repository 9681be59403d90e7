"""Throughput and memory of the structural pass (SPEC §3) on one core, streaming the input.

Generates (seeded) a JSON Lines file of realistic turns — 4 passages of 5–15 sentences each,
answers of 3–8 sentences with every marker habit the parser handles (`[S1][S3]`, `[S1, S3]`,
numeric `[1]`, markers after the stop with and without a space, glued to the next sentence,
repeated labels, unknown labels), bullet lists, offers and questions, refusals, follow-up turns
whose context set changed (stale labels), a few malformed lines — then streams it through the
pass: `read_jsonl` → `structure_turn` (with a `ConversationHistory`) → `judge_batch(batch, None)`
→ `AnswerFold.add` (the metrics, counted a block at a time), pinned to one CPU. Prints turns/s
and resident memory at checkpoints (10k / 50k / 100k turns by default) so a flat memory curve is
visible. Goal: ≥ 3,300 turns/s.

The file is ordered by conversation and turn index (as the job reads a day), so the history is
kept for the current conversation only; that is equivalent for ordered input and keeps memory flat.

Run: `.venv/bin/python bench/bench_structural.py [--turns 100000] [--file PATH] [--profile]`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

GOAL_TURNS_PER_S = 3300
SEED = 20240521

_ORGS = ("Orbit Labs", "the finance team", "Northwind Travel", "the U.S. Department of Labor", "Acme Corp.",
         "the city council", "the World Health Organization", "the review board", "Globex Inc.", "the auditors")
_PEOPLE = ("Dwight D. Eisenhower", "Dr. Maria Lopez", "John F. Kennedy", "Prof. Anan Rao", "J. R. Smith",
           "Ms. Chen", "Gen. John J. Pershing", "Mr. Okafor", "St. Clair", "Lt. Col. Dana White")
_NOUNS = ("hotel allowance", "per-diem rate", "mileage rate", "approval limit", "travel budget", "review cycle",
          "refund window", "booking portal", "meal cap", "carbon offset", "warranty period", "support plan",
          "contract term", "notice period", "retention policy", "pilot programme")
_PLACES = ("London", "the U.S.", "Berlin", "New York", "the E.U.", "Lagos", "Tokyo", "São Paulo", "Austin, Tex.",
           "Washington, D.C.")
_UNITS = ("days", "nights", "hours", "euros", "dollars", "kilometres", "per cent", "weeks", "employees", "sites")
_VERBS = ("approved", "extended", "reduced", "introduced", "replaced", "audited", "published", "revised")
_TEMPLATES = (
    "{org} {verb} the {noun} in {year}.",
    "The {noun} for {place} is approx. {dec} {unit}.",
    "Under the {year} rules, the {noun} covers up to {num} {unit}.",
    "{person} {verb} the {noun} after a {num}-{unit2} review.",
    "Claims must be filed within {num} {unit} of the trip, e.g. the receipt date.",
    "In {place}, the {noun} rose {dec}% vs. {year}.",
    "The {noun} (i.e. the {noun2}) applies to all {num} {unit}.",
    "According to {person}, the {noun} was {verb} on {month} {day}, {year}.",
    "Staff in {place} receive a {noun} of ${num}.{cents} per day.",
    "The {noun} changed in {year}, and the {noun2} followed {num} {unit} later.",
    "It takes {dec} {unit} on average to process the {noun}.",
    "{org} lists {num} exceptions to the {noun}, incl. the {noun2}.",
)
_MONTHS = ("January", "March", "May", "July", "September", "November")
_OFFERS = ("Let me know if you need anything else.", "Would you like me to draft the request?",
           "Is there anything else I can help with?", "I hope this helps!", "Do you want the full table?",
           "Feel free to ask about the {noun}.")
_REFUSALS = ("I can't find that in the provided documents.", "I'm sorry, but I could not find any information"
             " on the {noun}.", "The provided documents do not mention the {noun}.")
_QUESTIONS = ("What is the {noun} for {place}?", "How long is the {noun}?", "Who approved the {noun}?",
              "Does the {noun} cover {place}?", "When did the {noun} change?")
_LEADS = ("Here is what the policy says:", "The main points are:", "In short:", "Key facts:")


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        org=rng.choice(_ORGS), person=rng.choice(_PEOPLE), noun=rng.choice(_NOUNS), noun2=rng.choice(_NOUNS),
        place=rng.choice(_PLACES), unit=rng.choice(_UNITS), unit2=rng.choice(("day", "week", "month")),
        verb=rng.choice(_VERBS), year=rng.randint(1990, 2025), num=rng.randint(2, 950),
        dec=f"{rng.randint(0, 99)}.{rng.randint(1, 9)}", cents=f"{rng.randint(0, 99):02d}",
        month=rng.choice(_MONTHS), day=rng.randint(1, 28),
    )


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


class TurnGenerator:
    """Seeded realistic turns; sentences come from a pre-filled pool so generation stays fast."""

    def __init__(self, seed: int = SEED, pool: int = 4000) -> None:
        self.rng = random.Random(seed)
        self.pool = [_capital(_fill(self.rng, self.rng.choice(_TEMPLATES))) for _ in range(pool)]

    def _passage(self) -> list[str]:
        return self.rng.sample(self.pool, self.rng.randint(5, 15))

    def _markers(self, labels: list[str], known: list[str], stale: list[str]) -> tuple[str, list[str]]:
        """A marker group in one of the habits seen in logs, and the labels it names."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.03 and stale:
            chosen = [rng.choice(stale)]
        elif roll < 0.05:
            chosen = [f"{labels[0][:-1]}9"]  # unknown label
        else:
            chosen = rng.sample(known, min(len(known), rng.choice((1, 1, 1, 2, 2, 3))))
        style = rng.random()
        if style < 0.12 and len(chosen) > 1:
            return "[" + ", ".join(chosen) + "]", chosen
        if style < 0.16:
            chosen = chosen + chosen[:1]  # repeated label
        return "".join(f"[{lab}]" for lab in chosen), chosen

    def _cited(self, sentence: str, known: list[str], labels: list[str], stale: list[str]) -> tuple[str, str]:
        """The sentence with a marker placed somewhere realistic; returns (text, glue to the next one)."""
        rng = self.rng
        if rng.random() < 0.18:
            return sentence, " "
        marker, _ = self._markers(labels, known, stale)
        body, stop = sentence[:-1], sentence[-1]
        place = rng.random()
        if place < 0.55:
            return f"{body} {marker}{stop}", " "
        if place < 0.7:
            return f"{body}{marker}{stop}", " "
        if place < 0.85:
            return f"{body}{stop} {marker}", " "
        if place < 0.93:
            return f"{body}{stop}{marker}", ""  # glued to the next sentence
        return f"{body}{stop}{marker}", " "

    def _answer(self, context: list[dict], passages: list[list[str]], stale: list[str]) -> str:
        rng = self.rng
        labels = [p["label"] for p in context]
        if rng.random() < 0.03:
            return _fill(rng, rng.choice(_REFUSALS))
        n = rng.randint(3, 8)
        facts = [rng.choice(rng.choice(passages)) if rng.random() < 0.7 else rng.choice(self.pool)
                 for _ in range(n)]
        if rng.random() < 0.15:
            lines = [rng.choice(_LEADS)]
            for fact in facts:
                text, _ = self._cited(fact, labels, labels, stale)
                lines.append(f"{rng.choice(('-', '*', '1.', '•'))} {text}")
            return "\n".join(lines)
        out = ""
        for fact in facts:
            text, glue = self._cited(fact, labels, labels, stale)
            out += text + glue
        if rng.random() < 0.35:
            out += _fill(rng, rng.choice(_OFFERS))
        return out.strip()

    def conversation(self, number: int) -> Iterator[dict]:
        rng = self.rng
        numeric = rng.random() < 0.2
        previous: list[str] = []
        model = rng.choice(("model-a", "model-b", "model-c"))
        for turn_index in range(rng.choice((1, 1, 1, 2, 2, 3))):
            n_passages = 4 if turn_index == 0 else rng.randint(2, 4)
            labels = [str(i) if numeric else f"S{i}" for i in range(1, n_passages + 1)]
            passages = [self._passage() for _ in labels]
            context = [{"label": lab, "source": f"doc-{rng.randint(1, 5000)}.md#{lab}", "text": " ".join(p),
                        "document_id": f"doc-{rng.randint(1, 5000)}", "version": str(rng.randint(1, 9))}
                       for lab, p in zip(labels, passages, strict=True)]
            stale = [lab for lab in previous if lab not in labels]
            yield {
                "turn_id": f"t{number:07d}-{turn_index}",
                "conversation_id": f"c{number:07d}",
                "turn_index": turn_index,
                "answered_at": f"2024-05-{1 + number % 28:02d}T{number % 24:02d}:{number % 60:02d}:00+00:00",
                "question": _fill(rng, rng.choice(_QUESTIONS)),
                "answer": self._answer(context, passages, stale),
                "answer_format": "markers",
                "context": context,
                "attributes": {"model": model, "prompt_version": rng.choice(("v1", "v2")),
                               "product": rng.choice(("travel", "hr")), "locale": rng.choice(("en-GB", "en-US"))},
            }
            previous = labels


def generate(path: Path, n_turns: int, seed: int = SEED) -> int:
    """Write at least `n_turns` turns (whole conversations), plus ~0.1% malformed lines."""
    gen = TurnGenerator(seed)
    written = 0
    conversation = 0
    with path.open("w", encoding="utf-8") as out:
        while written < n_turns:
            for turn in gen.conversation(conversation):
                out.write(json.dumps(turn, ensure_ascii=False) + "\n")
                written += 1
            conversation += 1
            if gen.rng.random() < 0.002:
                out.write('{"turn_id": "broken", "answer": 3, "context": "not a list"}\n')
                out.write("{not json\n")
    return written


def generate_from_sample(path: Path, n_turns: int, seed: int = SEED, turns_per_day: int = 5000) -> int:
    """Write the project's bundled sample traffic (`citecheck.demo`), in conversation order."""
    import datetime as dt

    from citecheck import demo

    days = -(-n_turns // turns_per_day)
    sample = demo.generate(dt.date(2024, 5, 1), days, turns_per_day, seed=seed)
    turns = sorted(sample.turns, key=lambda t: (str(t.get("conversation_id")), t.get("turn_index") or 0))
    every = max(1, len(turns) // max(1, len(sample.malformed_lines)))
    with path.open("w", encoding="utf-8") as out:
        for i, turn in enumerate(turns):
            out.write(json.dumps(turn, ensure_ascii=False) + "\n")
            if i % every == every - 1 and i // every < len(sample.malformed_lines):
                out.write(sample.malformed_lines[i // every].rstrip("\n") + "\n")
    return len(turns)


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def structural_pass(path: Path, checkpoints: list[int], batch_turns: int = 256) -> dict:
    """Stream the file through the structural pass; print a row at each checkpoint."""
    from citecheck.core.config import Config
    from citecheck.core.fold import AnswerFold
    from citecheck.core.pipeline import judge_batch
    from citecheck.core.structural import ConversationHistory, structure_turn
    from citecheck.core.turns import Skipped, read_jsonl

    config = Config()
    fold = AnswerFold(config)
    history = ConversationHistory()
    current = None
    batch = []
    turns = skipped = 0
    pending = sorted(checkpoints)
    rows = []
    start_rss = _rss_mib()
    started = last_time = time.perf_counter()
    cpu_started = time.process_time()
    last_turns = 0
    print(f"{'turns':>8}{'wall s':>8}{'CPU s':>8}{'turns/s wall':>14}{'turns/s CPU':>13}{'interval, wall':>16}"
          f"{'RSS MiB':>9}{'peak RSS MiB':>14}")

    def flush() -> None:
        for scored in judge_batch(batch, None):
            fold.add(scored)
        batch.clear()

    for _, item in read_jsonl(str(path)):
        if isinstance(item, Skipped):
            skipped += 1
            continue
        if item.conversation_id != current:
            history = ConversationHistory()  # ordered input: earlier conversations are done
            current = item.conversation_id
        batch.append(structure_turn(item, config, history))
        turns += 1
        if len(batch) >= batch_turns:
            flush()
        if pending and turns >= pending[0]:
            flush()
            pending.pop(0)
            now, cpu = time.perf_counter(), time.process_time() - cpu_started
            row = {"turns": turns, "elapsed_s": now - started, "cpu_s": cpu, "rate": turns / (now - started),
                   "cpu_rate": turns / cpu, "interval_rate": (turns - last_turns) / (now - last_time),
                   "rss": _rss_mib(), "peak": _peak_mib()}
            rows.append(row)
            print(f"{turns:>8}{row['elapsed_s']:>8.1f}{cpu:>8.1f}{row['rate']:>14.0f}{row['cpu_rate']:>13.0f}"
                  f"{row['interval_rate']:>16.0f}{row['rss']:>9.1f}{row['peak']:>14.1f}", flush=True)
            last_time, last_turns = now, turns
    flush()
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    counts = fold.metrics.counts()
    return {"turns": turns, "skipped": skipped, "elapsed_s": elapsed, "rate": turns / elapsed, "rows": rows,
            "cpu_s": cpu, "cpu_rate": turns / cpu, "start_rss": start_rss, "counts": counts}


def _idle_ticks() -> dict[int, int]:
    ticks = {}
    with open("/proc/stat") as handle:
        for line in handle:
            name, *fields = line.split()
            if name.startswith("cpu") and name[3:].isdigit():
                ticks[int(name[3:])] = int(fields[3]) + int(fields[4])  # idle + iowait
    return ticks


def _pin_one_core() -> str:
    """Pin this process to one CPU (the idlest over a short sample, on a shared machine)."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    allowed = sorted(os.sched_getaffinity(0))
    try:
        before = _idle_ticks()
        time.sleep(0.5)
        after = _idle_ticks()
        cpu = max(allowed, key=lambda c: after.get(c, 0) - before.get(c, 0))
    except OSError:
        cpu = allowed[0]
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu} of {len(allowed)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--file", type=Path, help="reuse or write the generated turns here (default: a temp file)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--source", choices=("synthetic", "sample"), default="synthetic",
                        help="synthetic: this script's generator (4 passages of 5-15 sentences); "
                             "sample: the bundled citecheck.demo traffic (shorter passages, native turns)")
    parser.add_argument("--checkpoints", default="10000,50000,100000")
    parser.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help="cProfile the pass, print the top functions")
    args = parser.parse_args(argv)

    if args.generate_only:
        make = generate if args.source == "synthetic" else generate_from_sample
        print(make(args.file, args.turns, args.seed))
        return 0
    tmp = None
    path = args.file
    if path is None:
        tmp = tempfile.TemporaryDirectory(prefix="citecheck-bench-")
        path = Path(tmp.name) / "turns.jsonl"
    try:
        if not path.exists():
            t0 = time.perf_counter()
            # a separate process, so generation never shows in this process's peak memory
            out = subprocess.run([sys.executable, __file__, "--generate-only", "--file", str(path),
                                  "--turns", str(args.turns), "--seed", str(args.seed), "--source", args.source],
                                 check=True, capture_output=True, text=True)
            print(f"generated {out.stdout.strip()} {args.source} turns ({path.stat().st_size / 2**20:.0f} MiB) "
                  f"in {time.perf_counter() - t0:.1f}s: {path}")
        checkpoints = [int(c) for c in args.checkpoints.split(",") if c.strip()]
        print(f"structural pass, {_pin_one_core()}, streaming {path.name}")
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            result = profiler.runcall(structural_pass, path, checkpoints)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        else:
            result = structural_pass(path, checkpoints)
    finally:
        if tmp is not None:
            tmp.cleanup()
    c = result["counts"]
    rows = result["rows"]
    print()
    print(f"{'turns scored':<34}{result['turns']:>12}")
    print(f"{'lines skipped (malformed)':<34}{result['skipped']:>12}")
    print(f"{'sentences / check-worthy':<34}{c['sentences']:>7} / {c['check_worthy_sentences']}")
    print(f"{'citations / unknown / stale':<34}{c['citations']:>7} / {c['unknown_labels']} / {c['stale_labels']}")
    print(f"{'refusals':<34}{c['refusals']:>12}")
    for label, rate in (("throughput, turns/s wall (1 core)", result["rate"]),
                        ("throughput, turns per CPU-second", result["cpu_rate"])):
        print(f"{label:<34}{rate:>12.0f}   goal >= {GOAL_TURNS_PER_S}"
              f"   {'met' if rate >= GOAL_TURNS_PER_S else 'NOT MET'}")
    print(f"{'wall / CPU seconds':<34}{result['elapsed_s']:>12.1f} / {result['cpu_s']:.1f}"
          "   (wall > CPU: other processes shared the core)")
    if rows:
        growth = rows[-1]["peak"] - rows[0]["peak"]
        print(f"{'RSS before the pass, MiB':<34}{result['start_rss']:>12.1f}")
        print(f"{'peak RSS growth first→last, MiB':<34}{growth:>12.1f}   "
              f"({rows[0]['turns']} → {rows[-1]['turns']} turns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
