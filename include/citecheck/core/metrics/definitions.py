"""THE metric registry (SPEC §5): one `Metric` entry per metric, carrying everything any part of
the product needs to know about it. Every list of metrics elsewhere is derived from `REGISTRY`
(`tests/unit/test_metric_registry.py` checks that no module keeps its own).

What an entry says, and who reads it:

- `numerator`, `denominator`, `scale`: the two counts (`core.metrics.counts`) whose `Ratio` the
  metric is, and its scale: 1 for a rate in [0, 1], 1000 for a count per 1,000 of the
  denominator (`ratios`, the accumulator, `compare`, the monitor's sampling test); `average=True`
  for a count per denominator unit that is no share (claims per sentence, >= 1: scale 1, not a rate).
- `harmonic_mean_of`: a derived metric, the harmonic mean of two other metrics (F1 of recall and
  precision); it has no counts of its own. THE rule is `ratios.f1`; every consumer (micro, macro,
  intervals, `compare`, display) handles a derived metric from this field, never by name.
- `population`: `STRUCTURAL` (every turn of the day) or `JUDGED` (the turns selected for judging;
  these carry intervals and estimate the day). Explicit on each entry, never guessed from a name.
- `units`: the nouns of its numerator and denominator, as a person reads them ("opens",
  "answers"); `display.py` prints "43 opens / 324 answers".
- `turn_level`: a metric of whole answers (sentence slices such as `has_number` leave it out).
- `reader`: computed from reader events (null on a day that logs none; not in `score` output).
- `headline`: its position (unique) among the headline metrics (CLI summary, `bin/run_dag.py`, `compare`,
  the `daily_metrics_wide` view's columns, Superset and dbt), None when not one.
- `tile`: its position among the daily report's tiles and trend charts, None when not one.
- `report`: the other report sections that show it (`SLICES`, `AGREEMENT`, `NATIVE`, `READERS`).
- `watch`: monitored by default (`features.monitor`), with the size of a step that matters
  (`Watch(abs=..., rel=...)`), None when not monitored by default.
- `calibrated`: the weekly review publishes its human-calibrated estimate (`review.calibrated`).
- `claims`: a claims mode's metric (SPEC §2.1): its counts are `CLAIM_COUNT_KEYS`, and an output
  scored in sentence mode has neither (no row, no value: not zero).
- `rate`, `judged` (derived); `bounds` (derived): the range of its values (`invariants`, the validation gate);
  `bi_format`: the d3 format BI tools show it with.

Adding a metric is ONE entry in `REGISTRY` (in the order its rows are written), with its
counts in `COUNT_KEYS` and counted in `core.metrics.counts`, and a row in docs/metrics.md:

    Metric("figure_match_rate", "matched_figures", "judged_figures", population=JUDGED,
           units=("matched figures", "judged figures"), tile=13, watch=Watch(abs=0.05)),

Nothing else changes: the headline, tiles, monitor defaults, validation bounds, BI columns and
formats and the CLI's printing all follow from the entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from citecheck.core.formats import POINTER_PROBLEM_KINDS
from citecheck.core.reader_events import READER_COUNT_KEYS, UNRESOLVED_PREFIX, UNRESOLVED_REASONS
from citecheck.core.vocabulary import (
    CONTRADICTED,
    MISCITED,
    PARTIAL,
    PARTIALLY_SUPPORTED,
    SUPPORTED,
    UNCITED_SUPPORTED,
    UNJUDGED,
    UNSUPPORTED,
)

# populations
STRUCTURAL = "structural"  # every scored turn of the day
JUDGED = "judged"  # the turns selected for judging, unjudged sentences excluded (estimates, with intervals)
POPULATIONS = (STRUCTURAL, JUDGED)
# report sections besides the tiles
SLICES = "slices"  # the slice table
AGREEMENT = "agreement"  # judge agreement on the LLM's random sample (and its trend)
NATIVE = "native"  # native-citation figures
READERS = "readers"  # what readers did with the citations
UNCHECKED = "unchecked"  # what could not be checked and why (the unjudged sentences by reason)
REPORT_SECTIONS = (SLICES, AGREEMENT, NATIVE, READERS, UNCHECKED)


class Watch(NamedTuple):
    """The size of a step the monitor alerts on by default: absolute and/or relative to the baseline."""

    abs: float | None = None
    rel: float | None = None


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric, everything about it (see the module docstring)."""

    name: str
    numerator: str | None
    denominator: str | None
    population: str
    units: tuple[str, str]
    scale: float = 1.0
    harmonic_mean_of: tuple[str, str] | None = None
    turn_level: bool = False
    reader: bool = False
    headline: int | None = None
    tile: int | None = None
    report: tuple[str, ...] = ()
    watch: Watch | None = None
    calibrated: bool = False
    claims: bool = False
    average: bool = False
    interval: bool = False  # a structural rate that still carries a 95% interval (answers as clusters)

    @property
    def judged(self) -> bool:
        return self.population == JUDGED

    @property
    def derived(self) -> bool:
        return self.harmonic_mean_of is not None

    @property
    def rate(self) -> bool:
        """A value in [0, 1] (a ratio of scale 1 that is no average, or a harmonic mean of rates)."""
        return self.scale == 1.0 and not self.average

    @property
    def bounds(self) -> tuple[float, float | None]:
        """The validation gate's range of a non-null value: [0, 1] for a rate, >= 0 otherwise."""
        return (0.0, 1.0) if self.rate else (0.0, None)

    @property
    def axis_unit(self) -> str:
        """The unit of the axis a chart draws the value on: "share" for a rate, else what it counts
        per what ("reports per 1,000 answers"); metrics of one unit share an axis, no other."""
        if self.rate:
            return "share"
        per = f"{self.scale:,.0f} " if self.scale != 1.0 else ""
        return f"{self.units[0]} per {per}{self.units[1]}".strip()

    @property
    def bi_format(self) -> str:
        """The d3 format BI tools show the value with (Superset's `d3format`)."""
        return ".1%" if self.rate else ",.2f" if self.average else ",.1f"


