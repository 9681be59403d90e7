"""Texts only where allowed: by default the BI role reads metric tables, verdicts and counts but no
answer, passage or LLM text (column grants); `grant-bi --with-texts` opts in. Connects AS the role
to the real PostgreSQL."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import main
from citecheck.warehouse.grants import BI_TEXT_COLUMNS, bi_readable_columns
from citecheck.warehouse.naming import WarehouseNames
from helpers import orbit_settings, orbit_warehouse_turns

DAY = "2026-11-30"
TEXTS = [f"SELECT {column} FROM {table}" for table, columns in BI_TEXT_COLUMNS.items() for column in columns]
READABLE = ["SELECT metric, value, ci_low FROM daily_metrics", "SELECT verdict, score, labels FROM sentence_verdicts",
            "SELECT kind, suggested_labels, auto_apply FROM recite_suggestions",
            "SELECT count(*) FROM sentence_verdicts", "SELECT citation_recall FROM daily_metrics_wide",
            "SELECT status, turns_read FROM runs"]


@pytest.fixture
def bi_role(pg_warehouse_url, monkeypatch):
    """A published day, a LOGIN role as `[warehouse] bi_role`, and a URL that connects as it."""
    import datetime as dt

    role = f"citecheck_bi_t_{uuid.uuid4().hex[:8]}"
    names = WarehouseNames(bi_role=role)
    engine = W.make_engine(pg_warehouse_url, names)
    W.init_warehouse(engine)
    W.load_turns(engine, orbit_warehouse_turns())
    job.run_day(engine, dt.date.fromisoformat(DAY), orbit_settings())
    with engine.begin() as conn:
        conn.exec_driver_sql(f'CREATE ROLE "{role}" LOGIN')
    as_role = sa.create_engine(sa.engine.make_url(pg_warehouse_url).set(username=role), poolclass=sa.pool.NullPool)
    try:
        yield engine, as_role
    finally:
        as_role.dispose()
        with engine.begin() as conn:
            conn.exec_driver_sql(f'DROP OWNED BY "{role}"')
            conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{role}"')
        engine.dispose()


def _refused(as_role: sa.Engine, statement: str) -> bool:
    with as_role.connect() as conn:
        try:
            conn.exec_driver_sql(statement).all()
        except sa.exc.ProgrammingError as exc:
            assert "permission denied" in str(exc), exc
            return True
    return False


def test_the_bi_role_reads_metrics_and_verdicts_but_no_text_unless_granted(bi_role):
    engine, as_role = bi_role
    W.grant_bi(engine)
    assert [s for s in TEXTS if not _refused(as_role, s)] == []
    assert [s for s in READABLE if _refused(as_role, s)] == []
    assert _refused(as_role, "SELECT * FROM sentence_verdicts")  # a text column is in *
    with as_role.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM sentence_verdicts WHERE verdict IS NOT NULL").scalar() > 0

    W.grant_bi(engine, with_texts=True)
    assert [s for s in TEXTS if _refused(as_role, s)] == []
    W.grant_bi(engine)  # and back: what --with-texts gave is revoked
    assert [s for s in TEXTS if not _refused(as_role, s)] == []


def test_the_readable_columns_are_the_tables_less_the_text_columns():
    readable = bi_readable_columns()
    assert "text" not in readable["sentence_verdicts"] and "verdict" in readable["sentence_verdicts"]
    assert "quote" not in readable["recite_suggestions"] and readable["daily_metrics"] is None
    assert all(v is None for v in bi_readable_columns(with_texts=True).values())


def test_grant_bi_cli_with_texts(bi_role, monkeypatch, capsys):
    engine, as_role = bi_role
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("CITECHECK_BI_ROLE", W.engine_names(engine).bi_role)
    monkeypatch.delenv("CITECHECK_CONFIG", raising=False)
    assert main(["grant-bi"]) == 0
    assert _refused(as_role, "SELECT text FROM sentence_verdicts")
    assert main(["grant-bi", "--with-texts"]) == 0
    assert not _refused(as_role, "SELECT text FROM sentence_verdicts")


def test_the_superset_dashboard_queries_no_column_the_bi_role_is_refused():
    from citecheck.bi.superset import SUGGESTION_COLUMNS

    assert not set(SUGGESTION_COLUMNS) & set(BI_TEXT_COLUMNS["recite_suggestions"])


def test_the_bi_role_reads_figure_kinds_and_values_not_their_text(bi_role):
    """A figure's `text` is a piece of the answer: the BI role reads `figure_values` (kind, value,
    traced), never `figures` (issue 37 item 6)."""
    engine, as_role = bi_role
    W.grant_bi(engine)
    for table in ("sentence_verdicts", "claim_verdicts"):
        assert _refused(as_role, f"SELECT figures FROM {table}")
        assert not _refused(as_role, f"SELECT figure_values FROM {table}")
    with as_role.connect() as conn:
        values = [v for (v,) in conn.exec_driver_sql(
            "SELECT figure_values FROM sentence_verdicts WHERE check_worthy").all() if v]
    assert {"kind": "number", "value": "5", "traced": False} in [f for v in values for f in v]
    assert all(set(f) == {"kind", "value", "traced"} for v in values for f in v)
