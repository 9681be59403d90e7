-- The day's logged turns, in conversation order. Bound parameters: start and end (UTC, the
-- metric day's [start, end) in the configured time zone). To read your own schema, replace
-- this SELECT (or create a view named source_turns) returning these columns:
--   turn_id, conversation_id, turn_index, answered_at, question, answer, answer_format,
--   answer_blocks, request_documents, attributes, loaded_at
-- Context passages are read from source_passages (turn_id, position, label, source, text,
-- document_id, version), ordered by position: the context set exactly as the prompt showed it.
SELECT turn_id, conversation_id, turn_index, answered_at, question, answer, answer_format,
       answer_blocks, request_documents, attributes, loaded_at
FROM source_turns
WHERE answered_at >= :start AND answered_at < :end
ORDER BY conversation_id, turn_index, turn_id
