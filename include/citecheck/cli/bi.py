"""What BI tools read: `bi dbt|dbt-profile|superset` (`citecheck.bi`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from citecheck.cli import options
from citecheck.cli.common import EXIT_OK


def add_bi(sub: Any) -> None:
    p = sub.add_parser("bi", help="generate what BI tools read: the dbt project's models, a Superset bundle")
    bi = p.add_subparsers(dest="bi_command", required=True)

    d = bi.add_parser("dbt", help="(re)write the generated files of the dbt project (sources, staging, metrics)")
    options.add_out(d, required=True, help="the dbt project folder (holds dbt_project.yml)")
    d.add_argument("--metrics-doc", default="docs/metrics.md", help="where the table and metric descriptions come from")
    d.set_defaults(func=cmd_dbt)

    d = bi.add_parser("dbt-profile", help="write a profiles.yml for a Postgres warehouse URL (password from env)")
    options.add_warehouse_url(d)
    options.add_out(d, required=True, help="folder for profiles.yml (use it as DBT_PROFILES_DIR)")
    options.add_schema(d, default="citecheck_dbt", help="schema dbt builds its models in")
    d.set_defaults(func=cmd_dbt_profile)

    s = bi.add_parser("superset", help="write a Superset import bundle (superset import-directory DIR)")
    options.add_warehouse_url(s, help="the warehouse as Superset connects to it")
    options.add_out(s, required=True, help="the bundle folder (metadata.yaml, databases/, datasets/, ...)")
    options.add_schema(s, default=None, help="schema of the published tables (default: "
                       "CITECHECK_WAREHOUSE_SCHEMA, else public on PostgreSQL, main on SQLite)")
    s.set_defaults(func=cmd_superset)


def cmd_dbt(args: argparse.Namespace) -> int:
    from citecheck.bi.dbt import write_dbt_files

    for path in write_dbt_files(Path(args.out), Path(args.metrics_doc).read_text(encoding="utf-8")):
        print(path)
    return EXIT_OK


def cmd_dbt_profile(args: argparse.Namespace) -> int:
    from citecheck.bi.dbt import write_profile

    print(write_profile(args.warehouse_url, Path(args.out), schema=args.schema))
    return EXIT_OK


def cmd_superset(args: argparse.Namespace) -> int:
    from citecheck.bi.superset import password_note, write_bundle

    for path in write_bundle(args.warehouse_url, Path(args.out), schema=args.schema):
        print(path)
    note = password_note(args.warehouse_url)
    if note:
        print(note)
    return EXIT_OK
