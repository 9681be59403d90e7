"""The published tables as a BI tool sees them: names, columns, SQL types, which are views. One place for
what `bi.dbt` and `bi.superset` both describe (the tables from `warehouse.tables`, the wide view's
columns as `ddl.wide_view_sql` builds them from `metrics.HEADLINE_METRICS`)."""

from __future__ import annotations

from dataclasses import dataclass

from citecheck.core.metrics import HEADLINE_METRICS, JUDGED_METRICS, WIDE_CLAIM_METRICS
from citecheck.warehouse import tables as T
from citecheck.warehouse.grants import BI_READABLE

VIEWS = frozenset({"daily_metrics_wide"})
TABLES = BI_READABLE


@dataclass(frozen=True)
class PublishedColumn:
    name: str
    sql_type: str
    description: str
    primary_key: bool = False
    nullable: bool = True


def wide_view_columns() -> list[PublishedColumn]:
    cols = [PublishedColumn("day", "DATE", "the metric day", primary_key=True, nullable=False),
            PublishedColumn("run_id", "VARCHAR(64)", "the run that published the day"),
            PublishedColumn("config_hash", "VARCHAR(32)", "hash of the configuration the day was scored with")]
    for metric in HEADLINE_METRICS:
        cols.append(PublishedColumn(metric, "FLOAT", f"{metric}, overall slice, micro averaging"))
        if metric in JUDGED_METRICS:
            cols += [PublishedColumn(f"{metric}_{c}", "FLOAT",
                                     f"{c} of the 95% interval of {metric} (precomputed, that day only)")
                     for c in T.METRIC_INTERVAL_COLUMNS]
    cols.append(PublishedColumn("answers", "INTEGER", "answers the day's metrics cover"))
    cols += [PublishedColumn(metric, "FLOAT", f"{metric}, overall slice, micro averaging (a claims mode; null in "
                                              "sentence mode)") for metric in WIDE_CLAIM_METRICS]
    return cols


def published_columns(name: str) -> list[PublishedColumn]:
    """The columns of a published table or view, in order."""
    if name in VIEWS:
        return wide_view_columns()
    from sqlalchemy.dialects import postgresql

    dialect = postgresql.dialect()
    return [PublishedColumn(str(c.name), c.type.compile(dialect=dialect), str(c.comment or ""),
                            bool(c.primary_key), bool(c.nullable) and not c.primary_key)
            for c in T.metadata.tables[name].columns]