S, J = STRUCTURAL, JUDGED
_JS = "judged sentences"

REGISTRY: tuple[Metric, ...] = (
    # structural, every turn of the day (SPEC §3): labels and markers
    Metric("unknown_label_rate", "unknown_labels", "citations", S, ("unknown labels", "citations"),
           headline=7, report=(SLICES,), watch=Watch(abs=0.01, rel=0.5)),
    Metric("unknown_labels_per_1000_answers", "unknown_labels", "answers", S, ("unknown labels", "answers"),
           scale=1000.0, turn_level=True, tile=6, watch=Watch(abs=10.0, rel=0.5)),
    # an answer a runtime checker would rewrite or block (any unknown label, a judged sentence with
    # a bad verdict: `core.vocabulary.BAD_VERDICTS`), per 1,000 answers
    Metric("rewrite_or_block_per_1000_answers", "answers_rewrite_or_block", "answers", S,
           ("answers to rewrite or block", "answers"), scale=1000.0, turn_level=True, tile=8,
           watch=Watch(abs=30.0, rel=0.2)),
    Metric("stale_label_rate", "stale_labels", "citations", S, ("stale labels", "citations")),
    Metric("attachment_rate", "attached", "check_worthy_sentences", S, ("attached", "check-worthy sentences"),
           headline=1, tile=5, report=(SLICES,), watch=Watch(abs=0.05)),
    Metric("refusal_rate", "refusals", "answers", S, ("refusals", "answers"), turn_level=True, headline=11,
           tile=11, watch=Watch(abs=0.03, rel=0.5)),
    # padding alarm: attached sentences with PADDING_MIN_CITATIONS or more citations
    Metric("multi_citation_share", "multi_citation_sentences", "attached", S,
           ("with 3+ citations", "attached sentences"), tile=7, watch=Watch(abs=0.03, rel=0.5)),
    Metric("marker_after_stop_share", "markers_after_stop", "markers", S, ("after the stop", "markers"),
           watch=Watch(abs=0.05)),
    Metric("cited_char_share", "native_cited_chars", "native_answer_chars", S,
           ("cited characters", "answer characters"), turn_level=True, report=(NATIVE,)),
    Metric("non_claim_citation_share", "citations_on_non_claims", "citations", S,
           ("on sentences not check-worthy", "citations")),
    # native citations (SPEC §3.4): pointer problems (all kinds, then each kind; they also count in
    # unknown_label_rate), citations with a field the job could not verify
    Metric("pointer_problem_rate", "pointer_problem_citations", "citations", S, ("pointer problems", "citations"),
           report=(NATIVE,), watch=Watch(abs=0.01, rel=0.5)),  # a provider app's logging or format change
    *(Metric(f"pointer_problem_rate_{kind}", f"pointer_problem_citations_{kind}", "citations", S,
             (f"{kind} pointer problems", "citations")) for kind in POINTER_PROBLEM_KINDS),
    Metric("unverified_citation_share", "unverified_citations", "citations", S, ("unverified", "citations"),
           report=(NATIVE,)),
    # figures traceable to the cited text (SPEC §3 item 5), every turn: attached sentences with a
    # figure none of their cited passages states; sentences with a figure and no resolved citation
    Metric("untraced_figure_rate", "untraced_figure_sentences", "traceable_figure_sentences", S,
           ("with an untraced figure", "attached sentences with figures"), report=(SLICES,), interval=True,
           watch=Watch(abs=0.05)),
    Metric("uncited_figure_rate", "uncited_figure_sentences", "figure_sentences", S,
           ("with a figure and no citation", "sentences with figures"), interval=True, watch=Watch(abs=0.05)),
    # answers whose language has no shipped rules (SPEC §2.2): split and read by the generic (Unicode)
    # rules; the report names each such language with its share (`report.data.ReportData.generic_rules`)
    Metric("language_rules_generic_share", "generic_rules_answers", "answers", S,
           ("answers by generic rules", "answers"), turn_level=True),
    # judged, the turns selected for judging, unjudged sentences excluded (SPEC §4-5)
    Metric("citation_recall", SUPPORTED, "judged_sentences", J, (SUPPORTED, _JS), headline=2, tile=1,
           report=(SLICES,), watch=Watch(abs=0.05),
           calibrated=True),
    Metric("citation_precision", "credited_citations", "judged_citations", J, ("credited", "judged citations"),
           headline=3, tile=2, report=(SLICES,), watch=Watch(abs=0.05), calibrated=True),
    Metric("support_rate_of_cited", SUPPORTED, "judged_attached", J, (SUPPORTED, "judged attached sentences"),
           headline=5),
    Metric("faithfulness", "faithful", "judged_sentences", J, ("faithful", _JS), headline=6, tile=4,
           calibrated=True),
    Metric("judged_attachment_rate", "judged_attached", "judged_sentences", J, ("attached", _JS)),
    Metric("miscited_rate", MISCITED, "judged_sentences", J, (MISCITED, _JS), headline=8, tile=9,
           report=(SLICES,)),
    Metric("uncited_supported_rate", UNCITED_SUPPORTED, "judged_sentences", J, ("uncited supported", _JS),
           headline=9),
    Metric("unsupported_rate", UNSUPPORTED, "judged_sentences", J, (UNSUPPORTED, _JS), headline=10, tile=10,
           report=(SLICES,)),
    Metric("partial_rate", PARTIAL, "judged_sentences", J, (PARTIAL, _JS)),
    Metric("contradicted_rate", CONTRADICTED, "judged_sentences", J, (CONTRADICTED, _JS)),
    Metric("unjudged_rate", "unjudged_sentences", "selected_sentences", J, (UNJUDGED, "selected sentences"),
           headline=12, tile=12, watch=Watch(abs=0.02), report=(UNCHECKED,)),
    # of those, sentences whose cited sources were all logged without text (no judge could see them)
    Metric("no_source_text_rate", "no_source_text_sentences", "selected_sentences", J,
           ("without source text", "selected sentences"), report=(NATIVE, UNCHECKED)),
    # of those, sentences in a language no judge reads (SPEC §2.2: no NLI model for it, no LLM judge)
    Metric("language_unsupported_rate", "language_unsupported_sentences", "selected_sentences", J,
           ("language unsupported", "selected sentences"), report=(UNCHECKED,)),
    # judge agreement on the LLM's random sample (SPEC §5): does the first stage agree with the LLM?
    Metric("first_stage_agreement", "first_stage_agree", "agreement_sample", J, ("agree", "sampled sentences"),
           report=(AGREEMENT,)),
    Metric("first_stage_false_pass_rate", "first_stage_false_pass", "agreement_sample_llm_unsupported", J,
           ("false passes", "sampled LLM-unsupported"), report=(AGREEMENT,), watch=Watch(abs=0.1)),
    Metric("first_stage_false_fail_rate", "first_stage_false_fail", "agreement_sample_llm_supported", J,
           ("false fails", "sampled LLM-supported"), report=(AGREEMENT,)),
    # reader events (citecheck.core.reader_events): counted on the turn's day, null on a day that logs none
    Metric("citation_open_rate", "citations_opened", "citations_shown", S, ("opened", "citations shown"),
           turn_level=True, reader=True, headline=13, report=(READERS,), watch=Watch(abs=0.01, rel=0.3)),
    Metric("citation_opens_per_1000_answers", "citation_opens", "reader_answers", S, ("opens", "answers"),
           scale=1000.0, turn_level=True, reader=True, report=(READERS,)),
    Metric("source_reports_per_1000_answers", "source_reports", "reader_answers", S, ("reports", "answers"),
           scale=1000.0, turn_level=True, reader=True, headline=14, report=(READERS,),
           watch=Watch(abs=5.0, rel=0.5)),
    # judged: reported citations whose sentence was judged, those the judges did not credit
    Metric("reported_citation_unsupported_share", "reported_citations_uncredited", "judged_reported_citations", J,
           ("uncredited", "judged reported citations"), turn_level=True, reader=True, headline=15,
           report=(READERS,), watch=Watch(abs=0.15)),
    # events that name no citation of their answer (`reader_events.resolve_event`): counted apart,
    # never in the rates above; all reasons, then each reason (an app's logging problem)
    Metric("unresolved_event_share", "unresolved_events", "reader_events", S, ("unresolved events", "reader events"),
           turn_level=True, reader=True, report=(READERS,), watch=Watch(abs=0.02, rel=0.5)),  # the app's logging
    *(Metric(f"unresolved_event_share_{reason}", UNRESOLVED_PREFIX + reason, "reader_events", S,
             (f"{reason} events", "reader events"), turn_level=True, reader=True) for reason in UNRESOLVED_REASONS),
    # claims (SPEC §2.1), in a claims mode only: a link is one (claim, label) pair; structural over
    # every turn, judged over the selected turns' judged claims
    Metric("claims_per_sentence", "check_worthy_claims", "check_worthy_sentences", S,
           ("claims", "check-worthy sentences"), claims=True, average=True),
    Metric("claim_attachment_rate", "claim_attached", "check_worthy_claims", S,
           ("attached claims", "check-worthy claims"), claims=True),
    Metric("claim_recall", "supported_claims", "judged_claims", J, ("supported claims", "judged claims"), claims=True,
           watch=Watch(abs=0.05)),
    Metric("claim_precision", "credited_claim_links", "judged_claim_links", J,
           ("credited claim links", "judged claim links"), claims=True, watch=Watch(abs=0.05)),
    Metric("claim_faithfulness", "faithful_claims", "judged_claims", J, ("faithful claims", "judged claims"),
           claims=True),
    Metric("claim_judged_attachment_rate", "judged_claim_attached", "judged_claims", J,
           ("attached claims", "judged claims"), claims=True),
    Metric("claim_miscited_rate", "miscited_claims", "judged_claims", J, ("miscited claims", "judged claims"),
           claims=True),
    Metric("claim_uncited_supported_rate", "uncited_supported_claims", "judged_claims", J,
           ("uncited supported claims", "judged claims"), claims=True),
    Metric("claim_unsupported_rate", "unsupported_claims", "judged_claims", J,
           ("unsupported claims", "judged claims"), claims=True),
    # figures per claim (SPEC §3 item 5, "of a claim, in a claims mode"): the figure rates above
    # counted over check-worthy claims, each claim's figures traced against its links' passages
    Metric("claim_untraced_figure_rate", "untraced_figure_claims", "traceable_figure_claims", S,
           ("claims with an untraced figure", "attached claims with figures"), claims=True, interval=True,
           watch=Watch(abs=0.05)),
    Metric("claim_uncited_figure_rate", "uncited_figure_claims", "figure_claims", S,
           ("claims with a figure and no citation", "claims with figures"), claims=True, interval=True,
           watch=Watch(abs=0.05)),
    Metric("partially_supported_rate", PARTIALLY_SUPPORTED, "judged_sentences", J, (PARTIALLY_SUPPORTED, _JS),
           claims=True, watch=Watch(abs=0.05)),
    # derived from two metrics, not from counts: THE harmonic mean (`ratios.f1`)
    Metric("citation_f1", None, None, J, ("", ""), harmonic_mean_of=("citation_recall", "citation_precision"),
           headline=4, tile=3),
)
BY_NAME: dict[str, Metric] = {m.name: m for m in REGISTRY}


