-- (attribute key, value as JSON text, answers) of the day's turns (the day_turns placeholder: extract_turns.sql
-- as a subquery), grouped by key and value: what `[slices] max_values_per_key` caps. PostgreSQL:
-- attributes that are not a JSON object have no slices.
SELECT e.key, e.value::text AS v, count(*)
FROM {day_turns} AS day_turns
CROSS JOIN LATERAL json_each(CASE WHEN json_typeof(day_turns.attributes::json) = 'object'
                                  THEN day_turns.attributes::json END) AS e
GROUP BY e.key, v
ORDER BY e.key
