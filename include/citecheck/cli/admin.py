"""The warehouse itself: `init-warehouse`, `grant-bi`, `ddl`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from citecheck.cli.common import EXIT_OK, warehouse


def add_init_warehouse(sub: Any) -> None:
    p = sub.add_parser("init-warehouse", help="create the warehouse tables (CITECHECK_WAREHOUSE_URL)")
    p.set_defaults(func=cmd_init_warehouse)


def add_grant_bi(sub: Any) -> None:
    p = sub.add_parser("grant-bi", help="grant the read-only BI role SELECT on the published tables, without "
                       "answer, passage and LLM text unless --with-texts (PostgreSQL)")
    p.add_argument("--create-role", action="store_true", help="create the role (NOLOGIN) if it is missing")
    p.add_argument("--with-texts", action="store_true",
                   help="also grant the answer, passage and LLM text columns (default: metrics, verdicts and counts)")
    p.add_argument("--print", action="store_true",
                   help="print the statements for the default names (sql/grants_bi_readonly.sql)")
    p.set_defaults(func=cmd_grant_bi)


def add_ddl(sub: Any) -> None:
    p = sub.add_parser("ddl", help="print the CREATE statements of every table (sql/schema.sql)")
    p.add_argument("--dialect", choices=["postgresql", "sqlite"], default="postgresql")
    p.add_argument("--views", action="store_true", help="print the dashboard views instead (sql/views.sql)")
    p.set_defaults(func=cmd_ddl)


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def cmd_init_warehouse(args: argparse.Namespace) -> int:
    from citecheck.warehouse import warehouse_url

    warehouse()
    print(f"warehouse ready: {_safe_url(warehouse_url())}")
    return EXIT_OK


def cmd_grant_bi(args: argparse.Namespace) -> int:
    from citecheck.warehouse import grant_bi, grants_sql

    if args.print:
        sys.stdout.write(grants_sql())
        return EXIT_OK
    for statement in grant_bi(warehouse(), create_role=args.create_role, with_texts=args.with_texts):
        print(statement)
    return EXIT_OK


def cmd_ddl(args: argparse.Namespace) -> int:
    from citecheck.warehouse.ddl import ddl, wide_view_sql

    sys.stdout.write(wide_view_sql() if args.views else ddl(args.dialect))
    return EXIT_OK
