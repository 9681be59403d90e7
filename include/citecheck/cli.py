"""Command line: `python -m citecheck COMMAND …`.

Exit codes: 0 success; 1 the run finished but some input lines were skipped (see `skipped`);
2 bad usage, configuration or judge file (nothing was scored).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_SKIPPED, EXIT_USAGE = 0, 1, 2


def _read_turns(path: str) -> tuple[list[Any], list[Any]]:
    """Every turn of a JSONL file, plus the lines skipped with their reasons (duplicates too)."""
    from citecheck.turns import Skipped, read_jsonl

    turns, skipped, seen = [], [], set()
    for number, item in read_jsonl(path):
        if isinstance(item, Skipped):
            skipped.append(item)
        elif item.turn_id in seen:
            skipped.append(Skipped(number, item.turn_id, "duplicate turn_id (an earlier line has it)"))
        else:
            seen.add(item.turn_id)
            turns.append(item)
    return turns, skipped


def _write(payload: dict[str, Any], out: str | None) -> None:
    text = json.dumps(payload, indent=2, ensure_ascii=False, default=str)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")


def _summary(payload: dict[str, Any]) -> Iterator[str]:
    run = payload["run"]
    yield (f"turns read {run['turns_read']}, scored {run['turns_scored']}, skipped {run['turns_skipped']}"
           f" · judge {run['judge']} {run['judge_version'] or ''} · config {run['config_hash']}")
    headline = ("attachment_rate", "citation_recall", "citation_precision", "citation_f1", "support_rate_of_cited",
                "faithfulness", "unknown_label_rate", "miscited_rate", "uncited_supported_rate", "unsupported_rate",
                "refusal_rate", "unjudged_rate")
    yield f"{'metric':<26}{'micro':>10}{'macro':>10}"
    for name in headline:
        row = [payload["metrics"][avg].get(name) for avg in ("micro", "macro")]
        yield f"{name:<26}" + "".join(f"{'null':>10}" if v is None else f"{v:>10.3f}" for v in row)
    for skip in payload["skipped"][:10]:
        yield f"skipped line {skip['line']} ({skip['turn_id']}): {skip['reason']}"


def cmd_score(args: argparse.Namespace, *, judged: bool = True) -> int:
    from citecheck.config import load_config
    from citecheck.judges import load_judge
    from citecheck.pipeline import score

    config = load_config(args.config)
    judge = None
    if judged:
        options = {"cache_path": getattr(args, "cache", None), "run_id": getattr(args, "run_id", None)}
        judge = load_judge(args.judge, **{k: v for k, v in options.items() if v is not None})
    turns, skipped = _read_turns(args.turns)
    report = score(turns, judge, config, skipped)
    payload = report.to_json(judged=judged)
    _write(payload, args.out)
    if judged and getattr(args, "summary", False):
        sys.stderr.write("\n".join(_summary(payload)) + "\n")
    for problem in payload.get("invariant_violations", []):
        sys.stderr.write(f"invariant violated: {problem}\n")
    return EXIT_SKIPPED if skipped else EXIT_OK


def cmd_calibrate(args: argparse.Namespace) -> int:
    from citecheck.calibration import calibration_report

    data = json.loads(Path(args.labels).read_text(encoding="utf-8"))
    rows = data["rows"] if isinstance(data, dict) else data
    _write(calibration_report(rows, slice_keys=args.slice or ()), args.out)
    return EXIT_OK


def cmd_sample(args: argparse.Namespace) -> int:
    import datetime as dt

    from citecheck import sample

    data = sample.generate(dt.date.fromisoformat(args.start), args.days, args.turns_per_day, seed=args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sample.write_turns_jsonl(data, out / "turns.jsonl")
    sample.write_judge(data, out / "judge.json")
    (out / "config.toml").write_text(sample.config_toml(), encoding="utf-8")
    print(f"wrote {len(data.turns)} turns (+{len(data.malformed_lines)} malformed lines) to {out}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citecheck", description="Citation quality metrics for assistant answers.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="score turns from a JSON Lines file with a judge")
    p.add_argument("--turns", required=True, help="turns, one JSON object per line (SPEC §1)")
    p.add_argument("--judge", required=True, help="judge file (JSON with a 'kind')")
    p.add_argument("--config", help="TOML configuration (defaults need none)")
    p.add_argument("--out", help="write JSON here instead of stdout")
    p.add_argument("--cache", help="SQLite file keeping NLI judgments between runs")
    p.add_argument("--run-id", help="run id (LLM batches reattach to the batch of the same run id)")
    p.add_argument("--summary", action="store_true", help="print a readable metric summary on stderr")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("parse", help="parse and run the structural checks only (no judge)")
    p.add_argument("--turns", required=True)
    p.add_argument("--config")
    p.add_argument("--out")
    p.set_defaults(func=lambda a: cmd_score(a, judged=False))

    p = sub.add_parser("calibrate", help="judge calibration report against human labels (SPEC §6)")
    p.add_argument("--labels", required=True, help="JSON: rows with 'human' and 'judge' booleans")
    p.add_argument("--slice", action="append", help="row key to slice by (repeatable)")
    p.add_argument("--out")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("sample", help="write generated sample turns, their recorded judge and a config")
    p.add_argument("--start", default="2026-11-23")
    p.add_argument("--days", type=int, default=7)
    p.add_argument("--turns-per-day", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output folder")
    p.set_defaults(func=cmd_sample)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from citecheck.config import ConfigError
    from citecheck.judges import JudgeSpecError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, JudgeSpecError, FileNotFoundError) as exc:
        sys.stderr.write(f"citecheck: error: {exc}\n")
        return EXIT_USAGE
