-- Generated from include/citecheck/warehouse/tables.py by `python -m citecheck ddl`. Do not edit.

CREATE TABLE IF NOT EXISTS citation_verdicts (
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	label VARCHAR(200) NOT NULL,
	status VARCHAR(20),
	check_worthy BOOLEAN,
	alone BOOLEAN,
	rest BOOLEAN,
	credited BOOLEAN,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id, sentence_index, label)
);

CREATE TABLE IF NOT EXISTS daily_metrics (
	day DATE NOT NULL,
	slice_name VARCHAR(200) NOT NULL,
	slice_value VARCHAR(400) NOT NULL,
	metric VARCHAR(80) NOT NULL,
	averaging VARCHAR(10) NOT NULL,
	numerator FLOAT,
	denominator FLOAT,
	value FLOAT,
	answers INTEGER,
	sentences INTEGER,
	computed_at TIMESTAMP WITH TIME ZONE,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, slice_name, slice_value, metric, averaging)
);

CREATE TABLE IF NOT EXISTS judgment_cache (
	model VARCHAR(500) NOT NULL,
	revision VARCHAR(200) NOT NULL,
	sentence_hash VARCHAR(32) NOT NULL,
	window_hash VARCHAR(32) NOT NULL,
	probabilities TEXT NOT NULL,
	created_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
	PRIMARY KEY (model, revision, sentence_hash, window_hash)
);

COMMENT ON TABLE judgment_cache IS 'NLI judge scores, threshold-independent; reruns ask the model nothing';

COMMENT ON COLUMN judgment_cache.model IS 'model id or path + backend tag (+int8, +openvino, +openvino-int8, +fp16 …)';

COMMENT ON COLUMN judgment_cache.revision IS 'model revision; '''' when none was pinned';

COMMENT ON COLUMN judgment_cache.sentence_hash IS 'text_hash of the judged sentence';

COMMENT ON COLUMN judgment_cache.window_hash IS 'text_hash of the premise window';

COMMENT ON COLUMN judgment_cache.probabilities IS 'JSON list of softmax probabilities, id2label order';

CREATE TABLE IF NOT EXISTS runs (
	run_id VARCHAR(64) NOT NULL,
	day DATE NOT NULL,
	status VARCHAR(20) NOT NULL,
	started_at TIMESTAMP WITH TIME ZONE,
	finished_at TIMESTAMP WITH TIME ZONE,
	turns_read INTEGER,
	turns_scored INTEGER,
	turns_skipped INTEGER,
	turns_judged INTEGER,
	share_nli FLOAT,
	share_llm FLOAT,
	llm_input_tokens INTEGER,
	llm_output_tokens INTEGER,
	llm_cost_usd FLOAT,
	config_hash VARCHAR(32),
	judge VARCHAR(40),
	judge_versions VARCHAR(400),
	timings JSON,
	stats JSON,
	validation JSON,
	state JSON,
	error TEXT,
	PRIMARY KEY (run_id)
);

CREATE INDEX IF NOT EXISTS ix_runs_day ON runs (day);

CREATE TABLE IF NOT EXISTS sentence_verdicts (
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	conversation_id VARCHAR(200),
	text TEXT,
	labels JSON,
	unknown_labels JSON,
	stale_labels JSON,
	check_worthy BOOLEAN,
	non_claim_reason VARCHAR(40),
	attached BOOLEAN,
	verdict VARCHAR(40),
	score FLOAT,
	contradiction FLOAT,
	supported_elsewhere_by VARCHAR(400),
	judge VARCHAR(40),
	judge_version VARCHAR(400),
	reason TEXT,
	llm JSON,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id, sentence_index)
);

CREATE TABLE IF NOT EXISTS skipped_turns (
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	reason TEXT NOT NULL,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id)
);

CREATE TABLE IF NOT EXISTS source_passages (
	turn_id VARCHAR(200) NOT NULL,
	position INTEGER NOT NULL,
	label VARCHAR(200),
	source TEXT,
	text TEXT,
	document_id VARCHAR(200),
	version VARCHAR(100),
	PRIMARY KEY (turn_id, position)
);

CREATE TABLE IF NOT EXISTS source_turns (
	turn_id VARCHAR(200) NOT NULL,
	conversation_id VARCHAR(200),
	turn_index INTEGER,
	answered_at TIMESTAMP WITH TIME ZONE,
	question TEXT,
	answer TEXT,
	answer_format VARCHAR(40),
	answer_blocks JSON,
	request_documents JSON,
	attributes JSON,
	loaded_at TIMESTAMP WITH TIME ZONE,
	PRIMARY KEY (turn_id)
);

CREATE INDEX IF NOT EXISTS ix_source_turns_answered_at ON source_turns (answered_at);

CREATE INDEX IF NOT EXISTS ix_source_turns_conversation ON source_turns (conversation_id, turn_index);

CREATE TABLE IF NOT EXISTS stage_citation_verdicts (
	run_id VARCHAR(64) NOT NULL,
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	label VARCHAR(200) NOT NULL,
	status VARCHAR(20),
	check_worthy BOOLEAN,
	alone BOOLEAN,
	rest BOOLEAN,
	credited BOOLEAN,
	PRIMARY KEY (run_id, turn_id, sentence_index, label)
);

CREATE TABLE IF NOT EXISTS stage_daily_metrics (
	run_id VARCHAR(64) NOT NULL,
	day DATE NOT NULL,
	slice_name VARCHAR(200) NOT NULL,
	slice_value VARCHAR(400) NOT NULL,
	metric VARCHAR(80) NOT NULL,
	averaging VARCHAR(10) NOT NULL,
	numerator FLOAT,
	denominator FLOAT,
	value FLOAT,
	answers INTEGER,
	sentences INTEGER,
	computed_at TIMESTAMP WITH TIME ZONE,
	PRIMARY KEY (run_id, slice_name, slice_value, metric, averaging)
);

CREATE TABLE IF NOT EXISTS stage_judgments (
	run_id VARCHAR(64) NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	stage VARCHAR(20) NOT NULL,
	judgment JSON NOT NULL,
	PRIMARY KEY (run_id, turn_id, sentence_index, stage)
);

CREATE TABLE IF NOT EXISTS stage_sentence_verdicts (
	run_id VARCHAR(64) NOT NULL,
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	conversation_id VARCHAR(200),
	text TEXT,
	labels JSON,
	unknown_labels JSON,
	stale_labels JSON,
	check_worthy BOOLEAN,
	non_claim_reason VARCHAR(40),
	attached BOOLEAN,
	verdict VARCHAR(40),
	score FLOAT,
	contradiction FLOAT,
	supported_elsewhere_by VARCHAR(400),
	judge VARCHAR(40),
	judge_version VARCHAR(400),
	reason TEXT,
	llm JSON,
	PRIMARY KEY (run_id, turn_id, sentence_index)
);

CREATE TABLE IF NOT EXISTS stage_skipped (
	run_id VARCHAR(64) NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	reason TEXT NOT NULL,
	PRIMARY KEY (run_id, turn_id)
);

CREATE TABLE IF NOT EXISTS stage_turns (
	run_id VARCHAR(64) NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	shard INTEGER NOT NULL,
	selected BOOLEAN NOT NULL,
	structured JSON NOT NULL,
	PRIMARY KEY (run_id, turn_id)
);

CREATE INDEX IF NOT EXISTS ix_stage_turns_shard ON stage_turns (run_id, shard);
