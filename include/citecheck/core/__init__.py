"""The rules core: pure functions and data, no storage, no Airflow, no model weights.

A turn goes `turns` (input checks) → `parsing` (sentences, markers) → `structural` (resolution,
stale labels, check-worthiness) → a judge (`citecheck.judges`) → `verdicts` → `metrics`;
`pipeline` holds the per-chunk functions that the CLI's `score` and the daily job both call.
"""
