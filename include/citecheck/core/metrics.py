"""Counts and metrics (SPEC §5), per answer, micro, macro and by slice.

Every metric is a `Ratio` (numerator and denominator kept; zero denominator → null).
*Micro* pools sentences across answers, so long answers weigh more; *macro* averages per-answer
values over the answers whose denominator is non-zero, so each answer is one vote.

Structural metrics (unknown labels, attachment, refusals, marker habits) cover every turn;
judged metrics (recall, precision, support rate, faithfulness, verdict rates) cover the turns
selected for judging and exclude unjudged sentences. `judged_attachment_rate` is attachment on
that judged population, so `citation_recall <= judged_attachment_rate` holds on every row.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from citecheck.core.config import Config
from citecheck.core.model import StructuredTurn
from citecheck.core.reader_events import READER_COUNT_KEYS, ReaderEvent, reader_counts
from citecheck.core.verdicts import (
    CONTRADICTED,
    MISCITED,
    PARTIAL,
    SUPPORTED,
    UNCITED_SUPPORTED,
    UNJUDGED,
    UNSUPPORTED,
    SentenceVerdict,
)
from citecheck.stats.intervals import (
    ClusterTotals,
    Interval,
    harmonic_mean_gradient,
    mean_variance,
    proportion_intervals,
)
from citecheck.stats.ratio import Ratio

# metric -> (numerator count, denominator count, scale). Scale 1 metrics are rates in [0, 1].
METRICS: dict[str, tuple[str, str, float]] = {
    "unknown_label_rate": ("unknown_labels", "citations", 1.0),
    "unknown_labels_per_1000_answers": ("unknown_labels", "answers", 1000.0),
    "rewrite_or_block_per_1000_answers": ("answers_rewrite_or_block", "answers", 1000.0),
    "stale_label_rate": ("stale_labels", "citations", 1.0),
    "attachment_rate": ("attached", "check_worthy_sentences", 1.0),
    "refusal_rate": ("refusals", "answers", 1.0),
    "multi_citation_share": ("multi_citation_sentences", "attached", 1.0),
    "marker_after_stop_share": ("markers_after_stop", "markers", 1.0),
    "cited_char_share": ("native_cited_chars", "native_answer_chars", 1.0),
    "non_claim_citation_share": ("citations_on_non_claims", "citations", 1.0),
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
    "first_stage_agreement": ("first_stage_agree", "agreement_sample", 1.0),
    "first_stage_false_pass_rate": ("first_stage_false_pass", "agreement_sample_llm_unsupported", 1.0),
    "first_stage_false_fail_rate": ("first_stage_false_fail", "agreement_sample_llm_supported", 1.0),
    # reader events (citecheck.core.reader_events): null on a day that logs none
    "citation_open_rate": ("citations_opened", "citations_shown", 1.0),
    "citation_opens_per_1000_answers": ("citation_opens", "reader_answers", 1000.0),
    "source_reports_per_1000_answers": ("source_reports", "reader_answers", 1000.0),
    "reported_citation_unsupported_share": ("reported_citations_uncredited", "judged_reported_citations", 1.0),
}
COUNT_KEYS = (
    "answers", "refusals", "sentences", "check_worthy_sentences", "attached", "citations", "unknown_labels",
    "stale_labels", "pointer_problems", "citations_on_non_claims", "multi_citation_sentences", "markers",
    "markers_after_stop", "sentences_with_repeated_labels", "native_answer_chars", "native_cited_chars",
    "judged_answers", "selected_sentences", "judged_sentences", "unjudged_sentences", "judged_attached",
    "judged_citations", "credited_citations", "supported", "miscited", "uncited_supported", "unsupported",
    "partial", "contradicted", "faithful", "agreement_sample", "first_stage_agree",
    "agreement_sample_llm_supported", "agreement_sample_llm_unsupported", "first_stage_false_pass",
    "first_stage_false_fail", "answers_rewrite_or_block", *READER_COUNT_KEYS,
)
DERIVED = ("citation_f1",)
METRIC_NAMES = (*METRICS, *DERIVED)
RATE_METRICS = tuple(m for m, (_, _, scale) in METRICS.items() if scale == 1.0) + DERIVED
JUDGED_METRICS = frozenset(m for m, (_, den, _) in METRICS.items() if den.startswith(("judged", "selected"))
                           or den.startswith("agreement")) | frozenset(DERIVED)
READER_METRICS = ("citation_open_rate", "citation_opens_per_1000_answers", "source_reports_per_1000_answers",
                  "reported_citation_unsupported_share")
TURN_LEVEL_METRICS = frozenset({"refusal_rate", "unknown_labels_per_1000_answers", "cited_char_share",
                                "rewrite_or_block_per_1000_answers", *READER_METRICS})
# An answer a runtime checker would rewrite or block: any unknown label, or a judged check-worthy
# sentence with one of these verdicts.
REWRITE_OR_BLOCK_VERDICTS = frozenset({UNSUPPORTED, MISCITED})
# What the CLI summary, `bin/run_dag.py` and the `daily_metrics_wide` view show, in this order.
HEADLINE_METRICS = (
    "attachment_rate", "citation_recall", "citation_precision", "citation_f1", "support_rate_of_cited",
    "faithfulness", "unknown_label_rate", "miscited_rate", "uncited_supported_rate", "unsupported_rate",
    "refusal_rate", "unjudged_rate", "citation_open_rate", "source_reports_per_1000_answers",
    "reported_citation_unsupported_share",
)
# The headline metrics a scored file has without the warehouse's reader events (`score`, `compare`).
SCORED_HEADLINE_METRICS = tuple(m for m in HEADLINE_METRICS if m not in READER_METRICS)
# SPEC §5 invariant: citation_recall is at most each of these, per slice and averaging.
RECALL_UPPER_BOUNDS = ("judged_attachment_rate", "faithfulness")
# Two different thresholds on purpose: the `multi_citation` slice holds sentences with two or
# more citations; `multi_citation_share` counts sentences with three or more (a padding signal).
MULTI_CITATION_SLICE_MIN = 2
PADDING_MIN_CITATIONS = 3
# What the intervals sum per judged answer, with cross products (citecheck.stats.intervals.ClusterTotals):
# the counts behind the judged metrics (micro), then the answer's own judged metric values (macro).
JUDGED_COUNT_KEYS = tuple(dict.fromkeys(key for m, (num, den, _) in METRICS.items() if m in JUDGED_METRICS
                                        for key in (num, den)))
JUDGED_MACRO_NAMES = tuple(m for m in METRIC_NAMES if m in JUDGED_METRICS)
INTERVAL_MEAN_KEYS = tuple(f"macro:{m}" for m in JUDGED_MACRO_NAMES)
_ZEROS = (0,) * len(JUDGED_COUNT_KEYS)

_NUMBER = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class ScoredTurn:
    """A turn after judging: its structure, one verdict per sentence, and whether it was judged.
    `reader_events`: its reader events, None when its day logs no reader event at all (the
    reader metrics are then null, not zero)."""

    structured: StructuredTurn
    verdicts: tuple[SentenceVerdict, ...]
    selected: bool = True
    reader_events: tuple[ReaderEvent, ...] | None = None

    @property
    def turn_id(self) -> str:
        return self.structured.turn_id


def turn_counts(scored: ScoredTurn, keep: Callable[[SentenceVerdict], bool] | None = None) -> Counter[str]:
    """The counts behind every metric, for one answer (optionally a subset of its sentences)."""
    if keep is None:
        return _counts(scored, scored.verdicts, whole=True)
    return _counts(scored, [v for v in scored.verdicts if keep(v)], whole=False)


def _counts(scored: ScoredTurn, verdicts: Sequence[SentenceVerdict], *, whole: bool) -> Counter[str]:
    """`turn_counts` over the given verdicts; `whole` adds the answer-level counts (pointer problems,
    native-citation characters). Sums in local variables: this runs for every turn and slice."""
    st = scored.structured
    c: Counter[str] = Counter()
    c["answers"] = 1
    c["refusals"] = int(st.is_refusal)
    c["sentences"] = len(verdicts)
    citations = unknown_labels = 0
    if whole:
        problems = st.turn.pointer_problems
        orphan = sum(1 for p in problems if p.document_index < 0)
        citations = unknown_labels = orphan
        c["pointer_problems"] = len(problems)
        if st.turn.answer_format == "anthropic_blocks":
            c["native_answer_chars"] = len(st.turn.answer)
            c["native_cited_chars"] = _covered(st.turn)
    stale = markers = after_stop = repeated = on_non_claims = 0
    worthy = attached = multi = selected_n = unjudged_n = 0
    judged = judged_attached = judged_citations = credited = faithful = 0
    rewrite = False
    selected = scored.selected
    for v in verdicts:
        s = v.sentence
        labels = s.labels
        unknown = s.unknown_labels
        n_labels = len(labels)
        citations += n_labels
        unknown_labels += len(unknown)
        stale += len(s.stale_labels)
        markers += s.markers
        after_stop += s.markers_after_stop
        repeated += bool(s.duplicate_labels)
        if not s.check_worthy:
            on_non_claims += n_labels
            continue
        # `s.attached` without building the resolved tuple: some label is not unknown
        is_attached = any(lab not in unknown for lab in labels) if unknown else n_labels > 0
        worthy += 1
        attached += is_attached
        multi += is_attached and n_labels >= PADDING_MIN_CITATIONS
        if not selected:
            continue
        selected_n += 1
        if v.verdict == UNJUDGED:
            unjudged_n += 1
            continue
        judged += 1
        judged_attached += is_attached
        judged_citations += n_labels
        credited += sum(v.credited.values())
        c[v.verdict] += 1
        rewrite = rewrite or v.verdict in REWRITE_OR_BLOCK_VERDICTS
        faithful += v.faithful
        _agreement_counts(c, v)
    if whole or verdicts:
        c["citations"] = citations
        c["unknown_labels"] = unknown_labels
    if verdicts:
        c["stale_labels"] = stale
        c["markers"] = markers
        c["markers_after_stop"] = after_stop
        c["sentences_with_repeated_labels"] = repeated
    if on_non_claims or len(verdicts) > worthy:
        c["citations_on_non_claims"] = on_non_claims
    if worthy:
        c["check_worthy_sentences"] = worthy
        c["attached"] = attached
        c["multi_citation_sentences"] = multi
    if selected_n:
        c["selected_sentences"] = selected_n
    if unjudged_n:
        c["unjudged_sentences"] = unjudged_n
    if judged:
        c["judged_sentences"] = judged
        c["judged_attached"] = judged_attached
        c["judged_citations"] = judged_citations
        c["credited_citations"] = credited
        c["faithful"] = faithful
    c["judged_answers"] = int(selected)
    if whole:
        c["answers_rewrite_or_block"] = int(rewrite or unknown_labels > 0)
        if scored.reader_events is not None:
            c.update(reader_counts(scored.reader_events, scored.verdicts, selected=selected))
    return c


def _agreement_counts(c: Counter[str], v: SentenceVerdict) -> None:
    detail = v.judgment.detail if v.judgment is not None else {}
    llm = detail.get("llm")
    first = detail.get("first_stage")
    if detail.get("escalation") != "sample" or not llm or not first or llm.get("status") != "ok":
        return
    llm_supported = llm.get("verdict") == SUPPORTED
    first_supported = bool(first.get("supported"))
    c["agreement_sample"] += 1
    c["first_stage_agree"] += llm_supported == first_supported
    if llm_supported:
        c["agreement_sample_llm_supported"] += 1
        c["first_stage_false_fail"] += not first_supported
    else:
        c["agreement_sample_llm_unsupported"] += 1
        c["first_stage_false_pass"] += first_supported


def _covered(turn: Any) -> int:
    """Answer characters inside a validly cited native block."""
    covered = 0
    last_end = 0
    for c in sorted((c for c in turn.native_citations if c.valid), key=lambda c: (c.start, c.end)):
        start = max(c.start, last_end)
        if c.end > start:
            covered += c.end - start
            last_end = c.end
    return covered


def full_counts(counts: Mapping[str, int]) -> dict[str, int]:
    """Every count key, zeros included, in a stable order."""
    return {key: int(counts.get(key, 0)) for key in COUNT_KEYS}


def ratios(counts: Mapping[str, float]) -> dict[str, Ratio]:
    """Every metric of one set of counts (an answer, or pooled answers for micro)."""
    out = {name: Ratio(counts.get(num, 0) * scale, counts.get(den, 0)) for name, (num, den, scale) in METRICS.items()}
    out["citation_f1"] = f1(out["citation_recall"], out["citation_precision"])
    return out


def f1_value(recall: float, precision: float) -> float:
    """THE F1 rule: the harmonic mean 2PR / (P + R), 0 when both are 0."""
    return 0.0 if recall + precision == 0 else 2 * precision * recall / (precision + recall)


def f1(recall: Ratio, precision: Ratio) -> Ratio:
    """`f1_value` as a Ratio (2PR over P + R); null when either is null."""
    r, p = recall.value, precision.value
    if r is None or p is None:
        return Ratio(0, 0)
    if r + p == 0:
        return Ratio(0, 1)
    return Ratio(2 * p * r, p + r)


def values(ratio_map: Mapping[str, Ratio]) -> dict[str, float | None]:
    return {name: r.value for name, r in ratio_map.items()}


_METRIC_TABLE = tuple((name, num, den, scale) for name, (num, den, scale) in METRICS.items())


def _macro_values(counts: Mapping[str, float]) -> list[tuple[str, float]]:
    """The non-null metric values of one answer's counts, as `ratios` computes them (macro votes)."""
    get = counts.get
    out = []
    recall = precision = None
    for name, num, den, scale in _METRIC_TABLE:
        d = get(den, 0)
        if d:
            value = get(num, 0) * scale / d
            out.append((name, value))
            if name == "citation_recall":
                recall = value
            elif name == "citation_precision":
                precision = value
    if recall is not None and precision is not None:
        out.append(("citation_f1", f1_value(recall, precision)))
    return out


