-- Generated from include/citecheck/warehouse/tables.py by `python -m citecheck ddl`. Do not edit.

CREATE TABLE IF NOT EXISTS alerts (
	day DATE NOT NULL,
	metric VARCHAR(80) NOT NULL,
	slice_name VARCHAR(200) NOT NULL,
	slice_value VARCHAR(400) NOT NULL,
	averaging VARCHAR(10) NOT NULL,
	baseline FLOAT NOT NULL,
	value FLOAT NOT NULL,
	direction VARCHAR(4) NOT NULL,
	size FLOAT NOT NULL,
	rule TEXT NOT NULL,
	group_id TEXT,
	folded BOOLEAN,
	run_id VARCHAR(64) NOT NULL,
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (day, metric, slice_name, slice_value, averaging)
);

COMMENT ON TABLE alerts IS 'Step changes of the daily metrics against their own history; a rerun of a day replaces its alerts';

COMMENT ON COLUMN alerts.baseline IS 'the metric''s median over its history days';

COMMENT ON COLUMN alerts.value IS 'the day''s value';

COMMENT ON COLUMN alerts.direction IS '''up'' or ''down''';

COMMENT ON COLUMN alerts.size IS 'value - baseline';

COMMENT ON COLUMN alerts.rule IS 'which rule fired and why';

COMMENT ON COLUMN alerts.group_id IS 'the alert leading its group (metric|averaging|slice): a slice moving with an overall alert folds under it';

COMMENT ON COLUMN alerts.folded IS 'true: a slice alert folded under its overall alert';

CREATE TABLE IF NOT EXISTS answer_decisions (
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	criteria_failed JSON NOT NULL,
	criteria_hash VARCHAR(32) NOT NULL,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id)
);

COMMENT ON TABLE answer_decisions IS 'Answers failing an `answers = true` criterion, with the criteria they fail';

COMMENT ON COLUMN answer_decisions.criteria_failed IS 'names of the answers = true criteria it fails';

CREATE TABLE IF NOT EXISTS calibrated_metrics (
	from_day DATE NOT NULL,
	to_day DATE NOT NULL,
	metric VARCHAR(80) NOT NULL,
	value FLOAT,
	ci_low FLOAT,
	ci_high FLOAT,
	confidence FLOAT,
	labelled_items INTEGER,
	population_items INTEGER,
	method VARCHAR(200),
	computed_at TIMESTAMP WITH TIME ZONE,
	PRIMARY KEY (from_day, to_day, metric)
);

COMMENT ON TABLE calibrated_metrics IS 'judge-only, human-only and prediction-powered (human-calibrated) metrics of a period';

COMMENT ON COLUMN calibrated_metrics.metric IS 'citation_recall | citation_recall_calibrated | citation_recall_human_only | ...';

COMMENT ON COLUMN calibrated_metrics.labelled_items IS 'labelled review items used';

COMMENT ON COLUMN calibrated_metrics.population_items IS 'judged check-worthy sentences of the period';

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
	pointer_problem VARCHAR(40),
	unverified VARCHAR(200),
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id, sentence_index, label)
);

COMMENT ON COLUMN citation_verdicts.pointer_problem IS 'native citations: the pointer problem kind that makes the label unknown (docs/metrics.md)';

COMMENT ON COLUMN citation_verdicts.unverified IS 'native citations: the fields the job could not verify, comma-joined (e.g. cited_text)';

CREATE TABLE IF NOT EXISTS claim_citation_verdicts (
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	claim_index INTEGER NOT NULL,
	label VARCHAR(200) NOT NULL,
	status VARCHAR(20),
	alone BOOLEAN,
	rest BOOLEAN,
	credited BOOLEAN,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id, sentence_index, claim_index, label)
);

COMMENT ON TABLE claim_citation_verdicts IS 'A claims mode: one row per link, a (claim, label) pair';

CREATE TABLE IF NOT EXISTS claim_split_cache (
	split_key VARCHAR(700) NOT NULL,
	claims TEXT NOT NULL,
	created_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
	PRIMARY KEY (split_key)
);