def metric(name: str) -> Metric:
    """The registry entry of `name`; KeyError for an unknown metric."""
    return BY_NAME[name]


def count_keys(name: str) -> tuple[str, ...]:
    """The counts behind a metric: its numerator and denominator, for a harmonic mean those of its
    parts (F1: recall's and precision's); KeyError for an unknown metric."""
    m = BY_NAME[name]
    if m.harmonic_mean_of is not None:
        return tuple(k for part in m.harmonic_mean_of for k in count_keys(part))
    return (m.numerator, m.denominator)  # type: ignore[return-value]


def names(metrics: Iterable[Metric] = REGISTRY) -> tuple[str, ...]:
    return tuple(m.name for m in metrics)


def in_report(section: str, registry: Iterable[Metric] = REGISTRY) -> tuple[str, ...]:
    """The metrics a report section shows, in registry order."""
    return names(m for m in registry if section in m.report)


def views(registry: tuple[Metric, ...]) -> dict[str, Any]:
    """Every list of metrics the products read, derived from a registry (the module's constants
    below are `views(REGISTRY)`; a test derives them from a registry with one more entry)."""

    def ranked(rank: str) -> tuple[str, ...]:
        return names(sorted((m for m in registry if getattr(m, rank) is not None), key=lambda m: getattr(m, rank)))

    derived = names(m for m in registry if m.derived)
    headline = ranked("headline")
    by_name = {m.name: m for m in registry}
    return {
        # ratio metric -> (numerator count, denominator count, scale), in the order rows are written
        "METRICS": {m.name: (m.numerator, m.denominator, m.scale) for m in registry if not m.derived},
        "DERIVED": derived,
        "METRIC_NAMES": (*names(m for m in registry if not m.derived), *derived),
        "RATE_METRICS": names(m for m in registry if m.rate and not m.derived) + derived,
        "JUDGED_METRICS": frozenset(m.name for m in registry if m.judged),
        "STRUCTURAL_INTERVAL_METRICS": names(m for m in registry if m.interval and not m.judged),
        "READER_METRICS": names(m for m in registry if m.reader),
        "TURN_LEVEL_METRICS": frozenset(m.name for m in registry if m.turn_level),
        "HEADLINE_METRICS": headline,
        "SCORED_HEADLINE_METRICS": tuple(m for m in headline if not by_name[m].reader),
        "REPORT_TILE_METRICS": ranked("tile"),
        "MONITORED_METRICS": names(m for m in registry if m.watch is not None),
        "CALIBRATED_METRICS": names(m for m in registry if m.calibrated),
        "CLAIM_METRICS": frozenset(m.name for m in registry if m.claims),
    }


