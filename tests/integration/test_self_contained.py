"""A user's fresh clone has nothing beside it: the repository carries what its tests read."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from helpers import REPO

OUTSIDE = re.compile(r"\.\./shared|[\"']shared[\"']|parents\[2\] / \"shared\"")


def _tracked(*paths: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", "--", *paths], cwd=REPO, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_no_code_reads_a_folder_beside_the_repository():
    readers = [path for path in _tracked("tests", "bench", "bin", "include", "dags", "plugins", ".ci")
               if path.endswith((".py", ".sh", ".toml", ".cfg")) or "/bin/" in f"/{path}" or path.startswith(".ci")
               if path != "tests/integration/test_self_contained.py"  # its own pattern
               if OUTSIDE.search((REPO / path).read_text(encoding="utf-8", errors="replace"))]
    assert readers == [], f"these files read a folder a fresh clone does not have: {readers}"


def test_the_fixture_tests_pass_in_a_clone_with_nothing_beside_it(tmp_path):
    clone = tmp_path / "alone" / "citecheck"
    subprocess.run(["git", "clone", "--quiet", "--no-local", str(REPO), str(clone)], check=True)
    env = {**os.environ, "PYTHONPATH": str(clone / "include")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/unit/test_fixtures.py"], cwd=clone, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout
    assert list(clone.parent.iterdir()) == [clone]  # nothing beside it
