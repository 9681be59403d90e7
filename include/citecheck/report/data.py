"""What the daily report shows, gathered from the warehouse through its read functions: the
day's headline metrics with intervals and their history, slices, judge agreement and quality,
alerts, the worst sentences with their passages and supporting spans, re-cite suggestions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from citecheck.core import alert_groups as groups
from citecheck.core.metrics import (
    AGREEMENT,
    LANGUAGE_SLICE,
    NATIVE,
    READERS,
    REPORT_TILE_METRICS,
    SLICES,
    UNCHECKED,
    in_report,
)
from citecheck.core.records import split_labels
from citecheck.core.text import find_span
from citecheck.core.vocabulary import BAD_VERDICTS
from citecheck.judges.llm.verify import verified_quotes
from citecheck.judges.nli.settings import is_chunk_version
from citecheck.warehouse import read_model, source
from citecheck.warehouse import tables as T

# what each section shows: the registry's `report` field (`core.metrics.definitions`)
SLICE_METRICS = in_report(SLICES)
AGREEMENT_METRICS = in_report(AGREEMENT)
NATIVE_METRICS = in_report(NATIVE)
READER_METRICS = in_report(READERS)
UNCHECKED_METRICS = in_report(UNCHECKED)  # unjudged sentences, then each reason counted apart
POINTER_PROBLEM_PREFIX = "pointer_problem_rate_"
UNRESOLVED_EVENT_PREFIX = "unresolved_event_share_"  # + a reason (`core.reader_events.UNRESOLVED_REASONS`)
# re-cite suggestions listed on the page: a large day has hundreds of thousands (their counts by kind
# are shown; `citecheck suggestions --day` exports them all)
SUGGESTIONS_SHOWN = 100
MICRO = ("micro",)  # the report charts micro rows (pooled sentences)
GENERIC_RULES_METRIC = "language_rules_generic_share"  # named per language under "What could not be checked"


class ReportError(ValueError):
    """The report cannot be made (bad arguments, or nothing published for the day)."""


@dataclass(frozen=True)
class Evidence:
    """One passage shown under a flagged sentence, split into plain and highlighted segments."""

    label: str
    role: str  # "cited" | "supports"
    passage: Mapping[str, Any] | None
    segments: tuple[tuple[str, bool], ...]
    span_kind: str | None  # "verified LLM quote" | "NLI best window" | "NLI best chunk" | None
    note: str | None = None


@dataclass(frozen=True)
class FlaggedSentence:
    row: Mapping[str, Any]
    evidence: tuple[Evidence, ...]


@dataclass
class ReportData:
    day: dt.date
    trend_days: int
    run: Mapping[str, Any] | None
    headline: list[dict[str, Any]]
    all_metrics: list[dict[str, Any]]
    history: list[dict[str, Any]]
    slices: list[dict[str, Any]]
    agreement: list[dict[str, Any]]
    flagged: list[FlaggedSentence]
    alerts: list[dict[str, Any]] = field(default_factory=list)
    reader: list[dict[str, Any]] = field(default_factory=list)  # the reader-event metrics (null: none logged)
    # reader events that name no citation of their answer, by reason (`unresolved_event_share_<reason>` > 0)
    unresolved_events: list[dict[str, Any]] = field(default_factory=list)
    suggestions: list[dict[str, Any]] = field(default_factory=list)  # the first `SUGGESTIONS_SHOWN`
    # the day's suggestions by kind: {kind: {"suggestions", "automatic"}}
    suggestion_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    judge_quality: dict[str, Any] | None = None
    interval_columns: tuple[str, ...] = ()
    native: list[dict[str, Any]] = field(default_factory=list)  # native-citation metrics with a count
    pointer_problems: list[dict[str, Any]] = field(default_factory=list)  # by kind, most frequent first
    # a claims mode: the day's partially supported sentences with their claims (the claims panel)
    partially_supported: list[dict[str, Any]] = field(default_factory=list)
    unchecked: list[dict[str, Any]] = field(default_factory=list)  # what could not be checked and why
    skipped: list[dict[str, Any]] = field(default_factory=list)  # the day's skipped turns by reason

    @property
    def unchecked_other(self) -> float:
        """Unjudged sentences for a reason without a metric of its own (judge errors, budget …)."""
        rows = {r["metric"]: r for r in self.unchecked}
        total = (rows.get("unjudged_rate") or {}).get("numerator") or 0
        return total - sum(r["numerator"] or 0 for m, r in rows.items() if m != "unjudged_rate")

    # each language read by the generic rules (no shipped rules) that day: language, answers, share of the day's
    generic_rules: list[dict[str, Any]] = field(default_factory=list)
    decision: dict[str, Any] | None = None  # the day's acceptance decision (`read_model.day_decision`), if any

    @property
    def flagged_ids(self) -> set[tuple[str, int]]:
        """(turn, sentence) of the flagged sentences shown: the failing answers link to them."""
        return {(f.row["turn_id"], f.row["sentence_index"]) for f in self.flagged}

    @property
    def day_rows(self) -> dict[str, Mapping[str, Any]]:
        """The day's overall micro rows by metric (a harmonic mean's card shows its parts)."""
        return {r["metric"]: r for r in self.all_metrics}

    @property
    def alert_groups(self) -> list[dict[str, Any]]:
        """The day's alerts in groups, overall leads first (`core.alert_groups.alert_groups`)."""
        return groups.alert_groups(self.alerts)


