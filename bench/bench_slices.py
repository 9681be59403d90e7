"""Bounded slices bench (issue 21): the 100-key day before and after `[slices] max_values_per_key`.

One generated day of `--turns` turns (the bundled sample generator) whose turns carry `--keys`
attribute keys, each with a value unique to the turn (a `user_id` a hundred times over), runs
through the daily job on a temporary SQLite warehouse with the sample's recorded judge, once per
cap: `max_values_per_key = 0` (every value its own slice: before) and `50` (the default: after).
Each run is its own subprocess, so its peak resident memory (ru_maxrss) is its own; printed per
run: slices, metric rows, the job's wall time, the peak memory, and the peak Python heap of the
aggregate step (tracemalloc). Side by side in one run, on this machine's CPU (named at the top).

The uncapped run at the issue's size (100 keys × 500 turns: 50,004 slices) took 10 minutes and
5.9 GB when the issue was filed; `--before-keys` runs it smaller (default 10 keys: 5,004 slices)
so the bench ends in minutes, and `--before-keys 100` runs the full day.

Run:
  PYTHONPATH=include .venv/bin/python bench/bench_slices.py
  PYTHONPATH=include .venv/bin/python bench/bench_slices.py --before-keys 100
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DAY = dt.date(2026, 11, 23)


def _cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown CPU"
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return f"{fields.get('Model name', '?').strip()}, {fields.get('CPU(s)', '?').strip()} CPUs"


def one(turns: int, keys: int, cap: int) -> dict:
    """The job on one generated day with `keys` unique-valued attributes, capped at `cap`."""
    import tracemalloc
    from dataclasses import replace

    import sqlalchemy as sa

    from citecheck import demo, job
    from citecheck import warehouse as W
    from citecheck.job import steps
    from citecheck.warehouse import tables as T

    data = demo.generate(DAY, 1, turns, seed=0)
    for i, turn in enumerate(data.turns):
        turn["attributes"] = {**(turn.get("attributes") or {}), **{f"key{k:03d}": f"v{k}-{i}" for k in range(keys)}}
    with tempfile.TemporaryDirectory() as tmp:
        demo.write_sample(data, Path(tmp) / "sample")
        settings = demo.sample_settings(Path(tmp) / "sample")
        settings = replace(settings, config=replace(settings.config, slice_max_values=cap), shards=1)
        engine = W.make_engine(f"sqlite:///{tmp}/w.sqlite")
        W.init_warehouse(engine)
        W.load_turns(engine, data.turns)
        fold = steps.fold_shard.__wrapped__  # type: ignore[attr-defined]
        peak: dict[str, int] = {}

        def traced(run, *args):  # the fold step's own Python heap peak (one shard: the whole day)
            tracemalloc.start()
            try:
                return fold(run, *args)
            finally:
                peak["aggregate_heap"] = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()

        steps.fold_shard = steps.holds_day(traced)
        started = time.perf_counter()
        job.run_day(engine, DAY, settings)
        seconds = time.perf_counter() - started
        with engine.connect() as conn:
            m = T.daily_metrics.c
            rows = conn.execute(sa.select(sa.func.count()).select_from(T.daily_metrics)).scalar_one()
            slices = conn.execute(sa.select(sa.func.count()).select_from(
                sa.select(m.slice_name, m.slice_value).distinct().subquery())).scalar_one()
        engine.dispose()
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"turns": turns, "keys": keys, "cap": cap, "slices": slices, "metric_rows": rows,
            "seconds": round(seconds, 1), "peak_rss_mb": round(peak_rss),
            "aggregate_heap_mb": round(peak["aggregate_heap"] / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--keys", type=int, default=100, help="attribute keys of the capped (after) run")
    parser.add_argument("--before-keys", type=int, default=10, help="attribute keys of the uncapped (before) run")
    parser.add_argument("--cap", type=int, default=50)
    parser.add_argument("--one", nargs=3, type=int, metavar=("TURNS", "KEYS", "CAP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    print(f"CPU: {_cpu()}")
    print(f"{'run':<34}{'slices':>8}{'metric rows':>13}{'seconds':>9}{'peak RSS MB':>13}{'aggregate heap MB':>19}")
    runs = [("before: no cap", args.turns, args.before_keys, 0), (f"after: cap {args.cap}", args.turns, args.keys,
                                                                   args.cap)]
    if args.before_keys != args.keys:
        runs.insert(1, (f"after: cap {args.cap}", args.turns, args.before_keys, args.cap))
    for label, turns, keys, cap in runs:
        out = subprocess.run([sys.executable, __file__, "--one", str(turns), str(keys), str(cap)], capture_output=True,
                             text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        name = f"{label}, {keys} keys x {turns} turns"
        print(f"{name:<34}{r['slices']:>8}{r['metric_rows']:>13}{r['seconds']:>9}{r['peak_rss_mb']:>13}"
              f"{r['aggregate_heap_mb']:>19}")


if __name__ == "__main__":
    main()
