"""A Superset import bundle (the v1 export format: `metadata.yaml`, `databases/`, `datasets/`,
`charts/`, `dashboards/`) generated from the project's own definitions: the headline list and which
metrics are judged (`core.metrics`), the published tables and the wide view (`bi.catalog`).

`citecheck bi superset --warehouse-url URL --out DIR`, then `superset import-directory DIR` (or zip
it, `zip_bundle`, for `superset import-dashboards -p FILE` or the REST import). UUIDs are derived from
names, so re-importing a regenerated bundle with overwrite updates the same objects.

The bundle never holds the warehouse password: the database's URL is written without it, and Superset
reads it when it connects from `PASSWORD_ENV`, through the `SQLALCHEMY_CUSTOM_PASSWORD_STORE` of
`superset/superset_config.py` (Superset's CLI importers, `import-directory` and `import-dashboards`,
take no passwords; with no store, libpq's PGPASSWORD or ~/.pgpass of the Superset process serves).

Every chart carries its saved query context, so `/api/v1/chart/{id}/data/` answers for it. Rates over
several days use the `ratio_of_sums` metric (Σ numerator / Σ denominator), never a mean of daily
ratios; the 95% intervals are the precomputed columns of the day (docs/metrics.md).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import uuid
import zipfile
from pathlib import Path
from typing import Any

from citecheck.bi.catalog import published_columns
from citecheck.core.metrics import (
    BY_NAME,
    CLAIM_METRICS,
    HEADLINE_METRICS,
    JUDGED_METRICS,
    METRIC_NAMES,
    METRICS,
    WIDE_CLAIM_METRICS,
)
from citecheck.core.vocabulary import NOT_CHECK_WORTHY, NOT_SELECTED
from citecheck.warehouse import tables as T

VERSION = "1.0.0"
NAMESPACE = uuid.UUID("5b0c7f4e-2f7d-4a52-9d55-6b1f3c1e7a24")
DATABASE_NAME = "citecheck warehouse"
PASSWORD_ENV = "CITECHECK_WAREHOUSE_PASSWORD"  # where Superset's password store reads the warehouse password
DASHBOARD_TITLE = "citecheck: citation quality"
DASHBOARD_SLUG = "citecheck"
NO_TIME_FILTER = "No filter"
DEFAULT_SCHEMAS = {"postgresql": "public", "sqlite": "main"}  # where a connection's unqualified names go
OVERALL = (("slice_name", "==", "all"), ("averaging", "==", "micro"))
# Datasets the dashboard reads (a subset of grants.BI_READABLE).
DATASETS = ("daily_metrics_wide", "daily_metrics", "sentence_verdicts", "alerts", "recite_suggestions",
            "criteria_results", "answer_decisions")
ALERT_COLUMNS = ("day", "metric", "slice_name", "slice_value", "averaging", "baseline", "value", "direction", "rule")
# no answer or passage text: the read-only BI role Superset connects as is refused those columns
# unless `grant-bi --with-texts` (`warehouse.grants.BI_TEXT_COLUMNS`)
# The day's decision from its `criteria_results` rows (`core.criteria.overall_decision` in SQL: pass
# only when every criterion passes, any fail is fail, else no_data) and its criteria by outcome.
_FAILS = "SUM(CASE WHEN decision = 'fail' THEN 1 ELSE 0 END)"
_NOT_PASS = "SUM(CASE WHEN decision = 'pass' THEN 0 ELSE 1 END)"
DECISION_METRICS = {
    "decision": (f"CASE WHEN {_FAILS} > 0 THEN 'fail' WHEN {_NOT_PASS} > 0 THEN 'no_data' ELSE 'pass' END",
                 "the day's decision: pass only when every criterion passes"),
    "criteria_failing": (_FAILS, "criteria the day failed"),
    "criteria_no_data": ("SUM(CASE WHEN decision = 'no_data' THEN 1 ELSE 0 END)", "criteria without data"),
    "criteria_passing": ("SUM(CASE WHEN decision = 'pass' THEN 1 ELSE 0 END)", "criteria the day passed"),
}
CRITERIA_COLUMNS = ("day", "decision", "criterion", "metric", "scope", "value", "bound_kind", "bound", "on_rule",
                    "answers", "failing_answers")
SUGGESTION_COLUMNS = ("day", "turn_id", "sentence_index", "kind", "cited_labels", "suggested_labels",
                      "source", "auto_apply", "caution")


def _uuid(kind: str, name: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{kind}:{name}"))


def superset_uri(warehouse_url: str) -> str:
    """The warehouse URL with the driver Superset's venv has (psycopg2 for Postgres), without its
    password (Superset reads that from `PASSWORD_ENV` when it connects)."""
    import sqlalchemy as sa

    given = sa.engine.make_url(warehouse_url)
    url = sa.engine.URL.create(  # `URL.set(password=None)` would keep the password
        "postgresql+psycopg2" if given.drivername.startswith("postgres") else given.drivername,
        username=given.username, host=given.host, port=given.port, database=given.database, query=given.query)
    return url.render_as_string(hide_password=False)


def password_note(warehouse_url: str) -> str | None:
    """What the operator must do about the password the bundle leaves out; None for SQLite."""
    import sqlalchemy as sa

    if sa.engine.make_url(warehouse_url).get_backend_name() == "sqlite":
        return None
    return (f"the bundle holds no password: Superset reads the warehouse password from {PASSWORD_ENV} in its "
            "environment (SQLALCHEMY_CUSTOM_PASSWORD_STORE of superset/superset_config.py; docs/superset.md)")


def dataset_schema(warehouse_url: str, schema: str | None = None) -> str | None:
    """The schema the datasets name: `schema`, else the warehouse's configured output schema
    (`CITECHECK_WAREHOUSE_SCHEMA`), else the dialect's default (`public`, SQLite's `main`).

    Never left empty where a default is known: `superset import-directory` (the examples importer)
    replaces an empty schema with the default schema of Superset's *examples* database (`main` on
    SQLite metadata), and every chart would then query a schema the warehouse does not have."""
    import sqlalchemy as sa

    from citecheck.warehouse.naming import identifier, warehouse_names

    if schema is not None:
        return identifier(schema, "schema")
    configured = warehouse_names().schema
    if configured is not None:
        return configured
    return DEFAULT_SCHEMAS.get(sa.engine.make_url(warehouse_url).get_backend_name())


def _database(warehouse_url: str) -> dict[str, Any]:
    return {
        "database_name": DATABASE_NAME, "sqlalchemy_uri": superset_uri(warehouse_url), "cache_timeout": None,
        "expose_in_sqllab": True, "allow_run_async": False, "allow_ctas": False, "allow_cvas": False,
        "allow_dml": False, "allow_file_upload": False, "extra": {"allows_virtual_table_explore": True},
        "uuid": _uuid("database", DATABASE_NAME), "version": VERSION,
    }


def _dataset_metrics(name: str) -> list[dict[str, Any]]:
    metrics = [("count", "COUNT(*)", "rows")]
    if name == "daily_metrics":
        metrics += [("ratio_of_sums", "SUM(numerator) / NULLIF(SUM(denominator), 0)",
                     "the rate over the selected days and rows: sum of numerators / sum of denominators"),
                    ("numerator_sum", "SUM(numerator)", "sum of the numerator counts")]
    if name == "criteria_results":
        metrics += [(m, expr, text) for m, (expr, text) in DECISION_METRICS.items()]
    if name == "daily_metrics_wide":
        metrics += [(c.name, f"MAX({c.name})", c.description) for c in published_columns(name)
                    if c.sql_type == "FLOAT"]
    return [{"metric_name": m, "verbose_name": m, "metric_type": None, "expression": expr, "description": text,
             "d3format": d3_format(m), "extra": {}, "warning_text": None} for m, expr, text in metrics]


def d3_format(column: str) -> str | None:
    """The registry's BI format of a wide-view metric column (its interval columns too); None for others."""
    entry = BY_NAME.get(column.removesuffix("_ci_low").removesuffix("_ci_high"))
    return None if entry is None else entry.bi_format


