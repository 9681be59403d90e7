"""A tool's own venv (`bin/tool-venv NAME`: dbt, superset), built on first use and reused; a test that
needs one fails loudly when it cannot be built."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def tool_venv(name: str) -> Path:
    done = subprocess.run([str(REPO / "bin" / "tool-venv"), name], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        pytest.fail(f"bin/tool-venv {name} could not build .venvs/{name}:\n{done.stderr[-4000:]}")
    return Path(done.stdout.strip().splitlines()[-1])
