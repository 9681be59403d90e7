"""The report's charts as Vega-Lite specifications built with Vega-Altair, and the Vega runtime
(Vega, Vega-Lite, Vega-Embed) bundled by vl-convert for inlining, so the page needs no network."""

from __future__ import annotations

import datetime as dt
import functools
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def trend_chart(history: Sequence[Mapping[str, Any]], metrics: Sequence[str], day: dt.date, trend_days: int,
                intervals: bool) -> dict[str, Any]:
    """Small multiples, one per metric: the daily value over the window, the interval as a band
    when the warehouse stores one, and a rule on the report's day."""
    import altair as alt

    order = [m for m in metrics if any(r["metric"] == m and r["value"] is not None for r in history)]
    values = [{"day": r["day"].isoformat(), "metric": r["metric"], "value": r["value"],
               **({"ci_low": r.get("ci_low"), "ci_high": r.get("ci_high")} if intervals else {})}
              for r in history if r["metric"] in order]
    start = (day - dt.timedelta(days=trend_days - 1)).isoformat()
    x = alt.X("day:T", title=None, scale=alt.Scale(type="utc", domain=[start, day.isoformat()]),
              axis=alt.Axis(format="%b %d"))
    base = alt.Chart().encode(x=x)
    layers: list[Any] = []
    if intervals:
        layers.append(base.mark_area(opacity=0.25).encode(y="ci_low:Q", y2="ci_high:Q"))
    layers.append(base.mark_line(point=True).encode(
        y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=False),
                axis=alt.Axis(minExtent=44, maxExtent=44, format=".3~g")),
        tooltip=[alt.Tooltip("day:T"), alt.Tooltip("value:Q", format=".4f")]))
    layers.append(alt.Chart().mark_rule(strokeDash=[4, 3], color="#888").encode(
        x=alt.datum(alt.DateTime(year=day.year, month=day.month, date=day.day, utc=True))))
    chart = (alt.layer(*layers, data=alt.Data(values=values))
             .properties(width=230, height=110)
             .facet(facet=alt.Facet("metric:N", title=None, sort=order), columns=3)
             .resolve_scale(y="independent"))
    return chart.to_dict()


def slice_chart(slices: Sequence[Mapping[str, Any]], metric: str) -> dict[str, Any] | None:
    """Horizontal bars of one metric per slice value of the day; None when no slice has it."""
    import altair as alt

    values = [{"slice": f"{r['slice_name']} = {r['slice_value']}", "value": r["value"],
               "denominator": r["denominator"]} for r in slices if r["metric"] == metric and r["value"] is not None]
    if not values:
        return None
    chart = alt.Chart(alt.Data(values=values)).mark_bar().encode(
        y=alt.Y("slice:N", title=None, sort=None),
        x=alt.X("value:Q", title=metric, scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("slice:N"), alt.Tooltip("value:Q", format=".4f"), alt.Tooltip("denominator:Q")],
    ).properties(width=420)
    return chart.to_dict()


@functools.cache
def vega_runtime() -> str:
    """Vega-Embed with Vega-Lite (the version of Altair's schema) and Vega, as one script that sets
    the `vegaEmbed` global. Bundling takes seconds, so it is kept per process and, when the user
    cache folder is writable, on disk per vl-convert and Vega-Lite version."""
    import altair as alt
    import vl_convert

    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    vl_version = f"{major}.{minor}"
    cached = _cache_dir() / f"vega-runtime-{vl_convert.__version__}-vl{vl_version}.js"
    try:
        bundle = cached.read_text(encoding="utf-8")
    except OSError:
        bundle = vl_convert.javascript_bundle(vl_version=vl_version)
        _write_atomically(cached, bundle)
    if "</script" in bundle.lower():
        raise ValueError("the Vega bundle contains '</script' and cannot be inlined")
    return bundle


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "citecheck"


def _write_atomically(path: Path, text: str) -> None:
    """Best effort: a read-only home just means bundling again in the next process."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False) as tmp:
            tmp.write(text)
        os.replace(tmp.name, path)
    except OSError:
        pass
