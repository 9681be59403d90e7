"""Scoring files without a warehouse: `score`, `parse`, `compare`, `calibrate`, `plan`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from citecheck.cli import options
from citecheck.cli.common import (
    EXIT_DECISION_FAILED,
    EXIT_OK,
    EXIT_SKIPPED,
    EXIT_USAGE,
    checked_config,
    error,
    read_warehouse,
    write_json,
)


def add_score(sub: Any) -> None:
    p = sub.add_parser("score", help="score turns from a JSON Lines file with a judge")
    options.add_turns(p, help="turns, one JSON object per line (SPEC §1)")
    p.add_argument("--judge", required=True, help="judge file (JSON with a 'kind')")
    options.add_config(p, help="TOML configuration (defaults need none)")
    options.add_out(p, help="write JSON here instead of stdout")
    p.add_argument("--cache", help="SQLite file keeping NLI judgments between runs")
    p.add_argument("--run-id", help="run id (LLM batches reattach to the batch of the same run id)")
    p.add_argument("--summary", action="store_true", help="print a readable metric summary on stderr")
    p.add_argument("--criteria", help="criteria TOML ([[criteria]], SPEC §5.1): adds `criteria` and `decision`")
    p.set_defaults(func=cmd_score)


def add_parse(sub: Any) -> None:
    p = sub.add_parser("parse", help="parse and run the structural checks only (no judge)")
    options.add_turns(p)
    options.add_config(p)
    options.add_out(p)
    p.set_defaults(func=lambda a: cmd_score(a, judged=False))


def add_compare(sub: Any) -> None:
    p = sub.add_parser("compare", help="paired comparison of two `score` outputs of the same questions")
    p.add_argument("--base", required=True, help="score output (JSON) of the base version")
    p.add_argument("--candidate", required=True, help="score output (JSON) of the candidate version")
    p.add_argument("--key", default="turn_id", help="pair items by turn_id (default), question or attributes.NAME")
    options.add_json(p, help="write the comparison as a JSON object")
    p.set_defaults(func=cmd_compare)


def add_gate(sub: Any) -> None:
    p = sub.add_parser("gate", help="release decision for CI: criteria on a candidate's `score` output "
                                    "(and non-inferiority against a base); exit 0 pass, 3 fail or no_data, 2 invalid")
    p.add_argument("--candidate", required=True, help="score output (JSON) of the candidate version")
    p.add_argument("--base", help="score output (JSON) of the base version on the same questions (for "
                                  "max_drop / max_rise)")
    p.add_argument("--criteria", required=True, help="criteria TOML file ([[criteria]])")
    p.add_argument("--key", default="turn_id", help="pair items by turn_id (default), question or attributes.NAME")
    options.add_json(p, help="print the decision as a JSON object")
    p.set_defaults(func=cmd_gate)


def add_calibrate(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="judge calibration report against human labels (SPEC §6)")
    p.add_argument("--labels", help="JSON: rows with 'human' and 'judge' booleans")
    options.add_range(p, required=False, from_help="or: the review labels of this period (with --to)")
    p.add_argument("--slice", action="append", help="row key to slice by (repeatable)")
    options.add_out(p)
    p.set_defaults(func=cmd_calibrate)


def add_plan(sub: Any) -> None:
    p = sub.add_parser("plan", help="NLI wall time of a day of N answers on 1/2/4/8 CPU workers and one GPU")
    p.add_argument("--answers", type=int, required=True, help="answers per day")
    p.add_argument("--sentences-per-answer", type=float, help="check-worthy sentences per answer (default: sample's)")
    p.add_argument("--backend", help="variant to size on, as named in the rates (default: the fastest faithful)")
    p.add_argument("--rates", help="rates file written by bench/bench_nli.py --rates-out (default: the latest "
                   "rates measured for the project, shipped with it: an estimate for this machine)")
    p.add_argument("--model", default="deberta", help="model in the rates (deberta or minilm)")
    p.add_argument("--judge", help="or: an NLI judge file to time here in a short calibration run")
    p.add_argument("--window-hours", type=float, default=6.0, help="hours the day's NLI work may take")
    p.add_argument("--premise", choices=("windows", "chunks"), default="windows",
                   help="premise mode to size (the judge file's \"premise\"; default windows)")
    p.add_argument("--claims", choices=("rules", "llm"),
                   help="also size a claims mode: NLI pairs per claim vs per sentence; for llm the splitter's "
                        "tokens and USD per 1,000 answers with and without batches and caching")
    options.add_json(p, help="print the plan as JSON")
    p.set_defaults(func=cmd_plan)


def _summary(payload: dict[str, Any]) -> Iterator[str]:
    run = payload["run"]
    yield (f"turns read {run['turns_read']}, scored {run['turns_scored']}, skipped {run['turns_skipped']}"
           f" · judge {run['judge']} {run['judge_version'] or ''} · config {run['config_hash']}")
    from citecheck.core.metrics import SCORED_HEADLINE_METRICS

    yield from _metric_table("metric", SCORED_HEADLINE_METRICS, payload)
    yield from _claims_summary(payload)
    yield from _native_summary(payload)
    for skip in payload["skipped"][:10]:
        yield f"skipped line {skip['line']} ({skip['turn_id']}): {skip['reason']}"


def _claims_summary(payload: dict[str, Any]) -> Iterator[str]:
    """A claims mode's metrics (SPEC §2.1) under the sentence ones, and the splits it rejected."""
    from citecheck.core.metrics import CLAIM_METRICS, METRIC_NAMES

    if not CLAIM_METRICS & set(payload["metrics"]["micro"]):
        return
    yield from _metric_table("claim metric", [m for m in METRIC_NAMES if m in CLAIM_METRICS], payload)
    run = payload["run"]
    yield (f"claims mode {run.get('claims_mode')}: {payload['counts'].get('check_worthy_claims', 0)} claims, "
           f"{run.get('claim_splits_rejected', 0)} splits rejected (kept whole: a claim added a figure or word), "
           f"{run.get('claim_splits_unsupported_language', 0)} sentences not split (a language the splitter "
           "does not split)")


