"""The weekly human review: `review export|import|report|publish` (`citecheck.review.loop`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from citecheck.cli import options
from citecheck.cli.common import EXIT_OK, EXIT_SKIPPED, EXIT_USAGE, error, read_warehouse, warehouse, write_json

REVIEW_COMMANDS = (("export", "draw the period's stratified sample and write the blind file"),
                   ("import", "load a reviewer's labels (bad rows reported with line and reason)"),
                   ("report", "judge quality and calibrated metrics of the period"),
                   ("publish", "store the period's judge_quality and calibrated_metrics (idempotent)"))


def add_review(sub: Any) -> None:
    p = sub.add_parser("review", help="human review: export a blind sample, import labels, report judge quality")
    review = p.add_subparsers(dest="review_command", required=True)
    for name, text in REVIEW_COMMANDS:
        r = review.add_parser(name, help=text)
        if name == "import":
            options.add_file(r)
            r.add_argument("--reviewer", required=True)
            options.add_format(r, ["csv", "jsonl"], help="default: from the file name")
            continue
        options.add_range(r)
        if name == "export":
            r.add_argument("--size", type=int, required=True)
            options.add_format(r, ["csv", "jsonl"], default="csv")
            options.add_out(r, required=True)
            r.add_argument("--salt", default="citecheck-review-v1", help="sampling salt")
        else:
            r.add_argument("--confidence", type=float, default=0.95)
            r.add_argument("--false-pass-target", type=float, default=0.10,
                           help="NLI false-pass rate the threshold sweep looks for")
            options.add_json(r)
    p.set_defaults(func=cmd_review)


def cmd_review(args: argparse.Namespace) -> int:
    from citecheck.review import loop as review_loop

    try:
        reads = args.review_command == "report"  # a read runs no DDL
        return _review(read_warehouse() if reads else warehouse(), args)
    except (review_loop.NoSample, ValueError) as exc:  # a bad period, size or file: nothing was stored
        error(str(exc))
        return EXIT_USAGE


def _review(engine: Any, args: argparse.Namespace) -> int:
    from citecheck.review import loop as review_loop

    if args.review_command == "export":
        out = review_loop.export_sample(engine, args.from_, args.to, args.size, args.out, args.format, args.salt)
        write_json(out, None)
        return EXIT_OK
    if args.review_command == "import":
        result = review_loop.import_labels(engine, args.file, args.reviewer, args.format)
        write_json({"loaded": len(result.rows), **result.as_dict()}, None)
        for bad in result.errors[:20]:
            sys.stderr.write(f"line {bad['line']}: {bad['reason']}\n")
        return EXIT_SKIPPED if result.errors else EXIT_OK
    settings = {"confidence": args.confidence, "false_pass_target": args.false_pass_target}
    if args.review_command == "publish":
        write_json(review_loop.publish(engine, args.from_, args.to, **settings), None)
        return EXIT_OK
    report = review_loop.build_report(engine, args.from_, args.to, **settings)
    if args.json:
        write_json(report, None)
    else:
        sys.stdout.write("\n".join(review_loop.text_lines(report)) + "\n")
    return EXIT_OK
