"""The CPU's own limit for the NLI model, and how close each backend gets to it (issue 15).

    taskset -c 0,1 env OMP_NUM_THREADS=2 python bench/bench_cpu_limit.py [--figures FIGURES.json]

Measures this machine's dense matrix-multiply peak on the threads it is given: fp32 through torch
(`torch.mm`, 1024 × 1024 × 1024) and int8 through ONNX Runtime's `MatMulInteger` (uint8 × int8 →
int32, the kernel its dynamically quantized models run). From the encoder's FLOPs per token
(`citecheck.features.capacity.ENCODER_FLOPS_PER_TOKEN`) and the mean tokens of the measured pairs, each peak
gives the pairs/s a perfect fp32 or int8 implementation would reach. With `--figures` (the JSON of
`bench/bench_nli.py --json`) it prints every measured variant's pairs/s as a share of that limit.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "include"))

from citecheck.features.capacity import ENCODER_FLOPS_PER_TOKEN

SIZE = 1024


def best_seconds(run: Callable[[], object], seconds: float = 3.0) -> float:
    """The fastest of repeated calls within about `seconds` (after one warm-up call)."""
    run()
    best, deadline = float("inf"), time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def fp32_gflops() -> float:
    import torch

    a, b = torch.randn(SIZE, SIZE), torch.randn(SIZE, SIZE)
    return 2 * SIZE**3 / best_seconds(lambda: torch.mm(a, b)) / 1e9


def int8_gops() -> float:
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = numpy_helper.from_array(rng.integers(-127, 127, (SIZE, SIZE), dtype=np.int8), "B")
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "B"], ["Y"])],
        "matmul_integer",
        [helper.make_tensor_value_info("A", TensorProto.UINT8, [SIZE, SIZE])],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, [SIZE, SIZE])],
        [weights],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    a = rng.integers(0, 255, (SIZE, SIZE), dtype=np.uint8)
    return 2 * SIZE**3 / best_seconds(lambda: session.run(None, {"A": a})) / 1e9


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", help="JSON written by bench/bench_nli.py --json")
    parser.add_argument("--tokens", type=float, default=39.0, help="mean tokens per pair (default: bench_nli's)")
    args = parser.parse_args(argv)
    import torch

    figures = json.loads(Path(args.figures).read_text(encoding="utf-8")) if args.figures else {}
    tokens = figures.get("pair_tokens_mean", args.tokens)
    fp32, int8 = fp32_gflops(), int8_gops()
    print(f"matmul peak on {torch.get_num_threads()} threads: fp32 {fp32:.0f} GFLOP/s (torch), "
          f"int8 {int8:.0f} GOP/s (ONNX Runtime MatMulInteger); pairs of {tokens:.0f} tokens")
    for model, per_token in ENCODER_FLOPS_PER_TOKEN.items():
        per_pair = per_token * tokens / 1e9
        limit_fp32, limit_int8 = fp32 / per_pair, int8 / per_pair
        print(f"\n{model}: {per_pair:.2f} GFLOP per pair → limit {limit_fp32:.0f} pairs/s fp32, {limit_int8:.0f} int8")
        for name, v in figures.get("variants", {}).get(model, {}).items():
            if "pairs_per_second" in v:
                limit = limit_int8 if "int8" in name else limit_fp32
                print(f"  {name:<20} {v['pairs_per_second']:7.1f} pairs/s = {v['pairs_per_second'] / limit:4.0%} "
                      f"of its {'int8' if 'int8' in name else 'fp32'} limit, {v['pairs_per_second'] / limit_int8:4.0%}"
                      " of the int8 limit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
