-- (attribute key, value as JSON text, answers) of the day's turns (the day_turns placeholder: extract_turns.sql
-- as a subquery), grouped by key and value: what `[slices] max_values_per_key` caps. SQLite: the
-- JSON text of each value, decoded the way the turn's attributes are.
SELECT e.key,
       CASE WHEN e.type IN ('true', 'false', 'null') THEN e.type
            WHEN e.type IN ('object', 'array') THEN e.value
            ELSE json_quote(e.value) END AS v,
       count(*)
FROM {day_turns} AS day_turns, json_each(day_turns.attributes) AS e
WHERE json_type(day_turns.attributes) = 'object'
GROUP BY e.key, v
ORDER BY e.key
