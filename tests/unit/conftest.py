"""Unit tier: pure tests. A unit test starts no subprocess, opens no database (SQLite or
PostgreSQL) and imports no Airflow; the guard below fails a test that does, naming what it did,
so it moves to tests/integration or tests/e2e instead of slowing the inner loop."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.tiers import mark_tier


def pytest_collection_modifyitems(config, items):
    mark_tier(items, Path(__file__).parent, pytest.mark.unit)


def _refuse(what: str):
    def refused(*args, **kwargs):
        pytest.fail(f"a unit test may not {what}: move the test to tests/integration or tests/e2e", pytrace=False)
    return refused


@pytest.fixture(autouse=True)
def unit_guard(monkeypatch):
    """No subprocess, no database connection, no Airflow import inside a unit test."""
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("start a subprocess"))
    for module in (sqlite3, sqlite3.dbapi2):  # SQLAlchemy's pysqlite dialect calls sqlite3.dbapi2.connect
        monkeypatch.setattr(module, "connect", _refuse("open a SQLite database"))
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is in the core install
        pass
    else:
        monkeypatch.setattr(psycopg.Connection, "connect", classmethod(_refuse("connect to PostgreSQL")))
    had_airflow = "airflow" in sys.modules
    yield
    if not had_airflow and "airflow" in sys.modules:
        pytest.fail("a unit test may not import Airflow: move the test to tests/e2e", pytrace=False)
