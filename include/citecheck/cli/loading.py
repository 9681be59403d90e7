"""Filling the source tables: `sample` (files), `load-sample`, `load-turns`, `load-traces`, `load-events`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from citecheck.cli import options
from citecheck.cli.common import EXIT_OK, EXIT_SKIPPED, EXIT_USAGE, env_config, error, warehouse, write_json


def add_sample(sub: Any) -> None:
    p = sub.add_parser("sample", help="write generated sample turns, their recorded judge and a config")
    p.add_argument("--start", default="2026-11-23")
    p.add_argument("--days", type=int, default=7)
    options.add_generator(p)
    options.add_out(p, required=True, help="output folder")
    p.set_defaults(func=cmd_sample)


def add_load_sample(sub: Any) -> None:
    p = sub.add_parser("load-sample", help="load generated sample turns into the source tables")
    p.add_argument("--start", type=options.parse_day, default=options.parse_day("2026-11-23"))
    p.add_argument("--days", type=int, default=3)
    options.add_generator(p)
    p.add_argument("--write-judge", help="also write the sample's recorded judge file here")
    p.set_defaults(func=cmd_load_sample)


def add_load_turns(sub: Any) -> None:
    p = sub.add_parser("load-turns", help="append turns (SPEC §1 JSON Lines) to the source tables")
    options.add_file(p)
    p.set_defaults(func=cmd_load_turns)


def add_load_traces(sub: Any) -> None:
    p = sub.add_parser("load-traces", help="load the turns of trace files (OTLP JSON, Langfuse export), once a trace")
    p.add_argument("--file", required=True, action="append",
                   help="an OTLP JSON file (one ExportTraceServiceRequest a line) or a Langfuse observations export "
                        "(JSON Lines), or a glob of them; repeatable: the spans of all files are read together")
    p.add_argument("--convention", choices=["auto", "openinference", "otel-genai", "langfuse"], default="auto",
                   help="the convention to read the spans in (auto: each span's own)")
    p.set_defaults(func=cmd_load_traces)


def add_load_events(sub: Any) -> None:
    p = sub.add_parser("load-events", help="load reader events (SPEC §1 JSON Lines), idempotent by event_id")
    options.add_file(p)
    p.set_defaults(func=cmd_load_events)


def cmd_sample(args: argparse.Namespace) -> int:
    import datetime as dt

    from citecheck import demo

    data = demo.generate(dt.date.fromisoformat(args.start), args.days, args.turns_per_day, seed=args.seed,
                         provider_turns=args.provider_turns, topics=args.topics,
                         language_turns=args.language_turns)
    out = Path(args.out)
    demo.write_sample(data, out, claims=args.claims)
    print(f"wrote {len(data.turns)} turns (+{len(data.malformed_lines)} malformed lines), "
          f"{len(data.reader_events)} reader events and {len(data.late_reader_events)} late ones to {out}")
    return EXIT_OK


def cmd_load_sample(args: argparse.Namespace) -> int:
    from citecheck import demo
    from citecheck.core.reader_events import reader_event
    from citecheck.warehouse import load_reader_events, load_turns

    engine = warehouse()
    data = demo.generate(args.start, args.days, args.turns_per_day, seed=args.seed,
                         provider_turns=args.provider_turns, topics=args.topics,
                         language_turns=args.language_turns)
    n = load_turns(engine, data.turns + demo.loadable_malformed(data), assume_zone=env_config().assume_zone)
    assume_zone = env_config().assume_zone
    events = load_reader_events(engine, [reader_event(e, assume_zone) for e in data.reader_events])
    if args.write_judge:
        demo.write_judge(data, Path(args.write_judge), claims=args.claims)
    print(f"loaded {n} sample turns for {args.days} day(s) from {args.start}, {events.loaded} reader events "
          f"(the {len(data.late_reader_events)} that arrive a day late are in `citecheck sample`'s events_late.jsonl)")
    return EXIT_OK


def cmd_load_turns(args: argparse.Namespace) -> int:
    """Load a JSONL file; report lines that cannot be stored (`malformed`), lines superseded by a
    later line with the same turn id (`duplicates`) and turns that replaced an earlier load
    (`replaced`). Lines read = loaded + malformed + duplicates."""
    from citecheck.core.turns import Skipped, decode_line
    from citecheck.warehouse import load_source_rows, source_rows

    engine = warehouse()
    assume_zone = env_config().assume_zone
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
    write_json({"loaded": report.loaded, "malformed": [b.as_dict() for b in bad], "duplicates": duplicates,
                "replaced": report.replaced}, None)
    return EXIT_SKIPPED if bad or duplicates else EXIT_OK


def cmd_load_traces(args: argparse.Namespace) -> int:
    """Load the turns of trace files (`citecheck.job.traces.load_trace_files`): a JSON report on
    stdout, a summary and the first problems on stderr; exit 1 when anything was not loaded."""
    from citecheck.job.traces import NoTraceFiles, load_trace_files

    try:
        report = load_trace_files(warehouse(), args.file, env_config(), args.convention)
    except NoTraceFiles as exc:
        error(str(exc))
        return EXIT_USAGE
    write_json(report, None)
    problems = report["problems"]
    sys.stderr.write(f"traces: {report['traces_read']} turn(s) read from {report['spans']} span(s), "
                     f"{report['loaded']} loaded, {report['already_loaded']} already loaded, "
                     f"{len(problems)} not loaded\n")
    for problem in problems[:20]:
        sys.stderr.write(f"{problem.get('line', '-')}: {problem['reason']}\n")
    return EXIT_SKIPPED if problems else EXIT_OK


def cmd_load_events(args: argparse.Namespace) -> int:
    """Load reader events (SPEC §1 JSON Lines), idempotent by event id; report what was loaded,
    duplicates (already loaded, or repeating an earlier line, unchanged), conflicts (an event id
    given again with other content: the first version is kept), orphaned events (their turn is
    not in the warehouse: kept and counted) and rejected lines with line number and reason (an
    `occurred_at` without a zone is read in `[day] assume_zone`, or rejected when it is "refuse")."""
    from citecheck.core.reader_events import EventError, reader_event
    from citecheck.core.turns import decode_line
    from citecheck.warehouse import load_reader_events

    assume_zone = env_config().assume_zone
    events, lines, rejected = [], [], []
    try:
        handle = open(args.file, "rb")  # noqa: SIM115 - closed below; an unreadable file is unusable input
    except OSError as exc:
        error(f"cannot read {args.file}: {exc.strerror or exc}")
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
                events.append(reader_event(data, assume_zone))
            except EventError as exc:
                rejected.append({"line": number, "reason": str(exc)[:300]})
                continue
            lines.append(number)
    report = load_reader_events(warehouse(), events)
    line_of = {e.event_id: n for e, n in zip(reversed(events), reversed(lines), strict=True)}  # first line
    duplicates = [{"event_id": i, "reason": "already loaded" if earlier == "already loaded"
                   else f"repeats line {lines[earlier]}"} for i, earlier in report.duplicates]
    repeats = sum(isinstance(earlier, int) for _, earlier in report.duplicates)
    conflicts = [{"line": lines[c.position], "event_id": c.event_id, "fields": list(c.fields),
                  "kept": "the event already loaded" if c.earlier is None else f"line {lines[c.earlier]}"}
                 for c in report.conflicts]
    write_json({"loaded": report.loaded, "duplicates": duplicates, "conflicts": conflicts,
                "orphaned": [{"line": line_of[i], "event_id": i, "turn_id": t} for i, t in report.orphaned],
                "rejected": rejected}, None)
    sys.stderr.write(f"reader events: {report.loaded} loaded, {len(duplicates)} duplicate(s), "
                     f"{len(conflicts)} conflict(s) (the first version kept), "
                     f"{len(report.orphaned)} orphaned (kept; their turn is not loaded), {len(rejected)} rejected\n")
    for bad in rejected[:20]:
        sys.stderr.write(f"line {bad['line']}: {bad['reason']}\n")
    for conflict in conflicts[:20]:
        sys.stderr.write(f"line {conflict['line']}: event {conflict['event_id']} conflicts with "
                         f"{conflict['kept']} (differs in {', '.join(conflict['fields'])}); kept that one\n")
    return EXIT_SKIPPED if rejected or repeats or conflicts else EXIT_OK
