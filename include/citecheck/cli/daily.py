"""The daily job from the command line: `run`, `backfill`, `stale`, `runs`, `gc`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from citecheck.cli import options
from citecheck.cli.common import (
    EXIT_DAY_LOCKED,
    EXIT_INTERNAL_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VALIDATION_FAILED,
    EXIT_WAREHOUSE_ERROR,
    error,
    job_settings,
    read_warehouse,
    warehouse,
    write_json,
)


def add_stale(sub: Any) -> None:
    p = sub.add_parser("stale", help="list published days whose turns or reader events arrived after their run")
    options.add_range(p)
    options.add_json(p, help="JSON list of the stale days")
    p.set_defaults(func=cmd_stale)


def add_run(sub: Any) -> None:
    p = sub.add_parser("run", help="run the daily job for one day (CITECHECK_JUDGE picks the judge)")
    options.add_day(p)
    options.add_job_params(p)
    options.add_workers(p, "the day's shards run in N processes on this machine (default 1: one after another)")
    p.set_defaults(func=cmd_run)


def add_backfill(sub: Any) -> None:
    p = sub.add_parser("backfill", help="run the daily job for a range of days")
    options.add_range(p)
    options.add_job_params(p)
    options.add_workers(p, "N processes on this machine: the days to run, a day to a process (or, with fewer "
                           "days than N, each day's shards); the day locks as always (default 1)")
    p.set_defaults(func=cmd_backfill)


def add_runs(sub: Any) -> None:
    p = sub.add_parser("runs", help="the run ledger of a day: status, steps after the publish, staged rows")
    options.add_day(p)
    p.add_argument("--clean", action="store_true", help="first close what runs that no longer hold the day left")
    options.add_json(p)
    p.set_defaults(func=cmd_runs)


def add_gc(sub: Any) -> None:
    p = sub.add_parser("gc", help="mark runs that no longer hold their day abandoned and remove their staging")
    options.add_day(p, required=False, help="only this day (default: every day with open runs or staged rows)")
    p.set_defaults(func=cmd_gc)


def cmd_stale(args: argparse.Namespace) -> int:
    """The published days of the range whose turns or reader events were loaded after the run
    that published them began reading, or that lost a turn it counted to another day."""
    from citecheck.job import stale_days

    if args.to < args.from_:
        error(f"--to {args.to} is before --from {args.from_}")
        return EXIT_USAGE
    settings = job_settings(args)
    days = stale_days(read_warehouse(), options.days_between(args.from_, args.to), settings.config.timezone)
    if args.json:
        write_json([d.as_dict() for d in days], None)
        return EXIT_OK
    for d in days:
        began = f" ({d.started_at:%Y-%m-%d %H:%M:%S} UTC)" if d.started_at else ""
        print(f"{d.day}  stale: {d.late_inputs()}{began}")
    print(f"{len(days)} stale day(s) from {args.from_} to {args.to}")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from citecheck.job import ValidationFailed, complete_day, rerun_reason, run_day
    from citecheck.warehouse.freshness import published_days

    settings = job_settings(args)  # every config section checked before the warehouse is touched
    engine = warehouse()
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
        result = run_day(engine, args.day, settings, workers=args.workers)
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

    days = options.days_between(args.from_, args.to)
    progress = tqdm(days, desc="backfill", unit="day", disable=not sys.stderr.isatty())
    settings = job_settings(args)  # every config section checked before the warehouse is touched
    report = backfill(warehouse(), progress, settings, force=args.force,
                      on_failure=lambda _day, exc: sys.stderr.write(f"{exc}\n"),
                      on_day=lambda outcome: print(outcome.line()), workers=args.workers)
    print(f"backfill {args.from_}..{args.to}: {len(report.published)} published, "
          f"{len(report.up_to_date)} already up to date, {len(report.failed_validation)} failed validation, "
          f"{len(report.locked)} locked (not run), {len(report.failed)} failed")
    for label, days in (("locked by another run, not run", report.locked), ("failed", report.failed),
                        ("failed validation", report.failed_validation)):
        if days:
            print(f"{label}: {', '.join(days)}")
    return backfill_exit_code(report)


def backfill_exit_code(report: Any) -> int:
    """The worst of the days: an unexpected error (6) over a warehouse error (5) over a locked day
    (4) over a failed validation (3); 0 when every day was published or up to date."""
    from citecheck.job import RunFailed

    if any(not isinstance(exc, RunFailed) for exc in report.errors.values()):
        return EXIT_INTERNAL_ERROR
    if report.failed:
        return EXIT_WAREHOUSE_ERROR
    if report.locked:
        return EXIT_DAY_LOCKED
    return EXIT_VALIDATION_FAILED if report.failed_validation else EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    """`runs --day D`: the day's ledger (status, steps completed after the publish, staged rows)
    and its lock; `--clean` closes what runs that no longer hold the day left (as `gc` does)."""
    from citecheck.job import clean_debris
    from citecheck.warehouse import locks, runs

    engine = read_warehouse()
    if args.clean:
        _print_cleaned(clean_debris(engine, [args.day]))
    rows = runs.day_ledger(engine, args.day)
    with engine.connect() as conn:
        holder = locks.holder(conn, args.day)
    if args.json:
        lock = None if holder is None else {"run_id": holder.run_id, "stale": locks.is_stale(holder),
                                            "expires_at": holder.expires_at}
        write_json({"day": args.day, "lock": lock, "runs": rows}, None)
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


def _print_cleaned(result: dict[str, Any]) -> None:
    for day, ids in result["abandoned"].items():
        print(f"{day}: marked abandoned and removed staging of {', '.join(ids)}")
    for day, run_id in result["busy"]:
        print(f"{day}: held by live run {run_id}; only runs other than it were cleaned")
    if result["orphaned_staged_rows"]:
        print(f"removed {result['orphaned_staged_rows']} staged rows of runs the ledger does not know")
    if not result["abandoned"] and not result["orphaned_staged_rows"]:
        print("nothing to clean")


def cmd_gc(args: argparse.Namespace) -> int:
    from citecheck.job import clean_debris

    _print_cleaned(clean_debris(read_warehouse(), [args.day] if args.day else None))
    return EXIT_OK
