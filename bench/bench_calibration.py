"""Human-calibrated metrics (issue 12): does the prediction-powered estimate fix a judge's bias,
and is its interval valid and narrower than the human labels' alone?

Simulation with a known truth, through the product's own code: each repetition draws a week of
judged sentences (each truly supported with probability `--p`), a judge with known false-pass
and false-fail rates, the product's stratified review sample (`citecheck.review.sample.draw`,
strata by the judge's verdict, weights 1 / inclusion probability) of `--labels` items labelled
by a perfect reviewer, and `citecheck.review.calibrated.estimate` (ppi-python's PPI++ mean,
weighted; and the human-only weighted mean). The truth is the week's own share of supported
sentences. Two sample designs on the same weeks: `stratified` (the product's: strata are the
judge's verdicts) and `simple` (one stratum, a simple random sample). Prints, over the
repetitions: the judge-only estimate's bias, and per design the calibrated and the human-only
estimates' bias, interval coverage (goal: 93-97% at 95%) and mean width, side by side.

Run: `.venv/bin/python bench/bench_calibration.py [--reps 300] [--population 20000] [--labels 300]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "include"))


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    from citecheck.review import sample as S
    from citecheck.review.calibrated import estimate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--population", type=int, default=20_000)
    parser.add_argument("--labels", type=int, default=300)
    parser.add_argument("--p", type=float, default=0.70, help="true share of supported sentences")
    parser.add_argument("--false-pass", type=float, default=0.30, help="judge passes this share of unsupported")
    parser.add_argument("--false-fail", type=float, default=0.05, help="judge fails this share of supported")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    designs = ("stratified", "simple")
    stats: dict[tuple[str, str], dict[str, list[float]]] = {
        (d, e): {"err": [], "cover": [], "width": []} for d in designs for e in ("calibrated", "human_only")}
    judge_err: list[float] = []
    day = dt.date(2026, 11, 23)
    for rep in range(args.reps):
        y = rng.random(args.population) < args.p
        u = rng.random(args.population)
        yhat = np.where(y, u >= args.false_fail, u < args.false_pass)
        truth = float(y.mean())
        judge_err.append(float(yhat.mean()) - truth)
        for design in designs:
            # the product's strata are the judge's verdicts; "simple" is one stratum (a simple random sample)
            verdicts = ["supported" if v else "unsupported" for v in yhat] if design == "stratified" else \
                ["any"] * args.population
            rows = [{"day": day, "turn_id": f"w{rep}-t{i}", "sentence_index": 0, "judge": "nli",
                     "verdict": verdicts[i], "labels": ["S1"]} for i in range(args.population)]
            drawn = S.draw(rows, args.labels, salt=f"bench-{rep}")
            index = [int(d["turn_id"].split("-t")[1]) for d in drawn]
            est = {r["metric"]: r for r in estimate(
                "recall", yhat.astype(float), y[index].astype(float), yhat[index].astype(float),
                [1 / d["inclusion_probability"] for d in drawn], population_strata=[S.stratum(r) for r in rows],
                strata=[d["stratum"] for d in drawn], confidence=args.confidence)}
            for kind in ("calibrated", "human_only"):
                r, acc = est[f"recall_{kind}"], stats[(design, kind)]
                acc["err"].append(r["value"] - truth)
                acc["cover"].append(r["ci_low"] <= truth <= r["ci_high"])
                acc["width"].append(r["ci_high"] - r["ci_low"])
    seconds = time.perf_counter() - started

    def mean(values: list[float]) -> float:
        return statistics.fmean(values)

    print(f"calibration benchmark: {args.reps} repetitions, {args.population:,} judged sentences each, "
          f"{args.labels} human labels, truth share {args.p}, judge false pass {args.false_pass}, "
          f"false fail {args.false_fail}, confidence {args.confidence} ({seconds:.1f}s)")
    print(f"  judge-only estimate                bias {mean(judge_err):+.4f}  (no interval for the judge's errors)")
    for design in designs:
        for kind in ("calibrated", "human_only"):
            acc = stats[(design, kind)]
            rmse = mean([e * e for e in acc["err"]]) ** 0.5
            print(f"  {design:<10} {kind:<12}  bias {mean(acc['err']):+.4f}  coverage "
                  f"{100 * mean(acc['cover']):.1f}%  mean width {mean(acc['width']):.4f}  rmse {rmse:.4f}")
        ratio = mean(stats[(design, "calibrated")]["width"]) / mean(stats[(design, "human_only")]["width"])
        print(f"  {design:<10} width calibrated / human-only: {ratio:.3f}")
    product = mean(stats[("stratified", "calibrated")]["width"]) / mean(stats[("simple", "human_only")]["width"])
    print(f"  width calibrated (stratified, the product) / human-only (simple sample, no judge): {product:.3f}")
    coverage = 100 * mean(stats[("stratified", "calibrated")]["cover"])
    ok = 93.0 <= coverage <= 97.0
    print(f"  calibrated coverage goal 93-97% (the product's stratified design): {'met' if ok else 'NOT met'}"
          f" ({coverage:.1f}%; Monte Carlo standard error {(95 * 5 / args.reps) ** 0.5:.1f} points)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
