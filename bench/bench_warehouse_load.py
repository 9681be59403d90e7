"""Load benchmark: one day of N turns through the structural stage and the warehouse.

For each size N the bench builds a fresh warehouse (a temporary SQLite file, or a fresh database on
the PostgreSQL server of `--url`, dropped afterwards), bulk-loads one day of N realistic turns into
the source tables (timed separately, not counted), then runs the daily job's steps with
`nli_share=0` (structural checks only, no judge work): open_run → structural → judge shards (none
selected) → escalate (no-op) → fold_shard → combine → validate → publish → finish. It prints per-stage wall
time, turns per second, and the peak resident memory of the job process per stage.

Each size runs in its own fresh subprocess, so a peak is that size's own; the peak is reset before
every stage (`/proc/self/clear_refs`), so it is the stage's own too. The goal (issue 6) is flat
memory: the same peak for 10k and 1M turns.

Turns come from the bundled sample generator (`citecheck.demo`: markers in every habit, native
citation turns, refusals, FAQ repeats, follow-ups with changed context sets and stale labels),
streamed conversation by conversation so generating 1M turns needs no more memory than 10k. About
1% of conversations start the evening before and cross midnight (stale labels across the day
boundary), and about 0.2% of turns are malformed (recorded as skipped).

Run:
  .venv/bin/python bench/bench_warehouse_load.py --sizes 10000,100000,1000000
  .venv/bin/python bench/bench_warehouse_load.py --turns 100000 \
      --url postgresql+psycopg://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "include"))

DAY = dt.date(2024, 5, 1)
SEED = 7
LOAD_BATCH = 2000
REPORTED = ("open_run", "structural", "fold_shard", "combine", "validate", "publish")


# --- generating one day ------------------------------------------------------------------------

def stream_day(n_turns: int, day: dt.date = DAY, seed: int = SEED) -> Iterator[dict[str, Any]]:
    """Turns of conversations answered on `day`, until `n_turns` of them fall inside the day.

    Mirrors `citecheck.demo`'s day (same conversation mix) but yields as it goes. Turns of a
    conversation that fall outside the day (the evening before, after midnight) are yielded too:
    they belong in the source tables, and the job must leave them out of the day.
    """
    from citecheck import demo

    rng = random.Random(f"bench-warehouse-load:{seed}:{day.isoformat()}")
    first = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    end = first + dt.timedelta(days=1)
    in_day = k = 0
    while in_day < n_turns:
        conv_id = f"conv-{day:%Y%m%d}-{k:07d}"
        roll = rng.random()
        if roll < 0.01:  # started the evening before, crossing midnight: stale labels across days
            start = first - dt.timedelta(seconds=rng.randint(60, 1500))
            items = demo.conversation(rng, conv_id, start, rng.randint(2, 4), force_stale=True)
        elif roll < 0.09:
            items = [demo.faq_turn(rng, seed, conv_id, demo.start_time(rng, day))]
        else:
            length = rng.choices((1, 2, 3, 4), weights=(60, 25, 10, 5))[0]
            items = demo.conversation(rng, conv_id, demo.start_time(rng, day), length,
                                       native=roll < 0.16 and length == 1)
        for item in items:
            inside = first <= item.moment < end
            if inside and in_day >= n_turns:
                continue
            in_day += inside
            turn = item.turn
            if inside and rng.random() < 0.002:
                turn = _malformed(rng, turn)
            yield turn
        k += 1


def _malformed(rng: random.Random, turn: dict[str, Any]) -> dict[str, Any]:
    """A turn the loader stores but the job must skip with a reason."""
    broken = dict(turn)
    kind = rng.choice(("no_answer", "format", "context"))
    if kind == "no_answer" or not turn.get("context"):
        broken["answer"] = None
        broken["answer_blocks"] = None
    elif kind == "format":
        broken["answer_format"] = "html"
    else:
        broken["context"] = [dict(p, label=None) for p in turn["context"]]
    return broken


# --- loading (timed separately) ----------------------------------------------------------------

def load(url: str, n_turns: int) -> dict[str, Any]:
    """Create the warehouse and bulk-load the day into the source tables."""
    from citecheck import warehouse as W
    from citecheck.warehouse import tables as T
    from citecheck.warehouse.engine import bulk_insert

    engine = W.make_engine(url)
    W.init_warehouse(engine)
    started = time.perf_counter()
    turns = passages = 0
    batch: list[dict[str, Any]] = []
    batch_passages: list[dict[str, Any]] = []

    def flush() -> None:
        if batch:
            with engine.begin() as conn:
                bulk_insert(conn, T.source_turns, batch)
                bulk_insert(conn, T.source_passages, batch_passages)
        batch.clear()
        batch_passages.clear()

    for turn in stream_day(n_turns):
        row, ps = W.source_rows(turn)
        batch.append(row)
        batch_passages.extend(ps)
        turns += 1
        passages += len(ps)
        if len(batch) >= LOAD_BATCH:
            flush()
    flush()
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.commit()
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE")
        else:
            conn.exec_driver_sql("ANALYZE")
    engine.dispose()
    return {"source_turns": turns, "source_passages": passages, "load_s": time.perf_counter() - started}


# --- the job, in its own process ---------------------------------------------------------------

def vm_mib(field: str) -> float:
    """A /proc/self/status field in MiB (VmHWM: peak resident set; VmRSS: current)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def release_memory() -> None:
    """Hand freed memory back to the OS between stages, so a stage's peak is not hidden by what
    the previous stage left in the allocator (glibc only; harmless elsewhere)."""
    import contextlib
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS, so the next reading is one stage's own peak (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


