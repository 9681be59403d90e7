-- Generated from include/citecheck/warehouse/grants.py by `python -m citecheck grant-bi --print`. Do not edit.
-- Read-only access for dashboard users to the published tables and views, nothing else;
-- no answer, passage or LLM text (`citecheck grant-bi --with-texts` grants those columns too).
-- Create the role first, e.g.: CREATE ROLE citecheck_bi LOGIN PASSWORD '...';
-- Publish replaces rows (DELETE + INSERT) and views are CREATE OR REPLACE, so grants persist.
GRANT USAGE ON SCHEMA "public" TO "citecheck_bi";
GRANT SELECT ON "public"."daily_metrics", "public"."daily_metrics_wide", "public"."citation_verdicts", "public"."skipped_turns", "public"."runs", "public"."alerts", "public"."judge_quality", "public"."calibrated_metrics", "public"."claim_citation_verdicts", "public"."criteria_results", "public"."answer_decisions" TO "citecheck_bi";
REVOKE SELECT ON "public"."sentence_verdicts" FROM "citecheck_bi";
REVOKE SELECT ("text", "llm", "best_windows", "figures") ON "public"."sentence_verdicts" FROM "citecheck_bi";
GRANT SELECT ("day", "turn_id", "sentence_index", "conversation_id", "labels", "unknown_labels", "stale_labels", "check_worthy", "non_claim_reason", "attached", "verdict", "score", "contradiction", "supported_elsewhere_by", "judge", "judge_version", "reason", "first_stage", "figure_values", "language", "language_source", "language_rules_generic", "run_id", "config_hash", "judge_versions") ON "public"."sentence_verdicts" TO "citecheck_bi";
REVOKE SELECT ON "public"."recite_suggestions" FROM "citecheck_bi";
REVOKE SELECT ("sentence", "quote") ON "public"."recite_suggestions" FROM "citecheck_bi";
GRANT SELECT ("day", "turn_id", "sentence_index", "kind", "cited_labels", "suggested_labels", "source", "document_id", "version", "judge", "score", "auto_apply", "caution", "run_id", "config_hash", "judge_versions") ON "public"."recite_suggestions" TO "citecheck_bi";
REVOKE SELECT ON "public"."claim_verdicts" FROM "citecheck_bi";
REVOKE SELECT ("text", "figures") ON "public"."claim_verdicts" FROM "citecheck_bi";
GRANT SELECT ("day", "turn_id", "sentence_index", "claim_index", "conversation_id", "labels", "verdict", "score", "supported_elsewhere_by", "judge", "judge_version", "reason", "figure_values", "run_id", "config_hash", "judge_versions") ON "public"."claim_verdicts" TO "citecheck_bi";
