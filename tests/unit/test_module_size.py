"""No module of the package over 800 lines (issue 27: the bar for every module): a module that
grows past it is split by what its parts are, as the CLI was into `citecheck/cli/`."""

from __future__ import annotations

from helpers import REPO

MAX_LINES = 800


def test_no_module_of_the_package_is_over_800_lines():
    modules = sorted((REPO / "include" / "citecheck").rglob("*.py"))
    assert len(modules) > 50
    sizes = {str(m.relative_to(REPO)): len(m.read_text(encoding="utf-8").splitlines()) for m in modules}
    assert {path: n for path, n in sizes.items() if n > MAX_LINES} == {}
