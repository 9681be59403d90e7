"""docs/architecture.md is the map: every module of the package is named in it, and every layer of
the import-linter contracts (pyproject.toml) appears in its layer picture. A module added without
its line here fails this test: add a row to the "Modules" table (or name it in its package's row)."""

from __future__ import annotations

import re
import tomllib

from helpers import REPO

DOC = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = REPO / "include" / "citecheck"


def _module_rows() -> dict[str, str]:
    """The "Modules" table: first cell's paths → the whole row (a package row names its modules)."""
    rows: dict[str, str] = {}
    for line in DOC.split("## Modules", 1)[1].splitlines():
        if not line.startswith("| "):
            continue
        first = line.split("|")[1]
        for path in re.findall(r"`([^`]+)`", first):
            rows[path] = rows.get(path, "") + line
    return rows


def _named(relative: str, rows: dict[str, str]) -> bool:
    """`core/model.py` is named by itself; `judges/nli/scorer.py` also by `scorer` (or `scorer.py`)
    in the row of `judges/nli/`; a package's `__init__.py` by the package's row."""
    if f"`{relative}`" in DOC or f"`{relative.removesuffix('.py')}`" in DOC:
        return True
    folder, _, name = relative.rpartition("/")
    row = rows.get(f"{folder}/", "") if folder else ""
    if name == "__init__.py":
        return bool(row) or any(p.startswith(f"{folder}/") for p in rows)
    stem = name.removesuffix(".py")
    return bool(row) and (f"`{stem}`" in row or f"`{name}`" in row)


def test_every_module_of_the_package_is_named_in_the_map():
    rows = _module_rows()
    modules = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))
    assert modules, "no modules found"
    missing = [m for m in modules if not _named(m, rows)]
    assert not missing, (f"docs/architecture.md does not name these modules (add a row to its Modules table, "
                         f"or name them in their package's row): {missing}")


def test_every_layer_of_the_contracts_is_in_the_layer_picture():
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = [layer for c in contracts["contracts"] if c["type"] == "layers" for layer in c["layers"]]
    names = {name.strip().removeprefix("citecheck.") for layer in layers for name in re.split(r"[|:]", layer)}
    picture = re.search(r"## Layers.*?```\n(.*?)```", DOC, re.S)
    assert picture, "docs/architecture.md has no layer picture (a code block under ## Layers)"
    drawn = set(re.findall(r"[a-z_]+", picture.group(1)))
    assert names and not names - drawn, f"layers missing from the picture: {sorted(names - drawn)}"
