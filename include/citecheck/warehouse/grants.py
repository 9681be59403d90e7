"""Read-only access for dashboards: the BI role may read published tables and views, nothing else,
and by default no answer, passage or LLM text (`BI_TEXT_COLUMNS`)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck.warehouse import tables as T
from citecheck.warehouse.engine import engine_names
from citecheck.warehouse.naming import WarehouseNames, quoted

# Answer, passage and LLM text in what the BI role reads: refused to it unless `grant-bi --with-texts`
# (the report pages that show the same texts need an Airflow login).
BI_TEXT_COLUMNS = {
    # the answer sentence, the LLM's output, passage excerpts, the figures as written (`figure_values`: without)
    "sentence_verdicts": ("text", "llm", "best_windows", "figures"),
    "recite_suggestions": ("sentence", "quote"),  # the answer sentence, the verified passage quote
    "claim_verdicts": ("text", "figures"),  # a claim: the answer sentence's words (a claims mode), its figures
}
# What a dashboard (the read-only BI role) may read: published outputs and their views.
BI_READABLE = ("daily_metrics", "daily_metrics_wide", "sentence_verdicts", "citation_verdicts", "skipped_turns", "runs",
               "recite_suggestions", "alerts", "judge_quality", "calibrated_metrics", "claim_verdicts",
               "claim_citation_verdicts", "criteria_results", "answer_decisions")


def bi_grants(names: WarehouseNames, dialect: sa.engine.Dialect | None = None, *, with_texts: bool = False
              ) -> list[str]:
    """GRANT statements giving `names.bi_role` read access to the published tables and views only
    (not the source logs, staging or the judgment cache). Without `with_texts`, the tables that hold
    answer, passage or LLM text (`BI_TEXT_COLUMNS`) are granted column by column without those
    columns (what an earlier grant gave on them is revoked first)."""
    from sqlalchemy.dialects import postgresql

    dialect = dialect or postgresql.dialect()
    role = quoted(dialect, names.bi_role, "warehouse.bi_role")
    schema = quoted(dialect, names.schema or "public", "warehouse.schema")

    def name(table: str) -> str:
        return f"{schema}.{quoted(dialect, table)}"

    whole = [t for t in BI_READABLE if with_texts or t not in BI_TEXT_COLUMNS]
    statements = [f"GRANT USAGE ON SCHEMA {schema} TO {role}",
                  f"GRANT SELECT ON {', '.join(map(name, whole))} TO {role}"]
    if with_texts:
        return statements
    for table, texts in BI_TEXT_COLUMNS.items():
        readable = [c.name for c in T.metadata.tables[table].columns if c.name not in texts]
        statements += [
            f"REVOKE SELECT ON {name(table)} FROM {role}",
            f"REVOKE SELECT ({', '.join(quoted(dialect, c) for c in texts)}) ON {name(table)} FROM {role}",
            f"GRANT SELECT ({', '.join(quoted(dialect, c) for c in readable)}) ON {name(table)} TO {role}",
        ]
    return statements


def bi_readable_columns(*, with_texts: bool = False) -> dict[str, list[str] | None]:
    """What the BI role reads: table or view → its readable columns (None: every column)."""
    out: dict[str, list[str] | None] = {}
    for table in BI_READABLE:
        texts = () if with_texts else BI_TEXT_COLUMNS.get(table, ())
        out[table] = [c.name for c in T.metadata.tables[table].columns if c.name not in texts] if texts else None
    return out


def grant_bi(engine: Engine, *, create_role: bool = False, with_texts: bool = False) -> list[str]:
    """Apply `bi_grants` (PostgreSQL); optionally create the role (NOLOGIN) when it is missing."""
    if engine.dialect.name != "postgresql":
        raise ValueError(f"read-only roles need a server warehouse; {engine.dialect.name} has no GRANT")
    names = engine_names(engine)
    statements = bi_grants(names, engine.dialect, with_texts=with_texts)
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
             "-- Read-only access for dashboard users to the published tables and views, nothing else;",
             "-- no answer, passage or LLM text (`citecheck grant-bi --with-texts` grants those columns too).",
             "-- Create the role first, e.g.: CREATE ROLE citecheck_bi LOGIN PASSWORD '...';",
             "-- Publish replaces rows (DELETE + INSERT) and views are CREATE OR REPLACE, so grants persist."]
    return "\n".join(lines + [s + ";" for s in bi_grants(WarehouseNames())]) + "\n"
