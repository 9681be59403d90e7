"""Every warehouse table, defined once with SQLAlchemy Core; `sql/schema.sql` is generated from
these definitions by `warehouse.ddl` (`python -m citecheck ddl`), never written by hand; what the
BI role may read is `warehouse.grants`' policy.

Source (reference schema users map their logs onto): `source_turns`, `source_passages`, and the
reader events of the app's interface, `reader_events` (SPEC §1); the loader's ledger, `source_loads`
(one row per committed batch, its `load_id` on the rows it wrote), and `source_turn_moves` (turns a
reload moved to another time): with the `runs.source_load_id` a run saw, they tell which published
days are stale.
Outputs (SPEC §7): `sentence_verdicts`, `citation_verdicts`, `daily_metrics`, `skipped_turns`,
`recite_suggestions`, `runs`, `reports` (the rendered daily report), and the judgment cache;
`alerts` (written by the monitor step after publish). The review loop (`citecheck.review`):
`review_items`, `human_labels`, `judge_quality`, `calibrated_metrics`. Staging tables hold one
run's intermediate data, keyed by `run_id`, and are emptied after publish.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    func,
)

from citecheck.core.turns import MAX_ATTRIBUTE_VALUE_CHARS, MAX_ID_CHARS

metadata = MetaData()
JUDGE_VERSIONS_CHARS = 400  # "judge:version" pairs of a run, comma-joined


def _id() -> String:
    """The width of turn ids, conversation ids and labels (`turns.MAX_ID_CHARS`, enforced on input)."""
    return String(MAX_ID_CHARS)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """Timestamps stored as UTC on every dialect and always returned zone-aware."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):  # type: ignore[no-untyped-def]
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        value = value.astimezone(dt.UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value, dialect):  # type: ignore[no-untyped-def]
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


LANGUAGE_COLUMNS = ("language", "language_source")  # on source_turns written by the load, never extracted
LEDGER_COLUMNS = ("load_id",)  # the load batch of a source row (`warehouse.freshness`), never extracted


def _language_columns() -> list[Column]:
    """The turn's language (SPEC §2.2, `core.languages`): on `source_turns` and `sentence_verdicts`."""
    return [
        Column("language", String(16), nullable=True,
               comment="the turn's language: ISO 639 code of its logged language/locale, else detected; und"),
        Column("language_source", String(10), nullable=True, comment="logged | detected"),
    ]


# --- source: the logged turns -------------------------------------------------------------
source_turns = Table(
    "source_turns", metadata,
    Column("turn_id", _id(), primary_key=True),
    Column("conversation_id", _id(), nullable=True),
    Column("turn_index", Integer, nullable=True),
    Column("answered_at", UTCDateTime, nullable=True),
    Column("question", Text, nullable=True),
    Column("answer", Text, nullable=True),
    Column("answer_format", String(40), nullable=True),
    Column("answer_blocks", JSON, nullable=True, comment="anthropic_blocks: the response's content blocks"),
    Column("response", JSON, nullable=True,
           comment="openai_responses, openai_chat, cohere_v2, gemini: the provider's response as logged"),
    Column("request_documents", JSON, nullable=True),
    Column("request_search_results", JSON, nullable=True,
           comment="anthropic_blocks: every search_result block of the request, in order (R<index>)"),
    Column("web_results", JSON, nullable=True, comment="the web search results the turn logged (W<k>)"),
    Column("attributes", JSON, nullable=True),
    Column("loaded_at", UTCDateTime, nullable=True, comment="the database's clock when its load batch committed"),
    Column("load_id", Integer, nullable=True, comment="the source_loads batch that wrote it (null: another loader)"),
    Column("input_repairs", JSON, nullable=True, comment="what the load repaired: replaced_characters (NUL, "
                                                         "lone surrogates), assumed_zone (a timestamp without one)"),
    *_language_columns(),
    Index("ix_source_turns_answered_at", "answered_at"),
    Index("ix_source_turns_conversation", "conversation_id", "turn_index"),
)