COMMENT ON TABLE claim_split_cache IS 'LLM claim splits by sentence text, model and prompt version; a rerun of a day asks nothing';

COMMENT ON COLUMN claim_split_cache.split_key IS 'model|prompt version|text_hash of the sentence (judges.llm.claims.split_key)';

COMMENT ON COLUMN claim_split_cache.claims IS 'JSON list of the claims the model proposed (verified on use)';

CREATE TABLE IF NOT EXISTS claim_verdicts (
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	claim_index INTEGER NOT NULL,
	conversation_id VARCHAR(200),
	text TEXT,
	labels JSON,
	verdict VARCHAR(40),
	score FLOAT,
	supported_elsewhere_by VARCHAR(400),
	judge VARCHAR(40),
	judge_version VARCHAR(400),
	reason TEXT,
	figures JSON,
	figure_values JSON,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id, sentence_index, claim_index)
);

COMMENT ON TABLE claim_verdicts IS 'A claims mode (SPEC 2.1): one row per claim of a check-worthy sentence; empty in sentence mode';

COMMENT ON COLUMN claim_verdicts.text IS 'the claim as the judge saw it (a standalone sentence)';

COMMENT ON COLUMN claim_verdicts.labels IS 'its sentence''s labels (JSON list): every claim carries them all';

COMMENT ON COLUMN claim_verdicts.verdict IS 'supported, miscited, uncited_supported, unsupported, unjudged, not_selected, partial, contradicted';

COMMENT ON COLUMN claim_verdicts.reason IS 'why unjudged';

COMMENT ON COLUMN claim_verdicts.figures IS 'the claim''s own figures: [{text, kind, value, traced}] (SPEC 3.5), traced against its links; traced null: no cited text';

COMMENT ON COLUMN claim_verdicts.figure_values IS 'the claim''s figures without their written text: [{kind, value, traced}] (the BI role''s)';

CREATE TABLE IF NOT EXISTS criteria_results (
	day DATE NOT NULL,
	criterion VARCHAR(200) NOT NULL,
	scope VARCHAR(400) NOT NULL,
	metric VARCHAR(80) NOT NULL,
	bound_kind VARCHAR(3),
	bound FLOAT,
	on_rule VARCHAR(10) NOT NULL,
	averaging VARCHAR(10) NOT NULL,
	value FLOAT,
	ci_low FLOAT,
	ci_high FLOAT,
	numerator FLOAT,
	denominator FLOAT,
	answers INTEGER NOT NULL,
	failing_answers INTEGER NOT NULL,
	decision VARCHAR(10) NOT NULL,
	criteria_hash VARCHAR(32) NOT NULL,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, criterion)
);

COMMENT ON TABLE criteria_results IS 'Each acceptance criterion decided on the day (SPEC 5.1); the day passes only when every one passes';

COMMENT ON COLUMN criteria_results.criterion IS 'the criterion''s name (SPEC 5.1)';

COMMENT ON COLUMN criteria_results.scope IS 'all, or key=value|value; ... as written in `where`';

COMMENT ON COLUMN criteria_results.bound_kind IS 'min or max (null: a gate-only criterion)';

COMMENT ON COLUMN criteria_results.on_rule IS 'value (the point estimate) or interval (95%%)';

COMMENT ON COLUMN criteria_results.answers IS 'answers in scope';

COMMENT ON COLUMN criteria_results.failing_answers IS 'answers = true: answers in scope breaking the bound';

COMMENT ON COLUMN criteria_results.decision IS 'pass | fail | no_data';

COMMENT ON COLUMN criteria_results.criteria_hash IS 'hash of the criteria the day was decided on';

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
	ci_low FLOAT,
	ci_high FLOAT,
	computed_at TIMESTAMP WITH TIME ZONE,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, slice_name, slice_value, metric, averaging)
);

COMMENT ON COLUMN daily_metrics.ci_low IS 'lower end of the 95 per cent interval of a judged rate, answers as clusters; null when not judged or the value is null (docs/metrics.md)';

