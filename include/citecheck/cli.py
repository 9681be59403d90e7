"""Command line: `python -m citecheck COMMAND …`.

Exit codes (named below, the table is in the README): 0 success; 1 the run finished but some
input lines were skipped (see `skipped`); 2 bad usage, configuration or judge file (nothing was
scored); 3 a day failed validation (nothing of it was published); 4 the day is locked by another
run (nothing was done; the message names the holder); 5 a warehouse error (one line says what
failed, the run and what to do; `--debug` prints the traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_SKIPPED = 1  # finished, but some input lines or turns were skipped
EXIT_USAGE = 2  # bad usage, configuration or judge file: nothing was done
EXIT_VALIDATION_FAILED = 3  # a day's output broke an expectation: nothing of it was published
EXIT_DAY_LOCKED = 4  # another run holds the day (waited --lock-wait seconds, or not at all)
EXIT_WAREHOUSE_ERROR = 5  # the warehouse failed (unreachable, a statement refused): see the one-line message
PROVIDER_TURNS_HELP = ("also generate this many turns a day in the OpenAI, Cohere, Gemini and Anthropic PDF/"
                       "custom-content formats, some with their apps' pointer bugs (default 0: the sample as recorded)")


def _read_turns(path: str, max_answer_chars: int) -> tuple[list[Any], list[Any]]:
    """Every turn of a JSONL file, plus the lines skipped with their reasons.

    A turn id on several lines: the last line wins, as a reload does in the warehouse; each
    earlier line is skipped as replaced, so lines read = scored + skipped still holds.
    """
    from citecheck.core.turns import Skipped, read_jsonl

    items = list(read_jsonl(path, max_answer_chars))
    last = {item.turn_id: number for number, item in items if item.turn_id is not None}
    turns, skipped = [], []
    for number, item in items:
        if item.turn_id is not None and last[item.turn_id] != number:
            skipped.append(Skipped(number, item.turn_id, f"duplicate turn_id: replaced by line {last[item.turn_id]}"))
        elif isinstance(item, Skipped):
            skipped.append(item)
        else:
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
    from citecheck.core.metrics import SCORED_HEADLINE_METRICS

    yield f"{'metric':<26}{'micro':>10}{'macro':>10}  micro 95% interval"
    for name in SCORED_HEADLINE_METRICS:
        row = [payload["metrics"][avg].get(name) for avg in ("micro", "macro")]
        ci = payload["metrics"].get("intervals", {}).get("micro", {}).get(name) or {}
        span = "" if ci.get("ci_low") is None else f"  [{ci['ci_low']:.3f}, {ci['ci_high']:.3f}]"
        yield f"{name:<26}" + "".join(f"{'null':>10}" if v is None else f"{v:>10.3f}" for v in row) + span
    yield from _native_summary(payload)
    for skip in payload["skipped"][:10]:
        yield f"skipped line {skip['line']} ({skip['turn_id']}): {skip['reason']}"


def _native_summary(payload: dict[str, Any]) -> Iterator[str]:
    """Native citations' figures, when the input had any: cited_char_share, pointer problems by
    kind, sentences unjudged for want of source text."""
    counts, micro = payload["counts"], payload["metrics"]["micro"]
    prefix = "pointer_problem_citations_"
    kinds = {k[len(prefix):]: n for k, n in counts.items() if k.startswith(prefix) and n}
    if not (counts["native_answer_chars"] or kinds or counts["no_source_text_sentences"]):
        return
    share = micro["cited_char_share"]
    yield (f"native citations: cited_char_share {'null' if share is None else f'{share:.3f}'}"
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
    from citecheck.core.config import load_config
    from citecheck.core.pipeline import score
    from citecheck.judges import load_judge

    config = load_config(args.config)
    judge = None
    if judged:
        options = {"cache": _open_cache(getattr(args, "cache", None)), "run_id": getattr(args, "run_id", None)}
        judge = load_judge(args.judge, **{k: v for k, v in options.items() if v is not None})
    turns, skipped = _read_turns(args.turns, config.max_answer_chars)
    report = score(turns, judge, config, skipped)
    payload = report.to_json(judged=judged)
    _write(payload, args.out)
    if judged and getattr(args, "summary", False):
        sys.stderr.write("\n".join(_summary(payload)) + "\n")
    for problem in payload.get("invariant_violations", []):
        sys.stderr.write(f"invariant violated: {problem}\n")
    return EXIT_SKIPPED if skipped else EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from citecheck.features.compare import CompareError, compare_files, format_comparison

    try:
        result = compare_files(args.base, args.candidate, args.key)
    except CompareError as exc:
        sys.stderr.write(f"citecheck compare: error: {exc}\n")
        return EXIT_USAGE
    if args.json:
        _write(result, None)
    else:
        print(format_comparison(result))
    return EXIT_OK


def cmd_calibrate(args: argparse.Namespace) -> int:
    from citecheck.stats.agreement import calibration_report

    if args.labels:
        data = json.loads(Path(args.labels).read_text(encoding="utf-8"))
        rows = data["rows"] if isinstance(data, dict) else data
    elif args.from_ and args.to:  # the human labels of the review loop, from the warehouse
        from citecheck.review.report import NoSample, calibration_rows

        try:
            rows = calibration_rows(_engine(), args.from_, args.to)
        except (NoSample, ValueError) as exc:
            sys.stderr.write(f"citecheck: error: {exc}\n")
            return EXIT_USAGE
    else:
        sys.stderr.write("citecheck: error: calibrate needs --labels FILE, or --from and --to (review labels)\n")
        return EXIT_USAGE
    _write(calibration_report(rows, slice_keys=args.slice or ()), args.out)
    return EXIT_OK


def _loadable_malformed(data: Any) -> list[dict[str, Any]]:
    """The sample's malformed lines that the source tables can still hold (a JSON object with a
    new turn id): loaded so the job has bad rows to skip with a reason."""
    from citecheck.warehouse import source_rows

    known = {t["turn_id"] for t in data.turns}
    rows = []
    for line in data.malformed_lines:
        try:
            turn = json.loads(line)
            if isinstance(turn, dict) and turn.get("turn_id") not in known:
                source_rows(turn)
                rows.append(turn)
        except (ValueError, TypeError):
            continue
    return rows


def cmd_sample(args: argparse.Namespace) -> int:
    import datetime as dt

    from citecheck import demo

    data = demo.generate(dt.date.fromisoformat(args.start), args.days, args.turns_per_day, seed=args.seed,
                         provider_turns=args.provider_turns)
    out = Path(args.out)
    demo.write_sample(data, out)
    print(f"wrote {len(data.turns)} turns (+{len(data.malformed_lines)} malformed lines), "
          f"{len(data.reader_events)} reader events and {len(data.late_reader_events)} late ones to {out}")
    return EXIT_OK


def _engine():
    """The warehouse of CITECHECK_WAREHOUSE_URL (schemas from the config), initialised."""
    from citecheck.warehouse import engine_for, init_warehouse

    engine = engine_for()
    init_warehouse(engine)
    return engine


def _config():
    """The configuration of CITECHECK_CONFIG (defaults without one)."""
    import os

    from citecheck.core.config import load_config

    return load_config(os.environ.get("CITECHECK_CONFIG") or None)


def _day(text: str):
    import datetime as dt

    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text}") from exc


def cmd_init_warehouse(args: argparse.Namespace) -> int:
    from citecheck.warehouse import warehouse_url

    _engine()
    print(f"warehouse ready: {_safe_url(warehouse_url())}")
    return EXIT_OK


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def cmd_load_sample(args: argparse.Namespace) -> int:
    from citecheck import demo
    from citecheck.core.reader_events import reader_event
    from citecheck.warehouse import load_reader_events, load_turns

    engine = _engine()
    data = demo.generate(args.start, args.days, args.turns_per_day, seed=args.seed,
                         provider_turns=args.provider_turns)
    n = load_turns(engine, data.turns + _loadable_malformed(data), assume_zone=_config().assume_zone)
    events = load_reader_events(engine, [reader_event(e) for e in data.reader_events])
    if args.write_judge:
        demo.write_judge(data, Path(args.write_judge))
    print(f"loaded {n} sample turns for {args.days} day(s) from {args.start}, {events.loaded} reader events "
          f"(the {len(data.late_reader_events)} that arrive a day late are in `citecheck sample`'s events_late.jsonl)")
    return EXIT_OK


def cmd_load_turns(args: argparse.Namespace) -> int:
    """Load a JSONL file; report lines that cannot be stored (`malformed`), lines superseded by a
    later line with the same turn id (`duplicates`) and turns that replaced an earlier load
    (`replaced`). Lines read = loaded + malformed + duplicates."""
    from citecheck.core.turns import Skipped, decode_line
    from citecheck.warehouse import load_source_rows, source_rows

    engine = _engine()
    assume_zone = _config().assume_zone
    good: list[tuple[int, Any]] = []  # (line, source rows), built once: validating is building
    bad = []
    with open(args.file, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                data = decode_line(raw)
                if not isinstance(data, dict):
                    raise ValueError(f"line is not a JSON object ({type(data).__name__})")
                rows = source_rows(data, assume_zone)
            except ValueError as exc:
                bad.append(Skipped(number, None, str(exc)[:300]))
                continue
            good.append((number, rows))
    last = {rows[0]["turn_id"]: number for number, rows in good}
    duplicates = [{"line": number, "turn_id": rows[0]["turn_id"], "replaced_by_line": last[rows[0]["turn_id"]]}
                  for number, rows in good if last[rows[0]["turn_id"]] != number]
    report = load_source_rows(engine, (rows for _, rows in good))
    _write({"loaded": report.loaded, "malformed": [b.as_dict() for b in bad], "duplicates": duplicates,
            "replaced": report.replaced}, None)
    return EXIT_SKIPPED if bad or duplicates else EXIT_OK


def cmd_load_events(args: argparse.Namespace) -> int:
    """Load reader events (SPEC §1 JSON Lines), idempotent by event id; report what was loaded,
    duplicates (already loaded, or repeating an earlier line), orphaned events (their turn is not
    in the warehouse: kept and counted) and rejected lines with line number and reason."""
    from citecheck.core.reader_events import EventError, reader_event
    from citecheck.core.turns import decode_line
    from citecheck.warehouse import load_reader_events

    events, lines, rejected = [], [], []
    try:
        handle = open(args.file, "rb")  # noqa: SIM115 - closed below; an unreadable file is unusable input
    except OSError as exc:
        sys.stderr.write(f"citecheck: error: cannot read {args.file}: {exc.strerror or exc}\n")
        return EXIT_USAGE
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                data = decode_line(raw)
            except ValueError as exc:
                rejected.append({"line": number, "reason": f"malformed line: {str(exc)[:200]}"})
                continue
            try:
                events.append(reader_event(data))
            except EventError as exc:
                rejected.append({"line": number, "reason": str(exc)[:300]})
                continue
            lines.append(number)
    report = load_reader_events(_engine(), events)
    line_of = {e.event_id: n for e, n in zip(reversed(events), reversed(lines), strict=True)}  # first line
    duplicates = [{"event_id": i, "reason": "already loaded" if earlier == "already loaded"
                   else f"repeats line {lines[earlier]}"} for i, earlier in report.duplicates]
    repeats = sum(isinstance(earlier, int) for _, earlier in report.duplicates)
    _write({"loaded": report.loaded, "duplicates": duplicates,
            "orphaned": [{"line": line_of[i], "event_id": i, "turn_id": t} for i, t in report.orphaned],
            "rejected": rejected}, None)
    sys.stderr.write(f"reader events: {report.loaded} loaded, {len(duplicates)} duplicate(s), "
                     f"{len(report.orphaned)} orphaned (kept; their turn is not loaded), {len(rejected)} rejected\n")
    for bad in rejected[:20]:
        sys.stderr.write(f"line {bad['line']}: {bad['reason']}\n")
    return EXIT_SKIPPED if rejected or repeats else EXIT_OK


def cmd_stale(args: argparse.Namespace) -> int:
    """The published days of the range whose turns or reader events were loaded after the run
    that published them began."""
    from citecheck.job import stale_days

    if args.to < args.from_:
        sys.stderr.write(f"citecheck: error: --to {args.to} is before --from {args.from_}\n")
        return EXIT_USAGE
    settings = _job_settings(args)
    days = stale_days(_engine(), _days(args.from_, args.to), settings.config.timezone)
    if args.json:
        _write([d.as_dict() for d in days], None)  # type: ignore[arg-type]
        return EXIT_OK
    for d in days:
        print(f"{d.day}  stale: {d.late_turns} turn(s) and {d.late_events} reader event(s) loaded after run "
              f"{d.run_id} began ({d.started_at:%Y-%m-%d %H:%M:%S} UTC)")
    print(f"{len(days)} stale day(s) from {args.from_} to {args.to}")
    return EXIT_OK


def _days(first, last) -> list:
    import datetime as dt

    return [first + dt.timedelta(days=i) for i in range((last - first).days + 1)]


def _job_settings(args: argparse.Namespace):
    from citecheck.job import settings_from_env

    params = {k: getattr(args, k, None)
              for k in ("nli_share", "shards", "llm_sample_rate", "llm_budget_usd", "min_turns", "lock_wait_s")}
    return settings_from_env(params)


def cmd_run(args: argparse.Namespace) -> int:
    from citecheck.job import ValidationFailed, complete_day, rerun_reason, run_day
    from citecheck.warehouse.freshness import published_days

    settings = _job_settings(args)  # every config section checked before the warehouse is touched
    engine = _engine()
    state = published_days(engine, [args.day], settings.config.timezone).get(args.day)
    if rerun_reason(state, settings.run_config_hash, force=args.force) is None:
        if completed := complete_day(engine, args.day, settings):
            print(f"{args.day}: already published with config {settings.run_config_hash}; its run had stopped "
                  f"after the publish commit: completed {', '.join(completed)}")
            return EXIT_OK
        print(f"{args.day}: already published with config {settings.run_config_hash} and nothing loaded since "
              "(use --force to rerun)")
        return EXIT_OK
    try:
        result = run_day(engine, args.day, settings)
    except ValidationFailed as exc:
        sys.stderr.write(f"{exc}\n")
        return EXIT_VALIDATION_FAILED
    s = result["structural"]
    print(f"{args.day}: run {result['run_id']} published · turns read {s['turns_read']}, scored {s['turns_scored']},"
          f" skipped {s['turns_skipped']}, judged {s.get('turns_selected', 0)}")
    return EXIT_OK


def cmd_backfill(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from citecheck.job import backfill

    days = _days(args.from_, args.to)
    progress = tqdm(days, desc="backfill", unit="day", disable=not sys.stderr.isatty())
    settings = _job_settings(args)  # every config section checked before the warehouse is touched
    report = backfill(_engine(), progress, settings, force=args.force,
                      on_failure=lambda _day, exc: sys.stderr.write(f"{exc}\n"),
                      on_day=lambda day, what, why: print(f"{day}  {what}: {why}"))
    print(f"backfill {args.from_}..{args.to}: {len(report.published)} published, "
          f"{len(report.up_to_date)} already up to date, {len(report.failed_validation)} failed validation")
    return EXIT_VALIDATION_FAILED if report.failed_validation else EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    """`runs --day D`: the day's ledger (status, steps completed after the publish, staged rows)
    and its lock; `--clean` closes what runs that no longer hold the day left (as `gc` does)."""
    from citecheck.warehouse import locks, runs

    engine = _engine()
    if args.clean:
        _print_gc(_gc(engine, [args.day]))
    rows = runs.day_ledger(engine, args.day)
    with engine.connect() as conn:
        holder = locks.holder(conn, args.day)
    if args.json:
        lock = None if holder is None else {"run_id": holder.run_id, "stale": locks.is_stale(holder),
                                            "expires_at": holder.expires_at}
        _write({"day": args.day, "lock": lock, "runs": rows}, None)
        return EXIT_OK
    if holder is not None:
        print(f"lock: held by run {holder.run_id}" + (" (stale: free to take)" if locks.is_stale(holder) else
                                                     f" until {holder.expires_at:%Y-%m-%d %H:%M:%S} UTC"))
    for row in rows:
        steps = ",".join(row["completed_steps"] or []) or "-"
        print(f"{row['run_id']:<34} {row['status']:<18} started {row['started_at']:%Y-%m-%d %H:%M:%S} "
              f"finished {row['finished_at']:%H:%M:%S}" if row["finished_at"] else
              f"{row['run_id']:<34} {row['status']:<18} started {row['started_at']:%Y-%m-%d %H:%M:%S} "
              "finished -       ", f"after publish: {steps:<25} staged rows {row['staged_rows']}")
    if not rows:
        print(f"no runs of {args.day}")
    return EXIT_OK


def _gc(engine: Any, days: Sequence[Any] | None) -> dict[str, Any]:
    """Close the debris of runs that no longer hold their day (abandoned, staging removed) on the
    given days (default: every day with an open run or staged rows), plus orphaned staging."""
    from citecheck.warehouse import locks, runs

    closed: dict[str, list[str]] = {}
    busy = []
    for day in days if days is not None else runs.open_run_days(engine):
        with engine.connect() as conn:
            holder = locks.holder(conn, day)
        if holder is not None and not locks.is_stale(holder):
            busy.append((day, holder.run_id))  # a live run: its day is left alone
            keep = holder.run_id
        else:
            keep = None
            if holder is not None:
                locks.release(engine, day, holder.run_id)
        if ids := runs.close_open_runs(engine, day, keep=keep, status="abandoned",
                                       reason="abandoned: stopped without finishing; closed by citecheck gc"):
            closed[day.isoformat()] = ids
    return {"abandoned": closed, "orphaned_staged_rows": runs.orphan_staging(engine), "busy": busy}


def _print_gc(result: dict[str, Any]) -> None:
    for day, ids in result["abandoned"].items():
        print(f"{day}: marked abandoned and removed staging of {', '.join(ids)}")
    for day, run_id in result["busy"]:
        print(f"{day}: held by live run {run_id}; only runs other than it were cleaned")
    if result["orphaned_staged_rows"]:
        print(f"removed {result['orphaned_staged_rows']} staged rows of runs the ledger does not know")
    if not result["abandoned"] and not result["orphaned_staged_rows"]:
        print("nothing to clean")


def cmd_gc(args: argparse.Namespace) -> int:
    _print_gc(_gc(_engine(), [args.day] if args.day else None))
    return EXIT_OK


def cmd_metrics(args: argparse.Namespace) -> int:
    from citecheck.warehouse.published import day_metrics

    rows = day_metrics(_engine(), args.day)
    if args.json:
        _write(rows, None)  # type: ignore[arg-type]
        return EXIT_OK
    for row in rows:
        if row["slice_name"] == "all" and row["averaging"] == "micro":
            value = "null" if row["value"] is None else f"{row['value']:.3f}"
            ci = "" if row.get("ci_low") is None else f"  95% [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
            print(f"{row['metric']:<34}{value:>8}  ({row['numerator']:g}/{row['denominator']:g}){ci}")
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from citecheck.report import ReportError, write_report

    try:
        engine = _engine()
        path = write_report(engine, args.day, args.out, args.days)
    except ReportError as exc:
        sys.stderr.write(f"citecheck: error: {exc}\n")
        return EXIT_USAGE
    if args.store:
        from citecheck.warehouse.reports import store_report

        store_report(engine, args.day, path.read_text(encoding="utf-8"), trend_days=args.days)
    print(f"report for {args.day} written to {path.resolve()}" + (" and stored in the warehouse" if args.store else ""))
    return EXIT_OK


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def cmd_alerts(args: argparse.Namespace) -> int:
    from citecheck.core.alert_groups import alert_groups, echo_summary, slice_label
    from citecheck.warehouse.published import alerts_between

    alerts = alerts_between(_engine(), args.from_, args.to)
    if args.json:  # every stored alert, each with its group_id and whether it is folded
        sys.stdout.write(json.dumps(alerts, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK

    def line(a: dict, indent: str = "") -> str:
        return (f"{indent}{a['day']}  {a['metric']:<34} {slice_label(a):<30} {a['averaging']:<6}"
                f"{a['baseline']:>10.4g} -> {a['value']:<10.4g} {a['direction']:<5} {a['rule']}")

    groups = alert_groups(alerts)
    for group in groups:
        print(line(group["lead"]))
        if group["echoes"]:
            print(f"            └ {echo_summary(group)}")
        for echo in group["echoes"] if args.unfold else ():
            print(line(echo, "    "))
    if alerts:
        print(f"{len(alerts)} alert(s) in {len(groups)} group(s)" + ("" if args.unfold or len(groups) == len(alerts)
                                                                   else " (--unfold lists the folded ones)"))
    else:
        print(f"no alerts from {args.from_} to {args.to}")
    return EXIT_OK


def cmd_suggestions(args: argparse.Namespace) -> int:
    import csv

    from citecheck.warehouse.published import SUGGESTION_COLUMNS, day_suggestions

    rows = day_suggestions(_engine(), args.day)
    if args.format == "json":
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    writer = csv.DictWriter(sys.stdout, fieldnames=SUGGESTION_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:  # list columns as JSON text in their cell
        writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()})
    return EXIT_OK


def cmd_review(args: argparse.Namespace) -> int:
    """`review export|import|report|publish`: the human review loop (`citecheck.review.report`)."""
    from citecheck.review import report as review_report

    try:
        return _review(_engine(), args)
    except (review_report.NoSample, ValueError) as exc:  # a bad period, size or file: nothing was stored
        sys.stderr.write(f"citecheck: error: {exc}\n")
        return EXIT_USAGE


def _review(engine: Any, args: argparse.Namespace) -> int:
    from citecheck.review import report as review_report

    if args.review_command == "export":
        out = review_report.export_sample(engine, args.from_, args.to, args.size, args.out, args.format, args.salt)
        _write(out, None)
        return EXIT_OK
    if args.review_command == "import":
        result = review_report.import_labels(engine, args.file, args.reviewer, args.format)
        _write({"loaded": len(result.rows), **result.as_dict()}, None)
        for error in result.errors[:20]:
            sys.stderr.write(f"line {error['line']}: {error['reason']}\n")
        return EXIT_SKIPPED if result.errors else EXIT_OK
    options = {"confidence": args.confidence, "false_pass_target": args.false_pass_target}
    if args.review_command == "publish":
        _write(review_report.publish(engine, args.from_, args.to, **options), None)
        return EXIT_OK
    report = review_report.build_report(engine, args.from_, args.to, **options)
    if args.json:
        _write(report, None)
    else:
        sys.stdout.write("\n".join(review_report.text_lines(report)) + "\n")
    return EXIT_OK


def cmd_grant_bi(args: argparse.Namespace) -> int:
    from citecheck.warehouse import grant_bi, grants_sql

    if args.print:
        sys.stdout.write(grants_sql())
        return EXIT_OK
    for statement in grant_bi(_engine(), create_role=args.create_role, with_texts=args.with_texts):
        print(statement)
    return EXIT_OK


def cmd_ddl(args: argparse.Namespace) -> int:
    from citecheck.warehouse.tables import ddl, wide_view_sql

    sys.stdout.write(wide_view_sql() if args.views else ddl(args.dialect))
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    from citecheck import demo
    from citecheck.features import capacity

    if (args.rates is None) == (args.judge is None):
        raise capacity.PlanError("plan: give exactly one of --rates FILE (from bench/bench_nli.py) or --judge FILE")
    rates = capacity.rates_from_file(args.rates, args.model) if args.rates else capacity.calibrate(args.judge)
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
    print(json.dumps(result, indent=2, default=str) if args.json else capacity.render(result))
    return EXIT_OK


def _add_job_params(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nli-share", type=float, help="share of turns judged (deterministic hash selection)")
    p.add_argument("--shards", type=int, help="judge shards")
    p.add_argument("--llm-sample-rate", type=float)
    p.add_argument("--llm-budget-usd", type=float)
    p.add_argument("--min-turns", type=int, help="fewest scored turns a day needs to publish (default 1, or "
                   "CITECHECK_MIN_TURNS); an emptier day fails validation and keeps what was published")
    p.add_argument("--force", action="store_true", help="rerun days already published with the same config")
    p.add_argument("--lock-wait", dest="lock_wait_s", type=float, metavar="SECONDS",
                   help="how long to wait for a day another run holds (default 0: refuse at once with exit "
                        "code 4; or [job] lock_wait_s)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citecheck", description="Citation quality metrics for assistant answers.")
    parser.add_argument("--debug", action="store_true", help="print the traceback of a warehouse or lock error")
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

    p = sub.add_parser("compare", help="paired comparison of two `score` outputs of the same questions")
    p.add_argument("--base", required=True, help="score output (JSON) of the base version")
    p.add_argument("--candidate", required=True, help="score output (JSON) of the candidate version")
    p.add_argument("--key", default="turn_id", help="pair items by turn_id (default), question or attributes.NAME")
    p.add_argument("--json", action="store_true", help="write the comparison as a JSON object")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("calibrate", help="judge calibration report against human labels (SPEC §6)")
    p.add_argument("--labels", help="JSON: rows with 'human' and 'judge' booleans")
    p.add_argument("--from", dest="from_", type=_day, help="or: the review labels of this period (with --to)")
    p.add_argument("--to", type=_day)
    p.add_argument("--slice", action="append", help="row key to slice by (repeatable)")
    p.add_argument("--out")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("sample", help="write generated sample turns, their recorded judge and a config")
    p.add_argument("--start", default="2026-11-23")
    p.add_argument("--days", type=int, default=7)
    p.add_argument("--turns-per-day", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--provider-turns", type=int, default=0, help=PROVIDER_TURNS_HELP)
    p.add_argument("--out", required=True, help="output folder")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("init-warehouse", help="create the warehouse tables (CITECHECK_WAREHOUSE_URL)")
    p.set_defaults(func=cmd_init_warehouse)

    p = sub.add_parser("load-sample", help="load generated sample turns into the source tables")
    p.add_argument("--start", type=_day, default=_day("2026-11-23"))
    p.add_argument("--days", type=int, default=3)
    p.add_argument("--turns-per-day", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--provider-turns", type=int, default=0, help=PROVIDER_TURNS_HELP)
    p.add_argument("--write-judge", help="also write the sample's recorded judge file here")
    p.set_defaults(func=cmd_load_sample)

    p = sub.add_parser("load-turns", help="append turns (SPEC §1 JSON Lines) to the source tables")
    p.add_argument("--file", required=True)
    p.set_defaults(func=cmd_load_turns)

    p = sub.add_parser("load-events", help="load reader events (SPEC §1 JSON Lines), idempotent by event_id")
    p.add_argument("--file", required=True)
    p.set_defaults(func=cmd_load_events)

    p = sub.add_parser("stale", help="list published days whose turns or reader events arrived after their run")
    p.add_argument("--from", dest="from_", type=_day, required=True)
    p.add_argument("--to", type=_day, required=True)
    p.add_argument("--json", action="store_true", help="JSON list of the stale days")
    p.set_defaults(func=cmd_stale)

    p = sub.add_parser("run", help="run the daily job for one day (CITECHECK_JUDGE picks the judge)")
    p.add_argument("--day", type=_day, required=True)
    _add_job_params(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("backfill", help="run the daily job for a range of days")
    p.add_argument("--from", dest="from_", type=_day, required=True)
    p.add_argument("--to", type=_day, required=True)
    _add_job_params(p)
    p.set_defaults(func=cmd_backfill)

    p = sub.add_parser("runs", help="the run ledger of a day: status, steps after the publish, staged rows")
    p.add_argument("--day", type=_day, required=True)
    p.add_argument("--clean", action="store_true", help="first close what runs that no longer hold the day left")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("gc", help="mark runs that no longer hold their day abandoned and remove their staging")
    p.add_argument("--day", type=_day, help="only this day (default: every day with open runs or staged rows)")
    p.set_defaults(func=cmd_gc)

    p = sub.add_parser("metrics", help="print a published day's metrics")
    p.add_argument("--day", type=_day, required=True)
    p.add_argument("--json", action="store_true", help="JSON list of rows")
    p.set_defaults(func=cmd_metrics)

    p = sub.add_parser("report", help="write a published day's self-contained HTML report")
    p.add_argument("--day", type=_day, required=True)
    p.add_argument("--days", type=_positive, default=28, help="days of history in the trend charts (default 28)")
    p.add_argument("--out", required=True, help="HTML file to write")
    p.add_argument("--store", action="store_true",
                   help="also store it in the warehouse (reports table), where the Airflow plugin serves it")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("alerts", help="print the step-change alerts of a range of days")
    p.add_argument("--from", dest="from_", type=_day, required=True)
    p.add_argument("--to", type=_day, required=True)
    p.add_argument("--json", action="store_true", help="JSON list of alerts (each with its group_id and folded)")
    p.add_argument("--unfold", action="store_true", help="also list the slice alerts folded under an overall one")
    p.set_defaults(func=cmd_alerts)

    p = sub.add_parser("suggestions", help="print a published day's re-cite suggestions")
    p.add_argument("--day", type=_day, required=True)
    p.add_argument("--format", choices=["csv", "json"], default="csv")
    p.set_defaults(func=cmd_suggestions)


    p = sub.add_parser("review", help="human review: export a blind sample, import labels, report judge quality")
    review = p.add_subparsers(dest="review_command", required=True)
    for name, text in (("export", "draw the period's stratified sample and write the blind file"),
                       ("import", "load a reviewer's labels (bad rows reported with line and reason)"),
                       ("report", "judge quality and calibrated metrics of the period"),
                       ("publish", "store the period's judge_quality and calibrated_metrics (idempotent)")):
        r = review.add_parser(name, help=text)
        if name == "import":
            r.add_argument("--file", required=True)
            r.add_argument("--reviewer", required=True)
            r.add_argument("--format", choices=["csv", "jsonl"], help="default: from the file name")
            continue
        r.add_argument("--from", dest="from_", type=_day, required=True)
        r.add_argument("--to", type=_day, required=True)
        if name == "export":
            r.add_argument("--size", type=int, required=True)
            r.add_argument("--format", choices=["csv", "jsonl"], default="csv")
            r.add_argument("--out", required=True)
            r.add_argument("--salt", default="citecheck-review-v1", help="sampling salt")
        else:
            r.add_argument("--confidence", type=float, default=0.95)
            r.add_argument("--false-pass-target", type=float, default=0.10,
                           help="NLI false-pass rate the threshold sweep looks for")
            r.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_review)

    p = sub.add_parser("grant-bi", help="grant the read-only BI role SELECT on the published tables, without "
                       "answer, passage and LLM text unless --with-texts (PostgreSQL)")
    p.add_argument("--create-role", action="store_true", help="create the role (NOLOGIN) if it is missing")
    p.add_argument("--with-texts", action="store_true",
                   help="also grant the answer, passage and LLM text columns (default: metrics, verdicts and counts)")
    p.add_argument("--print", action="store_true",
                   help="print the statements for the default names (sql/grants_bi_readonly.sql)")
    p.set_defaults(func=cmd_grant_bi)

    p = sub.add_parser("plan", help="NLI wall time of a day of N answers on 1/2/4/8 CPU workers and one GPU")
    p.add_argument("--answers", type=int, required=True, help="answers per day")
    p.add_argument("--sentences-per-answer", type=float, help="check-worthy sentences per answer (default: sample's)")
    p.add_argument("--backend", help="variant to size on, as named in the rates (default: the fastest faithful)")
    p.add_argument("--rates", help="rates file written by bench/bench_nli.py --rates-out")
    p.add_argument("--model", default="deberta", help="model in the rates file (deberta or minilm)")
    p.add_argument("--judge", help="or: an NLI judge file to time here in a short calibration run")
    p.add_argument("--window-hours", type=float, default=6.0, help="hours the day's NLI work may take")
    p.add_argument("--premise", choices=("windows", "chunks"), default="windows",
                   help="premise mode to size (the judge file's \"premise\"; default windows)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=cmd_plan)

    from citecheck.bi import add_bi_commands

    add_bi_commands(sub)

    p = sub.add_parser("ddl", help="print the CREATE statements of every table (sql/schema.sql)")
    p.add_argument("--dialect", choices=["postgresql", "sqlite"], default="postgresql")
    p.add_argument("--views", action="store_true", help="print the dashboard views instead (sql/views.sql)")
    p.set_defaults(func=cmd_ddl)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    import logging

    import sqlalchemy as sa

    from citecheck.core.config import ConfigError
    from citecheck.job import RunFailed
    from citecheck.judges import JudgeSpecError
    from citecheck.warehouse.locks import DayLocked
    from citecheck.warehouse.naming import InvalidName

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, JudgeSpecError, InvalidName, FileNotFoundError) as exc:
        sys.stderr.write(f"citecheck: error: {exc}\n")
        return EXIT_USAGE
    except DayLocked as exc:
        return _operator_error(args, exc, str(exc), EXIT_DAY_LOCKED)
    except RunFailed as exc:
        return _operator_error(args, exc, str(exc), EXIT_WAREHOUSE_ERROR)
    except sa.exc.SQLAlchemyError as exc:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        line = (f"{args.command}: the warehouse failed ({cause[0][:300] if cause else type(exc).__name__}); check "
                f"CITECHECK_WAREHOUSE_URL and that the warehouse is up (and initialised: init-warehouse), then rerun")
        return _operator_error(args, exc, line, EXIT_WAREHOUSE_ERROR)
    finally:
        logging.getLogger("citecheck").debug("command %s done", getattr(args, "command", None))


def _operator_error(args: argparse.Namespace, exc: BaseException, line: str, code: int) -> int:
    """One readable line on stderr; the traceback in the log (logger `citecheck`) and, with
    `--debug`, on stderr too."""
    import logging
    import traceback

    logging.getLogger("citecheck").debug("citecheck %s failed", args.command, exc_info=exc)
    if args.debug:
        traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.write(f"citecheck: error: {line}\n")
    return code
