-- Context labels of EARLIER turns (before the day starts) of some of the day's conversations: a
-- label reused from a previous context set is stale even across midnight. Bound parameters: start
-- (UTC, the metric day's start) and conversations (a list: the job asks per chunk of the day's
-- turns, so memory holds one chunk's conversations, not the whole day's).
SELECT t.conversation_id, t.turn_index, p.label
FROM source_turns t
JOIN source_passages p ON p.turn_id = t.turn_id
WHERE t.answered_at < :start
  AND t.conversation_id IN :conversations
