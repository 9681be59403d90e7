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


def _module_names(path) -> set[str]:
    """What a module defines, imports or reads as an attribute (`limits.max_unpaired_share`), and
    its string constants (a config key, a column)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.add(node.value)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
    return out


def _single_module_rows() -> list[tuple[str, str]]:
    """(module path, the row's other cells) of each Modules row whose first cell names one module."""
    out = []
    for line in DOC.split("## Modules", 1)[1].splitlines():
        if not line.startswith("| "):
            continue
        cells = line.split("|")
        modules = [p for p in re.findall(r"`([^`]+)`", cells[1]) if p.endswith(".py")]
        if len(modules) == 1:
            out.append((modules[0], "|".join(cells[2:])))
    return out


def test_every_path_the_map_names_exists():
    """A row for a module that was removed or renamed is a false map."""
    rows = _module_rows()
    missing = [p for p in rows if not any(base.glob(p) for base in (PACKAGE, REPO))]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_every_module_says_what_it_holds_in_its_docstring():
    import ast

    bare = [p.relative_to(PACKAGE).as_posix() for p in sorted(PACKAGE.rglob("*.py"))
            if not (ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or "").strip()]
    assert not bare, f"modules without a docstring (its first line is what the map's row says): {bare}"


def test_the_names_a_module_row_gives_are_that_modules():
    """Each code name a module's row gives (`run_steps`, `STEP_NAMES`, `require_initialised()`) is
    defined in that module (or is one of its string constants, or a table of the registry; a dotted
    `Class.attr` names a class of the package): a rename without the map fails here."""
    from citecheck.warehouse.tables import metadata

    everywhere = set().union(*(_module_names(p) for p in PACKAGE.rglob("*.py")))
    stale = []
    for module, text in _single_module_rows():
        path = PACKAGE / module if (PACKAGE / module).exists() else REPO / module
        known = _module_names(path) | set(metadata.tables)
        for token in re.findall(r"`([^`]+)`", text):
            m = re.fullmatch(r"([A-Za-z_]\w*)(\.[A-Za-z_]\w*)?(\(\))?", token)
            if not m or not ("_" in m.group(1) or m.group(1)[0].isupper() or m.group(3)):
                continue  # a word, a command or a path: not a code name
            if m.group(1) not in (everywhere if m.group(2) else known):
                stale.append(f"{module}: `{token}`")
    assert not stale, f"the map gives names its module does not hold: {stale}"


def test_the_daily_dag_docstring_names_every_published_table():
    import ast

    from citecheck.warehouse.tables import PUBLISHED_TABLES

    doc = ast.get_docstring(ast.parse((REPO / "dags" / "citation_metrics_daily.py").read_text(encoding="utf-8")))
    missing = [t.name for t in PUBLISHED_TABLES if f"`{t.name}`" not in (doc or "")]
    assert not missing, f"dags/citation_metrics_daily.py's docstring does not name these published tables: {missing}"


def test_only_the_warehouse_runs_sql():
    """The map's rule "storage only in `warehouse/`": no module outside it executes a statement."""
    import ast

    runs = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(REPO / "dags").glob("*.py"), *(REPO / "plugins").glob("*.py")]):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith("include/citecheck/warehouse/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "execute", "exec_driver_sql", "executemany", "executescript"):
                runs.append(f"{rel}:{node.lineno}")
    assert not runs, f"SQL run outside warehouse/: {runs}"