_VIEWS = views(REGISTRY)
METRICS: dict[str, tuple[str, str, float]] = _VIEWS["METRICS"]
DERIVED: tuple[str, ...] = _VIEWS["DERIVED"]
METRIC_NAMES: tuple[str, ...] = _VIEWS["METRIC_NAMES"]
RATE_METRICS: tuple[str, ...] = _VIEWS["RATE_METRICS"]
JUDGED_METRICS: frozenset[str] = _VIEWS["JUDGED_METRICS"]
# Structural metrics with intervals all the same (the figure rates): every answer a cluster.
STRUCTURAL_INTERVAL_METRICS: tuple[str, ...] = _VIEWS["STRUCTURAL_INTERVAL_METRICS"]
READER_METRICS: tuple[str, ...] = _VIEWS["READER_METRICS"]
# Metrics of whole answers: a slice of sentences (has_number, multi_citation) does not have them.
TURN_LEVEL_METRICS: frozenset[str] = _VIEWS["TURN_LEVEL_METRICS"]
# The rates a dashboard leads with: the CLI summary, `bin/run_dag.py`, `citecheck compare` and the
# `daily_metrics_wide` view (one column each), in this order.
HEADLINE_METRICS: tuple[str, ...] = _VIEWS["HEADLINE_METRICS"]
# A claims mode's columns of the `daily_metrics_wide` view, after its headline columns (null on a
# day scored in sentence mode).
_WIDE_CLAIMS = frozenset({"claims_per_sentence", "claim_recall", "claim_precision", "partially_supported_rate"})
WIDE_CLAIM_METRICS: tuple[str, ...] = tuple(m for m in METRIC_NAMES if m in _WIDE_CLAIMS)
# The headline metrics a scored file has without the warehouse's reader events (`score`, `compare`).
SCORED_HEADLINE_METRICS: tuple[str, ...] = _VIEWS["SCORED_HEADLINE_METRICS"]
# The daily report's tiles and trend charts: the headline rates a reader acts on, with the
# per-1,000-answer counts and the padding alarm in place of the rates they restate.
REPORT_TILE_METRICS: tuple[str, ...] = _VIEWS["REPORT_TILE_METRICS"]
# The monitor's default metrics (their step sizes: `Metric.watch`).
MONITORED_METRICS: tuple[str, ...] = _VIEWS["MONITORED_METRICS"]
# The weekly review's human-calibrated metrics.
CALIBRATED_METRICS: tuple[str, ...] = _VIEWS["CALIBRATED_METRICS"]
# The metrics a claims mode adds; a sentence-mode output has none of them.
CLAIM_METRICS: frozenset[str] = _VIEWS["CLAIM_METRICS"]

