"""The reference source tables, one concern a module:

- `rows`: validation: a SPEC §1 turn dict → its `source_turns` and `source_passages` rows, or
  ValueError with the reason (`source_rows`, `storable`)
- `load`: loading turns and reader events, with what each load replaced or could not attach
- `read`: reading one metric day back out (SQL in `citecheck/sql/`: `extract_turns.sql`,
  `prior_context_labels.sql`, `count_day_turns.sql`, `attribute_value_counts.<dialect>.sql`)
"""

from __future__ import annotations

from citecheck.warehouse.source.load import (
    EventConflict,
    EventLoadReport,
    LoadReport,
    load_reader_events,
    load_source_rows,
    load_turns,
    load_turns_report,
)
from citecheck.warehouse.source.read import (
    attribute_value_counts,
    conversation_turn_times,
    count_day_turns,
    day_bounds,
    day_has_reader_events,
    extract_day,
    extract_day_chunks,
    passages_by_label,
    prior_context_labels,
    reader_events_of,
    stored_turn_ids,
)
from citecheck.warehouse.source.rows import MAX_JSON_DEPTH, source_rows, storable

__all__ = [
    "MAX_JSON_DEPTH",
    "EventConflict",
    "EventLoadReport",
    "LoadReport",
    "attribute_value_counts",
    "conversation_turn_times",
    "count_day_turns",
    "day_bounds",
    "day_has_reader_events",
    "extract_day",
    "extract_day_chunks",
    "load_reader_events",
    "load_source_rows",
    "load_turns",
    "load_turns_report",
    "passages_by_label",
    "prior_context_labels",
    "reader_events_of",
    "source_rows",
    "storable",
    "stored_turn_ids",
]
