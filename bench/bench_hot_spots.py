"""The parser's and structural checks' hot spots stay linear (they were quadratic once: 47 s for
100,000 distinct markers, seconds for nested ones), and `citecheck score` on the whole bad-input
corpus (12.5 MB: a 10 MB answer, 200,000 markers, a 1 MB passage).

Each hot case is structured at half and at full size, side by side in one run: a full/half time
ratio near 2 is linear, near 4 quadratic. Prints seconds and the ratio per case, then the corpus
run's seconds. Name the CPU with the figures (`lscpu`).

Run: `PYTHONPATH=tests .venv/bin/python bench/bench_hot_spots.py [--scale 1.0]`.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bad_input.corpus import JUDGE, corpus, hot_cases, write_jsonl

from citecheck.cli import main
from citecheck.core.config import Config
from citecheck.core.structural import structure_turn
from citecheck.core.turns import turn_from_dict


def seconds(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def cpu_name() -> str:
    """The processor's model name (Linux), else the machine type."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def main_bench(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="size of every case, 1.0 = the test's sizes")
    args = parser.parse_args(argv)
    cfg = Config(max_answer_chars=0, max_sentences_per_turn=1_000_000)  # the limits lifted: the parser itself timed
    print(f"cpu: {cpu_name()}")
    print(f"{'case':<42}{'half s':>9}{'full s':>9}{'ratio':>8}")
    for name, build in hot_cases(args.scale).items():
        half, full = (turn_from_dict(build(share), cfg.max_answer_chars) for share in (0.5, 1.0))
        t_half = seconds(lambda t=half: structure_turn(t, cfg))
        t_full = seconds(lambda t=full: structure_turn(t, cfg))
        print(f"{name:<42}{t_half:>9.2f}{t_full:>9.2f}{t_full / t_half:>8.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_jsonl(corpus(), folder / "turns.jsonl")
        (folder / "judge.json").write_text(json.dumps(JUDGE))
        took = seconds(lambda: main(["score", "--turns", str(folder / "turns.jsonl"), "--judge",
                                     str(folder / "judge.json"), "--out", str(folder / "report.json")]))
    print(f"citecheck score on the bad-input corpus: {took:.2f} s")


if __name__ == "__main__":
    main_bench()