COUNT_KEYS = (
    "answers", "refusals", "sentences", "check_worthy_sentences", "attached", "citations", "unknown_labels",
    "stale_labels", "pointer_problems", "citations_on_non_claims", "multi_citation_sentences", "markers",
    "markers_after_stop", "sentences_with_repeated_labels", "native_answer_chars", "native_cited_chars",
    "selected_answers", "selected_sentences", "judged_sentences", "unjudged_sentences", "judged_attached",
    "judged_citations", "credited_citations", SUPPORTED, MISCITED, UNCITED_SUPPORTED, UNSUPPORTED, PARTIAL,
    CONTRADICTED, "faithful", "agreement_sample", "first_stage_agree",
    "agreement_sample_llm_supported", "agreement_sample_llm_unsupported", "first_stage_false_pass",
    "first_stage_false_fail", "answers_rewrite_or_block", "pointer_problem_citations",
    *(f"pointer_problem_citations_{kind}" for kind in POINTER_PROBLEM_KINDS), "unverified_citations",
    "no_source_text_sentences", "language_unsupported_sentences", *READER_COUNT_KEYS, "figure_sentences",
    "uncited_figure_sentences", "traceable_figure_sentences", "untraced_figure_sentences", "generic_rules_answers",
)
# Each range a metric's values can have -> (the rule that checks it, what it checks); `invariants`
# and the validation gate check every metric against its range under this rule's name.
BOUNDS_RULES: dict[tuple[float, float | None], tuple[str, str]] = {
    (0.0, 1.0): ("rate_in_unit_interval", "every rate metric's value is in [0, 1] or null"),
    (0.0, None): ("count_not_negative", "every count metric's value (per 1,000, per unit) is >= 0 or null"),
}
# The counts of a claims mode (SPEC §2.1): absent from a sentence-mode output, which stays as it
# was without claims; `claim_splits_rejected` counts splits kept whole because they added content,
# `claim_splits_unsupported_language` sentences kept whole because the splitter lacks their language.
CLAIM_COUNT_KEYS = (
    "check_worthy_claims", "claim_attached", "judged_claims", "judged_claim_attached", "judged_claim_links",
    "credited_claim_links", "supported_claims", "faithful_claims", "miscited_claims", "uncited_supported_claims",
    "unsupported_claims", PARTIALLY_SUPPORTED, "claim_splits_rejected",
    "claim_splits_unsupported_language", "figure_claims", "uncited_figure_claims",
    "traceable_figure_claims", "untraced_figure_claims",
)
COUNT_KEYS = (*COUNT_KEYS, *CLAIM_COUNT_KEYS)
# An answer's counts as a row (`counts.AnswerCounts`, the accumulator's slices): each key's column.
COUNT_COLUMN: dict[str, int] = {key: i for i, key in enumerate(COUNT_KEYS)}
# The unjudged reason of a sentence whose cited sources were all logged without text (SPEC §3.4).
NO_SOURCE_TEXT = "no_source_text"
# Two different thresholds on purpose: the `multi_citation` slice holds sentences with two or
# more citations; `multi_citation_share` counts sentences with three or more (a padding signal).
MULTI_CITATION_SLICE_MIN = 2
PADDING_MIN_CITATIONS = 3


