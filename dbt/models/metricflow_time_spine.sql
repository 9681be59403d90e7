-- The time spine MetricFlow joins metric_time to (one row per day). Covers 2020 to 2040; widen the
-- range if the warehouse holds days outside it.
{{ config(materialized='table') }}
select cast(d as date) as date_day
from generate_series(cast('2020-01-01' as date), cast('2040-12-31' as date), interval '1 day') as d
