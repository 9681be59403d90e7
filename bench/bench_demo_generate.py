"""How long the bundled sample (`citecheck.demo`) takes to generate and write: what `bin/demo`
pays for its history of days.

Generates `--days` days (default 31: the demo day and the 30 before it) ending on `--end`, then
writes them as `citecheck sample` does (turns, recorded judge, config). Prints wall and CPU seconds
(CPU: this process only, a fairer figure on a shared machine), per day and per turn, and the size
of the recorded judge. Goal: a month in a few seconds, so the demo stays quick.

Run: `.venv/bin/python bench/bench_demo_generate.py [--days 31] [--end 2026-11-30] [--repeat 3]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "include"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=31)
    parser.add_argument("--end", type=dt.date.fromisoformat, default=dt.date(2026, 11, 30))
    parser.add_argument("--turns-per-day", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3, help="runs; the fastest is reported")
    args = parser.parse_args(argv)

    from citecheck import demo

    start = args.end - dt.timedelta(days=args.days - 1)
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        sample = demo.generate(start, args.days, args.turns_per_day)
        generated = (time.perf_counter() - wall, time.process_time() - cpu)
        with tempfile.TemporaryDirectory() as folder:
            wall, cpu = time.perf_counter(), time.process_time()
            demo.write_sample(sample, folder)
            written = (time.perf_counter() - wall, time.process_time() - cpu)
        for name, figures in (("generate", generated), ("write", written)):
            if name not in best or figures[1] < best[name][1]:
                best[name] = figures
    print(f"{args.days} days {start}..{args.end}, {len(sample.turns)} turns (+{len(sample.malformed_lines)} "
          f"broken lines), recorded judge of {len(sample.judgments)} statements; best of {args.repeat}")
    for name, (wall, cpu) in best.items():
        print(f"  {name:<9} wall {wall:6.2f} s   cpu {cpu:6.2f} s   cpu/day {1000 * cpu / args.days:6.1f} ms"
              f"   cpu/turn {1e6 * cpu / len(sample.turns):6.1f} µs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
