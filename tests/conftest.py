"""Shared test helpers: the fixtures of ../shared, scoring shortcuts, offline settings."""

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
SHARED = Path(os.environ.get("CITECHECK_SHARED", REPO.parent / "shared"))
FIXTURES = SHARED / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    path = FIXTURES / name
    if not path.exists():
        raise FileNotFoundError(f"fixture {path} is missing: tests need ../shared beside the repository")
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
