"""The report in real headless Chromium (Debian's `chromium`, driven by Playwright through
`executable_path`; no browser download): what the browser tests check and what writes the README
screenshot (`bin/report_screenshot.py`), one code path for both.

`open_report_page` loads a page with every request observed and any request to a host other than
127.0.0.1 (or a file: URL) aborted and recorded, waits for the charts, and reads back the headline
numbers, the chart elements and console errors.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import REPO

LOCAL_HOSTS = frozenset({"127.0.0.1"})


def artifacts_dir() -> Path:
    """Where tests leave screenshots for CI to keep (CITECHECK_TEST_ARTIFACTS, else test-artifacts/)."""
    path = Path(os.environ.get("CITECHECK_TEST_ARTIFACTS") or REPO / "test-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def chromium_executable() -> str:
    """Debian's chromium, installed with apt-get when missing (needs root); RuntimeError otherwise."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.geteuid() != 0:
        raise RuntimeError("chromium is not installed and installing it needs root: apt-get install -y chromium")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (["apt-get", "install", "-y", "chromium"], ["apt-get", "update"],
                    ["apt-get", "install", "-y", "chromium"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode == 0 and command[1] == "install":
            break
    found = shutil.which("chromium")
    if not found:
        raise RuntimeError(f"apt-get could not install chromium:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
    return found


def launch(playwright: Any) -> Any:
    """Headless Chromium; raises (the test fails loudly) when it cannot start."""
    args = ["--no-sandbox"] if os.geteuid() == 0 else []  # Chromium refuses its sandbox as root
    return playwright.chromium.launch(executable_path=chromium_executable(), headless=True, args=args)


@dataclass
class PageCheck:
    url: str
    requests: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    headline: dict[str, dict[str, str]] = field(default_factory=dict)
    chart_svgs: int = 0
    chart_canvases: int = 0
    screenshot: Path | None = None
    decision: str | None = None  # the day's decision as the page shows it (None: no decision section)
    criteria: list[tuple[str, str]] = field(default_factory=list)  # (criterion, decision) rows, as shown
    answer_links: list[str] = field(default_factory=list)  # failing answers' links to their sentences
    broken_links: list[str] = field(default_factory=list)  # those whose target is not on the page


def _local(url: str) -> bool:
    parsed = urllib.parse.urlsplit(url)
    return parsed.scheme in ("file", "data", "about", "blob") or parsed.hostname in LOCAL_HOSTS


def watch(context: Any, page: Any, check: PageCheck) -> None:
    """Record every request, abort those leaving 127.0.0.1, record console errors and page errors."""

    def route(r: Any) -> None:
        if _local(r.request.url):
            r.continue_()
        else:
            check.outside_requests.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("request", lambda request: check.requests.append(request.url))
    page.on("console", lambda msg: check.console_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda error: check.console_errors.append(f"page error: {error}"))


def open_report_page(browser: Any, url: str, screenshot: Path, *, cookies: list[dict] | None = None,
                     full_page: bool = True, viewport: tuple[int, int] = (1280, 1600)) -> PageCheck:
    """Load a report page, wait for its charts, read it back, save a screenshot."""
    check = PageCheck(url)
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    try:
        if cookies:
            context.add_cookies(cookies)
        page = context.new_page()
        watch(context, page, check)
        response = page.goto(url, wait_until="load")
        if response is not None and not response.ok:
            raise RuntimeError(f"{url} answered {response.status}")
        page.wait_for_function("document.querySelectorAll('#chart-trends svg .mark-line path').length > 0",
                               timeout=60_000)
        page.wait_for_load_state("networkidle")
        check.chart_svgs = page.locator(".chart svg").count()
        check.chart_canvases = page.locator(".chart canvas").count()
        for metric, value, text in page.eval_on_selector_all(
                ".headline-value", "els => els.map(e => [e.dataset.metric, e.dataset.value, e.textContent])"):
            check.headline[metric] = {"value": value, "text": text.strip()}
        if page.locator("#decision").count():
            check.decision = page.locator("#decision h2 .decision").inner_text().strip()
            check.criteria = [tuple(row) for row in page.eval_on_selector_all(
                "#decision tr.criterion",
                "rows => rows.map(r => [r.cells[0].textContent.trim(), r.dataset.decision])")]
            check.answer_links = page.eval_on_selector_all(
                ".failing-answer a", "links => links.map(a => a.getAttribute('href'))")
            check.broken_links = [href for href in check.answer_links
                                  if not page.evaluate("id => document.getElementById(id) !== null", href[1:])]
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), full_page=full_page)
        check.screenshot = screenshot
    finally:
        context.close()
    return check


def report_screenshot(engine: Any, day: dt.date, out: Path, *, trend_days: int = 28,
                      full_page: bool = True) -> PageCheck:
    """Render the day's report to a file, open it in Chromium, check it and save a screenshot at
    `out`: the browser test's code path, also what writes the README's `docs/report.png`."""
    from playwright.sync_api import sync_playwright

    from citecheck.report import write_report

    with tempfile.TemporaryDirectory() as tmp:
        html = write_report(engine, day, Path(tmp) / "report.html", trend_days)
        with sync_playwright() as playwright:
            browser = launch(playwright)
            try:
                check = open_report_page(browser, html.as_uri(), out, full_page=full_page)
            finally:
                browser.close()
    problems = check.console_errors + [f"request left 127.0.0.1: {u}" for u in check.outside_requests]
    if problems or not check.chart_svgs:
        raise RuntimeError(f"the report did not render cleanly ({check.chart_svgs} charts): {problems}")
    return check