@dataclass
class _SliceAccumulator:
    counts: Counter[str] = field(default_factory=Counter)
    macro_sum: Counter[str] = field(default_factory=Counter)
    macro_n: Counter[str] = field(default_factory=Counter)
    spread: ClusterTotals | None = None  # sums over judged answers: the intervals

    def add(self, counts: Counter[str], macro: list[tuple[str, float]] | None = None,
            interval_row: array | None = None) -> None:
        """Pool an answer's counts; `macro` is `_macro_values(counts)` and `interval_row`
        `_interval_row(counts, macro)` when the caller has them."""
        pooled = self.counts  # a plain loop: Counter.update's Mapping check costs more than the sums
        get = pooled.get
        for key, n in counts.items():
            pooled[key] = get(key, 0) + n
        sums, ns = self.macro_sum, self.macro_n
        if macro is None:
            macro = _macro_values(counts)
        for name, value in macro:
            sums[name] = sums.get(name, 0) + value
            ns[name] = ns.get(name, 0) + 1
        if self.spread is not None and counts.get("judged_answers"):  # one cluster per judged answer
            self.spread.add(_interval_row(counts, macro) if interval_row is None else interval_row)

    def micro(self) -> dict[str, Ratio]:
        return ratios(self.counts)

    def macro(self) -> dict[str, Ratio]:
        return {name: Ratio(self.macro_sum[name], self.macro_n[name]) for name in METRIC_NAMES}

    def micro_intervals(self) -> dict[str, Interval | None]:
        """95% intervals of the judged micro rates, answers as clusters (see citecheck.stats.intervals)."""
        spread = self.spread
        if spread is None:
            return {}
        micro = self.micro()
        names, args = [], []
        for name, (num, den, _) in METRICS.items():
            if name in JUDGED_METRICS:
                names.append(name)
                args.append((micro[name].value, spread.ratio_variance(num, den), spread.clusters_with(den),
                             spread.total(den)))
        recall, precision = micro["citation_recall"].value, micro["citation_precision"].value
        if recall is not None and precision is not None:  # F1 of the two ratios: its gradient over the totals
            (rn, rd, _), (pn, pd, _) = METRICS["citation_recall"], METRICS["citation_precision"]
            d_recall, d_precision = harmonic_mean_gradient(recall, precision)
            rx, px = spread.total(rd), spread.total(pd)
            variance = spread.linearized_variance({rn: d_recall / rx, rd: -d_recall * recall / rx,
                                                   pn: d_precision / px, pd: -d_precision * precision / px})
            names.append("citation_f1")
            args.append((micro["citation_f1"].value, variance,
                         min(spread.clusters_with(rd), spread.clusters_with(pd)), min(rx, px)))
        return dict(zip(names, proportion_intervals(*zip(*args, strict=True)), strict=True))

    def macro_intervals(self) -> dict[str, Interval | None]:
        """95% intervals of the judged macro rates: the mean of one value per answer."""
        spread = self.spread
        if spread is None:
            return {}
        args = []
        for name in JUDGED_MACRO_NAMES:
            n, total = self.macro_n[name], self.macro_sum[name]
            variance = mean_variance(n, total, spread.sum_of_squares(f"macro:{name}"))
            args.append((total / n if n else None, variance, n, n))
        return dict(zip(JUDGED_MACRO_NAMES, proportion_intervals(*zip(*args, strict=True)), strict=True))


