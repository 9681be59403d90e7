"""The suite's three tiers are folders (tests/unit, tests/integration, tests/e2e); each folder's
conftest marks its own tests with its tier's marker, so `bin/test -m unit` runs one tier."""

from __future__ import annotations

from pathlib import Path


def mark_tier(items, folder: Path, marker) -> None:
    """Mark every collected test under `folder` with `marker`."""
    for item in items:
        if folder in item.path.parents:
            item.add_marker(marker)