source_passages = Table(
    "source_passages", metadata,
    Column("turn_id", _id(), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("label", _id(), nullable=True),
    Column("source", Text, nullable=True),
    Column("text", Text, nullable=True),
    Column("document_id", String(200), nullable=True),
    Column("version", String(100), nullable=True),
)


reader_events = Table(
    "reader_events", metadata,
    Column("event_id", _id(), primary_key=True, comment="the app's id of the event: a reload is idempotent by it"),
    Column("turn_id", _id(), nullable=False, comment="the answer it belongs to (counted on that turn's metric day)"),
    Column("event", String(40), nullable=False, comment="citation_shown | citation_opened | source_reported"),
    Column("label", _id(), nullable=True, comment="the citation label as the turn carries it (S2, D3)"),
    Column("sentence_index", Integer, nullable=True),
    Column("occurred_at", UTCDateTime, nullable=False),
    Column("loaded_at", UTCDateTime, nullable=False, comment="the database's clock when its load batch committed"),
    Column("load_id", Integer, nullable=True, comment="the source_loads batch that wrote it (null: another loader)"),
    Index("ix_reader_events_turn", "turn_id"),
    comment="what readers did with citations (SPEC 1); an event whose turn is not loaded yet is kept",
)

# The loader's ledger (`citecheck.warehouse.source.load`): every batch takes the next id in the
# transaction that writes its rows, in commit order (batches are serialised), so a run that records
# the highest id when it begins reading (`runs.source_load_id`) knows that every row with a higher
# id is input it may not have seen, whatever the loader's clock says.
source_loads = Table(
    "source_loads", metadata,
    Column("load_id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(10), nullable=False, comment="turns | events"),
    Column("row_count", Integer, nullable=False, comment="rows the batch wrote"),
    Column("loaded_at", UTCDateTime, nullable=False, server_default=func.now(), comment="the database's clock"),
    sqlite_autoincrement=True,  # never reuse an id
    comment="one row per committed batch of a load: the sequence that tells which days are stale",
)

# A reload that gave a turn another answered_at: the day it left still counts it until rerun.
source_turn_moves = Table(
    "source_turn_moves", metadata,
    Column("turn_id", _id(), primary_key=True),
    Column("load_id", Integer, primary_key=True, comment="the source_loads batch that moved it"),
    Column("left_answered_at", UTCDateTime, nullable=False, comment="the answered_at it had before"),
    Column("answered_at", UTCDateTime, nullable=False, comment="the answered_at it was given"),
    Index("ix_source_turn_moves_left", "left_answered_at"),
    comment="turns a reload moved to another time (perhaps another day): the day they left is stale",
)


def _day_keys(*extra: Column) -> list[Column]:
    return [Column("day", Date, primary_key=True), *extra]


def _run_columns() -> list[Column]:
    return [
        Column("run_id", String(64), nullable=False),
        Column("config_hash", String(32), nullable=False),
        Column("judge_versions", String(JUDGE_VERSIONS_CHARS), nullable=True),
    ]


def _sentence_columns() -> list[Column]:
    return [
        Column("turn_id", _id(), primary_key=True),
        Column("sentence_index", Integer, primary_key=True),
        Column("conversation_id", _id()),
        Column("text", Text),
        Column("labels", JSON),
        Column("unknown_labels", JSON),
        Column("stale_labels", JSON),
        Column("check_worthy", Boolean),
        Column("non_claim_reason", String(40)),
        Column("attached", Boolean),
        Column("verdict", String(40)),
        Column("score", Float),
        Column("contradiction", Float),
        Column("supported_elsewhere_by", String(400)),
        Column("judge", String(40)),
        Column("judge_version", String(400)),
        Column("reason", Text),
        Column("llm", JSON),
        Column("first_stage", JSON, comment="cascade: the first stage's {judge, version, supported, score}"),
        Column("best_windows", JSON, comment="NLI judge: best premise window per cited or supporting label"),
        Column("figures", JSON, nullable=True,
               comment="check-worthy sentences: [{text, kind, value, traced}] (SPEC 3.5); traced null: no cited text"),
        Column("figure_values", JSON, nullable=True,
               comment="the figures without their written text: [{kind, value, traced}] (what the BI role reads)"),
        *_language_columns(),
        Column("language_rules_generic", Boolean, nullable=True,
               comment="the turn's language has no shipped rules: split and read by the generic (Unicode) rules"),
    ]


def _citation_columns() -> list[Column]:
    return [
        Column("turn_id", _id(), primary_key=True),
        Column("sentence_index", Integer, primary_key=True),
        Column("label", _id(), primary_key=True),
        Column("status", String(20)),
        Column("check_worthy", Boolean),
        Column("alone", Boolean),
        Column("rest", Boolean),
        Column("credited", Boolean),
        Column("pointer_problem", String(40), nullable=True,
               comment="native citations: the pointer problem kind that makes the label unknown (docs/metrics.md)"),
        Column("unverified", String(200), nullable=True,
               comment="native citations: the fields the job could not verify, comma-joined (e.g. cited_text)"),
    ]


def _claim_columns() -> list[Column]:
    """A claim of a check-worthy sentence (SPEC §2.1, a claims mode): judged as a sentence is."""
    return [
        Column("turn_id", _id(), primary_key=True),
        Column("sentence_index", Integer, primary_key=True),
        Column("claim_index", Integer, primary_key=True),
        Column("conversation_id", _id()),
        Column("text", Text, comment="the claim as the judge saw it (a standalone sentence)"),
        Column("labels", JSON, comment="its sentence's labels (JSON list): every claim carries them all"),
        Column("verdict", String(40), comment="supported, miscited, uncited_supported, unsupported, unjudged, "
                                              "not_selected, partial, contradicted"),
        Column("score", Float),
        Column("supported_elsewhere_by", String(400)),
        Column("judge", String(40)),
        Column("judge_version", String(400)),
        Column("reason", Text, comment="why unjudged"),
        Column("figures", JSON, nullable=True,
               comment="the claim's own figures: [{text, kind, value, traced}] (SPEC 3.5), traced against its "
                       "links; traced null: no cited text"),
        Column("figure_values", JSON, nullable=True,
               comment="the claim's figures without their written text: [{kind, value, traced}] (the BI role's)"),
    ]


def _claim_citation_columns() -> list[Column]:
    """A link: one (claim, label) pair (SPEC §2.1)."""
    return [
        Column("turn_id", _id(), primary_key=True),
        Column("sentence_index", Integer, primary_key=True),
        Column("claim_index", Integer, primary_key=True),
        Column("label", _id(), primary_key=True),
        Column("status", String(20)),
        Column("alone", Boolean),
        Column("rest", Boolean),
        Column("credited", Boolean),
    ]


def _metric_columns() -> list[Column]:
    return [
        Column("slice_name", String(200), primary_key=True),
        Column("slice_value", String(MAX_ATTRIBUTE_VALUE_CHARS), primary_key=True),
        Column("metric", String(80), primary_key=True),
        Column("averaging", String(10), primary_key=True),
        Column("numerator", Float),
        Column("denominator", Float),
        Column("value", Float),
        Column("answers", Integer),
        Column("sentences", Integer),
        Column("ci_low", Float, comment="lower end of the 95 per cent interval of a judged rate, answers as"
                                        " clusters; null when not judged or the value is null (docs/metrics.md)"),
        Column("ci_high", Float, comment="upper end of the interval of ci_low"),
        Column("computed_at", UTCDateTime),
    ]


def _suggestion_columns() -> list[Column]:
    return [
        Column("turn_id", String(200), primary_key=True),
        Column("sentence_index", Integer, primary_key=True),
        Column("kind", String(20), nullable=False, comment="'miscited' or 'uncited'"),
        Column("sentence", Text, nullable=False, comment="the sentence, markers removed"),
        Column("cited_labels", JSON, nullable=False, comment="labels the sentence cites (JSON list)"),
        Column("suggested_labels", JSON, nullable=False, comment="labels that support it (JSON list)"),
        Column("source", Text, comment="source of the (first) suggested passage"),
        Column("document_id", String(200), comment="document id of the suggested passage"),
        Column("version", String(100), comment="version of the suggested passage"),
        Column("judge", String(40), comment="the judge that found the supporting passage"),
        Column("score", Float, comment="that judge's entailment score for the passage, when it gives one"),
        Column("quote", Text, comment="a verified LLM quote from the suggested passage, when there is one"),
        Column("auto_apply", Boolean, nullable=False, comment="safe to re-cite without a person looking"),
        Column("caution", String(200), comment="why not auto-appliable: first_stage_only, has_numbers, ..."),
    ]


def _criteria_result_columns() -> list[Column]:
    return [
        Column("criterion", String(200), primary_key=True, comment="the criterion's name (SPEC 5.1)"),
        Column("scope", String(400), nullable=False, comment="all, or key=value|value; ... as written in `where`"),
        Column("metric", String(80), nullable=False),
        Column("bound_kind", String(3), nullable=True, comment="min or max (null: a gate-only criterion)"),
        Column("bound", Float, nullable=True),
        Column("on_rule", String(10), nullable=False, comment="value (the point estimate) or interval (95%)"),
        Column("averaging", String(10), nullable=False),
        Column("value", Float, nullable=True),
        Column("ci_low", Float, nullable=True),
        Column("ci_high", Float, nullable=True),
        Column("numerator", Float, nullable=True),
        Column("denominator", Float, nullable=True),
        Column("answers", Integer, nullable=False, comment="answers in scope"),
        Column("failing_answers", Integer, nullable=False,
               comment="answers = true: answers in scope breaking the bound"),
        Column("decision", String(10), nullable=False, comment="pass | fail | no_data"),
        Column("criteria_hash", String(32), nullable=False, comment="hash of the criteria the day was decided on"),
    ]


def _answer_decision_columns() -> list[Column]:
    return [
        Column("turn_id", _id(), primary_key=True),
        Column("criteria_failed", JSON, nullable=False, comment="names of the answers = true criteria it fails"),
        Column("criteria_hash", String(32), nullable=False),
    ]


# A metric row's interval columns (`_metric_columns`; `init_warehouse` adds them to older warehouses).
METRIC_INTERVAL_COLUMNS = ("ci_low", "ci_high")


def _skipped_columns() -> list[Column]:
    return [
        Column("turn_id", _id(), primary_key=True),
        Column("reason", Text, nullable=False),
    ]


# --- outputs: one day replaced as a whole per publish ------------------------------------
sentence_verdicts = Table("sentence_verdicts", metadata, *_day_keys(*_sentence_columns()), *_run_columns())
citation_verdicts = Table("citation_verdicts", metadata, *_day_keys(*_citation_columns()), *_run_columns())
daily_metrics = Table("daily_metrics", metadata, *_day_keys(*_metric_columns()), *_run_columns())
skipped_turns = Table("skipped_turns", metadata, *_day_keys(*_skipped_columns()), *_run_columns())
claim_verdicts = Table(
    "claim_verdicts", metadata, *_day_keys(*_claim_columns()), *_run_columns(),
    comment="A claims mode (SPEC 2.1): one row per claim of a check-worthy sentence; empty in sentence mode")
claim_citation_verdicts = Table(
    "claim_citation_verdicts", metadata, *_day_keys(*_claim_citation_columns()), *_run_columns(),
    comment="A claims mode: one row per link, a (claim, label) pair")
recite_suggestions = Table(
    "recite_suggestions", metadata, *_day_keys(*_suggestion_columns()), *_run_columns(),
    comment="For each miscited sentence the passage(s) that support it; for each uncited but supported one, "
            "the citation to add")

criteria_results = Table(
    "criteria_results", metadata, *_day_keys(*_criteria_result_columns()), *_run_columns(),
    comment="Each acceptance criterion decided on the day (SPEC 5.1); the day passes only when every one passes")
answer_decisions = Table(
    "answer_decisions", metadata, *_day_keys(*_answer_decision_columns()), *_run_columns(),
    comment="Answers failing an `answers = true` criterion, with the criteria they fail")

alerts = Table(
    "alerts", metadata,
    Column("day", Date, primary_key=True),
    Column("metric", String(80), primary_key=True),
    Column("slice_name", String(200), primary_key=True),
    Column("slice_value", String(400), primary_key=True),
    Column("averaging", String(10), primary_key=True),
    Column("baseline", Float, nullable=False, comment="the metric's median over its history days"),
    Column("value", Float, nullable=False, comment="the day's value"),
    Column("direction", String(4), nullable=False, comment="'up' or 'down'"),
    Column("size", Float, nullable=False, comment="value - baseline"),
    Column("rule", Text, nullable=False, comment="which rule fired and why"),
    Column("group_id", Text, nullable=True, comment="the alert leading its group (metric|averaging|slice): a slice"
                                                    " moving with an overall alert folds under it"),
    Column("folded", Boolean, nullable=True, comment="true: a slice alert folded under its overall alert"),
    Column("run_id", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    comment="Step changes of the daily metrics against their own history; a rerun of a day replaces its alerts",
)

runs = Table(
    "runs", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("day", Date, nullable=False, index=True),
    Column("status", String(20), nullable=False),
    Column("started_at", UTCDateTime),
    Column("finished_at", UTCDateTime),
    Column("turns_read", Integer),
    Column("turns_scored", Integer),
    Column("turns_skipped", Integer),
    Column("turns_judged", Integer),
    Column("share_nli", Float),
    Column("share_llm", Float),
    Column("llm_input_tokens", Integer),
    Column("llm_output_tokens", Integer),
    Column("llm_cost_usd", Float),
    Column("config_hash", String(32)),
    Column("judge", String(40)),
    Column("judge_versions", String(JUDGE_VERSIONS_CHARS)),
    Column("timings", JSON),
    Column("stats", JSON),
    Column("validation", JSON),
    Column("state", JSON),
    Column("error", Text),
    Column("completed_steps", JSON, comment="steps after the publish commit that completed (monitor, report, "
                                            "record_run): what a later run of the day completes"),
    Column("lock_generation", Integer, comment="the generation of the day's lock this run took (its fencing token)"),
    Column("source_load_id", Integer, comment="the highest source_loads id committed when the run began reading: "
                                              "rows of later batches are input it has not seen"),
)

# One run per day at a time (`citecheck.warehouse.locks`): the day's lock and who holds it.
day_locks = Table(
    "day_locks", metadata,
    Column("day", Date, primary_key=True),
    Column("run_id", String(64), nullable=False, comment="the run that holds the day"),
    Column("host", String(255), nullable=True, comment="where the holder took it"),
    Column("pid", Integer, nullable=True, comment="the holding process (CLI runs); null: a lease only (Airflow)"),
    Column("acquired_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False, comment="the lease: renewed by every step of the run"),
    Column("generation", Integer, nullable=True,
           comment="the fencing token: grows with every take of the day; renewals and the publish match it"),
    comment="per-day run lock: a second run of a held day waits or refuses",
)

# The day's rendered HTML report (self-contained), served by the Airflow plugin; a rerun replaces it.
reports = Table(
    "reports", metadata,
    Column("day", Date, primary_key=True),
    Column("run_id", String(64), nullable=True, comment="the run whose published rows it shows, if rendered by one"),
    Column("trend_days", Integer, nullable=False, comment="days of history in the trend charts"),
    Column("html", Text, nullable=False),
    Column("rendered_at", UTCDateTime, nullable=False),
    comment="daily HTML report (citecheck report); holds answer and passage text",
)

# --- staging: one run's intermediate data, keyed by run id --------------------------------
stage_turns = Table(
    "stage_turns", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("turn_id", _id(), primary_key=True),
    Column("shard", Integer, nullable=False),
    Column("selected", Boolean, nullable=False),
    Column("structured", JSON, nullable=False),
    Index("ix_stage_turns_shard", "run_id", "shard"),
)
stage_judgments = Table(
    "stage_judgments", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("turn_id", _id(), primary_key=True),
    Column("sentence_index", Integer, primary_key=True),
    Column("stage", String(20), primary_key=True),
    Column("judgment", JSON, nullable=False),
)
stage_skipped = Table(
    "stage_skipped", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("turn_id", _id(), primary_key=True),
    Column("reason", Text, nullable=False),
    Column("shard", Integer, nullable=True, comment="the shard whose structural step skipped it"),
)
DAY_STATE = -1  # the `shard` of a state of the whole day (the slice cap), not of one shard
stage_partials = Table(
    "stage_partials", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("step", String(40), primary_key=True),
    Column("shard", Integer, primary_key=True),
    Column("state", JSON, nullable=False),
    comment="one run's compact partial states: per (step, shard) what the combine step adds up",
)


def _staged_copy(name: str, columns: list[Column]) -> Table:
    return Table(name, metadata, Column("run_id", String(64), primary_key=True), Column("day", Date, nullable=False),
                 *columns)


stage_sentence_verdicts = _staged_copy("stage_sentence_verdicts", _sentence_columns())
stage_citation_verdicts = _staged_copy("stage_citation_verdicts", _citation_columns())
stage_daily_metrics = _staged_copy("stage_daily_metrics", _metric_columns())
stage_recite_suggestions = _staged_copy("stage_recite_suggestions", _suggestion_columns())
stage_claim_verdicts = _staged_copy("stage_claim_verdicts", _claim_columns())
stage_claim_citation_verdicts = _staged_copy("stage_claim_citation_verdicts", _claim_citation_columns())
stage_criteria_results = _staged_copy("stage_criteria_results", _criteria_result_columns())
stage_answer_decisions = _staged_copy("stage_answer_decisions", _answer_decision_columns())

# --- the NLI judgment cache (SPEC §4): kept across runs, never part of a day -------------
judgment_cache = Table(
    "judgment_cache",
    metadata,
    Column("model", String(500), primary_key=True, comment="model id or path + backend tag (+int8, +openvino-int8 …)"),
    Column("revision", String(200), primary_key=True, comment="model revision; '' when none was pinned"),
    Column("sentence_hash", String(32), primary_key=True, comment="text_hash of the judged sentence"),
    Column("window_hash", String(32), primary_key=True, comment="text_hash of the premise window"),
    Column(
        "probabilities", Text, nullable=False, comment="JSON list of softmax probabilities, id2label order"
    ),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    comment="NLI judge scores, threshold-independent; reruns ask the model nothing",
)

# --- the LLM claim splitter's cache (SPEC §2.1): kept across runs, never part of a day -----
claim_split_cache = Table(
    "claim_split_cache",
    metadata,
    Column("split_key", String(700), primary_key=True,
           comment="model|prompt version|text_hash of the sentence (judges.llm.claims.split_key)"),
    Column("claims", Text, nullable=False, comment="JSON list of the claims the model proposed (verified on use)"),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    comment="LLM claim splits by sentence text, model and prompt version; a rerun of a day asks nothing",
)

# --- the human review loop (issue 12): samples, labels, judge quality, calibrated metrics ---
review_items = Table(
    "review_items", metadata,
    Column("sample_id", String(40), primary_key=True, comment="FROM..TO of the export (re-export replaces it)"),
    Column("item_id", String(40), primary_key=True, comment="stable id of (day, turn, sentence)"),
    Column("day", Date, nullable=False),
    Column("turn_id", _id(), nullable=False),
    Column("sentence_index", Integer, nullable=False),
    Column("cited_labels", JSON, nullable=False, comment="resolved labels the reviewer grades"),
    Column("stratum", String(200), nullable=False, comment="final verdict | deciding judge at export"),
    Column("stratum_size", Integer, nullable=False, comment="judged sentences of the stratum in the range"),
    Column("stratum_sampled", Integer, nullable=False),
    Column("inclusion_probability", Float, nullable=False, comment="stratum_sampled / stratum_size"),
    Column("exported_at", UTCDateTime, nullable=False),
    Index("ix_review_items_item", "item_id"),
    comment="a stratified review sample; weights 1 / inclusion_probability give the population back",
)

human_labels = Table(
    "human_labels", metadata,
    Column("item_id", String(40), primary_key=True),
    Column("reviewer", String(200), primary_key=True),
    Column("label", String(20), nullable=False, comment="supported | partial | not_supported"),
    Column("citation_labels", JSON, nullable=False, comment="{label: full | partial | none}"),
    Column("claim_labels", JSON, nullable=True,
           comment="a claims mode: {claim index: supported | partial | not_supported}; null when not given"),
    Column("source", Text, comment="file and line the label came from"),
    Column("imported_at", UTCDateTime, nullable=False),
    comment="one reviewer's label of one review item; a reimport replaces it",
)


def _period_keys() -> list[Column]:
    return [Column("from_day", Date, primary_key=True), Column("to_day", Date, primary_key=True)]


judge_quality = Table(
    "judge_quality", metadata,
    *_period_keys(),
    Column("judge", String(80), primary_key=True, comment="first_stage | llm | final | reviewers"),
    Column("slice_name", String(200), primary_key=True),
    Column("slice_value", String(MAX_ATTRIBUTE_VALUE_CHARS), primary_key=True),
    Column("measure", String(80), primary_key=True,
           comment="agreement | false_pass | false_fail | cohens_kappa | threshold_for_false_pass_target"),
    Column("weighting", String(20), primary_key=True, comment="raw (labelled items) | weighted (population)"),
    Column("numerator", Float),
    Column("denominator", Float),
    Column("value", Float),
    Column("ci_low", Float),
    Column("ci_high", Float),
    Column("method", String(200)),
    Column("labelled_items", Integer),
    Column("computed_at", UTCDateTime),
    comment="judges against human labels over a period (SPEC 6), per judge and slice, with intervals",
)

calibrated_metrics = Table(
    "calibrated_metrics", metadata,
    *_period_keys(),
    Column("metric", String(80), primary_key=True,
           comment="citation_recall | citation_recall_calibrated | citation_recall_human_only | ..."),
    Column("value", Float),
    Column("ci_low", Float),
    Column("ci_high", Float),
    Column("confidence", Float),
    Column("labelled_items", Integer, comment="labelled review items used"),
    Column("population_items", Integer, comment="judged check-worthy sentences of the period"),
    Column("method", String(200)),
    Column("computed_at", UTCDateTime),
    comment="judge-only, human-only and prediction-powered (human-calibrated) metrics of a period",
)

# Each published output table and its staging copy (`stage_*`: one run's rows until the publish).
# Words: a *step* is one unit of the job's sequence, the *staging* tables hold a run's rows between
# steps, a judge *stage* is the cascade's first stage or its final (LLM) one, never more.
OUTPUT_TABLES = {
    "sentence_verdicts": (sentence_verdicts, stage_sentence_verdicts),
    "citation_verdicts": (citation_verdicts, stage_citation_verdicts),
    "daily_metrics": (daily_metrics, stage_daily_metrics),
    "claim_verdicts": (claim_verdicts, stage_claim_verdicts),
    "claim_citation_verdicts": (claim_citation_verdicts, stage_claim_citation_verdicts),
    "recite_suggestions": (recite_suggestions, stage_recite_suggestions),
    "criteria_results": (criteria_results, stage_criteria_results),
    "answer_decisions": (answer_decisions, stage_answer_decisions),
}
# Every table a publish replaces the day of, in one transaction (`warehouse.publish`): the output
# tables and the day's skipped turns. The DAG's docstring names each (a test checks).
PUBLISHED_TABLES = (*(published for published, _ in OUTPUT_TABLES.values()), skipped_turns)
STAGING_TABLES = (stage_turns, stage_judgments, stage_skipped, stage_partials, stage_sentence_verdicts,
                  stage_citation_verdicts,
                  stage_daily_metrics, stage_recite_suggestions, stage_claim_verdicts, stage_claim_citation_verdicts,
                  stage_criteria_results, stage_answer_decisions)
SOURCE_TABLES = (source_turns, source_passages, reader_events, source_loads, source_turn_moves)