def _dataset(name: str, schema: str | None) -> dict[str, Any]:
    columns = [{
        "column_name": c.name, "verbose_name": None, "is_dttm": c.sql_type in ("DATE", "TIMESTAMP WITHOUT TIME ZONE",
                                                                            "TIMESTAMP WITH TIME ZONE"),
        "is_active": True, "type": c.sql_type, "groupby": True, "filterable": True, "expression": None,
        "description": c.description or None, "python_date_format": None, "extra": {},
    } for c in published_columns(name)]
    table = T.metadata.tables.get(name)
    return {
        "table_name": name, "main_dttm_col": "day", "description": (table.comment if table is not None else None)
        or f"published table {name} (docs/metrics.md)", "default_endpoint": None, "offset": 0,
        "cache_timeout": None, "schema": schema, "sql": None, "params": None, "template_params": None,
        "filter_select_enabled": True, "fetch_values_predicate": None, "extra": None,
        "uuid": _uuid("dataset", name), "metrics": _dataset_metrics(name), "columns": columns,
        "version": VERSION, "database_uuid": _uuid("database", DATABASE_NAME),
    }


def _filters(where: tuple[tuple[str, str, Any], ...]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(adhoc_filters of the form data, filters of the query) for the day range plus `where`."""
    adhoc = [{"clause": "WHERE", "expressionType": "SIMPLE", "subject": "day", "operator": "TEMPORAL_RANGE",
              "comparator": NO_TIME_FILTER}]
    query = [{"col": "day", "op": "TEMPORAL_RANGE", "val": NO_TIME_FILTER}]
    for col, op, val in where:
        adhoc.append({"clause": "WHERE", "expressionType": "SIMPLE", "subject": col, "operator": op,
                      "comparator": val})
        query.append({"col": col, "op": op, "val": val})
    return adhoc, query


def _chart(title: str, viz_type: str, dataset: str, form: dict[str, Any], query: dict[str, Any],
           where: tuple[tuple[str, str, Any], ...] = ()) -> dict[str, Any]:
    adhoc, filters = _filters(where)
    params = {"datasource": "0__table", "viz_type": viz_type, "adhoc_filters": adhoc, "row_limit": 10000,
              "time_range": NO_TIME_FILTER, "annotation_layers": [], "extra_form_data": {}, "dashboards": [], **form}
    queries = [{"filters": filters, "extras": {"having": "", "where": "", **query.pop("extras", {})},
                "applied_time_extras": {}, "row_limit": params["row_limit"], "annotation_layers": [],
                "series_limit": 0, "url_params": {}, "custom_params": {}, "custom_form_data": {}, **query}]
    # The saved query context names its dataset by UUID, which Superset (>= 4.1) resolves as well as an id:
    # the REST import rewrites it to the new id, but `superset import-directory` (the examples importer)
    # stores it as written, so a placeholder id would make /api/v1/chart/{id}/data/ answer 404.
    context = {"datasource": {"id": _uuid("dataset", dataset), "type": "table"}, "force": False,
               "queries": queries, "form_data": params, "result_format": "json", "result_type": "full"}
    return {"slice_name": title, "description": None, "certified_by": None, "certification_details": None,
            "viz_type": viz_type, "params": params, "query_context": json.dumps(context), "cache_timeout": None,
            "uuid": _uuid("chart", title), "version": VERSION, "dataset_uuid": _uuid("dataset", dataset)}


def _daily_series(title: str, dataset: str, metrics: list[Any], *, groupby: tuple[str, ...] = (),
                  where: tuple[tuple[str, str, Any], ...] = (), viz_type: str = "echarts_timeseries_line",
                  y_format: str = ".1%", stack: bool = False) -> dict[str, Any]:
    axis = {"timeGrain": "P1D", "columnType": "BASE_AXIS", "sqlExpression": "day", "label": "day",
            "expressionType": "SQL"}
    form = {"x_axis": "day", "time_grain_sqla": "P1D", "metrics": metrics, "groupby": list(groupby),
            "order_desc": True, "y_axis_format": y_format, "show_legend": True, "rich_tooltip": True,
            "truncate_metric": True, "x_axis_sort_asc": True, "comparison_type": None, "time_compare": None,
            "rolling_type": None, "stack": "Stack" if stack else None}
    query = {"columns": [axis, *groupby], "series_columns": list(groupby), "metrics": metrics,
             "orderby": [[metrics[0], False]], "order_desc": True, "extras": {"time_grain_sqla": "P1D"}}
    return _chart(title, viz_type, dataset, form, query, where)


def _table(title: str, dataset: str, columns: tuple[str, ...]) -> dict[str, Any]:
    form = {"query_mode": "raw", "all_columns": list(columns), "order_by_cols": ['["day", false]'],
            "server_pagination": False, "page_length": 20, "include_search": True}
    query = {"columns": list(columns), "metrics": None, "orderby": [["day", False]]}  # no metrics: raw rows
    chart = _chart(title, "table", dataset, form, query)
    chart["params"]["row_limit"] = 1000
    return chart


def interval_metrics() -> tuple[str, ...]:
    """The headline metrics with a 95% interval in the wide view."""
    return tuple(m for m in HEADLINE_METRICS if m in JUDGED_METRICS)


def sentence_counterpart(claim_metric: str) -> str | None:
    """The headline sentence-level metric a claim metric restates per claim (`claim_recall` ->
    `citation_recall`), when the wide view has it; None for one with no counterpart."""
    counterpart = "citation_" + claim_metric.removeprefix("claim_")
    return counterpart if claim_metric.startswith("claim_") and counterpart in HEADLINE_METRICS else None


def claim_chart_title(claim_metric: str) -> str:
    counterpart = sentence_counterpart(claim_metric)
    return f"{claim_metric} next to {counterpart}" if counterpart else f"{claim_metric} per day"


def claim_rates() -> tuple[str, ...]:
    """The claims mode's rates (registry order): what the "claim rates per day" chart draws."""
    return tuple(m for m in METRIC_NAMES if m in CLAIM_METRICS and BY_NAME[m].rate)


def claim_charts() -> list[dict[str, Any]]:
    """The claims mode's charts (SPEC 2.1), from the registry: each claim column of the wide view,
    next to its sentence-level headline metric where it has one, and every claim rate per day from
    `daily_metrics`. A day scored in sentence mode has nulls in those columns and no claim rows: its
    points are missing, the charts still draw."""
    out = []
    for metric in WIDE_CLAIM_METRICS:
        counterpart = sentence_counterpart(metric)
        out.append(_daily_series(claim_chart_title(metric), "daily_metrics_wide",
                                 [counterpart, metric] if counterpart else [metric],
                                 y_format=BY_NAME[metric].bi_format))
    out.append(_daily_series("Claim rates per day", "daily_metrics", ["ratio_of_sums"], groupby=("metric",),
                             where=(*OVERALL, ("metric", "IN", list(claim_rates())))))
    return out


def headline_axes() -> dict[str, tuple[str, ...]]:
    """The headline metrics by the unit of their axis (`Metric.axis_unit`, registry order): each
    unit is a chart of its own, so a count per 1,000 answers never shares the percent axis."""
    out: dict[str, list[str]] = {}
    for metric in HEADLINE_METRICS:
        out.setdefault(BY_NAME[metric].axis_unit, []).append(metric)
    return {unit: tuple(metrics) for unit, metrics in out.items()}


def headline_title(unit: str) -> str:
    return "Headline rates per day" if unit == "share" else f"Headline {unit}, per day"


def decision_charts() -> list[dict[str, Any]]:
    """The day's acceptance decision (`criteria_results`, SPEC 5.1): per day, the decision and how
    many criteria failed, had no data or passed; and every criterion's row, failing ones first."""
    per_day = _chart(
        "Decision of the day", "table", "criteria_results",
        {"query_mode": "aggregate", "groupby": ["day"], "metrics": list(DECISION_METRICS), "order_desc": True,
         "percent_metrics": [], "server_pagination": False},
        {"columns": ["day"], "metrics": list(DECISION_METRICS), "orderby": [["day", False]], "order_desc": True})
    criteria = _table("Acceptance criteria of each day (failing first)", "criteria_results", CRITERIA_COLUMNS)
    criteria["params"]["order_by_cols"] = ['["day", false]', '["decision", true]']
    json_context = json.loads(criteria["query_context"])
    json_context["queries"][0]["orderby"] = [["day", False], ["decision", True]]  # "fail" < "no_data" < "pass"
    criteria["query_context"] = json.dumps(json_context)
    return [per_day, criteria]


def charts() -> list[dict[str, Any]]:
    """Every chart of the dashboard, in layout order."""
    out = [_daily_series(headline_title(unit), "daily_metrics_wide", list(metrics),
                         y_format=BY_NAME[metrics[0]].bi_format) for unit, metrics in headline_axes().items()]
    out += decision_charts()
    out += [_daily_series(f"{metric} with its 95% interval", "daily_metrics_wide",
                          [metric, f"{metric}_ci_low", f"{metric}_ci_high"]) for metric in interval_metrics()]
    recall_by_slice = _chart(
        "citation_recall by slice", "table", "daily_metrics",
        {"query_mode": "aggregate", "groupby": ["slice_name", "slice_value"], "metrics": ["ratio_of_sums"],
         "order_desc": True, "percent_metrics": [], "server_pagination": False},
        {"columns": ["slice_name", "slice_value"], "metrics": ["ratio_of_sums"], "orderby": [["ratio_of_sums", False]],
         "order_desc": True},
        (("metric", "==", "citation_recall"), ("averaging", "==", "micro")))
    unknown_metrics = [m for m in METRICS if METRICS[m][0] in ("unknown_labels", "stale_labels") and METRICS[m][2] == 1]
    out += [
        recall_by_slice,
        _daily_series("Unknown (incl. pointer-problem) and stale labels per day", "daily_metrics", ["numerator_sum"],
                      groupby=("metric",), where=(*OVERALL, ("metric", "IN", unknown_metrics)),
                      viz_type="echarts_timeseries_bar", y_format=",d", stack=True),
        _daily_series("Verdict mix per day (judged check-worthy sentences)", "sentence_verdicts", ["count"],
                      groupby=("verdict",), where=(("verdict", "NOT IN", [NOT_CHECK_WORTHY, NOT_SELECTED]),),
                      viz_type="echarts_timeseries_bar", y_format=",d", stack=True),
        _table("Alerts (latest day first)", "alerts", ALERT_COLUMNS),
        _table("Re-cite suggestions (latest day first)", "recite_suggestions", SUGGESTION_COLUMNS),
    ]
    return out + claim_charts()


def _dashboard(chart_list: list[dict[str, Any]]) -> dict[str, Any]:
    position: dict[str, Any] = {
        "DASHBOARD_VERSION_KEY": "v2",
        "ROOT_ID": {"type": "ROOT", "id": "ROOT_ID", "children": ["GRID_ID"]},
        "HEADER_ID": {"type": "HEADER", "id": "HEADER_ID", "meta": {"text": DASHBOARD_TITLE}},
        "GRID_ID": {"type": "GRID", "id": "GRID_ID", "children": [], "parents": ["ROOT_ID"]},
    }
    per_row = 3
    for start in range(0, len(chart_list), per_row):
        row = f"ROW-{start // per_row}"
        position["GRID_ID"]["children"].append(row)
        position[row] = {"type": "ROW", "id": row, "children": [], "parents": ["ROOT_ID", "GRID_ID"],
                         "meta": {"background": "BACKGROUND_TRANSPARENT"}}
        group = chart_list[start:start + per_row]
        for offset, chart in enumerate(group):
            cid = f"CHART-{start + offset}"
            position[row]["children"].append(cid)
            position[cid] = {"type": "CHART", "id": cid, "children": [], "parents": ["ROOT_ID", "GRID_ID", row],
                             "meta": {"width": 12 // len(group), "height": 50, "chartId": start + offset + 1,
                                      "uuid": chart["uuid"], "sliceName": chart["slice_name"]}}
    metadata = {"color_scheme": "", "refresh_frequency": 0, "expanded_slices": {}, "label_colors": {},
                "timed_refresh_immune_slices": [], "cross_filters_enabled": False, "default_filters": "{}",
                "chart_configuration": {}, "native_filter_configuration": [], "shared_label_colors": [],
                "color_scheme_domain": []}
    return {"dashboard_title": DASHBOARD_TITLE, "description": None, "css": "", "slug": DASHBOARD_SLUG,
            "certified_by": "", "certification_details": "", "published": True,
            "uuid": _uuid("dashboard", DASHBOARD_SLUG), "position": position, "metadata": metadata,
            "version": VERSION}


def _file_name(title: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in title).strip("_")


def bundle(warehouse_url: str, schema: str | None = None) -> dict[str, dict[str, Any]]:
    """Path inside the bundle -> content, for every file (`schema`: see `dataset_schema`)."""
    schema = dataset_schema(warehouse_url, schema)
    files: dict[str, dict[str, Any]] = {
        "metadata.yaml": {"version": VERSION, "type": "Dashboard",
                          "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")},
        "databases/citecheck_warehouse.yaml": _database(warehouse_url),
    }
    for name in DATASETS:
        files[f"datasets/citecheck_warehouse/{name}.yaml"] = _dataset(name, schema)
    chart_list = charts()
    for i, chart in enumerate(chart_list, start=1):
        files[f"charts/{_file_name(chart['slice_name'])}_{i}.yaml"] = chart
    files[f"dashboards/{DASHBOARD_SLUG}.yaml"] = _dashboard(chart_list)
    return files


def write_bundle(warehouse_url: str, out: Path, schema: str | None = None) -> list[Path]:
    import yaml

    written = []
    for rel, content in bundle(warehouse_url, schema).items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(content, sort_keys=False, allow_unicode=True), encoding="utf-8")
        written.append(path)
    return written


def zip_bundle(folder: Path, root: str = "citecheck_dashboard") -> bytes:
    """The bundle folder as the ZIP Superset's import API and `import-dashboards` take (one top folder)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path in sorted(folder.rglob("*.yaml")):
            zf.write(path, f"{root}/{path.relative_to(folder)}")
    return buffer.getvalue()
