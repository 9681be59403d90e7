"""Counts and metrics (SPEC §5), per answer, micro, macro and by slice.

- `definitions`: THE metric registry: one entry per metric with everything about it (counts, scale,
  population, units, headline and report places, monitoring, invariants); every metric list is a view of it
- `display`: a metric value and its counts as a person reads them
- `counts`: the counts of a block of answers (`AnswerCounts`, one row per answer), one small function per population
- `ratios`: counts → `Ratio`s, the F1 rule, the per-answer values macro averaging votes with
- `accumulator`: a day streamed into per-slice micro/macro totals and 95% intervals → long rows
- `invariants`: the SPEC §5 checks every output's rows must pass
- `slice_cap`: bounded attribute slices (`[slices] max_values_per_key`, the rest under `other`)

Structural metrics (unknown labels, attachment, refusals, marker habits) cover every turn;
judged metrics (recall, precision, support rate, faithfulness, verdict rates) cover the turns
selected for judging and exclude unjudged sentences. `judged_attachment_rate` is attachment on
that judged population, so `citation_recall <= judged_attachment_rate` holds on every row.
"""

from __future__ import annotations

from citecheck.core.metrics.accumulator import (
    INTERVAL_MEAN_KEYS,
    JUDGED_COUNT_KEYS,
    JUDGED_MACRO_NAMES,
    LANGUAGE_SLICE,
    MetricAccumulator,
    interval_json,
    length_bucket,
)
from citecheck.core.metrics.counts import (
    SENTENCE_SLICES,
    AnswerCounts,
    ScoredTurn,
    cited_chars,
    full_counts,
    turn_counts,
    verdict_counts,
)
from citecheck.core.metrics.definitions import (
    AGREEMENT,
    BOUNDS_RULES,
    BY_NAME,
    CALIBRATED_METRICS,
    CLAIM_COUNT_KEYS,
    CLAIM_METRICS,
    COUNT_KEYS,
    DERIVED,
    HEADLINE_METRICS,
    JUDGED,
    JUDGED_METRICS,
    METRIC_NAMES,
    METRICS,
    MONITORED_METRICS,
    MULTI_CITATION_SLICE_MIN,
    NATIVE,
    NO_SOURCE_TEXT,
    PADDING_MIN_CITATIONS,
    RATE_METRICS,
    READER_METRICS,
    READERS,
    REGISTRY,
    REPORT_TILE_METRICS,
    SCORED_HEADLINE_METRICS,
    SLICES,
    STRUCTURAL,
    TURN_LEVEL_METRICS,
    UNCHECKED,
    WIDE_CLAIM_METRICS,
    Metric,
    Watch,
    count_keys,
    in_report,
    metric,
)
from citecheck.core.metrics.invariants import invariant_violations
from citecheck.core.metrics.ratios import f1, f1_value, macro_values, ratios, values
from citecheck.core.metrics.slice_cap import OTHER_SLICE_VALUE, SliceCap

__all__ = [
    "AGREEMENT",
    "BOUNDS_RULES",
    "BY_NAME",
    "CALIBRATED_METRICS",
    "CLAIM_COUNT_KEYS",
    "CLAIM_METRICS",
    "COUNT_KEYS",
    "DERIVED",
    "HEADLINE_METRICS",
    "INTERVAL_MEAN_KEYS",
    "JUDGED",
    "JUDGED_COUNT_KEYS",
    "JUDGED_MACRO_NAMES",
    "JUDGED_METRICS",
    "LANGUAGE_SLICE",
    "METRICS",
    "METRIC_NAMES",
    "MONITORED_METRICS",
    "MULTI_CITATION_SLICE_MIN",
    "NATIVE",
    "NO_SOURCE_TEXT",
    "OTHER_SLICE_VALUE",
    "PADDING_MIN_CITATIONS",
    "RATE_METRICS",
    "READERS",
    "READER_METRICS",
    "REGISTRY",
    "REPORT_TILE_METRICS",
    "SCORED_HEADLINE_METRICS",
    "SENTENCE_SLICES",
    "SLICES",
    "STRUCTURAL",
    "TURN_LEVEL_METRICS",
    "UNCHECKED",
    "WIDE_CLAIM_METRICS",
    "AnswerCounts",
    "Metric",
    "MetricAccumulator",
    "ScoredTurn",
    "SliceCap",
    "Watch",
    "cited_chars",
    "count_keys",
    "f1",
    "f1_value",
    "full_counts",
    "in_report",
    "interval_json",
    "invariant_violations",
    "length_bucket",
    "macro_values",
    "metric",
    "ratios",
    "turn_counts",
    "values",
    "verdict_counts",
]
