"""Shared test helpers (imported as `helpers`): fixtures, warehouses, scoring shortcuts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    """A worked fixture carried in `tests/fixtures` (copies of the project's worked cases)."""
    path = FIXTURES / name
    if not path.exists():
        raise FileNotFoundError(f"fixture {path} is missing from the repository")
    return json.loads(path.read_text(encoding="utf-8"))
