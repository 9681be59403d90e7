"""What a published day shows: `metrics`, `report`, `alerts`, `suggestions`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from citecheck.cli import options
from citecheck.cli.common import EXIT_OK, EXIT_USAGE, error, read_warehouse, write_json


def add_metrics(sub: Any) -> None:
    p = sub.add_parser("metrics", help="print a published day's metrics")
    options.add_day(p)
    options.add_json(p, help="JSON list of rows")
    p.add_argument("--slice", help="print this slice's rows (e.g. language, answer_length, attribute:model), "
                                   "one line per value and metric (default: all)")
    p.set_defaults(func=cmd_metrics)


def add_report(sub: Any) -> None:
    p = sub.add_parser("report", help="write a published day's self-contained HTML report")
    options.add_day(p)
    p.add_argument("--days", type=options.positive, default=28, help="days of history in the trend charts (default 28)")
    options.add_out(p, required=True, help="HTML file to write")
    p.add_argument("--store", action="store_true",
                   help="also store it in the warehouse (reports table), where the Airflow plugin serves it")
    p.set_defaults(func=cmd_report)


def add_alerts(sub: Any) -> None:
    p = sub.add_parser("alerts", help="print the step-change alerts of a range of days")
    options.add_range(p)
    options.add_json(p, help="JSON list of alerts (each with its group_id and folded)")
    p.add_argument("--unfold", action="store_true", help="also list the slice alerts folded under an overall one")
    p.set_defaults(func=cmd_alerts)


def add_suggestions(sub: Any) -> None:
    p = sub.add_parser("suggestions", help="print a published day's re-cite suggestions")
    options.add_day(p)
    options.add_format(p, ["csv", "json"], default="csv")
    p.set_defaults(func=cmd_suggestions)


def cmd_metrics(args: argparse.Namespace) -> int:
    from citecheck.warehouse.read_model import day_metrics

    engine = read_warehouse()
    rows = day_metrics(engine, args.day)
    if args.json:
        write_json(rows, None)
        return EXIT_OK
    from citecheck.core.metrics.display import metric_line
    from citecheck.features.gate import format_gate
    from citecheck.warehouse.read_model import day_decision

    decision = day_decision(engine, args.day)
    if decision is not None and not args.slice:  # the day's acceptance criteria (SPEC 5.1) first
        print(format_gate(decision, heading=f"decision of {args.day}"))
        print()
    wanted = args.slice or "all"
    values = sorted({r["slice_value"] for r in rows if r["slice_name"] == wanted})
    for value in values:
        day_rows = {r["metric"]: r for r in rows
                    if r["slice_name"] == wanted and r["slice_value"] == value and r["averaging"] == "micro"}
        prefix = "" if wanted == "all" else f"{value:<10}"
        for row in day_rows.values():
            print(prefix + metric_line(row, day_rows))
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from citecheck.report import ReportError, write_report

    try:
        engine = read_warehouse()
        path = write_report(engine, args.day, args.out, args.days)
    except ReportError as exc:
        error(str(exc))
        return EXIT_USAGE
    if args.store:
        from citecheck.warehouse.reports import store_report

        store_report(engine, args.day, path.read_text(encoding="utf-8"), trend_days=args.days)
    print(f"report for {args.day} written to {path.resolve()}" + (" and stored in the warehouse" if args.store else ""))
    return EXIT_OK


def cmd_alerts(args: argparse.Namespace) -> int:
    from citecheck.core.alert_groups import alert_groups, echo_summary, slice_label
    from citecheck.core.metrics.display import format_value
    from citecheck.warehouse.read_model import alerts_between

    alerts = alerts_between(read_warehouse(), args.from_, args.to)
    if args.json:  # every stored alert, each with its group_id and whether it is folded
        sys.stdout.write(json.dumps(alerts, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK

    def line(a: dict, indent: str = "") -> str:
        return (f"{indent}{a['day']}  {a['metric']:<34} {slice_label(a):<30} {a['averaging']:<6}"
                f"{format_value(a['metric'], a['baseline']):>10} -> {format_value(a['metric'], a['value']):<10} "
                f"{a['direction']:<5} {a['rule']}")

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

    from citecheck.warehouse.read_model import SUGGESTION_COLUMNS, day_suggestions

    rows = day_suggestions(read_warehouse(), args.day)
    if args.format == "json":
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    writer = csv.DictWriter(sys.stdout, fieldnames=SUGGESTION_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:  # list columns as JSON text in their cell
        writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()})
    return EXIT_OK
