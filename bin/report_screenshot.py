"""Write the README's report screenshot with the browser tests' code path.

Renders the day's report from the warehouse of CITECHECK_WAREHOUSE_URL, opens it in headless
Chromium through `tests/helpers/browser.report_screenshot` (charts rendered, no console error, no
request leaving 127.0.0.1, or it fails) and saves the top of the page.
Usage (after bin/demo): CITECHECK_WAREHOUSE_URL=sqlite:///.demo/warehouse.sqlite \\
    .venv/bin/python bin/report_screenshot.py 2026-11-30 docs/report.png
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def main(argv: list[str]) -> int:
    from citecheck.warehouse import engine_for
    from helpers.browser import report_screenshot

    day, out = dt.date.fromisoformat(argv[0]), Path(argv[1])
    check = report_screenshot(engine_for(), day, out, full_page=False)
    print(f"{out}: {check.chart_svgs} charts, headline {sorted(check.headline)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
