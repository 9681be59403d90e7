"""`citecheck bi superset` end to end: the generated bundle imports into a real Superset (its own venv,
SQLite metadata DB, gunicorn on 127.0.0.1) over a Postgres warehouse that `citecheck backfill` filled.
After each import path (`superset import-directory`, as the compose profile runs it, and the ZIP import
API) every chart returns rows through its saved query context and the recall trend equals the
warehouse's; the dashboard imported the compose way opens in real Chromium with every chart drawn and
no console error (screenshot to test-artifacts/; CITECHECK_UPDATE_DOCS_SCREENSHOT=1 updates docs/)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from citecheck.bi import superset as B
from helpers.backfilled import backfill_sample
from helpers.superset_server import Superset, running_superset

REPO = Path(__file__).resolve().parents[2]
TELEMETRY_HOST = "apachesuperset.gateway.scarf.sh"
EMPTY_GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


class Api:
    """Superset's REST API with a JWT from /api/v1/security/login."""

    def __init__(self, server: Superset) -> None:
        self.base = server.url
        self.token = self.call("POST", "/api/v1/security/login", {"username": server.username,
                                                                   "password": server.password,
                                                                   "provider": "db", "refresh": True})["access_token"]

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
             content_type: str = "application/json") -> Any:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        if getattr(self, "token", None):
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            pytest.fail(f"{method} {path}: HTTP {error.code}: {error.read()[:3000]!r}")

    def try_call(self, method: str, path: str) -> tuple[int, Any]:
        """(status, parsed body) without failing on an HTTP error."""
        request = urllib.request.Request(self.base + path, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, error.read()[:3000]

    def import_zip(self, payload: bytes) -> Any:
        boundary = uuid.uuid4().hex
        parts = [f"--{boundary}\r\nContent-Disposition: form-data; name=\"formData\"; filename=\"bundle.zip\"\r\n"
                 "Content-Type: application/zip\r\n\r\n".encode() + payload + b"\r\n",
                 f"--{boundary}\r\nContent-Disposition: form-data; name=\"overwrite\"\r\n\r\ntrue\r\n".encode(),
                 f"--{boundary}--\r\n".encode()]
        return self.call("POST", "/api/v1/dashboard/import/", raw=b"".join(parts),
                         content_type=f"multipart/form-data; boundary={boundary}")


def test_the_bundle_is_built_from_the_metric_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    from citecheck.core.metrics import HEADLINE_METRICS

    monkeypatch.delenv("CITECHECK_WAREHOUSE_SCHEMA", raising=False)
    files = B.bundle("postgresql+psycopg://bi@db.example.invalid/warehouse")
    assert files["metadata.yaml"]["type"] == "Dashboard"
    assert files["databases/citecheck_warehouse.yaml"]["sqlalchemy_uri"].startswith("postgresql+psycopg2://bi@")
    wide = files["datasets/citecheck_warehouse/daily_metrics_wide.yaml"]
    assert {c["column_name"] for c in wide["columns"]} >= set(HEADLINE_METRICS) | {"citation_recall_ci_low"}
    charts = [v for k, v in files.items() if k.startswith("charts/")]
    titles = {c["slice_name"] for c in charts}
    assert {f"{m} with its 95% interval" for m in B.interval_metrics()} <= titles
    assert "citation_recall with its 95% interval" in titles and "citation_recall by slice" in titles
    positioned = {v["meta"]["uuid"] for k, v in files["dashboards/citecheck.yaml"]["position"].items()
                  if k.startswith("CHART-")}
    assert positioned == {c["uuid"] for c in charts}
    assert all(json.loads(c["query_context"])["queries"] for c in charts)
    # `superset import-directory` stores each chart's query context as written: its dataset is named
    # by UUID (which Superset resolves), never by an id only the REST importer would rewrite
    datasets = {v["uuid"]: v for k, v in files.items() if k.startswith("datasets/")}
    for chart in charts:
        assert json.loads(chart["query_context"])["datasource"] == {"id": chart["dataset_uuid"], "type": "table"}
        assert chart["dataset_uuid"] in datasets
    # and it replaces an empty schema with its examples database's: every dataset names one
    assert {d["schema"] for d in datasets.values()} == {"public"}


def test_the_claim_charts_come_from_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A claims mode's metrics are on the dashboard: each claim column of the wide view (next to its
    sentence-level headline metric where it has one) and every claim rate of `daily_metrics`; every
    query names only metrics and columns its dataset has."""
    from citecheck.core.metrics import BY_NAME, CLAIM_METRICS, WIDE_CLAIM_METRICS

    monkeypatch.delenv("CITECHECK_WAREHOUSE_SCHEMA", raising=False)
    files = B.bundle("postgresql://bi@db.example.invalid/warehouse")
    charts = {c["slice_name"]: c for k, c in files.items() if k.startswith("charts/")}
    datasets = {v["uuid"]: v for k, v in files.items() if k.startswith("datasets/")}
    assert {"claim_recall next to citation_recall", "claim_precision next to citation_precision",
            "partially_supported_rate per day", "claims_per_sentence per day", "Claim rates per day"} <= set(charts)
    drawn: set[str] = set()
    for metric in WIDE_CLAIM_METRICS:
        chart = charts[B.claim_chart_title(metric)]
        context = json.loads(chart["query_context"])
        query, dataset = context["queries"][0], datasets[context["datasource"]["id"]]
        assert dataset["table_name"] == "daily_metrics_wide" and metric in query["metrics"]
        assert set(query["metrics"]) <= {m["metric_name"] for m in dataset["metrics"]}
        assert chart["params"]["y_axis_format"] == BY_NAME[metric].bi_format
        drawn |= set(query["metrics"])
    assert drawn >= set(WIDE_CLAIM_METRICS) | {"citation_recall", "citation_precision"}
    rates = charts["Claim rates per day"]
    context = json.loads(rates["query_context"])
    assert datasets[context["datasource"]["id"]]["table_name"] == "daily_metrics"
    query = context["queries"][0]
    assert query["metrics"] == ["ratio_of_sums"] and query["series_columns"] == ["metric"]
    named = next(f["val"] for f in context["queries"][0]["filters"] if f["col"] == "metric")
    assert set(named) == {m for m in CLAIM_METRICS if BY_NAME[m].rate} and "claims_per_sentence" not in named
    assert {"slice_name", "averaging"} <= {f["col"] for f in context["queries"][0]["filters"]}
    positioned = {v["meta"]["uuid"] for k, v in files["dashboards/citecheck.yaml"]["position"].items()
                  if k.startswith("CHART-")}
    assert {c["uuid"] for t, c in charts.items() if "claim" in t.lower()} <= positioned


def test_the_datasets_schema_is_explicit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CITECHECK_WAREHOUSE_SCHEMA", raising=False)
    assert B.dataset_schema("postgresql+psycopg://bi@db.example.invalid/warehouse") == "public"
    assert B.dataset_schema("sqlite:////tmp/warehouse.sqlite") == "main"
    monkeypatch.setenv("CITECHECK_WAREHOUSE_SCHEMA", "citecheck_out")
    assert B.dataset_schema("postgresql://bi@db.example.invalid/warehouse") == "citecheck_out"
    assert B.dataset_schema("postgresql://bi@db.example.invalid/warehouse", "reporting") == "reporting"
    with pytest.raises(ValueError, match="plain SQL identifier"):
        B.dataset_schema("postgresql://bi@db.example.invalid/warehouse", "x; DROP TABLE y")


def test_the_cli_writes_the_bundle_folders(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    done = subprocess.run([sys.executable, "-m", "citecheck", "bi", "superset", "--warehouse-url",
                           "postgresql://bi@127.0.0.1/warehouse", "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert {p.name for p in out.iterdir()} == {"metadata.yaml", "databases", "datasets", "charts", "dashboards"}


def test_the_bundle_holds_no_password(tmp_path: Path) -> None:
    """The warehouse URL's password is written nowhere in the bundle (the database's URL keeps its
    user and host); the CLI says where Superset reads it from instead."""
    password = "s3cret-Pa55word"
    out = tmp_path / "bundle"
    done = subprocess.run([sys.executable, "-m", "citecheck", "bi", "superset", "--warehouse-url",
                           f"postgresql+psycopg://citecheck_bi:{password}@127.0.0.1:5432/warehouse", "--out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    files = list(out.rglob("*.yaml"))
    assert files and not [p for p in files if password in p.read_text(encoding="utf-8")]
    assert password not in done.stdout + done.stderr
    database = (out / "databases" / "citecheck_warehouse.yaml").read_text(encoding="utf-8")
    assert "sqlalchemy_uri: postgresql+psycopg2://citecheck_bi@127.0.0.1:5432/warehouse" in database
    assert f"Superset reads the warehouse password from {B.PASSWORD_ENV}" in done.stdout
    assert B.PASSWORD_ENV == "CITECHECK_WAREHOUSE_PASSWORD"
    # a SQLite warehouse has no password to speak of
    assert B.password_note("sqlite:////tmp/warehouse.sqlite") is None


def test_the_shipped_superset_config_reads_the_password_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """superset/superset_config.py (the compose stack's, and the test server's) hands Superset the
    password through SQLALCHEMY_CUSTOM_PASSWORD_STORE, from CITECHECK_WAREHOUSE_PASSWORD."""
    import runpy

    import sqlalchemy as sa

    monkeypatch.setenv("SUPERSET_SECRET_KEY", "x" * 32)
    config = runpy.run_path(str(REPO / "superset" / "superset_config.py"))
    store = config["SQLALCHEMY_CUSTOM_PASSWORD_STORE"]
    url = sa.engine.make_url(B.superset_uri("postgresql://citecheck_bi:old@127.0.0.1/warehouse"))
    monkeypatch.setenv(B.PASSWORD_ENV, "from-the-environment")
    assert store(url) == "from-the-environment"
    monkeypatch.delenv(B.PASSWORD_ENV)
    assert store(url) is None  # libpq's PGPASSWORD or ~/.pgpass then


@pytest.mark.slow
def test_superset_serves_the_dashboard_after_each_import_path(pg_warehouse_url: str, tmp_path: Path) -> None:
    # the last 5 of the 17 days in the rule claims mode: the claim charts have their points there
    # and nulls (sentence mode) before
    backfill_sample(pg_warehouse_url, tmp_path / "job", "2026-11-15", 17, turns_per_day=150, claims_days=5)
    bundle_dir = tmp_path / "bundle"
    # Superset connects as a role with a password, which the bundle does not hold: the server gets it
    # in CITECHECK_WAREHOUSE_PASSWORD, as the compose stack's superset service does
    with _reader_with_password(pg_warehouse_url) as (reader_url, password):
        # written as the compose profile's superset-bundle service writes it: the CLI, no --schema
        done = subprocess.run([sys.executable, "-m", "citecheck", "bi", "superset", "--warehouse-url", reader_url,
                               "--out", str(bundle_dir)], capture_output=True, text=True, env=_without_schema_env())
        assert done.returncode == 0, done.stderr
        assert not [p for p in bundle_dir.rglob("*.yaml") if password in p.read_text(encoding="utf-8")]
        _serve_and_check(bundle_dir, pg_warehouse_url, tmp_path, {B.PASSWORD_ENV: password})


def _serve_and_check(bundle_dir: Path, pg_warehouse_url: str, tmp_path: Path, env: dict[str, str]) -> None:
    titles = {c["slice_name"] for k, c in B.bundle(pg_warehouse_url).items() if k.startswith("charts/")}
    with running_superset(tmp_path / "superset", env) as server:
        api = Api(server)
        # 1. the compose way (superset/start.sh, docs/superset.md): `superset import-directory` into a
        #    fresh Superset, then the dashboard in Chromium
        _import_directory(server, bundle_dir)
        _assert_rows_match_the_warehouse(_chart_rows(api, titles, "import-directory"), pg_warehouse_url)
        dashboard = api.call("GET", f"/api/v1/dashboard/{B.DASHBOARD_SLUG}")["result"]
        _open_in_chromium(server, dashboard["url"], len(titles))

        # 2. the REST import of the zipped bundle into a Superset that has none of it
        _delete_imported(api)
        assert api.call("GET", "/api/v1/chart/?q=(page_size:100)")["count"] == 0
        api.import_zip(B.zip_bundle(bundle_dir))
        _assert_rows_match_the_warehouse(_chart_rows(api, titles, "the ZIP import API"), pg_warehouse_url)

        # 3. the compose restart after a regenerated bundle: import-directory --overwrite over what is
        #    there (the UUIDs come from names, so nothing is duplicated)
        _import_directory(server, bundle_dir)
        _chart_rows(api, titles, "import-directory over the ZIP import")


@contextlib.contextmanager
def _reader_with_password(warehouse_url: str) -> Iterator[tuple[str, str]]:
    """A login role with a password that reads the warehouse (127.0.0.1 only), dropped afterwards:
    (its URL, with the password in it as an operator would pass it, and the password)."""
    role, password = f"citecheck_ss_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    admin = sa.create_engine(warehouse_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        conn.exec_driver_sql(f"GRANT pg_read_all_data TO {role}")
    url = sa.engine.make_url(warehouse_url).set(username=role, password=password)
    try:
        yield url.render_as_string(hide_password=False), password
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'")
            conn.exec_driver_sql(f"DROP ROLE IF EXISTS {role}")
        admin.dispose()


def _without_schema_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "CITECHECK_WAREHOUSE_SCHEMA"}


def _import_directory(server: Superset, bundle_dir: Path) -> None:
    done = server.cli("import-directory", str(bundle_dir), "--overwrite")
    assert "error occurred" not in (done.stdout + done.stderr).lower(), done.stderr[-3000:]


def _chart_rows(api: Api, titles: set[str], path: str) -> dict[str, list[dict[str, Any]]]:
    """Every chart's rows through its saved query context (`GET /api/v1/chart/<id>/data/`), as the
    dashboard, alerts and reports read them; fails naming every chart that answers no rows."""
    charts = api.call("GET", "/api/v1/chart/?q=(page_size:100)")["result"]
    assert sorted(c["slice_name"] for c in charts) == sorted(titles), f"charts after {path}"
    rows: dict[str, list[dict[str, Any]]] = {}
    failed: dict[str, str] = {}
    for chart in charts:
        status, body = api.try_call("GET", f"/api/v1/chart/{chart['id']}/data/")
        if status != 200:
            failed[chart["slice_name"]] = f"HTTP {status}: {str(body)[:300]}"
        elif not body["result"][0]["data"]:
            failed[chart["slice_name"]] = "no rows"
        else:
            rows[chart["slice_name"]] = body["result"][0]["data"]
    print(f"after {path}: {len(rows)} of {len(charts)} charts answer rows")  # shown with pytest -s
    assert not failed, f"after {path}, {len(failed)} of {len(charts)} charts answer no rows: {failed}"
    return rows


def _assert_rows_match_the_warehouse(rows: dict[str, list[dict[str, Any]]], warehouse_url: str) -> None:
    engine = sa.create_engine(warehouse_url)
    with engine.connect() as conn:
        warehouse = {str(r.day): r.citation_recall for r in conn.execute(
            sa.text("SELECT day, citation_recall FROM daily_metrics_wide"))}
        overall = conn.execute(sa.text(
            "SELECT SUM(numerator) / SUM(denominator) FROM daily_metrics WHERE metric = 'citation_recall' "
            "AND averaging = 'micro' AND slice_name = 'all'")).scalar_one()
    engine.dispose()
    trend = rows["citation_recall with its 95% interval"]
    assert len(trend) == len(warehouse) == 17
    for row in trend:
        day = _iso_day(row["day"])
        assert row["citation_recall"] == pytest.approx(warehouse[day])
        assert row["citation_recall_ci_low"] <= row["citation_recall"] <= row["citation_recall_ci_high"]
    by_slice = {(r["slice_name"], r["slice_value"]): r["ratio_of_sums"] for r in rows["citation_recall by slice"]}
    assert by_slice[("all", "all")] == pytest.approx(overall)
    # the claims: points on the claims-mode days only, equal to the warehouse's
    engine = sa.create_engine(warehouse_url)
    with engine.connect() as conn:
        claim_recall = {str(r.day): r.claim_recall for r in conn.execute(
            sa.text("SELECT day, claim_recall FROM daily_metrics_wide WHERE claim_recall IS NOT NULL"))}
    engine.dispose()
    paired = rows[B.claim_chart_title("claim_recall")]
    assert len(paired) == 17 and len(claim_recall) == 5
    assert {_iso_day(r["day"]): r["claim_recall"] for r in paired if r["claim_recall"] is not None} == pytest.approx(
        claim_recall)
    assert {r["metric"] for r in rows["Claim rates per day"]} >= {"claim_recall", "partially_supported_rate"}


def _delete_imported(api: Api) -> None:
    """Delete the dashboard, charts, datasets and the warehouse database (children first)."""
    for kind in ("dashboard", "chart", "dataset"):
        ids = [item["id"] for item in api.call("GET", f"/api/v1/{kind}/?q=(page_size:100)")["result"]]
        if ids:
            api.call("DELETE", f"/api/v1/{kind}/?q=!({','.join(map(str, ids))})")
    for database in api.call("GET", "/api/v1/database/?q=(page_size:100)")["result"]:
        if database["database_name"] == B.DATABASE_NAME:
            api.call("DELETE", f"/api/v1/database/{database['id']}")


def _iso_day(value: Any) -> str:
    import datetime as dt

    if isinstance(value, (int, float)):  # epoch milliseconds
        return dt.datetime.fromtimestamp(value / 1000, dt.UTC).date().isoformat()
    return str(value)[:10]


DRAWN_OR_FAILED = """n => {
    const holders = [...document.querySelectorAll('.dashboard-component-chart-holder')];
    return holders.length >= n && holders.every(h => h.querySelector('canvas, table tbody tr')
        || /Not found|No results|error/i.test(h.innerText));
}"""
CHART_HOLDERS = """() => [...document.querySelectorAll('.dashboard-component-chart-holder')].map(h => ({
    canvases: h.querySelectorAll('canvas').length, table_rows: h.querySelectorAll('table tbody tr').length,
    text: h.innerText.slice(0, 300)}))"""


def _open_in_chromium(server: Superset, path: str, chart_count: int) -> None:
    """The dashboard in Chromium: every chart drawn (a canvas, or a table with rows), none saying
    "Not found", "No results" or an error, no console error, no request leaving 127.0.0.1. The
    screenshot goes to test-artifacts/; CITECHECK_UPDATE_DOCS_SCREENSHOT=1 also copies it over the
    committed docs/superset_dashboard.png (a deliberate update, never a side effect of a test run)."""
    from playwright.sync_api import sync_playwright

    from helpers.browser import PageCheck, artifacts_dir, launch, watch

    check = PageCheck(server.url + path)
    shot = artifacts_dir() / "superset_dashboard.png"
    with sync_playwright() as p:
        browser = launch(p)
        context = browser.new_context(viewport={"width": 1600, "height": 1200})
        page = context.new_page()
        watch(context, page, check)
        # Superset 6.1's navbar always embeds a telemetry pixel (an <img> on scarf.sh): answered here
        # with a local empty GIF, so nothing leaves the machine and no load error is logged for it.
        pixel: list[str] = []
        context.route(f"https://{TELEMETRY_HOST}/**",
                      lambda route: (pixel.append(route.request.url), route.fulfill(
                          status=200, content_type="image/gif", body=EMPTY_GIF)))
        # readiness is what the page shows, not network silence (Superset's UI keeps polling)
        page.goto(f"{server.url}/login/", wait_until="domcontentloaded", timeout=180_000)
        page.wait_for_selector("#username", timeout=180_000)
        page.fill("#username", server.username)
        page.fill("#password", server.password)
        page.keyboard.press("Enter")
        page.wait_for_url(lambda url: "/login" not in url, timeout=180_000)
        page.goto(check.url, wait_until="domcontentloaded", timeout=300_000)
        page.wait_for_function(DRAWN_OR_FAILED, arg=chart_count, timeout=300_000)
        page.wait_for_load_state("load", timeout=300_000)
        holders = page.evaluate(CHART_HOLDERS)
        page.screenshot(path=str(shot), full_page=True)
        context.close()
        browser.close()
    if os.environ.get("CITECHECK_UPDATE_DOCS_SCREENSHOT") == "1":
        shutil.copy(shot, REPO / "docs" / "superset_dashboard.png")
    assert len(holders) == chart_count, holders
    undrawn = [h["text"] for h in holders if not (h["canvases"] or h["table_rows"])
               or re.search(r"Not found|No results", h["text"])]
    assert not undrawn, f"charts not drawn on the dashboard (screenshot {shot}): {undrawn}"
    assert check.console_errors == [], f"console errors: {check.console_errors} (outside: {check.outside_requests})"
    assert check.outside_requests == [], f"the dashboard asked for hosts other than 127.0.0.1: {check.outside_requests}"
