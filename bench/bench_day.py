"""Whole-day benchmark: one generated day through `run` (every step) with the recorded judge.

For each warehouse (SQLite, a temporary file; PostgreSQL, a fresh database on the server of
`--pg-url`, dropped afterwards), each day size (default 20,000 turns; 200,000 with
`--sizes 20000,200000`) and each shard count (`--shards 1,4,16`, default 4), the bench bulk-loads
one generated day into the source tables (timed separately, not counted:
`bench_warehouse_load.load`, the same realistic day), then runs the daily job's whole sequence the
CLI's `run` runs (`citecheck.job.run_steps`: open_run → structural ×N → split_claims → judge_shard
×N → escalate → fold_shard ×N → combine → validate → publish → monitor → report → record_run)
with the sample's recorded judge on every turn (`nli_share` 1.0), in a fresh process per run, the
shards one after another. Per step it prints the CPU seconds of this process summed over the
shards (the warehouse server's CPU is not in it), the slowest shard's CPU seconds (with one worker
per shard, the critical path), the wall seconds and the peak resident memory of one task (VmHWM,
reset at each task's start); then the day's CPU seconds per 1,000 answers, the critical path
(the slowest shard of each per-shard step plus the day steps), the combine step's share of the
day's CPU, and the CPU it ran on.

So every later pass (figures, claims, languages) shows what it costs a day: rerun it and compare
the step that moved.

Run:
  .venv/bin/python bench/bench_day.py                                   # 20,000 turns, SQLite and Postgres
  .venv/bin/python bench/bench_day.py --sizes 20000,200000 --backends postgresql
  .venv/bin/python bench/bench_day.py --sizes 20000 --shards 1,4,16 --backends postgresql
  .venv/bin/python bench/bench_day.py --json bench/out/day.json         # bench/out/ is ignored by git
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "include"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_warehouse_load import DAY, fresh_database, load, release_memory, reset_peak, run_child, vm_mib

DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SHARDS = 4


def cpu_name() -> str:
    """The CPU model, the CPUs this process may use and the load average (the machine is shared)."""
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), model)
    except OSError:
        pass
    flags = ""
    try:
        with open("/proc/cpuinfo") as handle:
            found = next((line for line in handle if line.startswith("flags")), "")
        flags = ", ".join(f for f in ("avx2", "avx512f") if f" {f}" in found)
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load1, load5, _ = os.getloadavg()
    return f"{model} ({flags or 'no AVX2'}), {usable} CPUs usable, load average {load1:.1f} / {load5:.1f} (1 / 5 min)"


def run_day(url: str, shards: int = SHARDS) -> dict[str, Any]:
    """The whole sequence for the day with the recorded judge on every turn, in `shards` shards;
    per step: CPU seconds summed over its shards, the slowest shard's, wall seconds, and the peak
    RSS of its largest task."""
    from citecheck import demo, job
    from citecheck import warehouse as W

    settings = job.JobSettings(judge_spec=demo.full_judge_spec(), config=demo.sample_config(), nli_share=1.0,
                               shards=shards)
    engine = W.make_engine(url)
    base_rss = vm_mib("VmRSS")
    reset_peak()
    steps: dict[str, dict[str, float]] = {}

    def step(name: str, fn: Any, *args: Any) -> Any:
        """`job.run_steps`' hook: each task (a step, or one shard of a per-shard step) timed and its
        own peak RSS measured."""
        release_memory()
        reset_peak()
        started, cpu = time.perf_counter(), time.process_time()
        result = fn(*args)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        seen = steps.setdefault(name, {"wall_s": 0.0, "cpu_s": 0.0, "slowest_cpu_s": 0.0, "slowest_wall_s": 0.0,
                                       "peak_mib": 0.0, "tasks": 0})
        seen["wall_s"] += wall
        seen["cpu_s"] += cpu
        seen["slowest_cpu_s"] = max(seen["slowest_cpu_s"], cpu)
        seen["slowest_wall_s"] = max(seen["slowest_wall_s"], wall)
        seen["peak_mib"] = max(seen["peak_mib"], vm_mib("VmHWM"))
        seen["tasks"] += 1
        return result

    started = time.perf_counter()
    out = job.run_steps(job.DayRun(engine, DAY, job.new_run_id(DAY), settings, process_lock=True), step)
    total = time.perf_counter() - started
    engine.dispose()
    s, c = out["structural"], out["combine"]
    cpu = sum(v["cpu_s"] for v in steps.values())
    return {"steps": steps, "total_s": total, "cpu_s": cpu, "base_rss_mib": base_rss, "shards": shards,
            "critical_path_s": sum(v["slowest_wall_s"] for v in steps.values()),
            "critical_path_cpu_s": sum(v["slowest_cpu_s"] for v in steps.values()),
            "peak_mib": max(v["peak_mib"] for v in steps.values()),
            "turns_read": s["turns_read"], "turns_skipped": s["turns_skipped"], "turns_judged": s["turns_selected"],
            "answers": c["answers"], "judged_sentences": c["judged_sentences"], "published_rows": out["publish"]}


def _child(mode: str, url: str, n_turns: int, shards: int = SHARDS) -> dict[str, Any]:
    """`load` (bench_warehouse_load's) or `day` in a fresh interpreter."""
    if mode == "day":
        return run_child(__file__, mode, url, n_turns, "--shards", str(shards))
    return run_child(__file__, mode, url, n_turns)


def bench(backend: str, pg_url: str, n_turns: int, shards: int = SHARDS) -> dict[str, Any]:
    """One day of `n_turns` on a fresh warehouse of `backend`: load (not counted), then the day."""
    tmp = drop = None
    if backend == "sqlite":
        tmp = tempfile.TemporaryDirectory(prefix="citecheck-day-")
        url = f"sqlite:///{tmp.name}/warehouse.sqlite"
    else:
        url, drop = fresh_database(pg_url)
    try:
        loaded = _child("load", url, n_turns)
        print(f"  {backend} {n_turns:,} turns: loaded {loaded['source_turns']:,} source turns in "
              f"{loaded['load_s']:.1f}s (not counted); running the day…", flush=True)
        result = _child("day", url, n_turns, shards)
    finally:
        if drop is not None:
            drop()
        if tmp is not None:
            tmp.cleanup()
    return {"backend": backend, "turns": n_turns, "load_s": loaded["load_s"], **result}


def print_table(results: list[dict[str, Any]]) -> None:
    """Each step's seconds and peak RSS, one column per run; then the totals."""
    from citecheck.job import STEP_NAMES

    width = 40
    heads = [f"{r['backend']} {r['turns']:,} × {r['shards']} shards" for r in results]
    print(f"\n{'step':<13}" + "".join(f"{h:>{width}}" for h in heads))
    print(f"{'':<13}" + "".join(f"{'CPU s':>10}{'slowest':>10}{'wall s':>10}{'peak MiB':>10}" for _ in results))
    for name in STEP_NAMES:
        cells = []
        for r in results:
            st = r["steps"].get(name)
            cells.append(f"{st['cpu_s']:>10.2f}{st['slowest_cpu_s']:>10.2f}{st['wall_s']:>10.2f}{st['peak_mib']:>10.0f}"
                         if st else f"{'-':>10}" * 4)
        print(f"{name:<13}" + "".join(cells))
    print(f"{'day':<13}" + "".join(f"{r['cpu_s']:>10.2f}{r['critical_path_cpu_s']:>10.2f}{r['total_s']:>10.2f}"
                                   f"{r['peak_mib']:>10.0f}" for r in results))
    print(f"{'CPU s/1k ans':<13}" + "".join(f"{1000 * r['cpu_s'] / r['answers']:>{width}.3f}" for r in results))
    print(f"{'fold+combine':<13}" + "".join(
        f"{1000 * (r['steps']['fold_shard']['cpu_s'] + r['steps']['combine']['cpu_s']) / r['answers']:>{width}.3f}"
        for r in results))
    print(f"{'combine %':<13}" + "".join(f"{100 * r['steps']['combine']['cpu_s'] / r['cpu_s']:>{width}.1f}"
                                         for r in results))
    print(f"{'slowest %':<13}" + "".join(f"{100 * r['critical_path_cpu_s'] / r['cpu_s']:>{width}.1f}"
                                         for r in results))
    print("(CPU s: this process's CPU seconds, shards added up, the warehouse server's not included; slowest: the"
          " slowest shard's CPU s (a day step: itself); wall s: shards added up; peak MiB: the largest task's peak"
          " RSS (VmHWM, reset at each task's start); day: CPU s, the critical path's CPU s with one worker per"
          " shard, wall s, highest peak; CPU s/1k ans and fold+combine: CPU seconds per 1,000 answers; combine %:"
          " combine's share of the day's CPU; slowest %: the critical path's share)")
    for r in results:
        print(f"{r['backend']} {r['turns']:,} turns: read {r['turns_read']:,}, skipped {r['turns_skipped']:,}, "
              f"judged {r['turns_judged']:,} turns ({r['judged_sentences']:,} sentences); published "
              + ", ".join(f"{k} {v:,}" for k, v in r["published_rows"].items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="20000", help="comma-separated day sizes (default 20000; the issue's "
                                                         "pair is 20000,200000)")
    parser.add_argument("--backends", default="sqlite,postgresql", help="sqlite, postgresql or both (default)")
    parser.add_argument("--pg-url", default=os.environ.get("CITECHECK_TEST_PG_URL", DEFAULT_PG_URL),
                        help="the PostgreSQL server: a fresh database is created on it and dropped afterwards")
    parser.add_argument("--shards", default=str(SHARDS), help="comma-separated shard counts (e.g. 1,4,16)")
    parser.add_argument("--json", type=Path, help="also write the results here (e.g. under bench/out/)")
    parser.add_argument("--child", choices=("load", "day"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.child == "load":
        print(json.dumps(load(args.url, args.turns)))
        return 0
    if args.child == "day":
        print(json.dumps(run_day(args.url, int(args.shards)), default=str))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    backends = [b.strip() for b in args.backends.split(",")]
    if unknown := set(backends) - {"sqlite", "postgresql"}:
        parser.error(f"unknown backends {sorted(unknown)}: use sqlite and/or postgresql")
    shard_counts = [int(s) for s in args.shards.split(",")]
    print(f"whole-day bench: {', '.join(f'{n:,}' for n in sizes)} turns on {', '.join(backends)}, recorded judge, "
          f"nli_share 1.0, {', '.join(map(str, shard_counts))} shard(s)\nCPU: {cpu_name()}", flush=True)
    results = [bench(b, args.pg_url, n, k) for n in sizes for b in backends for k in shard_counts]
    print_table(results)
    print(f"CPU at the end: {cpu_name()}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"cpu": cpu_name(), "results": results}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
