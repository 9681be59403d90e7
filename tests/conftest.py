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


def _fresh_pg_database(pg_url: str, template: str | None = None):
    """Create a uniquely named database (empty, or a copy of `template`); yields its URL, drops it after."""
    import uuid

    import sqlalchemy as sa

    name = f"citecheck_t_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    url = sa.engine.make_url(pg_url).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture
def pg_warehouse_url(pg_url: str):
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    yield from _fresh_pg_database(pg_url)


@pytest.fixture(scope="session")
def pg_initialised_template() -> str:
    """The name of a PostgreSQL database that `init_warehouse` has initialised, made once and copied
    (`CREATE DATABASE … TEMPLATE`) for each test's `engine`: creating every table and view costs
    seconds per test, a copy a fraction of that. Its name carries a digest of the warehouse
    package and the names it was initialised with, so a changed schema makes a new template; parallel
    workers (and checkouts) serialise its creation on an advisory lock."""
    import hashlib
    from pathlib import Path

    import sqlalchemy as sa

    import citecheck.warehouse
    from citecheck import warehouse as W
    from citecheck.warehouse.engine import engine_names

    url = os.environ.get("CITECHECK_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    package = Path(citecheck.warehouse.__file__).parents[1]
    sources = sorted([*package.joinpath("warehouse").rglob("*.py"), *package.joinpath("sql").glob("*.sql")])
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:12]
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text("select 1"))
    except Exception as exc:  # pragma: no cover - the failure is the point
        pytest.fail(f"PostgreSQL is required at {url} and is not reachable: {exc}")
    probe = W.make_engine(url)
    digest = hashlib.sha256(f"{digest}{engine_names(probe)!r}".encode()).hexdigest()[:16]
    probe.dispose()
    name = f"citecheck_template_{digest}"
    with admin.connect() as conn:
        conn.execute(sa.text("SELECT pg_advisory_lock(hashtext(:n))"), {"n": name})
        try:
            if conn.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first() is None:
                partial = f"{name}_partial"
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{partial}" WITH (FORCE)')
                conn.exec_driver_sql(f'CREATE DATABASE "{partial}"')
                engine = W.make_engine(sa.engine.make_url(url).set(database=partial).render_as_string(
                    hide_password=False))
                W.init_warehouse(engine)
                engine.dispose()
                conn.exec_driver_sql(f'ALTER DATABASE "{partial}" RENAME TO "{name}"')
        finally:
            conn.execute(sa.text("SELECT pg_advisory_unlock(hashtext(:n))"), {"n": name})
    admin.dispose()
    return name


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, monkeypatch):
    """A fresh, initialised warehouse: the embedded SQLite file, then the real PostgreSQL (a copy
    of the initialised template). CITECHECK_WAREHOUSE_URL points at it (for CLI calls) and no config
    file is set."""
    from citecheck import warehouse as W

    monkeypatch.delenv("CITECHECK_CONFIG", raising=False)
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/warehouse.sqlite"
        databases = None
    else:
        databases = _fresh_pg_database(request.getfixturevalue("pg_url"),
                                       template=request.getfixturevalue("pg_initialised_template"))
        url = next(databases)
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", url)
    engine = W.make_engine(url)
    if databases is None:  # a template copy is initialised already (inspecting it again costs seconds)
        W.init_warehouse(engine)
    yield engine
    engine.dispose()
    if databases is not None:
        next(databases, None)  # drops the copy