class _Sampler:
    """Samples the split of resident memory every 50 ms: anonymous (the Python heap and the
    drivers' buffers) and shared/file-backed (e.g. SQLite's WAL index, mapped from `-shm`).
    VmHWM gives the exact peak of their sum; this says which part a growth is in."""

    def __init__(self) -> None:
        import threading

        self.anon = self.shared = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _read(self) -> tuple[float, float]:
        values = {"RssAnon": 0, "RssFile": 0, "RssShmem": 0}
        with open("/proc/self/status") as handle:
            for line in handle:
                key = line.split(":", 1)[0]
                if key in values:
                    values[key] = int(line.split()[1])
        return values["RssAnon"] / 1024, (values["RssFile"] + values["RssShmem"]) / 1024

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.sample()

    def sample(self) -> None:
        anon, shared = self._read()
        self.anon, self.shared = max(self.anon, anon), max(self.shared, shared)

    def reset(self) -> None:
        self.anon = self.shared = 0.0
        self.sample()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_job(url: str) -> dict[str, Any]:
    """Every step of one day with nli_share=0; wall time and peak RSS per step."""
    from citecheck import demo, job
    from citecheck import warehouse as W

    settings = job.JobSettings(judge_spec=demo.full_judge_spec(), config=demo.sample_config(), nli_share=0.0)
    engine = W.make_engine(url)
    base_rss = vm_mib("VmRSS")
    resettable = reset_peak()
    stages: dict[str, dict[str, float]] = {}

    sampler = _Sampler()

    def step(name: str, fn: Any, *args: Any) -> Any:
        """`job.run_steps`' hook: each step timed and measured (shards add up under one name)."""
        release_memory()
        reset_peak()
        sampler.reset()
        before = vm_mib("VmRSS")
        t0 = time.perf_counter()
        result = fn(*args)
        wall = time.perf_counter() - t0 + stages.get(name, {}).get("wall_s", 0.0)
        sampler.sample()
        stages[name] = {"wall_s": wall, "peak_mib": vm_mib("VmHWM"), "rss_before_mib": before,
                        "rss_after_mib": vm_mib("VmRSS"), "peak_anon_mib": sampler.anon,
                        "peak_shared_mib": sampler.shared}
        return result

    out = job.run_steps(job.DayRun(engine, DAY, job.new_run_id(DAY), settings), step)
    s = out["structural"]
    sampler.stop()
    engine.dispose()
    return {"stages": stages, "base_rss_mib": base_rss, "peak_resettable": resettable,
            "peak_mib": max(v["peak_mib"] for v in stages.values()),
            "turns_read": s["turns_read"], "turns_skipped": s["turns_skipped"],
            "combine": out["combine"],
            "published_rows": out["publish"]}


# --- orchestration -----------------------------------------------------------------------------

def fresh_database(url: str) -> tuple[str, Any]:
    """A fresh database on the server of a PostgreSQL URL, and a function that drops it."""
    import sqlalchemy as sa

    name = f"citecheck_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    fresh = sa.engine.make_url(url).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()

    return fresh, drop


def run_child(script: str, mode: str, url: str, n_turns: int, *extra: str) -> dict[str, Any]:
    """Run `script --child MODE` (and `extra` arguments) in a fresh interpreter (its peak memory is
    its own); its JSON result is the last stdout line."""
    proc = subprocess.run([sys.executable, script, "--child", mode, "--url", url, "--turns", str(n_turns), *extra],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} for {n_turns} turns failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _child(mode: str, url: str, n_turns: int) -> dict[str, Any]:
    return run_child(__file__, mode, url, n_turns)


def bench_size(url: str | None, n_turns: int) -> dict[str, Any]:
    """One size in a fresh warehouse: load (not counted), then the job in its own process."""
    tmp = drop = None
    if url is None:
        tmp = tempfile.TemporaryDirectory(prefix="citecheck-load-")
        target = f"sqlite:///{tmp.name}/warehouse.sqlite"
    elif url.startswith("postgresql"):
        target, drop = fresh_database(url)
    else:
        target = url
    try:
        loaded = _child("load", target, n_turns)
        print(f"  {n_turns:,} turns: loaded {loaded['source_turns']:,} source turns, "
              f"{loaded['source_passages']:,} passages in {loaded['load_s']:.1f}s (not counted)", flush=True)
        result = _child("job", target, n_turns)
        if url is None:
            result["db_mib"] = sum(p.stat().st_size for p in Path(tmp.name).iterdir()) / 2**20
    finally:
        if drop is not None:
            drop()
        if tmp is not None:
            tmp.cleanup()
    return {"turns": n_turns, "load": loaded, **result}


