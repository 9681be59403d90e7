"""What every metric is (SPEC §5): its numerator and denominator counts and its scale, grouped by
the population it covers, and the lists that name metrics for the products that show them.

A metric is a `Ratio` of two counts (`citecheck.core.metrics.counts` says how each count is
taken); scale 1 metrics are rates in [0, 1], scale 1000 ones are counts per 1,000 answers.
"""

from __future__ import annotations

from citecheck.core.formats import POINTER_PROBLEM_KINDS
from citecheck.core.reader_events import READER_COUNT_KEYS
from citecheck.core.verdicts import MISCITED, UNSUPPORTED

# metric -> (numerator count, denominator count, scale)
METRICS: dict[str, tuple[str, str, float]] = {
    # structural, every turn of the day (SPEC §3): labels and markers
    "unknown_label_rate": ("unknown_labels", "citations", 1.0),
    "unknown_labels_per_1000_answers": ("unknown_labels", "answers", 1000.0),
    # an answer a runtime checker would rewrite or block (any unknown label, an unsupported or
    # miscited judged sentence), per 1,000 answers
    "rewrite_or_block_per_1000_answers": ("answers_rewrite_or_block", "answers", 1000.0),
    "stale_label_rate": ("stale_labels", "citations", 1.0),
    "attachment_rate": ("attached", "check_worthy_sentences", 1.0),
    "refusal_rate": ("refusals", "answers", 1.0),
    "multi_citation_share": ("multi_citation_sentences", "attached", 1.0),  # padding alarm: >= 3 citations
    "marker_after_stop_share": ("markers_after_stop", "markers", 1.0),
    "cited_char_share": ("native_cited_chars", "native_answer_chars", 1.0),
    "non_claim_citation_share": ("citations_on_non_claims", "citations", 1.0),
    # native citations (SPEC §3.4): pointer problems (all kinds, then each kind; they also count in
    # unknown_label_rate), citations with a field the job could not verify
    "pointer_problem_rate": ("pointer_problem_citations", "citations", 1.0),
    **{f"pointer_problem_rate_{kind}": (f"pointer_problem_citations_{kind}", "citations", 1.0)
       for kind in POINTER_PROBLEM_KINDS},
    "unverified_citation_share": ("unverified_citations", "citations", 1.0),
    # judged, the turns selected for judging, unjudged sentences excluded (SPEC §4-5)
    "citation_recall": ("supported", "judged_sentences", 1.0),
    "citation_precision": ("credited_citations", "judged_citations", 1.0),
    "support_rate_of_cited": ("supported", "judged_attached", 1.0),
    "faithfulness": ("faithful", "judged_sentences", 1.0),
    "judged_attachment_rate": ("judged_attached", "judged_sentences", 1.0),
    "miscited_rate": ("miscited", "judged_sentences", 1.0),
    "uncited_supported_rate": ("uncited_supported", "judged_sentences", 1.0),
    "unsupported_rate": ("unsupported", "judged_sentences", 1.0),
    "partial_rate": ("partial", "judged_sentences", 1.0),
    "contradicted_rate": ("contradicted", "judged_sentences", 1.0),
    "unjudged_rate": ("unjudged_sentences", "selected_sentences", 1.0),
    # of those, sentences whose cited sources were all logged without text (no judge could see them)
    "no_source_text_rate": ("no_source_text_sentences", "selected_sentences", 1.0),
    # judge agreement on the LLM's random sample (SPEC §5): does the first stage agree with the LLM?
    "first_stage_agreement": ("first_stage_agree", "agreement_sample", 1.0),
    "first_stage_false_pass_rate": ("first_stage_false_pass", "agreement_sample_llm_unsupported", 1.0),
    "first_stage_false_fail_rate": ("first_stage_false_fail", "agreement_sample_llm_supported", 1.0),
    # reader events (citecheck.core.reader_events): counted on the turn's day, null on a day that logs none
    "citation_open_rate": ("citations_opened", "citations_shown", 1.0),
    "citation_opens_per_1000_answers": ("citation_opens", "reader_answers", 1000.0),
    "source_reports_per_1000_answers": ("source_reports", "reader_answers", 1000.0),
    # judged: reported citations whose sentence was judged, those the judges did not credit
    "reported_citation_unsupported_share": ("reported_citations_uncredited", "judged_reported_citations", 1.0),
    # claims (SPEC §2.1), in a claims mode only: a link is one (claim, label) pair; structural over
    # every turn, judged over the selected turns' judged claims
    "claims_per_sentence": ("check_worthy_claims", "check_worthy_sentences", 1.0),
    "claim_attachment_rate": ("claim_attached", "check_worthy_claims", 1.0),
    "claim_recall": ("supported_claims", "judged_claims", 1.0),
    "claim_precision": ("credited_claim_links", "judged_claim_links", 1.0),
    "claim_faithfulness": ("faithful_claims", "judged_claims", 1.0),
    "claim_judged_attachment_rate": ("judged_claim_attached", "judged_claims", 1.0),
    "claim_miscited_rate": ("miscited_claims", "judged_claims", 1.0),
    "claim_uncited_supported_rate": ("uncited_supported_claims", "judged_claims", 1.0),
    "claim_unsupported_rate": ("unsupported_claims", "judged_claims", 1.0),
    "partially_supported_rate": ("partially_supported", "judged_sentences", 1.0),
}
# Derived from two metrics, not from counts: the harmonic mean of recall and precision.
DERIVED = ("citation_f1",)
COUNT_KEYS = (
    "answers", "refusals", "sentences", "check_worthy_sentences", "attached", "citations", "unknown_labels",
    "stale_labels", "pointer_problems", "citations_on_non_claims", "multi_citation_sentences", "markers",
    "markers_after_stop", "sentences_with_repeated_labels", "native_answer_chars", "native_cited_chars",
    "judged_answers", "selected_sentences", "judged_sentences", "unjudged_sentences", "judged_attached",
    "judged_citations", "credited_citations", "supported", "miscited", "uncited_supported", "unsupported",
    "partial", "contradicted", "faithful", "agreement_sample", "first_stage_agree",
    "agreement_sample_llm_supported", "agreement_sample_llm_unsupported", "first_stage_false_pass",
    "first_stage_false_fail", "answers_rewrite_or_block", "pointer_problem_citations",
    *(f"pointer_problem_citations_{kind}" for kind in POINTER_PROBLEM_KINDS), "unverified_citations",
    "no_source_text_sentences", *READER_COUNT_KEYS,
)
# The counts of a claims mode (SPEC §2.1): absent from a sentence-mode output, which stays as it
# was without claims; `claim_splits_rejected` counts splits kept whole because they added content.
CLAIM_COUNT_KEYS = (
    "check_worthy_claims", "claim_attached", "judged_claims", "judged_claim_attached", "judged_claim_links",
    "credited_claim_links", "supported_claims", "faithful_claims", "miscited_claims", "uncited_supported_claims",
    "unsupported_claims", "partially_supported", "claim_splits_rejected",
)
COUNT_KEYS = (*COUNT_KEYS, *CLAIM_COUNT_KEYS)
# The metrics a claims mode adds; a sentence-mode output has none of them.
CLAIM_METRICS = frozenset(m for m, (num, _, _) in METRICS.items() if num in CLAIM_COUNT_KEYS)
# The unjudged reason of a sentence whose cited sources were all logged without text (SPEC §3.4).
NO_SOURCE_TEXT = "no_source_text"
METRIC_NAMES = (*METRICS, *DERIVED)
# scale 1 metrics that are not rates: claims per check-worthy sentence (1 or more)
NOT_RATES = frozenset({"claims_per_sentence"})
RATE_METRICS = tuple(m for m, (_, _, scale) in METRICS.items() if scale == 1.0 and m not in NOT_RATES) + DERIVED
JUDGED_METRICS = frozenset(m for m, (_, den, _) in METRICS.items() if den.startswith(("judged", "selected"))
                           or den.startswith("agreement")) | frozenset(DERIVED)
