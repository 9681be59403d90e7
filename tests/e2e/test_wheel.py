"""The library install: the wheel carries its package data, and installed with no extra into a fresh
venv its `citecheck` console script scores a turns file with a recorded judge, without torch,
Airflow, Great Expectations or Altair there.

The venv (the core dependencies from the package index) is kept under `.cache/` keyed by a hash
of pyproject.toml; each run builds and reinstalls the wheel itself."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from helpers import load_fixture

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "include" / "citecheck"
ABSENT = ["torch", "airflow", "great_expectations", "altair", "sentence_transformers", "anthropic"]

pytestmark = pytest.mark.slow


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if out.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


def clean_env() -> dict[str, str]:
    """No PYTHONPATH: the venv must import the installed wheel, not this checkout."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the sources (the checkout gets no build/ or egg-info)."""
    src = tmp_path_factory.mktemp("src")
    shutil.copy(REPO / "pyproject.toml", src)
    shutil.copy(REPO / "README.md", src)
    shutil.copytree(REPO / "include", src / "include", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)])
    (built,) = dist.glob("citecheck-*.whl")
    return built


@pytest.fixture(scope="module")
def core_venv(wheel: Path) -> Path:
    """A fresh venv with the wheel and its core dependencies only (no extra)."""
    key = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()[:16]
    venv = REPO / ".cache" / f"wheel-venv-{key}"
    ready = venv / ".core-installed"
    env = clean_env()
    for stale in venv.parent.glob("wheel-venv-*"):
        if stale != venv:  # built for an older pyproject.toml
            shutil.rmtree(stale, ignore_errors=True)
    if not ready.exists():
        shutil.rmtree(venv, ignore_errors=True)
        run([sys.executable, "-m", "venv", str(venv)], env=env)
        run([str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)], env=env)
        ready.write_text(wheel.name)
    else:
        run([str(venv / "bin" / "pip"), "install", "--quiet", "--force-reinstall", "--no-deps", str(wheel)], env=env)
    return venv


def test_the_wheel_carries_every_data_file_the_package_reads(wheel: Path) -> None:
    tracked = run(["git", "ls-files", "include/citecheck"], cwd=REPO).stdout.split()
    data = {f.removeprefix("include/") for f in tracked if not f.endswith(".py")}
    assert any(f.startswith("citecheck/sql/") for f in data)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert data <= names, f"missing from the wheel: {sorted(data - names)}"


def test_the_wheel_declares_ranges_and_extras(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    core = [r for r in requires if "extra ==" not in r]
    assert any(r.lower().startswith("sqlalchemy") for r in core)
    assert not {Requirement(r).name.lower() for r in core} & {"torch", "apache-airflow", "great-expectations"}
    assert any("torch" in r and 'extra == "nli"' in r for r in requires)
    assert any(r.startswith("apache-airflow") and 'extra == "airflow"' in r for r in requires)


def test_the_core_install_scores_a_turns_file_with_a_recorded_judge(core_venv: Path, tmp_path: Path) -> None:
    case = load_fixture("micro_macro.json")
    turns = tmp_path / "turns.jsonl"
    turns.write_text("".join(json.dumps(t) + "\n" for t in case["turns"]), encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(case["judge"]), encoding="utf-8")
    out = tmp_path / "out.json"
    run([str(core_venv / "bin" / "citecheck"), "score", "--turns", str(turns), "--judge", str(judge),
         "--out", str(out)], env=clean_env(), cwd=tmp_path)
    result = json.loads(out.read_text(encoding="utf-8"))
    metrics = result["metrics"]
    assert metrics["micro"]["citation_recall"] == pytest.approx(case["expected"]["citation_recall_micro"])
    assert metrics["macro"]["citation_recall"] == pytest.approx(case["expected"]["citation_recall_macro"])
    interval = metrics["intervals"]["micro"]["citation_recall"]
    assert interval["ci_low"] < metrics["micro"]["citation_recall"] < interval["ci_high"]
    where = run([str(core_venv / "bin" / "python"), "-c",
                 "import citecheck, importlib.util, json, sys; print(json.dumps([citecheck.__file__] + "
                 f"[m for m in {ABSENT!r} if importlib.util.find_spec(m)]))"], env=clean_env(), cwd=tmp_path)
    location, *present = json.loads(where.stdout)
    assert location.startswith(str(core_venv)), location
    assert present == [], f"the core install has {present}"


def test_the_core_install_plans_on_the_rates_it_ships(core_venv: Path, tmp_path: Path) -> None:
    # README's `citecheck plan --answers N` with no rates file: the installed package's own data
    plan = run([str(core_venv / "bin" / "citecheck"), "plan", "--answers", "20000", "--json"],
               env=clean_env(), cwd=tmp_path)
    result = json.loads(plan.stdout)
    assert result["rates_estimate"] is True
