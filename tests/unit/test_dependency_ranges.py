"""pyproject.toml's ranges (the library) and requirements.txt's pins (this repository's lock) agree:
every package the library declares, in the core or an extra or the dev group, is pinned in the
lock at a version its range accepts."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def declared() -> list[tuple[str, Requirement]]:
    """(where, requirement) for every declared requirement except the extras' references to citecheck."""
    out = [("dependencies", Requirement(r)) for r in PROJECT["project"]["dependencies"]]
    for extra, reqs in PROJECT["project"]["optional-dependencies"].items():
        out += [(f"[{extra}]", Requirement(r)) for r in reqs]
    for group, reqs in PROJECT.get("dependency-groups", {}).items():
        out += [(f"group {group}", Requirement(r)) for r in reqs if isinstance(r, str)]
    return [(where, r) for where, r in out if canonicalize_name(r.name) != "citecheck"]


def pins() -> dict[str, str]:
    out = {}
    for line in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", f"requirements.txt pins exactly: {line}"
            out[canonicalize_name(req.name)] = spec.version
    return out


def test_every_declared_package_is_pinned_inside_its_range() -> None:
    locked = pins()
    for where, req in declared():
        name = canonicalize_name(req.name)
        assert name in locked, f"{req} ({where}) is not pinned in requirements.txt"
        assert req.specifier.contains(locked[name], prereleases=True), (
            f"requirements.txt pins {name}=={locked[name]}, outside {where}'s {req.specifier}")


def test_declared_ranges_are_bounded_below_and_extras_are_named_as_the_docs_say() -> None:
    for where, req in declared():
        assert any(s.operator in (">=", "==", "~=") for s in req.specifier), f"{req} ({where}) has no lower bound"
    extras = set(PROJECT["project"]["optional-dependencies"])
    assert {"nli", "onnx", "openvino", "llm", "airflow", "report", "review", "all"} <= extras
    everything = Requirement(PROJECT["project"]["optional-dependencies"]["all"][0])
    assert everything.extras == extras - {"all"}


def test_the_core_install_is_small() -> None:
    core = {canonicalize_name(Requirement(r).name) for r in PROJECT["project"]["dependencies"]}
    heavy = {"torch", "sentence-transformers", "apache-airflow", "great-expectations", "altair", "anthropic"}
    assert not core & heavy