def native_rows(today: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The day's overall micro rows of the native-citation metrics that have a denominator, and
    its pointer problems by kind (`pointer_problem_rate_<kind>` with a non-zero count)."""
    micro = {r["metric"]: r for r in today if r["averaging"] == "micro"}
    kinds = [dict(r, kind=m[len(POINTER_PROBLEM_PREFIX):]) for m, r in micro.items()
             if m.startswith(POINTER_PROBLEM_PREFIX) and r["numerator"]]
    native_traffic = any((micro.get(m) or {}).get(key) for m, key in (
        ("cited_char_share", "denominator"), ("no_source_text_rate", "numerator")))
    if not (kinds or native_traffic):  # a markers-only day: nothing to show
        return [], []
    native = [dict(micro[m]) for m in NATIVE_METRICS if m in micro and micro[m]["denominator"]]
    return native, sorted(kinds, key=lambda r: (-r["numerator"], r["kind"]))


def gather(engine: Engine, day: dt.date, trend_days: int = 28, *, flagged_limit: int = 30) -> ReportData:
    """Everything the report of `day` shows; ReportError when nothing is published for the day."""
    if trend_days < 1:
        raise ReportError(f"--days must be at least 1 (got {trend_days})")
    day_from = day - dt.timedelta(days=trend_days - 1)
    today = read_model.metric_rows(engine, day, day, averaging=MICRO, slice_name="all")
    if not today:
        raise ReportError(f"no published metrics for {day.isoformat()}: run the job for that day first")
    by_metric = {r["metric"]: r for r in today}
    native, pointer_problems = native_rows(today)
    flagged = read_model.flagged_sentences(engine, day, BAD_VERDICTS, flagged_limit)
    passages = source.passages_by_label(engine, (r["turn_id"] for r in flagged))
    return ReportData(
        day=day,
        trend_days=trend_days,
        run=read_model.published_run(engine, day),
        headline=[by_metric[m] for m in REPORT_TILE_METRICS if m in by_metric],
        all_metrics=today,
        history=read_model.metric_rows(engine, day_from, day, averaging=MICRO,
                                      metrics=(*REPORT_TILE_METRICS, *AGREEMENT_METRICS), slice_name="all"),
        slices=read_model.metric_rows(engine, day, day, averaging=MICRO, metrics=SLICE_METRICS, exclude_slice="all"),
        agreement=[by_metric[m] for m in AGREEMENT_METRICS if m in by_metric],
        reader=[by_metric[m] for m in READER_METRICS if m in by_metric],
        unresolved_events=[dict(r, reason=m[len(UNRESOLVED_EVENT_PREFIX):]) for m, r in by_metric.items()
                           if m.startswith(UNRESOLVED_EVENT_PREFIX) and r["numerator"]],
        flagged=[FlaggedSentence(r, evidence_for(r, passages.get(r["turn_id"], {}))) for r in flagged],
        alerts=read_model.alerts_between(engine, day, day),
        suggestions=read_model.day_suggestions(engine, day, limit=SUGGESTIONS_SHOWN),
        suggestion_counts=read_model.suggestion_counts(engine, day),
        judge_quality=read_model.judge_quality_for(engine, day),
        interval_columns=T.METRIC_INTERVAL_COLUMNS,
        native=native,
        pointer_problems=pointer_problems,
        partially_supported=read_model.partially_supported_sentences(engine, day, flagged_limit)
        if "claim_recall" in by_metric else [],
        unchecked=[by_metric[m] for m in UNCHECKED_METRICS if m in by_metric],
        generic_rules=generic_rule_languages(engine, day, by_metric.get(GENERIC_RULES_METRIC)),
        skipped=read_model.skipped_reasons(engine, day),
        decision=read_model.day_decision(engine, day),
    )


def generic_rule_languages(engine: Engine, day: dt.date, overall: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Each language of the day read by the generic rules, with its answers and their share of the
    day's answers (the `language` slice of `language_rules_generic_share`), most answers first."""
    if not overall or not overall.get("numerator"):
        return []
    answers = overall.get("denominator") or 0
    rows = read_model.metric_rows(engine, day, day, averaging=MICRO, metrics=(GENERIC_RULES_METRIC,),
                                  slice_name=LANGUAGE_SLICE)
    found = [{"language": r["slice_value"], "answers": r["numerator"],
              "share": r["numerator"] / answers if answers else None} for r in rows if r.get("numerator")]
    return sorted(found, key=lambda r: (-r["answers"], r["language"]))


def evidence_for(row: Mapping[str, Any], passages: Mapping[str, Mapping[str, Any]]) -> tuple[Evidence, ...]:
    """The passages a flagged sentence cites, then those that support it instead, each with its
    span highlighted: the LLM's verified quotes from that passage, else the NLI judge's best window
    (with chunk premises its best chunk: most or all of the passage, SPEC §4)."""
    unknown = set(row.get("unknown_labels") or ())
    cited = [(label, "cited") for label in row.get("labels") or () if label not in unknown]
    elsewhere = [(label, "supports") for label in split_labels(row.get("supported_elsewhere_by"))
                 if label not in dict(cited)]
    quotes = verified_quotes(row.get("llm"))
    windows = row.get("best_windows") or {}
    nli_kind = "NLI best chunk" if is_chunk_version(row.get("judge_version")) else "NLI best window"
    shown = []
    for label, role in cited + elsewhere:
        passage = passages.get(label)
        text = (passage or {}).get("text") or ""
        spans_from = quotes.get(label) or ([windows[label]] if windows.get(label) else [])
        kind = "verified LLM quote" if quotes.get(label) else nli_kind if spans_from else None
        spans = [s for s in (find_span(text, q) for q in spans_from) if s]
        note = None
        if passage is None:
            note = "passage not found in source_passages"
        elif spans_from and not spans:
            note = f"the {kind} is not in the stored passage (reloaded since?): " + " … ".join(spans_from)
        shown.append(Evidence(label, role, passage, highlight(text, spans), kind if spans else None, note))
    return tuple(shown)


def highlight(text: str, spans: Sequence[tuple[int, int]]) -> tuple[tuple[str, bool], ...]:
    """`text` as (segment, highlighted) pieces, overlapping spans merged."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces, at = [], 0
    for start, end in merged:
        if start > at:
            pieces.append((text[at:start], False))
        pieces.append((text[start:end], True))
        at = end
    if at < len(text) or not pieces:
        pieces.append((text[at:], False))
    return tuple(pieces)