def _interval_row(counts: Mapping[str, float], macro: list[tuple[str, float]]) -> array:
    """One judged answer's row for the intervals: its `JUDGED_COUNT_KEYS` counts, then its
    `JUDGED_MACRO_NAMES` values (a macro value the answer lacks is 0: its square
    adds nothing, and `macro_n` counts only the answers that have one)."""
    # an array of doubles: built once per answer, copied into every slice's buffer without conversion
    return array("d", [*map(counts.get, JUDGED_COUNT_KEYS, _ZEROS), *map(dict(macro).get, JUDGED_MACRO_NAMES, _ZEROS)])


def interval_json(ci: Interval | None) -> dict[str, float | None]:
    """`ci_low` and `ci_high` of an interval, both None for none (a null value, or not judged)."""
    return {"ci_low": None if ci is None else ci.low, "ci_high": None if ci is None else ci.high}


def length_bucket(n_sentences: int, buckets: Sequence[int]) -> str:
    low = 1
    for top in buckets:
        if n_sentences <= top:
            return f"{low}-{top}" if n_sentences else "0"
        low = top + 1
    return f"{low}+"


class MetricAccumulator:
    """Streams scored turns into per-slice counts; memory grows with slices, not with turns."""

    def __init__(self, config: Config, *, intervals: bool = True) -> None:
        """`intervals=False` leaves `ci_low`/`ci_high` null (the bench's baseline)."""
        self.config = config
        self.intervals = intervals
        self._slices: dict[tuple[str, str], _SliceAccumulator] = {}

    def _acc(self, name: str, value: str) -> _SliceAccumulator:
        key = (name, value)
        acc = self._slices.get(key)
        if acc is None:
            spread = ClusterTotals(JUDGED_COUNT_KEYS, INTERVAL_MEAN_KEYS) if self.intervals else None
            acc = self._slices[key] = _SliceAccumulator(spread=spread)
        return acc

    def add(self, scored: ScoredTurn) -> Counter[str]:
        counts = turn_counts(scored)
        macro = _macro_values(counts)
        row = _interval_row(counts, macro) if self.intervals and counts.get("judged_answers") else None
        self._acc("all", "all").add(counts, macro, row)
        attrs = scored.structured.turn.attributes
        keys = self.config.slice_attributes or tuple(attrs)
        for key in keys:
            if key in attrs:
                self._acc(f"attribute:{key}", attrs[key]).add(counts, macro, row)
        verdicts = scored.verdicts
        self._acc("answer_length", length_bucket(len(verdicts), self.config.length_buckets)).add(counts, macro, row)
        turn = scored.structured.turn
        # a sentence slice holding every sentence has the answer's own counts (no answer-level extras)
        plain = not turn.pointer_problems and turn.answer_format != "anthropic_blocks"
        for name, test in self._sentence_slices():
            flags = [test(v) for v in verdicts]
            for value, wanted in (("yes", True), ("no", False)):
                subset = [v for v, flag in zip(verdicts, flags, strict=True) if flag == wanted]
                if not subset:
                    continue
                if plain and len(subset) == len(verdicts):
                    self._acc(name, value).add(counts, macro, row)
                else:
                    self._acc(name, value).add(_counts(scored, subset, whole=False))
        return counts

    def _sentence_slices(self) -> list[tuple[str, Callable[[SentenceVerdict], bool]]]:
        slices: list[tuple[str, Callable[[SentenceVerdict], bool]]] = []
        if self.config.slice_numbers:
            slices.append(("has_number", lambda v: bool(_NUMBER.search(v.sentence.text))))
        if self.config.slice_multi_citation:
            slices.append(("multi_citation", lambda v: len(v.sentence.labels) >= MULTI_CITATION_SLICE_MIN))
        return slices

    def counts(self, slice_name: str = "all", slice_value: str = "all") -> Counter[str]:
        acc = self._slices.get((slice_name, slice_value))
        return Counter(acc.counts) if acc else Counter()

    def summary(self) -> dict[str, dict[str, Any]]:
        """Overall values per averaging, plus `intervals`: averaging → judged metric →
        {"ci_low", "ci_high"} (both null where the value is null)."""
        acc = self._slices.get(("all", "all")) or _SliceAccumulator()
        spans = {"micro": acc.micro_intervals(), "macro": acc.macro_intervals()}
        return {"micro": values(acc.micro()), "macro": values(acc.macro()),
                "intervals": {avg: {m: interval_json(by.get(m)) for m in METRIC_NAMES if m in JUDGED_METRICS}
                              for avg, by in spans.items()}}

    def rows(self) -> list[dict[str, Any]]:
        """Long rows: one per (slice, metric, averaging), as the daily metrics table stores them."""
        out: list[dict[str, Any]] = []
        for (slice_name, slice_value), acc in sorted(self._slices.items()):
            sentence_slice = slice_name in ("has_number", "multi_citation")
            for averaging, metric_map, spans in (("micro", acc.micro(), acc.micro_intervals()),
                                                 ("macro", acc.macro(), acc.macro_intervals())):
                for metric, r in metric_map.items():
                    if sentence_slice and metric in TURN_LEVEL_METRICS:
                        continue
                    judged = metric in JUDGED_METRICS
                    ci = spans.get(metric)
                    out.append({
                        "slice_name": slice_name,
                        "slice_value": slice_value,
                        "metric": metric,
                        "averaging": averaging,
                        "numerator": r.numerator,
                        "denominator": r.denominator,
                        "value": r.value,
                        "answers": acc.counts["judged_answers" if judged else "answers"],
                        "sentences": acc.counts["judged_sentences" if judged else "check_worthy_sentences"],
                        **interval_json(ci),
                    })
        return out


