-- Example dashboard queries over the published tables.

-- 1. Headline trend: recall, precision and attachment per day (overall, micro).
SELECT day, citation_recall, citation_precision, attachment_rate, faithfulness, answers
FROM daily_metrics_wide
ORDER BY day;

-- 2. Recall by assistant model, with its numerator and denominator, last 30 days.
SELECT day, slice_value AS model, numerator, denominator, value
FROM daily_metrics
WHERE metric = 'citation_recall' AND averaging = 'micro' AND slice_name = 'attribute:model'
ORDER BY day, model;

-- 3. Micro vs macro recall side by side (long answers vs each answer one vote).
SELECT day,
       MAX(CASE WHEN averaging = 'micro' THEN value END) AS recall_micro,
       MAX(CASE WHEN averaging = 'macro' THEN value END) AS recall_macro
FROM daily_metrics
WHERE metric = 'citation_recall' AND slice_name = 'all'
GROUP BY day ORDER BY day;

-- 4. Drill down: the miscited sentences of a day and the passage that would support them.
SELECT turn_id, sentence_index, text, labels, supported_elsewhere_by, judge, judge_version
FROM sentence_verdicts
WHERE day = DATE '2026-11-24' AND verdict = 'miscited'
ORDER BY turn_id, sentence_index;

-- 5. Unknown and stale labels per day.
SELECT day, status, COUNT(*) AS citations
FROM citation_verdicts
WHERE status <> 'resolved'
GROUP BY day, status ORDER BY day, status;

-- 6. Runs and why a day failed validation.
SELECT run_id, day, status, turns_read, turns_scored, turns_skipped, llm_cost_usd, error
FROM runs ORDER BY started_at DESC;
