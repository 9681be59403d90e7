"""Shared test helpers: the fixtures in tests/fixtures, scoring shortcuts, offline settings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    path = FIXTURES / name
    if not path.exists():
        raise FileNotFoundError(f"fixture {path} is missing from the repository")
    return json.loads(path.read_text(encoding="utf-8"))


def score_dicts(turns: list[dict[str, Any]], judge_spec: dict[str, Any], config: Any = None) -> dict[str, Any]:
    """Score turn dicts with a judge spec; the CLI's JSON output as a dict."""
    from citecheck.config import Config
    from citecheck.judges import judge_from_spec
    from citecheck.pipeline import score
    from citecheck.turns import turn_from_dict

    report = score([turn_from_dict(t) for t in turns], judge_from_spec(judge_spec), config or Config())
    return report.to_json()


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


def orbit_warehouse_turns(day: str = "2026-11-30") -> list[dict[str, Any]]:
    """The Orbit Labs turns dated on `day`, plus one malformed row (answer missing)."""
    data = load_fixture("orbit_labs.json")
    turns = [dict(t, answered_at=f"{day}T10:00:00Z", turn_id=f"{t['turn_id']}@{day}",
                  conversation_id=f"{t['conversation_id']}@{day}") for t in data["turns"]]
    turns.append({"turn_id": f"bad@{day}", "answer": None, "answered_at": f"{day}T11:00:00Z", "context": []})
    return turns


def orbit_settings(**overrides: Any):
    from dataclasses import replace

    from citecheck.config import config_from_mapping
    from citecheck.job import JobSettings

    data = load_fixture("orbit_labs.json")
    settings = JobSettings(judge_spec=data["judge"],
                           config=config_from_mapping({"check_worthiness": {"refusals": [data["refusal_text"]]}}))
    return replace(settings, **overrides)