READER_METRICS = ("citation_open_rate", "citation_opens_per_1000_answers", "source_reports_per_1000_answers",
                  "reported_citation_unsupported_share")
# Metrics of whole answers: a slice of sentences (has_number, multi_citation) does not have them.
TURN_LEVEL_METRICS = frozenset({"refusal_rate", "unknown_labels_per_1000_answers", "cited_char_share",
                                "rewrite_or_block_per_1000_answers", *READER_METRICS})
REWRITE_OR_BLOCK_VERDICTS = frozenset({UNSUPPORTED, MISCITED})
# SPEC §5 invariant: citation_recall is at most each of these, per slice and averaging.
RECALL_UPPER_BOUNDS = ("judged_attachment_rate", "faithfulness")
CLAIM_RECALL_UPPER_BOUNDS = ("claim_judged_attachment_rate", "claim_faithfulness")
# Two different thresholds on purpose: the `multi_citation` slice holds sentences with two or
# more citations; `multi_citation_share` counts sentences with three or more (a padding signal).
MULTI_CITATION_SLICE_MIN = 2
PADDING_MIN_CITATIONS = 3

# --- which metrics each product shows --------------------------------------------------------
# The rates a dashboard leads with: the CLI summary, `bin/run_dag.py`, `citecheck compare` and the
# `daily_metrics_wide` view (one column each), in this order.
HEADLINE_METRICS = (
    "attachment_rate", "citation_recall", "citation_precision", "citation_f1", "support_rate_of_cited",
    "faithfulness", "unknown_label_rate", "miscited_rate", "uncited_supported_rate", "unsupported_rate",
    "refusal_rate", "unjudged_rate", "citation_open_rate", "source_reports_per_1000_answers",
    "reported_citation_unsupported_share",
)
# The headline metrics a scored file has without the warehouse's reader events (`score`, `compare`).
SCORED_HEADLINE_METRICS = tuple(m for m in HEADLINE_METRICS if m not in READER_METRICS)
# The daily report's tiles and trend charts: the headline rates a reader acts on, with the
# per-1,000-answer counts and the padding alarm in place of the rates they restate.
REPORT_TILE_METRICS = (
    "citation_recall", "citation_precision", "citation_f1", "faithfulness", "attachment_rate",
    "unknown_labels_per_1000_answers", "multi_citation_share", "rewrite_or_block_per_1000_answers",
    "miscited_rate", "unsupported_rate", "refusal_rate", "unjudged_rate",
)
