-- Context labels of EARLIER turns (before the day starts) of the conversations that have turns
-- on the day: a label reused from a previous context set is stale even across midnight.
SELECT t.conversation_id, t.turn_index, p.label
FROM source_turns t
JOIN source_passages p ON p.turn_id = t.turn_id
WHERE t.answered_at < :start
  AND t.conversation_id IN (
    SELECT DISTINCT conversation_id FROM source_turns
    WHERE answered_at >= :start AND answered_at < :end
  )
