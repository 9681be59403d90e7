"""Security and hygiene: configured SQL names are validated and quoted, values are bound,
dashboards get a read-only role, and no secret is kept in the repository."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import uuid

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.warehouse import tables as T
from citecheck.warehouse.grants import BI_READABLE
from citecheck.warehouse.naming import InvalidName, WarehouseNames, warehouse_names
from helpers import REPO, orbit_settings, orbit_warehouse_turns

DAY = dt.date(2026, 11, 30)
INJECTIONS = [
    'analytics"; DROP TABLE runs; --',
    "analytics; DROP SCHEMA public CASCADE",
    "public, pg_catalog",
    "x' OR '1'='1",
    "1starts_with_digit",
    "",
    " padded ",
    "a" * 64,
    "schéma",
    "name\x00null",
    "semi;colon",
    "dotted.name",
]
NAMES = ["schema", "source_schema", "bi_role"]
ENV = {"schema": "CITECHECK_WAREHOUSE_SCHEMA", "source_schema": "CITECHECK_SOURCE_SCHEMA",
       "bi_role": "CITECHECK_BI_ROLE"}


@pytest.mark.parametrize("key", NAMES)
@pytest.mark.parametrize("bad", INJECTIONS)
def test_every_configurable_name_rejects_injection(key, bad):
    with pytest.raises(InvalidName, match=f"warehouse.{key}"):
        warehouse_names({key: bad}, env={})
    if not bad:  # an empty variable (`${X:-}` in compose) means unset
        assert warehouse_names({}, env={ENV[key]: bad}) == WarehouseNames()
        return
    with pytest.raises(InvalidName, match=f"warehouse.{key}"):
        warehouse_names({}, env={ENV[key]: bad})


def test_names_from_config_and_env_and_unknown_keys():
    assert warehouse_names({"schema": "analytics"}, env={}) == WarehouseNames(schema="analytics")
    assert warehouse_names({"schema": "a"}, env={"CITECHECK_WAREHOUSE_SCHEMA": "b"}).schema == "b"
    with pytest.raises(InvalidName, match="unknown key"):
        warehouse_names({"table": "x"}, env={})
    with pytest.raises(InvalidName, match="no schemas"):
        W.make_engine("sqlite://", WarehouseNames(schema="analytics"))


@pytest.mark.parametrize("key", NAMES)
def test_cli_refuses_an_injected_name_and_touches_nothing(key, pg_warehouse_url, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[warehouse]\n' + key + ' = "analytics\\"; DROP TABLE runs; --"\n')
    env = {**os.environ, "CITECHECK_WAREHOUSE_URL": pg_warehouse_url, "CITECHECK_CONFIG": str(config)}
    out = subprocess.run([sys.executable, "-m", "citecheck", "init-warehouse"], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 2, out.stderr
    assert f"warehouse.{key} must be a plain SQL identifier" in out.stderr
    engine = sa.create_engine(pg_warehouse_url)
    with engine.connect() as conn:
        tables = conn.execute(sa.text("SELECT count(*) FROM information_schema.tables "
                                      "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')")).scalar()
    engine.dispose()
    assert tables == 0, "a refused configuration creates nothing"


def test_quoted_schemas_hold_the_whole_job_on_postgres(pg_warehouse_url):
    """Mixed case and a reserved word only work quoted; the public schema stays empty."""
    names = WarehouseNames(schema="Citecheck_Out", source_schema="select")
    admin = sa.create_engine(pg_warehouse_url)
    with admin.begin() as conn:
        conn.exec_driver_sql('CREATE SCHEMA "select"')
        for table in T.SOURCE_TABLES:  # the users' logs live in their own schema
            conn.execute(sa.schema.CreateTable(table.to_metadata(sa.MetaData(), schema="select")))
    engine = W.make_engine(pg_warehouse_url, names)
    W.init_warehouse(engine)
    W.load_turns(engine, orbit_warehouse_turns())
    result = job.run_day(engine, DAY, orbit_settings())
    assert result["structural"]["turns_read"] == 4
    with admin.connect() as conn:
        where = conn.execute(sa.text(
            "SELECT table_schema, count(*) FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') GROUP BY table_schema")).all()
        turns = conn.execute(sa.text('SELECT count(*) FROM "select".source_turns')).scalar()
        metrics = conn.execute(sa.text('SELECT count(*) FROM "Citecheck_Out".daily_metrics')).scalar()
    engine.dispose()
    admin.dispose()
    where = dict(where)
    assert "public" not in where, where
    assert where["select"] == len(T.SOURCE_TABLES) and where["Citecheck_Out"] > 10
    assert turns == 4 and metrics > 0


def test_hostile_values_are_bound_not_spliced(pg_warehouse_url):
    """Ids, labels and texts full of SQL go through bound parameters and come back intact."""
    evil = "x'); DROP TABLE runs; --"
    turns = orbit_warehouse_turns()
    turns[0] = {**turns[0], "turn_id": evil, "conversation_id": evil + "c",
                "attributes": {"model": "m'); DELETE FROM daily_metrics; --"}}
    engine = W.make_engine(pg_warehouse_url)
    W.init_warehouse(engine)
    W.load_turns(engine, turns)
    job.run_day(engine, DAY, orbit_settings(), run_id="2026-11-30-'; DROP TABLE runs; --")
    with engine.connect() as conn:
        ids = set(conn.execute(sa.select(T.sentence_verdicts.c.turn_id)).scalars())
        runs = conn.execute(sa.select(T.runs.c.run_id)).scalars().all()
        models = set(conn.execute(sa.select(T.daily_metrics.c.slice_value).where(
            T.daily_metrics.c.slice_name == "attribute:model")).scalars())
    engine.dispose()
    assert evil in ids
    assert runs == ["2026-11-30-'; DROP TABLE runs; --"]
    assert "m'); DELETE FROM daily_metrics; --" in models


def test_read_only_bi_role_reads_outputs_and_nothing_else(pg_warehouse_url):
    role = f"citecheck_bi_t_{uuid.uuid4().hex[:8]}"
    names = WarehouseNames(schema="analytics", bi_role=role)
    engine = W.make_engine(pg_warehouse_url, names)
    W.init_warehouse(engine)
    W.load_turns(engine, orbit_warehouse_turns())
    job.run_day(engine, DAY, orbit_settings())
    try:
        W.grant_bi(engine, create_role=True)
        job.run_day(engine, DAY, orbit_settings())  # a republish replaces rows, grants persist
        W.init_warehouse(engine)  # so does re-creating the view
        with engine.connect() as conn:
            conn.exec_driver_sql(f'SET ROLE "{role}"')
            for name in BI_READABLE:
                conn.exec_driver_sql(f"SELECT count(*) FROM analytics.{name}")
            wide = conn.exec_driver_sql("SELECT citation_recall FROM analytics.daily_metrics_wide").scalar()
            assert wide == pytest.approx(0.375)
            conn.rollback()
        refused = [
            "INSERT INTO analytics.runs (run_id, day, status) VALUES ('x', DATE '2026-11-30', 'x')",
            "DELETE FROM analytics.daily_metrics",
            "UPDATE analytics.sentence_verdicts SET verdict = 'supported'",
            "DROP VIEW analytics.daily_metrics_wide",
            "SELECT count(*) FROM analytics.source_turns",
            "SELECT count(*) FROM analytics.source_passages",
            "SELECT count(*) FROM analytics.judgment_cache",
            "SELECT count(*) FROM analytics.stage_turns",
            "CREATE TABLE analytics.mine (x int)",
        ]
        for statement in refused:
            with engine.connect() as conn:
                conn.exec_driver_sql(f'SET ROLE "{role}"')
                with pytest.raises(sa.exc.ProgrammingError, match=r"permission denied|must be owner"):
                    conn.exec_driver_sql(statement)
    finally:
        with engine.begin() as conn:
            conn.exec_driver_sql(f'DROP OWNED BY "{role}"')
            conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{role}"')
        engine.dispose()


def test_grant_bi_refuses_a_missing_role_unless_asked(pg_warehouse_url):
    engine = W.make_engine(pg_warehouse_url, WarehouseNames(bi_role=f"nobody_{uuid.uuid4().hex[:8]}"))
    W.init_warehouse(engine)
    with pytest.raises(ValueError, match="does not exist"):
        W.grant_bi(engine)
    engine.dispose()


def test_generated_grants_file_is_up_to_date():
    generated = REPO / "include" / "citecheck" / "sql" / "grants_bi_readonly.sql"
    assert generated.read_text(encoding="utf-8") == W.grants_sql()


def test_no_credential_is_committed():
    """API keys and passworded URLs come from the environment or Airflow connections only."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    key = re.compile(r"sk-ant-[A-Za-z0-9]{2,}-[A-Za-z0-9_-]{20,}")
    url = re.compile(r"\b[a-z+]+://[^\s:/@]+:(?P<password>[^\s@/]{3,})@")
    found = []
    for name in files:
        path = REPO / name
        if not path.is_file() or path.suffix in {".png", ".gz", ".sqlite"} or name.startswith("tests/"):
            continue
        text = path.read_text(encoding="utf-8", errors="ignore")
        found += [f"{name}: API key" for _ in key.finditer(text)]
        found += [f"{name}: {m.group(0)}" for m in url.finditer(text)
                  if "$" not in m.group(0) and m["password"] not in ("pass", "password", "secret", "...")]
    assert not found, found


def test_an_airflow_postgres_connection_uri_gets_the_psycopg_driver(monkeypatch):
    """`Connection.get_uri()` of a connection of type postgres renders `postgres://`."""
    monkeypatch.delenv("CITECHECK_WAREHOUSE_URL", raising=False)
    assert W.warehouse_url("postgres://u:p@h:5432/wh") == "postgresql+psycopg://u:p@h:5432/wh"
    assert W.warehouse_url("postgresql://u@h/wh") == "postgresql+psycopg://u@h/wh"
    assert W.warehouse_url("postgresql+psycopg://u@h/wh") == "postgresql+psycopg://u@h/wh"
    assert W.warehouse_url(None) == W.DEFAULT_WAREHOUSE_URL
