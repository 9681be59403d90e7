"""Integration tier: a real warehouse (the SQLite file and the local PostgreSQL) or the CLI in a
subprocess; nothing through Airflow, a browser or another tool's venv (that is tests/e2e)."""

from pathlib import Path

import pytest

from helpers.tiers import mark_tier


def pytest_collection_modifyitems(config, items):
    mark_tier(items, Path(__file__).parent, pytest.mark.integration)
