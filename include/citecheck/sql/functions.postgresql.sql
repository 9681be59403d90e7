-- THE shard key of a conversation (citecheck.core.selection.shard_key): the first 32 bits of the MD5 of
-- the conversation id (UTF-8; NULL as ''), an unsigned integer. extract_turns.sql filters a shard with it;
-- SQLite connections get the same function from Python (citecheck.warehouse.engine.register_shard_key).
-- The database encoding must be UTF8 (md5 hashes the text's bytes). Created by init_warehouse.
CREATE OR REPLACE FUNCTION citecheck_shard_key(conversation_id text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('x' || substr(md5(coalesce(conversation_id, '')), 1, 8))::bit(32)::bigint $$