def _metric_table(title: str, names: Sequence[str], payload: dict[str, Any]) -> Iterator[str]:
    """Metrics as a person reads them (`core.metrics.display`): micro and macro values, the micro
    interval, and what the micro value is made of ("3 supported / 8 judged sentences"; F1: its
    recall and precision)."""
    from citecheck.core.metrics.display import counts_fraction, format_value, interval

    micro, macro = payload["metrics"]["micro"], payload["metrics"]["macro"]
    intervals = payload["metrics"].get("intervals", {}).get("micro", {})
    yield f"{title:<30}{'micro':>9}{'macro':>9}  {'micro 95% interval':<18}  micro made of"
    for name in names:
        ci = intervals.get(name) or {}
        span = interval(name, ci.get("ci_low"), ci.get("ci_high"))
        yield (f"{name:<30}{format_value(name, micro.get(name)):>9}{format_value(name, macro.get(name)):>9}  "
               f"{span:<18}  {counts_fraction(name, payload['counts'], micro)}").rstrip()


def _native_summary(payload: dict[str, Any]) -> Iterator[str]:
    """Native citations' figures, when the input had any: cited_char_share, pointer problems by
    kind, sentences unjudged for want of source text."""
    counts, micro = payload["counts"], payload["metrics"]["micro"]
    prefix = "pointer_problem_citations_"
    kinds = {k[len(prefix):]: n for k, n in counts.items() if k.startswith(prefix) and n}
    if not (counts["native_answer_chars"] or kinds or counts["no_source_text_sentences"]):
        return
    share = micro["cited_char_share"]
    from citecheck.core.metrics.display import format_value

    yield (f"native citations: cited_char_share {format_value('cited_char_share', share)}"
           f" · pointer problems {counts['pointer_problem_citations']} of {counts['citations']} citations"
           + (f" ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})" if kinds else "")
           + f" · no_source_text {counts['no_source_text_sentences']} of {counts['selected_sentences']} sentences")


def _open_cache(path: str | None) -> Any:
    """The `--cache` SQLite file (or database URL) as a judgment cache, or None."""
    if path is None:
        return None
    from citecheck.judges.base import JudgeSpecError
    from citecheck.warehouse.judgment_cache import open_cache

    try:
        return open_cache(path)
    except Exception as exc:  # a bad URL or unwritable file is a configuration error
        raise JudgeSpecError(f"nli judge: cannot open the judgment cache {path!r}: {exc}") from exc