def invariant_violations(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """SPEC §5 invariants on metric rows: rates in [0, 1]; recall ≤ attachment (on the same
    population) and recall ≤ faithfulness per slice and averaging."""
    problems: list[str] = []
    by_key: dict[tuple[str, str, str], dict[str, float | None]] = {}
    for row in rows:
        key = (row["slice_name"], row["slice_value"], row["averaging"])
        by_key.setdefault(key, {})[row["metric"]] = row["value"]
        v = row["value"]
        if row["metric"] in RATE_METRICS and v is not None and not -1e-9 <= v <= 1 + 1e-9:
            problems.append(f"{row['metric']} {key} = {v} is outside [0, 1]")
    for key, m in by_key.items():
        recall = m.get("citation_recall")
        if recall is None:
            continue
        for bound in RECALL_UPPER_BOUNDS:
            b = m.get(bound)
            if b is not None and recall > b + 1e-9:
                problems.append(f"citation_recall {recall} > {bound} {b} for {key}")
    return problems


def verdict_counts(verdicts: Iterable[SentenceVerdict]) -> Counter[str]:
    return Counter(v.verdict for v in verdicts)


__all__ = [
    "CONTRADICTED",
    "HEADLINE_METRICS",
    "METRICS",
    "METRIC_NAMES",
    "MISCITED",
    "PARTIAL",
    "RATE_METRICS",
    "SUPPORTED",
    "UNCITED_SUPPORTED",
    "UNSUPPORTED",
    "MetricAccumulator",
    "ScoredTurn",
    "invariant_violations",
    "ratios",
    "turn_counts",
    "values",
]
