"""The claims fixture (`tests/fixtures/claims.json`) in its recorded claims mode, and the fractions
a score output gives (shared by the claims and claim-figures tests)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from citecheck.core.config import Config
from helpers import load_fixture

FIXTURE = load_fixture("claims.json")


def recorded_config(tmp_path: Path) -> Config:
    """A config in the recorded claims mode over the fixture's own claims."""
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(FIXTURE["claims"]), encoding="utf-8")
    return replace(Config(), claims_mode="recorded", claims_recorded=str(path))


def micro_fractions(out: dict[str, Any]) -> dict[str, list[float]]:
    """metric → [numerator, denominator] of a score output's overall micro rows."""
    return {r["metric"]: [r["numerator"], r["denominator"]] for r in out["rows"]
            if (r["slice_name"], r["averaging"]) == ("all", "micro")}