def cmd_score(args: argparse.Namespace, *, judged: bool = True) -> int:
    from citecheck.core.pipeline import score
    from citecheck.core.turns import read_turn_file
    from citecheck.judges import load_judge

    config = checked_config(args.config)
    criteria = _criteria(getattr(args, "criteria", None))
    judge = None
    if judged:
        cache_options = {"cache": _open_cache(getattr(args, "cache", None)), "run_id": getattr(args, "run_id", None)}
        judge = load_judge(args.judge, **{k: v for k, v in cache_options.items() if v is not None})
    turns, skipped = read_turn_file(args.turns, config.max_answer_chars)
    report = score(turns, judge, config, skipped, criteria=criteria)
    payload = report.to_json(judged=judged)
    if criteria is not None and report.fold is not None and report.fold.criteria is not None:
        from citecheck.core.coverage import decision_with, skipped_check
        from citecheck.core.criteria import decision_json

        tallies = report.fold.criteria
        results, failing = tallies.results(), tallies.failing_answers()
        check = skipped_check(len(report.skipped), len(report.scored) + len(report.skipped), criteria.limits,
                              name="turns skipped")
        payload.update(decision_json(results, failing, criteria), coverage=[check.as_dict()],
                       decision=decision_with((r.decision for r in results), [check]))
    write_json(payload, args.out)
    if judged and getattr(args, "summary", False):
        sys.stderr.write("\n".join(_summary(payload)) + "\n")
    for problem in payload.get("invariant_violations", []):
        sys.stderr.write(f"invariant violated: {problem}\n")
    return EXIT_SKIPPED if report.skipped else EXIT_OK


def _criteria(path: str | None) -> Any:
    """The criteria file of `--criteria`, validated before anything is scored (CriteriaError: exit 2)."""
    if path is None:
        return None
    from citecheck.core.criteria import load_criteria_file

    return load_criteria_file(path)


def cmd_gate(args: argparse.Namespace) -> int:
    from citecheck.core.criteria import PASS, CriteriaError
    from citecheck.features.compare import CompareError
    from citecheck.features.gate import format_gate, gate_files

    try:
        result = gate_files(args.candidate, args.criteria, args.base, args.key)
    except (CriteriaError, CompareError, FileNotFoundError) as exc:
        sys.stderr.write(f"citecheck gate: error: {exc}\n")
        return EXIT_USAGE
    if args.json:
        write_json(result, None)
    else:
        print(format_gate(result))
    return EXIT_OK if result["decision"] == PASS else EXIT_DECISION_FAILED


def cmd_compare(args: argparse.Namespace) -> int:
    from citecheck.features.compare import CompareError, compare_files, format_comparison

    try:
        result = compare_files(args.base, args.candidate, args.key)
    except CompareError as exc:
        sys.stderr.write(f"citecheck compare: error: {exc}\n")
        return EXIT_USAGE
    if args.json:
        write_json(result, None)
    else:
        print(format_comparison(result))
    return EXIT_OK


def cmd_calibrate(args: argparse.Namespace) -> int:
    from citecheck.stats.agreement import calibration_report

    if args.labels:
        data = json.loads(Path(args.labels).read_text(encoding="utf-8"))
        rows = data["rows"] if isinstance(data, dict) else data
    elif args.from_ and args.to:  # the human labels of the review loop, from the warehouse
        from citecheck.review.loop import NoSample, calibration_rows

        try:
            rows = calibration_rows(read_warehouse(), args.from_, args.to)
        except (NoSample, ValueError) as exc:
            error(str(exc))
            return EXIT_USAGE
    else:
        error("calibrate needs --labels FILE, or --from and --to (review labels)")
        return EXIT_USAGE
    write_json(calibration_report(rows, slice_keys=args.slice or ()), args.out)
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    from citecheck import demo
    from citecheck.features import capacity

    if args.rates is not None and args.judge is not None:
        raise capacity.PlanError("plan: give at most one of --rates FILE (from bench/bench_nli.py) or --judge FILE")
    if args.rates is not None:
        rates = capacity.rates_from_file(args.rates, args.model)
    elif args.judge is not None:
        rates = capacity.calibrate(args.judge)
    else:
        rates = capacity.packaged_rates(args.model)
    traffic, config = demo.plan_traffic(), demo.sample_config()
    profile = capacity.traffic_profile(traffic, config, premise=args.premise)
    chosen = args.backend or rates.fastest_faithful()
    scale_from = (
        capacity.traffic_profile(traffic, config)
        if args.premise == "chunks" and chosen not in (rates.chunk_cpu or {})
        else None
    )
    result = capacity.plan(
        args.answers,
        rates,
        profile,
        sentences_per_answer=args.sentences_per_answer,
        variant=args.backend,
        window_hours=args.window_hours,
        window_profile=scale_from,
    )
    text = None if args.json else capacity.render(result)
    if args.claims:
        from citecheck.features import claims_plan

        result["claims"] = claims_plan.claims_plan(traffic, config, args.answers, args.claims)
        text = None if args.json else text + "\n" + claims_plan.render_claims(result["claims"])
    print(json.dumps(result, indent=2, default=str) if args.json else text)
    return EXIT_OK
