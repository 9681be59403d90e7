-- How many turns extract_turns.sql selects for the day; the day_turns placeholder is that query as a subquery.
-- Bound parameters: start and end, as for extract_turns.sql.
SELECT count(*) FROM {day_turns} AS day_turns
