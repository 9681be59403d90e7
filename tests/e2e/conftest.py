"""End-to-end tier: through Airflow itself (dag.test, a real scheduler, api-server, Celery), a
browser (Chromium), or another tool's own process and venv (Superset, dbt, a built wheel)."""

from pathlib import Path

import pytest

from helpers.tiers import mark_tier


def pytest_collection_modifyitems(config, items):
    mark_tier(items, Path(__file__).parent, pytest.mark.e2e)