def print_table(results: list[dict[str, Any]]) -> None:
    """Per-stage wall time, turns/s and peak RSS for every size, with ratios between sizes."""
    sizes = [r["turns"] for r in results]
    head = "".join(f"{f'{n:,} turns':>50}" for n in sizes)
    print(f"\n{'stage':<12}{head}")
    print(f"{'':<12}" + "".join(f"{'wall s':>9}{'turns/s':>11}{'peak MiB':>10}{'+MiB':>8}{'anon/file':>12}"
                                for _ in sizes))
    for stage in (*REPORTED, "total"):
        cells = []
        for r in results:
            st = r["stages"]
            if stage == "total":
                wall = sum(v["wall_s"] for v in st.values())
                peak, grew = r["peak_mib"], r["peak_mib"] - r["base_rss_mib"]
                anon = max(v.get("peak_anon_mib", 0) for v in st.values())
                shared = max(v.get("peak_shared_mib", 0) for v in st.values())
            else:
                wall, peak = st[stage]["wall_s"], st[stage]["peak_mib"]
                grew = peak - st[stage]["rss_before_mib"]
                anon, shared = st[stage].get("peak_anon_mib", 0), st[stage].get("peak_shared_mib", 0)
            split = f"{anon:.0f}/{shared:.0f}"
            cells.append(f"{wall:>9.2f}{r['turns_read'] / wall if wall else 0:>11,.0f}{peak:>10.1f}{grew:>8.1f}"
                         f"{split:>12}")
        print(f"{stage:<12}" + "".join(cells))
    print(f"{'base RSS':<12}" + "".join(f"{'':>20}{r['base_rss_mib']:>10.1f}{'':>20}" for r in results))
    print("(peak MiB: the stage's peak RSS (VmHWM, reset at its start); +MiB: peak minus RSS at the stage's start;"
          "\n anon/file: sampled peaks of anonymous and file-backed/shared RSS; total: the whole job, +MiB above"
          " the RSS after imports)")
    if len(results) > 1:
        print("\nratios between consecutive sizes (turns ratio; linear time = same ratio; flat memory = 1.0)")
        for a, b in itertools.pairwise(results):
            label = f"{a['turns']:,} → {b['turns']:,} (×{b['turns'] / a['turns']:g})"
            print(f"  {label}")
            for stage in (*REPORTED, "total"):
                def wall(r: dict[str, Any], stage: str = stage) -> float:
                    st = r["stages"]
                    return sum(v["wall_s"] for v in st.values()) if stage == "total" else st[stage]["wall_s"]

                def peak(r: dict[str, Any], stage: str = stage) -> float:
                    return r["peak_mib"] if stage == "total" else r["stages"][stage]["peak_mib"]

                print(f"    {stage:<12} time ×{wall(b) / wall(a):>7.2f}   peak RSS ×{peak(b) / peak(a):>5.2f}")
    for r in results:
        pub = r["published_rows"]
        print(f"\n{r['turns']:,} turns: read {r['turns_read']:,}, skipped {r['turns_skipped']:,}; published "
              + ", ".join(f"{k} {v:,}" for k, v in pub.items())
              + (f"; SQLite file {r['db_mib']:.0f} MiB" if "db_mib" in r else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=100_000, help="turns in the day (when --sizes is not given)")
    parser.add_argument("--sizes", help="comma-separated day sizes for a memory-flatness sweep, e.g. 10000,100000")
    parser.add_argument("--url", help="warehouse URL (default: a temporary SQLite file per size); a PostgreSQL "
                                      "URL names the server: the bench creates and drops a fresh database on it")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--child", choices=("load", "job"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    if args.child == "load":
        print(json.dumps(load(args.url, args.turns)))
        return 0
    if args.child == "job":
        print(json.dumps(run_job(args.url), default=str))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [args.turns]
    backend = "SQLite (temporary file)" if args.url is None else args.url
    print(f"warehouse load bench: one day, sizes {', '.join(f'{n:,}' for n in sizes)}, on {backend}", flush=True)
    results = []
    for n in sizes:
        results.append(bench_size(args.url, n))
        r = results[-1]
        print(f"  {n:,} turns: structural {r['stages']['structural']['wall_s']:.1f}s, total "
              f"{sum(v['wall_s'] for v in r['stages'].values()):.1f}s, peak RSS {r['peak_mib']:.0f} MiB", flush=True)
    print_table(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
