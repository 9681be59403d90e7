-- The day's logged turns of one shard, in conversation order. Bound parameters: start and end (UTC, the
-- metric day's [start, end) in the configured time zone), shard and shards (the shard's number of
-- shards; 0 of 1 is the whole day). A conversation's shard is citecheck_shard_key(conversation_id) % shards
-- (THE shard key: citecheck.core.selection.shard_key). A source table may carry the key precomputed (a
-- BIGINT column, e.g. shard_key, filled at load time with the same function, indexed with answered_at):
-- then filter with "shard_key % shards = shard" (the same bound parameters) instead of calling the function. To read your own schema, replace
-- this SELECT (or create a view named source_turns) returning these columns:
--   turn_id, conversation_id, turn_index, answered_at, question, answer, answer_format,
--   answer_blocks, response, request_documents, request_search_results, web_results,
--   attributes, loaded_at, input_repairs (what your loader repaired; SELECT NULL AS input_repairs
--   when it repairs nothing)
-- answer_format is markers (answer + source_passages) or a provider-native format, whose
-- JSON columns hold what the provider returned and what it could cite (docs/metrics.md,
-- "Native citation formats"): anthropic_blocks reads answer_blocks (or response.content),
-- request_documents, request_search_results and web_results; openai_responses, openai_chat
-- and cohere_v2 read response and request_documents; gemini reads response (one candidate)
-- and request_documents (texts of the web pages it grounded on). A view without the newer
-- columns still works for the formats that do not need them.
-- Context passages are read from source_passages (turn_id, position, label, source, text,
-- document_id, version), ordered by position: the context set exactly as the prompt showed it.
SELECT turn_id, conversation_id, turn_index, answered_at, question, answer, answer_format,
       answer_blocks, response, request_documents, request_search_results, web_results,
       attributes, loaded_at, input_repairs
FROM source_turns
WHERE answered_at >= :start AND answered_at < :end
  AND citecheck_shard_key(conversation_id) % :shards = :shard
ORDER BY conversation_id, turn_index, turn_id
