"""Pytest fixtures shared by every tier: the real PostgreSQL, fresh warehouses, offline settings.

Plain helpers (fixture files, scoring shortcuts, the Orbit day) are in `tests/helpers`."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

# The three levels of the suite are folders: tests/unit, tests/integration, tests/e2e; each folder's
# conftest marks its tests (`bin/test -m unit`, `-m integration`, `-m e2e`) with helpers.tiers.


@pytest.fixture
def pg_url() -> str:
    """The real local PostgreSQL; a test that needs it fails loudly when it is down."""
    import sqlalchemy as sa

    url = os.environ.get("CITECHECK_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("select 1"))
    except Exception as exc:  # pragma: no cover - the failure is the point
        pytest.fail(f"PostgreSQL is required at {url} and is not reachable: {exc}")
    finally:
        engine.dispose()
    return url


@pytest.fixture
def pg_warehouse_url(pg_url: str):
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    import uuid

    import sqlalchemy as sa

    name = f"citecheck_t_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = sa.engine.make_url(pg_url).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, monkeypatch):
    """A fresh, initialised warehouse: the embedded SQLite file, then the real PostgreSQL.
    CITECHECK_WAREHOUSE_URL points at it (for CLI calls) and no config file is set."""
    from citecheck import warehouse as W

    url = f"sqlite:///{tmp_path}/warehouse.sqlite" if request.param == "sqlite" else request.getfixturevalue(
        "pg_warehouse_url")
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", url)
    monkeypatch.delenv("CITECHECK_CONFIG", raising=False)
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    yield engine
    engine.dispose()