COMMENT ON COLUMN daily_metrics.ci_high IS 'upper end of the interval of ci_low';

CREATE TABLE IF NOT EXISTS day_locks (
	day DATE NOT NULL,
	run_id VARCHAR(64) NOT NULL,
	host VARCHAR(255),
	pid INTEGER,
	acquired_at TIMESTAMP WITH TIME ZONE NOT NULL,
	expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
	generation INTEGER,
	PRIMARY KEY (day)
);

COMMENT ON TABLE day_locks IS 'per-day run lock: a second run of a held day waits or refuses';

COMMENT ON COLUMN day_locks.run_id IS 'the run that holds the day';

COMMENT ON COLUMN day_locks.host IS 'where the holder took it';

COMMENT ON COLUMN day_locks.pid IS 'the holding process (CLI runs); null: a lease only (Airflow)';

COMMENT ON COLUMN day_locks.expires_at IS 'the lease: renewed by every step of the run';

COMMENT ON COLUMN day_locks.generation IS 'the fencing token: grows with every take of the day; renewals and the publish match it';

CREATE TABLE IF NOT EXISTS human_labels (
	item_id VARCHAR(40) NOT NULL,
	reviewer VARCHAR(200) NOT NULL,
	label VARCHAR(20) NOT NULL,
	citation_labels JSON NOT NULL,
	claim_labels JSON,
	source TEXT,
	imported_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (item_id, reviewer)
);

COMMENT ON TABLE human_labels IS 'one reviewer''s label of one review item; a reimport replaces it';

COMMENT ON COLUMN human_labels.label IS 'supported | partial | not_supported';

COMMENT ON COLUMN human_labels.citation_labels IS '{label: full | partial | none}';

COMMENT ON COLUMN human_labels.claim_labels IS 'a claims mode: {claim index: supported | partial | not_supported}; null when not given';

COMMENT ON COLUMN human_labels.source IS 'file and line the label came from';

CREATE TABLE IF NOT EXISTS judge_quality (
	from_day DATE NOT NULL,
	to_day DATE NOT NULL,
	judge VARCHAR(80) NOT NULL,
	slice_name VARCHAR(200) NOT NULL,
	slice_value VARCHAR(400) NOT NULL,
	measure VARCHAR(80) NOT NULL,
	weighting VARCHAR(20) NOT NULL,
	numerator FLOAT,
	denominator FLOAT,
	value FLOAT,
	ci_low FLOAT,
	ci_high FLOAT,
	method VARCHAR(200),
	labelled_items INTEGER,
	computed_at TIMESTAMP WITH TIME ZONE,
	PRIMARY KEY (from_day, to_day, judge, slice_name, slice_value, measure, weighting)
);

COMMENT ON TABLE judge_quality IS 'judges against human labels over a period (SPEC 6), per judge and slice, with intervals';

COMMENT ON COLUMN judge_quality.judge IS 'first_stage | llm | final | reviewers';

COMMENT ON COLUMN judge_quality.measure IS 'agreement | false_pass | false_fail | cohens_kappa | threshold_for_false_pass_target';

COMMENT ON COLUMN judge_quality.weighting IS 'raw (labelled items) | weighted (population)';

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

COMMENT ON COLUMN judgment_cache.model IS 'model id or path + backend tag (+int8, +openvino-int8 …)';