def registry_problems(registry: tuple[Metric, ...] = REGISTRY) -> list[str]:
    """What is wrong with the registry: a count not in COUNT_KEYS, an unknown part, bound, population
    or report section, a name or a headline/tile position used twice. Checked at import."""
    counts, problems = set(COUNT_KEYS), []
    by_name = {m.name: m for m in registry}
    for m in registry:
        if m.population not in POPULATIONS:
            problems.append(f"{m.name}: unknown population {m.population!r}")
        if not set(m.report) <= set(REPORT_SECTIONS):
            problems.append(f"{m.name}: unknown report section in {m.report}")
        if m.harmonic_mean_of is not None:
            if m.numerator is not None or not all(p in by_name and not by_name[p].derived for p in m.harmonic_mean_of):
                problems.append(f"{m.name}: a harmonic mean of two ratio metrics, without counts of its own")
        elif not {m.numerator, m.denominator} <= counts:
            problems.append(f"{m.name}: its counts are not in COUNT_KEYS")
        elif m.claims != (m.numerator in CLAIM_COUNT_KEYS):
            problems.append(f"{m.name}: a claims-mode metric exactly when its numerator is a claims-mode count")
    if len(by_name) != len(registry):
        problems.append("a metric name is used twice")
    problems += [f"{m.name}: no rule for its bounds {m.bounds}" for m in registry if m.bounds not in BOUNDS_RULES]
    for rank in ("headline", "tile"):
        used = [getattr(m, rank) for m in registry if getattr(m, rank) is not None]
        if len(used) != len(set(used)):
            problems.append(f"two metrics share a {rank} position")
    return problems


if registry_problems():
    raise ValueError(f"citecheck.core.metrics.definitions: {registry_problems()}")
