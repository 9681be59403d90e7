"""Alert figure (issue 13 §1): 60 simulated days with a step at day 40, through the real daily job.

Every day gets `--answers` simulated assistant answers (SPEC §1 marker turns, four context
passages, a recorded judge for their statements, two `model` attribute values for slices). Each
citation label is replaced by one the context does not hold with probability 0.5% (days 1-39) or
3% (day 40 on): the unknown-label rate of citations steps 0.5% → 3%. The share of attached
sentences carrying three or more markers steps 3% → 12% on day 40. Everything else (verdict mix,
refusals, markers after the full stop, answer lengths) stays the same all 60 days, so any alert
on days 1-39 is a false alarm.

Each day is loaded into a fresh SQLite warehouse and run with `citecheck.job.run_day`: extract →
structural → judge → aggregate → validate → publish → monitor, the monitor with its default
settings (28 history days, at least 14). The bench prints the alerts of day 40, every alert of
days 1-39 (false alarms) with the number of series checked, and the alerts after the step.

Run:
  .venv/bin/python bench/bench_alerts.py            # 60 days, 400 answers a day
  .venv/bin/python bench/bench_alerts.py --answers 200 --seed 2
  .venv/bin/python bench/bench_alerts.py --seed 3 --warehouse /tmp/alerts3.sqlite   # keep the warehouse;
      # run again with the same file: only the monitor reruns over the published days (other settings)
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "include"))

START = dt.date(2026, 9, 1)
DAYS = 60
STEP_DAY = 40  # 1-based: days 1..39 are stable, the step starts on day 40
LABELS = ("S1", "S2", "S3", "S4")
UNKNOWN = ("S7", "S8", "S9")
REFUSAL = "I can't find that in the provided documents."
TAIL = "Let me know if you need anything else."
TOPICS = ("hotel", "train", "taxi", "meal", "visa", "laptop", "badge", "parking", "leave", "refund")
SUPPORTED = [f"The {t} rule number {k} applies to every trip." for t in TOPICS for k in ("one", "two", "three", "four")]
UNSUPPORTED = [f"The {t} rule has no exceptions at all." for t in TOPICS]


def supporting_label(statement: str) -> str | None:
    """The context label that supports a statement (its position in the bank), None if none does."""
    return LABELS[SUPPORTED.index(statement) % len(LABELS)] if statement in SUPPORTED else None


def judge_spec() -> dict[str, Any]:
    """A recorded judge for every statement the simulation can write."""
    rows = [{"statement": s, "supported_by": [supporting_label(s)]} for s in SUPPORTED]
    rows += [{"statement": s, "supported_by": []} for s in UNSUPPORTED]
    return {"kind": "recorded", "judgments": rows, "version": "bench-alerts"}


def _sentence(rng: random.Random, unknown_rate: float, multi_share: float) -> str:
    if rng.random() < 0.12:
        statement, right = rng.choice(UNSUPPORTED), rng.choice(LABELS)
    else:
        statement = rng.choice(SUPPORTED)
        right = supporting_label(statement) if rng.random() < 0.85 else rng.choice(LABELS)
    n = 3 + (rng.random() < 0.3) if rng.random() < multi_share else 1 + (rng.random() < 0.15)
    labels = [right, *rng.sample([lab for lab in LABELS if lab != right], n - 1)]
    labels = [rng.choice(UNKNOWN) if rng.random() < unknown_rate else lab for lab in labels]
    markers = "".join(f"[{lab}]" for lab in labels)
    body = statement[:-1]
    return f"{body}. {markers}" if rng.random() < 0.1 else f"{body} {markers}."


def simulate_day(day_number: int, n_answers: int, seed: int) -> list[dict[str, Any]]:
    """One day's turns: before the step unknown labels 0.5% of citations and 3% of attached
    sentences with 3+ markers; from the step on 3% and 12%."""
    rng = random.Random(f"{seed}-{day_number}")
    stepped = day_number >= STEP_DAY
    unknown_rate, multi_share = (0.03, 0.12) if stepped else (0.005, 0.03)
    day = START + dt.timedelta(days=day_number - 1)
    context = [{"label": lab, "source": f"Policy > {lab}", "text": f"Passage {lab}.", "document_id": f"doc-{lab}",
                "version": "v1"} for lab in LABELS]
    turns = []
    for i in range(n_answers):
        if rng.random() < 0.03:
            answer = REFUSAL
        else:
            sentences = [_sentence(rng, unknown_rate, multi_share) for _ in range(rng.randint(2, 5))]
            answer = " ".join(sentences + ([TAIL] if rng.random() < 0.3 else []))
        turns.append({
            "turn_id": f"d{day_number:02d}-t{i:05d}", "conversation_id": f"d{day_number:02d}-c{i:05d}",
            "turn_index": 0, "answered_at": f"{day.isoformat()}T{8 + i * 10 // n_answers:02d}:{i % 60:02d}:00Z",
            "question": "What does the policy say?", "answer": answer, "context": context,
            "attributes": {"model": "model-a" if rng.random() < 0.6 else "model-b"},
        })
    return turns


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=400, help="answers per day")
    parser.add_argument("--days", type=int, default=DAYS)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--warehouse", help="SQLite file to keep; when it already holds the days, only the monitor "
                                            "reruns (with --config's [monitor] section)")
    parser.add_argument("--config", help="TOML config whose [monitor] section the monitor uses")
    args = parser.parse_args(argv)

    from citecheck import job
    from citecheck import warehouse as W
    from citecheck.core.config import config_from_mapping, load_config
    from citecheck.features.monitor import monitor_settings, slice_label
    from citecheck.job import monitor_day
    from citecheck.warehouse.read_model import alerts_between

    sections = {"check_worthiness": {"refusals": [REFUSAL]}}
    if args.config:
        sections["monitor"] = load_config(args.config).extra.get("monitor", {})
    settings = job.JobSettings(judge_spec=judge_spec(), config=config_from_mapping(sections), shards=1)
    monitored = monitor_settings(settings.config)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.warehouse or f"{tmp}/bench_alerts.sqlite")
        reuse = path.exists()
        engine = W.make_engine(f"sqlite:///{path}")
        W.init_warehouse(engine)
        checked: Counter[str] = Counter()
        for n in range(1, args.days + 1):
            day = START + dt.timedelta(days=n - 1)
            if reuse:  # the days are published: only the monitor, with these settings
                stats = monitor_day(engine, day, f"rerun-{n}", monitored)
            else:
                W.load_turns(engine, simulate_day(n, args.answers, args.seed))
                stats = job.run_day(engine, day, settings)["monitor"]
            period = "stable" if n < STEP_DAY else "step" if n == STEP_DAY else "after"
            checked[period] += stats["series_checked"] - stats["outcomes"].get("short_history", 0) - stats[
                "outcomes"].get("small_denominator", 0) - stats["outcomes"].get("null_value", 0)
        alerts = alerts_between(engine, START, START + dt.timedelta(days=args.days - 1))
        engine.dispose()
    elapsed = time.perf_counter() - started

    def number(alert: dict[str, Any]) -> int:
        return (dt.date.fromisoformat(alert["day"]) - START).days + 1

    def line(a: dict[str, Any]) -> str:
        return (f"  day {number(a):>2}  {a['metric']:<34} {slice_label(a):<24} {a['baseline']:>9.4g} -> "
                f"{a['value']:<9.4g} {a['direction']}")

    on_step = [a for a in alerts if number(a) == STEP_DAY]
    false = [a for a in alerts if number(a) < STEP_DAY]
    after = [a for a in alerts if number(a) > STEP_DAY]
    print(f"{args.days} days x {args.answers} answers, step on day {STEP_DAY} (unknown labels 0.5% -> 3% of "
          f"citations, 3+ markers 3% -> 12% of attached sentences); {len(monitored.metrics)} monitored metrics, "
          f"history {monitored.history_days} days (min {monitored.min_history}); {elapsed:.0f}s")
    print(f"day {STEP_DAY}: {len(on_step)} alert(s)")
    for a in on_step:
        print(line(a))
    wanted = {"unknown_label_rate", "multi_citation_share"}
    found = {a["metric"] for a in on_step if a["slice_name"] == "all"}
    print(f"day {STEP_DAY} overall alerts for unknown_label_rate and multi_citation_share: "
          f"{'yes' if wanted <= found else 'NO, missing ' + str(sorted(wanted - found))}")
    print(f"days 1-{STEP_DAY - 1} (stable): {len(false)} false alert(s) over {checked['stable']} series checks")
    for a in false:
        print(line(a))
    print(f"days {STEP_DAY + 1}-{args.days}: {len(after)} alert(s) over {checked['after']} series checks")
    for a in after:
        print(line(a))
    return 0 if wanted <= found and len(false) <= 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
