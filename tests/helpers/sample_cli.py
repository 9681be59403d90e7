"""A warehouse holding the bundled sample's day and the environment of a `citecheck` process
over it: what the tests with real concurrent (or paused) CLI runs share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def sample_env(tmp_path: Path, url: str, day: str, *, config_extra: str = "") -> dict[str, str]:
    """Write the bundled sample (one day, 300 turns) under `tmp_path`, load it into `url`, and
    return a CLI environment over it (`config_extra`: TOML appended to the sample's config)."""
    from citecheck.cli import main

    sample = tmp_path / "sample"
    assert main(["sample", "--start", day, "--days", "1", "--out", str(sample)]) == 0
    if config_extra:
        config = sample / "config.toml"
        config.write_text(config.read_text(encoding="utf-8") + "\n" + config_extra, encoding="utf-8")
    env = {**os.environ, "CITECHECK_WAREHOUSE_URL": url, "CITECHECK_JUDGE": str(sample / "judge.json"),
           "CITECHECK_CONFIG": str(sample / "config.toml"), "PYTHONPATH": os.pathsep.join(
               [str(REPO / "include"), str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])}
    load = subprocess.run([sys.executable, "-m", "citecheck", "load-sample", "--start", day, "--days", "1"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert load.returncode == 0, load.stderr[-2000:]
    return env


def citecheck(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """A `citecheck` process, its output captured."""
    return subprocess.Popen([sys.executable, "-m", "citecheck", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
