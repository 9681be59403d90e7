"""HTML rendering of the report with Jinja2 (autoescaped: answer and passage texts are untrusted)."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

from citecheck.core.figures import is_untraced, untraced_figures
from citecheck.core.metrics import REPORT_TILE_METRICS
from citecheck.core.metrics.display import format_value, fraction
from citecheck.report import charts
from citecheck.report.data import AGREEMENT_METRICS, ReportData

# No request may leave the page: scripts and styles are inline, images are data: URIs. Vega
# compiles its expressions with the Function constructor, hence 'unsafe-eval'.
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
                           "style-src 'unsafe-inline'; img-src data:; font-src data:")


@functools.cache
def environment() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("citecheck.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = lambda value, metric: format_value(metric, value)
    env.filters["fraction"] = fraction  # "43 opens / 324 answers"; F1: its recall and precision
    env.filters["untraced_figures"] = untraced_figures  # THE untraced figure (core.figures)
    env.tests["untraced"] = is_untraced
    return env


def render(data: ReportData) -> str:
    """The whole report as one self-contained HTML document."""
    specs = {"trends": charts.trend_chart(data.history, (*REPORT_TILE_METRICS, *AGREEMENT_METRICS), data.day,
                                          data.trend_days, bool(data.interval_columns))}
    slice_spec = charts.slice_chart(data.slices, "citation_recall")
    if slice_spec is not None:
        specs["slices"] = slice_spec
    return environment().get_template("report.html.j2").render(
        data=data, specs=specs, runtime=charts.vega_runtime(), csp=CONTENT_SECURITY_POLICY,
        rendered_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        has_intervals=bool(data.interval_columns))


def render_index(rows: list[dict[str, Any]], title: str = "Citation quality reports") -> str:
    """A page linking every stored report (rows of `warehouse.reports.report_index`), newest first."""
    return environment().get_template("index.html.j2").render(rows=rows, title=title,
                                                               csp=CONTENT_SECURITY_POLICY)
