"""What BI tools read, generated from the project's own definitions (never hand-copied lists):

- `dbt`: the dbt project's sources, staging models and MetricFlow semantic model and ratio
  metrics (`dbt/`), from `warehouse.tables`, `metrics` and `docs/metrics.md`;
- `superset`: a Superset import bundle (database, datasets over the BI views, charts, dashboard).

`citecheck bi dbt|dbt-profile|superset` (`citecheck.cli.bi` registers them in the CLI).
"""
