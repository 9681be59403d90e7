-- Generated from metrics.HEADLINE_METRICS by `python -m citecheck ddl --views`. Do not edit.
-- Dashboard view: the day's overall metrics, one column per headline metric (micro averaging);
-- a judged metric also has its 95% interval, <metric>_ci_low and <metric>_ci_high (docs/metrics.md).
CREATE OR REPLACE VIEW daily_metrics_wide AS
SELECT day,
       MAX(run_id) AS run_id,
       MAX(config_hash) AS config_hash,
       MAX(CASE WHEN metric = 'attachment_rate' THEN value END) AS attachment_rate,
       MAX(CASE WHEN metric = 'citation_recall' THEN value END) AS citation_recall,
       MAX(CASE WHEN metric = 'citation_recall' THEN ci_low END) AS citation_recall_ci_low,
       MAX(CASE WHEN metric = 'citation_recall' THEN ci_high END) AS citation_recall_ci_high,
       MAX(CASE WHEN metric = 'citation_precision' THEN value END) AS citation_precision,
       MAX(CASE WHEN metric = 'citation_precision' THEN ci_low END) AS citation_precision_ci_low,
       MAX(CASE WHEN metric = 'citation_precision' THEN ci_high END) AS citation_precision_ci_high,
       MAX(CASE WHEN metric = 'citation_f1' THEN value END) AS citation_f1,
       MAX(CASE WHEN metric = 'citation_f1' THEN ci_low END) AS citation_f1_ci_low,
       MAX(CASE WHEN metric = 'citation_f1' THEN ci_high END) AS citation_f1_ci_high,
       MAX(CASE WHEN metric = 'support_rate_of_cited' THEN value END) AS support_rate_of_cited,
       MAX(CASE WHEN metric = 'support_rate_of_cited' THEN ci_low END) AS support_rate_of_cited_ci_low,
       MAX(CASE WHEN metric = 'support_rate_of_cited' THEN ci_high END) AS support_rate_of_cited_ci_high,
       MAX(CASE WHEN metric = 'faithfulness' THEN value END) AS faithfulness,
       MAX(CASE WHEN metric = 'faithfulness' THEN ci_low END) AS faithfulness_ci_low,
       MAX(CASE WHEN metric = 'faithfulness' THEN ci_high END) AS faithfulness_ci_high,
       MAX(CASE WHEN metric = 'unknown_label_rate' THEN value END) AS unknown_label_rate,
       MAX(CASE WHEN metric = 'miscited_rate' THEN value END) AS miscited_rate,
       MAX(CASE WHEN metric = 'miscited_rate' THEN ci_low END) AS miscited_rate_ci_low,
       MAX(CASE WHEN metric = 'miscited_rate' THEN ci_high END) AS miscited_rate_ci_high,
       MAX(CASE WHEN metric = 'uncited_supported_rate' THEN value END) AS uncited_supported_rate,
       MAX(CASE WHEN metric = 'uncited_supported_rate' THEN ci_low END) AS uncited_supported_rate_ci_low,
       MAX(CASE WHEN metric = 'uncited_supported_rate' THEN ci_high END) AS uncited_supported_rate_ci_high,
       MAX(CASE WHEN metric = 'unsupported_rate' THEN value END) AS unsupported_rate,
       MAX(CASE WHEN metric = 'unsupported_rate' THEN ci_low END) AS unsupported_rate_ci_low,
       MAX(CASE WHEN metric = 'unsupported_rate' THEN ci_high END) AS unsupported_rate_ci_high,
       MAX(CASE WHEN metric = 'refusal_rate' THEN value END) AS refusal_rate,
       MAX(CASE WHEN metric = 'unjudged_rate' THEN value END) AS unjudged_rate,
       MAX(CASE WHEN metric = 'unjudged_rate' THEN ci_low END) AS unjudged_rate_ci_low,
       MAX(CASE WHEN metric = 'unjudged_rate' THEN ci_high END) AS unjudged_rate_ci_high,
       MAX(CASE WHEN metric = 'attachment_rate' THEN answers END) AS answers
FROM daily_metrics
WHERE slice_name = 'all' AND averaging = 'micro'
GROUP BY day;
