"""Airflow 3 plugin: the daily citation report inside Airflow.

A FastAPI app mounted on the api-server at `/citecheck` serves the reports the DAG's `report` task
stored in the warehouse (`reports` table): `/citecheck/report/` lists them,
`/citecheck/report/latest` redirects to the newest, `/citecheck/report/YYYY-MM-DD` is one day (the
link `[monitor] report_url` puts in alert e-mails by default). A navigation entry "Citation
report" opens the list inside the Airflow UI.

The pages show answer and passage text, so every page needs Airflow's own authentication (the
UI's session cookie or a bearer JWT from `/auth/token`) and the auth manager's permission to read
the runs of the `citation_metrics_daily` DAG; anything else is refused (401/403).

The warehouse comes from the Airflow connection `citecheck_warehouse` (id set by
`CITECHECK_WAREHOUSE_CONN_ID`), else `CITECHECK_WAREHOUSE_URL`, as in the DAG.
"""

from __future__ import annotations

import datetime as dt
import functools
import os

from airflow.api_fastapi.core_api.security import GetUserDep
from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends, FastAPI, HTTPException, status
from fastapi.responses import HTMLResponse, RedirectResponse

WAREHOUSE_CONN_ID = os.environ.get("CITECHECK_WAREHOUSE_CONN_ID", "citecheck_warehouse")
REPORT_DAG_ID = "citation_metrics_daily"
URL_PREFIX = "/citecheck"


def require_report_reader(user: GetUserDep) -> None:
    """Airflow's authorization: the user may read the runs of the DAG that renders the report."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails

    allowed = get_auth_manager().is_authorized_dag(method="GET", access_entity=DagAccessEntity.RUN,
                                                   details=DagDetails(id=REPORT_DAG_ID), user=user)
    if not allowed:
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"not allowed to read the runs of {REPORT_DAG_ID}")


def warehouse_url() -> str | None:
    """The URL of the Airflow connection when one is defined, else None (CITECHECK_WAREHOUSE_URL)."""
    from airflow.exceptions import AirflowNotFoundException
    from airflow.models.connection import Connection

    try:
        return Connection.get_connection_from_secrets(WAREHOUSE_CONN_ID).get_uri()
    except AirflowNotFoundException:
        return None


@functools.lru_cache(maxsize=4)
def _engine(url: str | None):
    from citecheck.warehouse import engine_for

    return engine_for(url=url)


def _page(html: str) -> HTMLResponse:
    from citecheck.report.render import CONTENT_SECURITY_POLICY

    return HTMLResponse(html, headers={
        "Content-Security-Policy": f"{CONTENT_SECURITY_POLICY}; frame-ancestors 'self'",
        "Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"})


app = FastAPI(title="citecheck daily report", docs_url=None, redoc_url=None, openapi_url=None,
              dependencies=[Depends(require_report_reader)])


@app.get("/report/", response_class=HTMLResponse)
def report_list() -> HTMLResponse:
    from citecheck.report.render import render_index
    from citecheck.warehouse.read_model import report_index

    return _page(render_index(report_index(_engine(warehouse_url()))))


@app.get("/report/latest")
def latest_report() -> RedirectResponse:
    from citecheck.warehouse.read_model import report_index

    rows = report_index(_engine(warehouse_url()), limit=1)
    if not rows:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no report has been stored yet")
    return RedirectResponse(rows[0]["day"].isoformat(), status_code=status.HTTP_307_TEMPORARY_REDIRECT)


@app.get("/report/{day}", response_class=HTMLResponse)
def report_page(day: dt.date) -> HTMLResponse:
    from citecheck.warehouse.read_model import report_html

    html = report_html(_engine(warehouse_url()), day)
    if html is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no report stored for {day.isoformat()}")
    return _page(html)


class CitecheckReportPlugin(AirflowPlugin):
    # Airflow's plugin interface is these class attributes (lists it may edit in place).
    name = "citecheck_report"
    fastapi_apps = [{"app": app, "url_prefix": URL_PREFIX, "name": "citecheck daily report"}]  # noqa: RUF012
    external_views = [{  # noqa: RUF012
        "name": "Citation report",
        "href": URL_PREFIX.lstrip("/") + "/report/",  # relative: resolved against the UI's base URL
        "destination": "nav",
        "url_route": "citation-report",
        "nav_top_level": True,
    }]
