-- Generated from include/citecheck/warehouse/grants.py by `python -m citecheck grant-bi --print`. Do not edit.
-- Read-only access for dashboard users to the published tables and views, nothing else.
-- Create the role first, e.g.: CREATE ROLE citecheck_bi LOGIN PASSWORD '...';
-- Publish replaces rows (DELETE + INSERT) and views are CREATE OR REPLACE, so grants persist.
GRANT USAGE ON SCHEMA "public" TO "citecheck_bi";
GRANT SELECT ON "public"."daily_metrics", "public"."daily_metrics_wide", "public"."sentence_verdicts", "public"."citation_verdicts", "public"."skipped_turns", "public"."runs", "public"."recite_suggestions", "public"."alerts", "public"."judge_quality", "public"."calibrated_metrics" TO "citecheck_bi";
