"""The report in real headless Chromium: the file written by `citecheck report`, and the same
report served by the Airflow plugin through a real `airflow api-server` on 127.0.0.1.

Checked: the charts rendered (SVG elements inside the chart containers), the headline numbers on
the page equal the warehouse's, no console errors, no request left 127.0.0.1, a screenshot saved
under test-artifacts/. These tests fail, never skip, when Chromium cannot start.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.error
import urllib.request

import pytest

from citecheck import job
from citecheck import warehouse as W
from citecheck.job import publish_report
from citecheck.report import format_value
from helpers import publish_orbit_days
from helpers.api_server import ApiServer
from helpers.browser import artifacts_dir, launch, open_report_page, report_screenshot, watch

DAYS = [dt.date(2026, 11, 28), dt.date(2026, 11, 29), dt.date(2026, 11, 30)]


def _published(url: str):
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    publish_orbit_days(engine, DAYS)
    return engine


def _warehouse_headline(engine, day: dt.date) -> dict[str, float | None]:
    return {r["metric"]: r["value"] for r in job.day_metrics(engine, day)
            if r["slice_name"] == "all" and r["averaging"] == "micro"}


def _assert_matches_warehouse(check, engine, day: dt.date) -> None:
    expected = _warehouse_headline(engine, day)
    assert {"citation_recall", "citation_precision", "attachment_rate"} <= set(check.headline)
    for metric, shown in check.headline.items():
        assert shown["text"] == format_value(metric, expected[metric]), metric
        assert (float(shown["value"]) if shown["value"] else None) == expected[metric], metric


def test_the_report_file_renders_in_chromium(tmp_path):
    engine = _published(f"sqlite:///{tmp_path}/wh.sqlite")
    check = report_screenshot(engine, DAYS[-1], artifacts_dir() / "report-file.png", trend_days=7)
    assert check.chart_svgs >= 2, "the trend and slice charts render as SVG"
    assert check.console_errors == [] and check.outside_requests == []
    assert all(u.startswith("file:") or u.startswith("data:") for u in check.requests), check.requests
    _assert_matches_warehouse(check, engine, DAYS[-1])
    assert check.screenshot.stat().st_size > 20_000


def test_the_days_decision_renders_in_chromium(tmp_path):
    from citecheck.core.criteria import parse_criteria
    from helpers import orbit_settings, orbit_warehouse_turns

    engine = W.make_engine(f"sqlite:///{tmp_path}/wh.sqlite")
    W.init_warehouse(engine)
    publish_orbit_days(engine, DAYS[:-1])
    W.load_turns(engine, orbit_warehouse_turns(DAYS[-1].isoformat()))
    criteria = parse_criteria([{"name": "recall", "metric": "citation_recall", "min": 0.9, "answers": True},
                               {"name": "attached", "metric": "attachment_rate", "min": 0.5}])
    job.run_day(engine, DAYS[-1], orbit_settings(criteria=criteria))
    check = report_screenshot(engine, DAYS[-1], artifacts_dir() / "report-decision.png", trend_days=7)
    assert check.console_errors == [] and check.outside_requests == []
    assert check.decision == "fail"
    # the Orbit day's malformed turn (1 of 5 skipped) fails the daily skipped-share bound (1%)
    assert check.criteria == [("recall", "fail"), ("turns skipped", "fail"), ("attached", "pass")]
    assert check.answer_links and check.broken_links == []


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode("utf-8"), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", errors="replace"), dict(exc.headers)


@pytest.mark.slow
def test_the_airflow_plugin_serves_the_report_behind_airflow_auth(tmp_path, pg_warehouse_url):
    """Real api-server, the warehouse from an Airflow connection (PostgreSQL), SimpleAuthManager."""
    from playwright.sync_api import sync_playwright

    engine = _published(pg_warehouse_url)
    day = DAYS[-1]
    publish_report(engine, DAYS[0], "run-0", trend_days=7)
    publish_report(engine, day, "run-2", trend_days=7)
    conn_uri = pg_warehouse_url.replace("postgresql+psycopg://", "postgresql://")
    server = ApiServer(tmp_path / "airflow_home", {"AIRFLOW_CONN_CITECHECK_WAREHOUSE": conn_uri,
                                                   "CITECHECK_WAREHOUSE_URL": "sqlite:////nonexistent/no.sqlite"})
    server.start()
    try:
        page_url = f"{server.base_url}/citecheck/report/{day.isoformat()}"
        # refused without a valid session or token
        assert _get(page_url)[0] == 401
        assert _get(f"{server.base_url}/citecheck/report/")[0] == 401
        assert _get(page_url, {"Authorization": "Bearer not-a-jwt"})[0] in (401, 403)
        assert _get(page_url, {"Cookie": "_token=forged"})[0] in (401, 403)
        # authenticated but not authorized: Airflow's auth manager decides
        assert _get(page_url, {"Authorization": f"Bearer {server.token('nobody')}"})[0] == 403
        # served with Airflow's own token, from the warehouse of the Airflow connection
        token = server.token("viewer")
        status, body, headers = _get(page_url, {"Authorization": f"Bearer {token}"})
        assert status == 200 and f'<span id="report-day">{day.isoformat()}</span>' in body
        assert "default-src 'none'" in headers["content-security-policy"]
        assert headers["cache-control"] == "no-store"
        status, body, _ = _get(f"{server.base_url}/citecheck/report/", {"Authorization": f"Bearer {token}"})
        assert status == 200 and body.index(day.isoformat()) < body.index(DAYS[0].isoformat())
        status, body, _ = _get(f"{server.base_url}/citecheck/report/latest", {"Authorization": f"Bearer {token}"})
        assert status == 200 and f'<span id="report-day">{day.isoformat()}</span>' in body
        assert _get(f"{server.base_url}/citecheck/report/2026-01-01", {"Authorization": f"Bearer {token}"})[0] == 404
        assert _get(f"{server.base_url}/citecheck/report/not-a-day", {"Authorization": f"Bearer {token}"})[0] == 422
        # the navigation entry is registered with the UI
        status, body, _ = _get(f"{server.base_url}/api/v2/plugins", {"Authorization": f"Bearer {token}"})
        views = [v for p in json.loads(body)["plugins"] for v in p["external_views"]]
        assert {"name": "Citation report", "href": "citecheck/report/", "destination": "nav"}.items() <= \
            next(v for v in views if v["name"] == "Citation report").items()

        cookie = [{"name": "_token", "value": token, "url": server.base_url}]
        with sync_playwright() as playwright:
            browser = launch(playwright)
            try:
                check = open_report_page(browser, page_url, artifacts_dir() / "report-plugin.png", cookies=cookie)
                assert check.chart_svgs >= 2
                assert check.console_errors == [] and check.outside_requests == []
                assert all(u.startswith(server.base_url) or u.startswith("data:") for u in check.requests)
                _assert_matches_warehouse(check, engine, day)
                _open_from_the_airflow_navigation(browser, server.base_url, cookie, day)
            finally:
                browser.close()
    finally:
        server.stop()
    assert server.process.poll() is not None


def _open_from_the_airflow_navigation(browser, base_url: str, cookie: list[dict], day: dt.date) -> None:
    """The Airflow UI shows the "Citation report" link; it opens the report list in the UI, and the
    list links to the day's report."""
    from helpers.browser import PageCheck

    check = PageCheck(base_url)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        context.add_cookies(cookie)
        page = context.new_page()
        watch(context, page, check)
        page.goto(f"{base_url}/", wait_until="load")
        link = page.get_by_role("link", name="Citation report")
        link.wait_for(timeout=60_000)
        link.click()
        page.wait_for_url("**/plugin/citation-report", timeout=60_000)
        frame = page.frame_locator("iframe").first
        frame.get_by_role("link", name=day.isoformat()).click(timeout=60_000)
        frame.locator("#chart-trends svg .mark-line path").first.wait_for(state="attached", timeout=60_000)
        page.screenshot(path=str(artifacts_dir() / "report-in-airflow.png"))
    finally:
        context.close()
    assert check.outside_requests == [], check.outside_requests