COMMENT ON COLUMN judgment_cache.revision IS 'model revision; '''' when none was pinned';

COMMENT ON COLUMN judgment_cache.sentence_hash IS 'text_hash of the judged sentence';

COMMENT ON COLUMN judgment_cache.window_hash IS 'text_hash of the premise window';

COMMENT ON COLUMN judgment_cache.probabilities IS 'JSON list of softmax probabilities, id2label order';

CREATE TABLE IF NOT EXISTS reader_events (
	event_id VARCHAR(200) NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	event VARCHAR(40) NOT NULL,
	label VARCHAR(200),
	sentence_index INTEGER,
	occurred_at TIMESTAMP WITH TIME ZONE NOT NULL,
	loaded_at TIMESTAMP WITH TIME ZONE NOT NULL,
	load_id INTEGER,
	PRIMARY KEY (event_id)
);

CREATE INDEX IF NOT EXISTS ix_reader_events_turn ON reader_events (turn_id);

COMMENT ON TABLE reader_events IS 'what readers did with citations (SPEC 1); an event whose turn is not loaded yet is kept';

COMMENT ON COLUMN reader_events.event_id IS 'the app''s id of the event: a reload is idempotent by it';

COMMENT ON COLUMN reader_events.turn_id IS 'the answer it belongs to (counted on that turn''s metric day)';

COMMENT ON COLUMN reader_events.event IS 'citation_shown | citation_opened | source_reported';

COMMENT ON COLUMN reader_events.label IS 'the citation label as the turn carries it (S2, D3)';

COMMENT ON COLUMN reader_events.loaded_at IS 'the database''s clock when its load batch committed';

COMMENT ON COLUMN reader_events.load_id IS 'the source_loads batch that wrote it (null: another loader)';

CREATE TABLE IF NOT EXISTS recite_suggestions (
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	kind VARCHAR(20) NOT NULL,
	sentence TEXT NOT NULL,
	cited_labels JSON NOT NULL,
	suggested_labels JSON NOT NULL,
	source TEXT,
	document_id VARCHAR(200),
	version VARCHAR(100),
	judge VARCHAR(40),
	score FLOAT,
	quote TEXT,
	auto_apply BOOLEAN NOT NULL,
	caution VARCHAR(200),
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id, sentence_index)
);

COMMENT ON TABLE recite_suggestions IS 'For each miscited sentence the passage(s) that support it; for each uncited but supported one, the citation to add';

COMMENT ON COLUMN recite_suggestions.kind IS '''miscited'' or ''uncited''';

COMMENT ON COLUMN recite_suggestions.sentence IS 'the sentence, markers removed';

COMMENT ON COLUMN recite_suggestions.cited_labels IS 'labels the sentence cites (JSON list)';

COMMENT ON COLUMN recite_suggestions.suggested_labels IS 'labels that support it (JSON list)';

COMMENT ON COLUMN recite_suggestions.source IS 'source of the (first) suggested passage';

COMMENT ON COLUMN recite_suggestions.document_id IS 'document id of the suggested passage';

COMMENT ON COLUMN recite_suggestions.version IS 'version of the suggested passage';

COMMENT ON COLUMN recite_suggestions.judge IS 'the judge that found the supporting passage';

COMMENT ON COLUMN recite_suggestions.score IS 'that judge''s entailment score for the passage, when it gives one';

COMMENT ON COLUMN recite_suggestions.quote IS 'a verified LLM quote from the suggested passage, when there is one';

COMMENT ON COLUMN recite_suggestions.auto_apply IS 'safe to re-cite without a person looking';

COMMENT ON COLUMN recite_suggestions.caution IS 'why not auto-appliable: first_stage_only, has_numbers, ...';

CREATE TABLE IF NOT EXISTS reports (
	day DATE NOT NULL,
	run_id VARCHAR(64),
	trend_days INTEGER NOT NULL,
	html TEXT NOT NULL,
	rendered_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (day)
);

COMMENT ON TABLE reports IS 'daily HTML report (citecheck report); holds answer and passage text';

COMMENT ON COLUMN reports.run_id IS 'the run whose published rows it shows, if rendered by one';

COMMENT ON COLUMN reports.trend_days IS 'days of history in the trend charts';

CREATE TABLE IF NOT EXISTS review_items (
	sample_id VARCHAR(40) NOT NULL,
	item_id VARCHAR(40) NOT NULL,
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	cited_labels JSON NOT NULL,
	stratum VARCHAR(200) NOT NULL,
	stratum_size INTEGER NOT NULL,
	stratum_sampled INTEGER NOT NULL,
	inclusion_probability FLOAT NOT NULL,
	exported_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (sample_id, item_id)
);

CREATE INDEX IF NOT EXISTS ix_review_items_item ON review_items (item_id);

COMMENT ON TABLE review_items IS 'a stratified review sample; weights 1 / inclusion_probability give the population back';

COMMENT ON COLUMN review_items.sample_id IS 'FROM..TO of the export (re-export replaces it)';

COMMENT ON COLUMN review_items.item_id IS 'stable id of (day, turn, sentence)';

COMMENT ON COLUMN review_items.cited_labels IS 'resolved labels the reviewer grades';

COMMENT ON COLUMN review_items.stratum IS 'final verdict | deciding judge at export';

COMMENT ON COLUMN review_items.stratum_size IS 'judged sentences of the stratum in the range';

COMMENT ON COLUMN review_items.inclusion_probability IS 'stratum_sampled / stratum_size';

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
	completed_steps JSON,
	lock_generation INTEGER,
	source_load_id INTEGER,
	PRIMARY KEY (run_id)
);

CREATE INDEX IF NOT EXISTS ix_runs_day ON runs (day);

COMMENT ON COLUMN runs.completed_steps IS 'steps after the publish commit that completed (monitor, report, record_run): what a later run of the day completes';

COMMENT ON COLUMN runs.lock_generation IS 'the generation of the day''s lock this run took (its fencing token)';

COMMENT ON COLUMN runs.source_load_id IS 'the highest source_loads id committed when the run began reading: rows of later batches are input it has not seen';

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
	first_stage JSON,
	best_windows JSON,
	figures JSON,
	figure_values JSON,
	language VARCHAR(16),
	language_source VARCHAR(10),
	language_rules_generic BOOLEAN,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id, sentence_index)
);

COMMENT ON COLUMN sentence_verdicts.first_stage IS 'cascade: the first stage''s {judge, version, supported, score}';

COMMENT ON COLUMN sentence_verdicts.best_windows IS 'NLI judge: best premise window per cited or supporting label';

COMMENT ON COLUMN sentence_verdicts.figures IS 'check-worthy sentences: [{text, kind, value, traced}] (SPEC 3.5); traced null: no cited text';

COMMENT ON COLUMN sentence_verdicts.figure_values IS 'the figures without their written text: [{kind, value, traced}] (what the BI role reads)';

COMMENT ON COLUMN sentence_verdicts.language IS 'the turn''s language: ISO 639 code of its logged language/locale, else detected; und';

COMMENT ON COLUMN sentence_verdicts.language_source IS 'logged | detected';

COMMENT ON COLUMN sentence_verdicts.language_rules_generic IS 'the turn''s language has no shipped rules: split and read by the generic (Unicode) rules';

CREATE TABLE IF NOT EXISTS skipped_turns (
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	reason TEXT NOT NULL,
	run_id VARCHAR(64) NOT NULL,
	config_hash VARCHAR(32) NOT NULL,
	judge_versions VARCHAR(400),
	PRIMARY KEY (day, turn_id)
);

CREATE TABLE IF NOT EXISTS source_loads (
	load_id SERIAL NOT NULL,
	kind VARCHAR(10) NOT NULL,
	row_count INTEGER NOT NULL,
	loaded_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
	PRIMARY KEY (load_id)
);

COMMENT ON TABLE source_loads IS 'one row per committed batch of a load: the sequence that tells which days are stale';

COMMENT ON COLUMN source_loads.kind IS 'turns | events';

COMMENT ON COLUMN source_loads.row_count IS 'rows the batch wrote';

COMMENT ON COLUMN source_loads.loaded_at IS 'the database''s clock';

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

CREATE TABLE IF NOT EXISTS source_turn_moves (
	turn_id VARCHAR(200) NOT NULL,
	load_id INTEGER NOT NULL,
	left_answered_at TIMESTAMP WITH TIME ZONE NOT NULL,
	answered_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (turn_id, load_id)
);

CREATE INDEX IF NOT EXISTS ix_source_turn_moves_left ON source_turn_moves (left_answered_at);

COMMENT ON TABLE source_turn_moves IS 'turns a reload moved to another time (perhaps another day): the day they left is stale';

COMMENT ON COLUMN source_turn_moves.load_id IS 'the source_loads batch that moved it';

COMMENT ON COLUMN source_turn_moves.left_answered_at IS 'the answered_at it had before';

COMMENT ON COLUMN source_turn_moves.answered_at IS 'the answered_at it was given';

CREATE TABLE IF NOT EXISTS source_turns (
	turn_id VARCHAR(200) NOT NULL,
	conversation_id VARCHAR(200),
	turn_index INTEGER,
	answered_at TIMESTAMP WITH TIME ZONE,
	question TEXT,
	answer TEXT,
	answer_format VARCHAR(40),
	answer_blocks JSON,
	response JSON,
	request_documents JSON,
	request_search_results JSON,
	web_results JSON,
	attributes JSON,
	loaded_at TIMESTAMP WITH TIME ZONE,
	load_id INTEGER,
	input_repairs JSON,
	language VARCHAR(16),
	language_source VARCHAR(10),
	PRIMARY KEY (turn_id)
);

CREATE INDEX IF NOT EXISTS ix_source_turns_answered_at ON source_turns (answered_at);

CREATE INDEX IF NOT EXISTS ix_source_turns_conversation ON source_turns (conversation_id, turn_index);

COMMENT ON COLUMN source_turns.answer_blocks IS 'anthropic_blocks: the response''s content blocks';

COMMENT ON COLUMN source_turns.response IS 'openai_responses, openai_chat, cohere_v2, gemini: the provider''s response as logged';

COMMENT ON COLUMN source_turns.request_search_results IS 'anthropic_blocks: every search_result block of the request, in order (R<index>)';

COMMENT ON COLUMN source_turns.web_results IS 'the web search results the turn logged (W<k>)';

COMMENT ON COLUMN source_turns.loaded_at IS 'the database''s clock when its load batch committed';

COMMENT ON COLUMN source_turns.load_id IS 'the source_loads batch that wrote it (null: another loader)';

COMMENT ON COLUMN source_turns.input_repairs IS 'what the load repaired: replaced_characters (NUL, lone surrogates), assumed_zone (a timestamp without one)';

COMMENT ON COLUMN source_turns.language IS 'the turn''s language: ISO 639 code of its logged language/locale, else detected; und';

COMMENT ON COLUMN source_turns.language_source IS 'logged | detected';

CREATE TABLE IF NOT EXISTS stage_answer_decisions (
	run_id VARCHAR(64) NOT NULL,
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	criteria_failed JSON NOT NULL,
	criteria_hash VARCHAR(32) NOT NULL,
	PRIMARY KEY (run_id, turn_id)
);

COMMENT ON COLUMN stage_answer_decisions.criteria_failed IS 'names of the answers = true criteria it fails';

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
	pointer_problem VARCHAR(40),
	unverified VARCHAR(200),
	PRIMARY KEY (run_id, turn_id, sentence_index, label)
);

COMMENT ON COLUMN stage_citation_verdicts.pointer_problem IS 'native citations: the pointer problem kind that makes the label unknown (docs/metrics.md)';

COMMENT ON COLUMN stage_citation_verdicts.unverified IS 'native citations: the fields the job could not verify, comma-joined (e.g. cited_text)';

CREATE TABLE IF NOT EXISTS stage_claim_citation_verdicts (
	run_id VARCHAR(64) NOT NULL,
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	claim_index INTEGER NOT NULL,
	label VARCHAR(200) NOT NULL,
	status VARCHAR(20),
	alone BOOLEAN,
	rest BOOLEAN,
	credited BOOLEAN,
	PRIMARY KEY (run_id, turn_id, sentence_index, claim_index, label)
);

CREATE TABLE IF NOT EXISTS stage_claim_verdicts (
	run_id VARCHAR(64) NOT NULL,
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	claim_index INTEGER NOT NULL,
	conversation_id VARCHAR(200),
	text TEXT,
	labels JSON,
	verdict VARCHAR(40),
	score FLOAT,
	supported_elsewhere_by VARCHAR(400),
	judge VARCHAR(40),
	judge_version VARCHAR(400),
	reason TEXT,
	figures JSON,
	figure_values JSON,
	PRIMARY KEY (run_id, turn_id, sentence_index, claim_index)
);

COMMENT ON COLUMN stage_claim_verdicts.text IS 'the claim as the judge saw it (a standalone sentence)';

COMMENT ON COLUMN stage_claim_verdicts.labels IS 'its sentence''s labels (JSON list): every claim carries them all';

COMMENT ON COLUMN stage_claim_verdicts.verdict IS 'supported, miscited, uncited_supported, unsupported, unjudged, not_selected, partial, contradicted';

COMMENT ON COLUMN stage_claim_verdicts.reason IS 'why unjudged';

COMMENT ON COLUMN stage_claim_verdicts.figures IS 'the claim''s own figures: [{text, kind, value, traced}] (SPEC 3.5), traced against its links; traced null: no cited text';

COMMENT ON COLUMN stage_claim_verdicts.figure_values IS 'the claim''s figures without their written text: [{kind, value, traced}] (the BI role''s)';

CREATE TABLE IF NOT EXISTS stage_criteria_results (
	run_id VARCHAR(64) NOT NULL,
	day DATE NOT NULL,
	criterion VARCHAR(200) NOT NULL,
	scope VARCHAR(400) NOT NULL,
	metric VARCHAR(80) NOT NULL,
	bound_kind VARCHAR(3),
	bound FLOAT,
	on_rule VARCHAR(10) NOT NULL,
	averaging VARCHAR(10) NOT NULL,
	value FLOAT,
	ci_low FLOAT,
	ci_high FLOAT,
	numerator FLOAT,
	denominator FLOAT,
	answers INTEGER NOT NULL,
	failing_answers INTEGER NOT NULL,
	decision VARCHAR(10) NOT NULL,
	criteria_hash VARCHAR(32) NOT NULL,
	PRIMARY KEY (run_id, criterion)
);

COMMENT ON COLUMN stage_criteria_results.criterion IS 'the criterion''s name (SPEC 5.1)';

COMMENT ON COLUMN stage_criteria_results.scope IS 'all, or key=value|value; ... as written in `where`';

COMMENT ON COLUMN stage_criteria_results.bound_kind IS 'min or max (null: a gate-only criterion)';

COMMENT ON COLUMN stage_criteria_results.on_rule IS 'value (the point estimate) or interval (95%%)';

COMMENT ON COLUMN stage_criteria_results.answers IS 'answers in scope';

COMMENT ON COLUMN stage_criteria_results.failing_answers IS 'answers = true: answers in scope breaking the bound';

COMMENT ON COLUMN stage_criteria_results.decision IS 'pass | fail | no_data';

COMMENT ON COLUMN stage_criteria_results.criteria_hash IS 'hash of the criteria the day was decided on';

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
	ci_low FLOAT,
	ci_high FLOAT,
	computed_at TIMESTAMP WITH TIME ZONE,
	PRIMARY KEY (run_id, slice_name, slice_value, metric, averaging)
);

COMMENT ON COLUMN stage_daily_metrics.ci_low IS 'lower end of the 95 per cent interval of a judged rate, answers as clusters; null when not judged or the value is null (docs/metrics.md)';

COMMENT ON COLUMN stage_daily_metrics.ci_high IS 'upper end of the interval of ci_low';

CREATE TABLE IF NOT EXISTS stage_judgments (
	run_id VARCHAR(64) NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	stage VARCHAR(20) NOT NULL,
	judgment JSON NOT NULL,
	PRIMARY KEY (run_id, turn_id, sentence_index, stage)
);

CREATE TABLE IF NOT EXISTS stage_partials (
	run_id VARCHAR(64) NOT NULL,
	step VARCHAR(40) NOT NULL,
	shard INTEGER NOT NULL,
	state JSON NOT NULL,
	PRIMARY KEY (run_id, step, shard)
);

COMMENT ON TABLE stage_partials IS 'one run''s compact partial states: per (step, shard) what the combine step adds up';

CREATE TABLE IF NOT EXISTS stage_recite_suggestions (
	run_id VARCHAR(64) NOT NULL,
	day DATE NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	sentence_index INTEGER NOT NULL,
	kind VARCHAR(20) NOT NULL,
	sentence TEXT NOT NULL,
	cited_labels JSON NOT NULL,
	suggested_labels JSON NOT NULL,
	source TEXT,
	document_id VARCHAR(200),
	version VARCHAR(100),
	judge VARCHAR(40),
	score FLOAT,
	quote TEXT,
	auto_apply BOOLEAN NOT NULL,
	caution VARCHAR(200),
	PRIMARY KEY (run_id, turn_id, sentence_index)
);

COMMENT ON COLUMN stage_recite_suggestions.kind IS '''miscited'' or ''uncited''';

COMMENT ON COLUMN stage_recite_suggestions.sentence IS 'the sentence, markers removed';

COMMENT ON COLUMN stage_recite_suggestions.cited_labels IS 'labels the sentence cites (JSON list)';

COMMENT ON COLUMN stage_recite_suggestions.suggested_labels IS 'labels that support it (JSON list)';

COMMENT ON COLUMN stage_recite_suggestions.source IS 'source of the (first) suggested passage';

COMMENT ON COLUMN stage_recite_suggestions.document_id IS 'document id of the suggested passage';

COMMENT ON COLUMN stage_recite_suggestions.version IS 'version of the suggested passage';

COMMENT ON COLUMN stage_recite_suggestions.judge IS 'the judge that found the supporting passage';

COMMENT ON COLUMN stage_recite_suggestions.score IS 'that judge''s entailment score for the passage, when it gives one';

COMMENT ON COLUMN stage_recite_suggestions.quote IS 'a verified LLM quote from the suggested passage, when there is one';

COMMENT ON COLUMN stage_recite_suggestions.auto_apply IS 'safe to re-cite without a person looking';

COMMENT ON COLUMN stage_recite_suggestions.caution IS 'why not auto-appliable: first_stage_only, has_numbers, ...';

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
	first_stage JSON,
	best_windows JSON,
	figures JSON,
	figure_values JSON,
	language VARCHAR(16),
	language_source VARCHAR(10),
	language_rules_generic BOOLEAN,
	PRIMARY KEY (run_id, turn_id, sentence_index)
);

COMMENT ON COLUMN stage_sentence_verdicts.first_stage IS 'cascade: the first stage''s {judge, version, supported, score}';

COMMENT ON COLUMN stage_sentence_verdicts.best_windows IS 'NLI judge: best premise window per cited or supporting label';

COMMENT ON COLUMN stage_sentence_verdicts.figures IS 'check-worthy sentences: [{text, kind, value, traced}] (SPEC 3.5); traced null: no cited text';

COMMENT ON COLUMN stage_sentence_verdicts.figure_values IS 'the figures without their written text: [{kind, value, traced}] (what the BI role reads)';

COMMENT ON COLUMN stage_sentence_verdicts.language IS 'the turn''s language: ISO 639 code of its logged language/locale, else detected; und';

COMMENT ON COLUMN stage_sentence_verdicts.language_source IS 'logged | detected';

COMMENT ON COLUMN stage_sentence_verdicts.language_rules_generic IS 'the turn''s language has no shipped rules: split and read by the generic (Unicode) rules';

CREATE TABLE IF NOT EXISTS stage_skipped (
	run_id VARCHAR(64) NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	reason TEXT NOT NULL,
	shard INTEGER,
	PRIMARY KEY (run_id, turn_id)
);

COMMENT ON COLUMN stage_skipped.shard IS 'the shard whose structural step skipped it';

CREATE TABLE IF NOT EXISTS stage_turns (
	run_id VARCHAR(64) NOT NULL,
	turn_id VARCHAR(200) NOT NULL,
	shard INTEGER NOT NULL,
	selected BOOLEAN NOT NULL,
	structured JSON NOT NULL,
	PRIMARY KEY (run_id, turn_id)
);

CREATE INDEX IF NOT EXISTS ix_stage_turns_shard ON stage_turns (run_id, shard);
