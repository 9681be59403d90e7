"""Read-only access for dashboards: the BI role may read published tables and views, nothing else."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck.warehouse import tables as T
from citecheck.warehouse.engine import engine_names
from citecheck.warehouse.naming import WarehouseNames, quoted


def bi_grants(names: WarehouseNames, dialect: sa.engine.Dialect | None = None) -> list[str]:
    """GRANT statements giving `names.bi_role` read access to the published tables and views only
    (not the source logs, staging or the judgment cache)."""
    from sqlalchemy.dialects import postgresql

    dialect = dialect or postgresql.dialect()
    role = quoted(dialect, names.bi_role, "warehouse.bi_role")
    schema = quoted(dialect, names.schema or "public", "warehouse.schema")
    objects = ", ".join(f"{schema}.{quoted(dialect, t)}" for t in T.BI_READABLE)
    return [f"GRANT USAGE ON SCHEMA {schema} TO {role}", f"GRANT SELECT ON {objects} TO {role}"]


def grant_bi(engine: Engine, *, create_role: bool = False) -> list[str]:
    """Apply `bi_grants` (PostgreSQL); optionally create the role (NOLOGIN) when it is missing."""
    if engine.dialect.name != "postgresql":
        raise ValueError(f"read-only roles need a server warehouse; {engine.dialect.name} has no GRANT")
    names = engine_names(engine)
    statements = bi_grants(names, engine.dialect)
    with engine.begin() as conn:
        exists = conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :role"), {"role": names.bi_role}
                              ).first()
        if not exists:
            if not create_role:
                raise ValueError(f"role {names.bi_role!r} does not exist (create it, or pass --create-role)")
            conn.exec_driver_sql(f"CREATE ROLE {quoted(engine.dialect, names.bi_role)} NOLOGIN")
        for statement in statements:
            conn.exec_driver_sql(statement)
    return statements


def grants_sql() -> str:
    """`sql/grants_bi_readonly.sql` (generated, checked by a test)."""
    lines = ["-- Generated from include/citecheck/warehouse/grants.py by `python -m citecheck grant-bi --print`."
             " Do not edit.",
             "-- Read-only access for dashboard users to the published tables and views, nothing else.",
             "-- Create the role first, e.g.: CREATE ROLE citecheck_bi LOGIN PASSWORD '...';",
             "-- Publish replaces rows (DELETE + INSERT) and views are CREATE OR REPLACE, so grants persist."]
    return "\n".join(lines + [s + ";" for s in bi_grants(WarehouseNames())]) + "\n"
