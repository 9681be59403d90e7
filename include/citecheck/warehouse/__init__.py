"""The warehouse layer: the only place that stores or reads tables.

- `tables`: every table, defined once; `ddl`: `sql/schema.sql` and `sql/views.sql` generated from it
- `engine`: URL resolution, schemas, table creation, the `.sql` files
- `source`: the reference source tables: `rows` (validation), `load` (turns and reader events),
  `read` (one day back out; its SQL in `sql/`)
- `freshness`: published days whose inputs were loaded after their run began (stale days)
- `staging`: one run's intermediate data, keyed by run id
- `runs`: the run ledger (the only writer of `runs`), abandoned runs, what a cut-off publish left
- `locks`: one run per day at a time (`day_locks`)
- `publish`: the one-transaction publish of a day
- `published`: the read model, the ONE reader of every published table (metric rows in one
  shape, narrow functions for the rest) that the CLI, the monitor, the report and the plugin use
- `alerts`, `reports`: the writers of the monitor step's `alerts` and the report step's `reports`
- `judgment_cache`: the NLI judge's score cache on SQL (`SQLCache`), handed to the judge
- `naming`: validated schema and role names from configuration
- `serialize`: the JSON shapes staged between tasks
- `grants`: the BI policy (what a dashboard may read) and the read-only BI role's grants
- `review`: the human review loop's samples, labels and published judge quality
  (`from citecheck.warehouse import review as WR`)

The names below are the public API the job, the CLI and the DAG use (`from citecheck import
warehouse as W`).
"""

from __future__ import annotations

from citecheck.warehouse.engine import (
    DEFAULT_WAREHOUSE_URL,
    add_missing_columns,
    engine_for,
    engine_names,
    init_warehouse,
    make_engine,
    read_sql,
    warehouse_url,
)
from citecheck.warehouse.grants import bi_grants, grant_bi, grants_sql
from citecheck.warehouse.publish import publish_day
from citecheck.warehouse.read_model import (
    day_metrics,
    published_config_hash,
    published_row_counts,
    published_run_id,
)
from citecheck.warehouse.source import (
    MAX_JSON_DEPTH,
    EventConflict,
    EventLoadReport,
    LoadReport,
    conversation_turn_times,
    count_day_turns,
    day_bounds,
    extract_day,
    extract_day_chunks,
    load_reader_events,
    load_source_rows,
    load_turns,
    load_turns_report,
    prior_context_labels,
    source_rows,
    storable,
    stored_turn_ids,
)
from citecheck.warehouse.staging import clean_staging, record_skips

__all__ = [
    "DEFAULT_WAREHOUSE_URL",
    "MAX_JSON_DEPTH",
    "EventConflict",
    "EventLoadReport",
    "LoadReport",
    "add_missing_columns",
    "bi_grants",
    "clean_staging",
    "conversation_turn_times",
    "count_day_turns",
    "day_bounds",
    "day_metrics",
    "engine_for",
    "engine_names",
    "extract_day",
    "extract_day_chunks",
    "grant_bi",
    "grants_sql",
    "init_warehouse",
    "load_reader_events",
    "load_source_rows",
    "load_turns",
    "load_turns_report",
    "make_engine",
    "prior_context_labels",
    "publish_day",
    "published_config_hash",
    "published_row_counts",
    "published_run_id",
    "read_sql",
    "record_skips",
    "source_rows",
    "storable",
    "stored_turn_ids",
    "warehouse_url",
]
