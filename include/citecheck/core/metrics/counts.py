"""The counts behind every metric, for one answer: one small function per population, each
naming the metrics its counts feed (`definitions.METRICS` pairs them into ratios).

Counting rules that dashboards disagree on, fixed here (SPEC §5): a link is one (sentence, label)
pair; citations on sentences that are not check-worthy are left out of precision and counted
apart; judged counts cover only the turns selected for judging and leave unjudged sentences out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citecheck.core.figures import Figure
from citecheck.core.languages import LANGUAGE_UNSUPPORTED
from citecheck.core.metrics.definitions import (
    CLAIM_COUNT_KEYS,
    COUNT_KEYS,
    NO_SOURCE_TEXT,
    PADDING_MIN_CITATIONS,
)
from citecheck.core.model import Sentence, StructuredTurn
from citecheck.core.reader_events import ReaderEvent, reader_counts
from citecheck.core.structural import claim_figures
from citecheck.core.verdicts import SentenceVerdict
from citecheck.core.vocabulary import (
    BAD_VERDICTS,
    MISCITED,
    NOT_SELECTED,
    REPLY_SUPPORTED,
    SUPPORTED,
    UNCITED_SUPPORTED,
    UNJUDGED,
    UNSUPPORTED,
)


@dataclass(frozen=True, slots=True)
class ScoredTurn:
    """A turn after judging: its structure, one verdict per sentence, and whether it was judged.
    `reader_events`: its reader events, None when its day logs no reader event at all (the
    reader metrics are then null, not zero)."""

    structured: StructuredTurn
    verdicts: tuple[SentenceVerdict, ...]
    selected: bool = True
    reader_events: tuple[ReaderEvent, ...] | None = None
    # a claims mode: each judged check-worthy sentence's claim verdicts, by sentence index
    claims: dict[int, tuple[SentenceVerdict, ...]] | None = None

    @property
    def turn_id(self) -> str:
        return self.structured.turn_id


def turn_counts(scored: ScoredTurn, keep: Callable[[SentenceVerdict], bool] | None = None) -> Counter[str]:
    """The counts behind every metric, for one answer, or for the subset of its sentences that
    `keep` selects (a sentence slice: then without the answer-level counts)."""
    if keep is None:
        return sentence_counts(scored, scored.verdicts, whole=True)
    return sentence_counts(scored, [v for v in scored.verdicts if keep(v)], whole=False)


def sentence_counts(scored: ScoredTurn, verdicts: Sequence[SentenceVerdict], *, whole: bool) -> Counter[str]:
    """The counts of the given sentences of an answer; `whole` adds the answer-level counts
    (pointer problems on no sentence, native-citation characters, rewrite-or-block)."""
    st = scored.structured
    c: Counter[str] = Counter(answers=1, refusals=int(st.is_refusal), sentences=len(verdicts),
                              selected_answers=int(scored.selected))
    if whole:
        _count_answer(c, st)
    claims_on = st.claims is not None
    if claims_on:
        for key in CLAIM_COUNT_KEYS:  # present, zero or not: a claims-mode answer has claim metrics
            c[key] += 0
        if whole:
            c["claim_splits_rejected"] = st.claim_splits_rejected
            c["claim_splits_unsupported_language"] = st.claim_splits_unsupported_language
    for v in verdicts:
        s = v.sentence
        _count_citations(c, s)
        if not s.check_worthy:
            c["citations_on_non_claims"] += len(s.labels)
            continue
        attached = _count_check_worthy(c, s)
        if s.figures:
            _count_figures(c, s.figures, attached)
        if scored.selected:
            _count_judged(c, v, attached)
        if claims_on:
            _count_claims(c, st, s, attached, (scored.claims or {}).get(s.index, ()) if scored.selected else ())
    if whole:
        rewrite = any(c[verdict] for verdict in BAD_VERDICTS)
        c["answers_rewrite_or_block"] = int(rewrite or c["unknown_labels"] > 0)
        if scored.reader_events is not None:  # the reader metrics (`core.reader_events.reader_counts`)
            c.update(reader_counts(scored.reader_events, scored.verdicts, selected=scored.selected))
    return c


def _count_answer(c: Counter[str], st: StructuredTurn) -> None:
    """Pointer problems that belong to no sentence count as unknown citations (`unknown_label_rate`,
    `pointer_problem_rate` and its kind's); native citations' answer characters feed `cited_char_share`."""
    problems = st.turn.pointer_problems
    orphans = [p for p in problems if not p.placed]
    c["citations"] += len(orphans)
    c["unknown_labels"] += len(orphans)
    for p in orphans:
        c["pointer_problem_citations"] += 1
        c[f"pointer_problem_citations_{p.kind}"] += 1
    c["pointer_problems"] = len(problems)
    c["generic_rules_answers"] = int(st.language_rules_generic)
    if st.turn.answer_format != "markers":
        c["native_answer_chars"] = len(st.turn.answer)
        c["native_cited_chars"] = cited_chars(st.turn)


def _count_citations(c: Counter[str], s: Sentence) -> None:
    """Every sentence's links and markers: `unknown_label_rate`, `stale_label_rate`,
    `marker_after_stop_share`, `non_claim_citation_share` (with the caller's non-claim count), and
    its native labels' pointer problems by kind and unverified fields."""
    c["citations"] += len(s.labels)
    c["unknown_labels"] += len(s.unknown_labels)
    c["stale_labels"] += len(s.stale_labels)
    c["markers"] += s.markers
    c["markers_after_stop"] += s.markers_after_stop
    c["sentences_with_repeated_labels"] += bool(s.duplicate_labels)
    for _, kind in s.pointer_problems:
        c["pointer_problem_citations"] += 1
        c[f"pointer_problem_citations_{kind}"] += 1
    if s.unverified:
        c["unverified_citations"] += len(s.unverified)


def _count_check_worthy(c: Counter[str], s: Sentence) -> bool:
    """A check-worthy sentence: `attachment_rate` (attached: some label resolved) and
    `multi_citation_share` (attached with `PADDING_MIN_CITATIONS` or more). Returns attached."""
    unknown = s.unknown_labels
    attached = any(label not in unknown for label in s.labels)
    c["check_worthy_sentences"] += 1
    c["attached"] += attached
    c["multi_citation_sentences"] += attached and len(s.labels) >= PADDING_MIN_CITATIONS
    return attached


def _count_figures(c: Counter[str], figures: Sequence[Figure], attached: bool, unit: str = "sentences") -> None:
    """A check-worthy sentence (`unit` "sentences") or claim ("claims") with figures (SPEC §3 item
    5): `uncited_figure_rate` (no resolved citation) and `untraced_figure_rate` (attached, some
    figure in no cited passage; one whose cited passages all lack text cannot be traced and is
    left out), or their `claim_` twins."""
    c[f"figure_{unit}"] += 1
    if not attached:
        c[f"uncited_figure_{unit}"] += 1
    elif any(f.traced is not None for f in figures):
        c[f"traceable_figure_{unit}"] += 1
        c[f"untraced_figure_{unit}"] += any(f.traced is False for f in figures)


def _count_judged(c: Counter[str], v: SentenceVerdict, attached: bool) -> None:
    """A check-worthy sentence of a selected turn: `unjudged_rate`; when judged, recall (its verdict
    count), precision (credited of its citations), `support_rate_of_cited`, `faithfulness`, the
    verdict rates and the judge agreement sample."""
    c["selected_sentences"] += 1
    if v.verdict == UNJUDGED:
        c["unjudged_sentences"] += 1
        reason = v.judgment.unjudged_reason if v.judgment is not None else None
        if reason == NO_SOURCE_TEXT:
            c["no_source_text_sentences"] += 1
        elif reason == LANGUAGE_UNSUPPORTED:
            c["language_unsupported_sentences"] += 1
        return
    count_judged_sentence(c, v.verdict, faithful=v.faithful, attached=attached, citations=len(v.sentence.labels),
                          credited=sum(v.credited.values()))
    _count_agreement(c, v)


def count_judged_sentence(c: Counter[str], verdict: str, *, faithful: bool, attached: bool, citations: int,
                          credited: int) -> None:
    """THE counts of one judged sentence (recall, precision, faithfulness, support rate, the
    verdict rates), from what its published row also holds: `review.calibrated` counts a
    published sentence through here."""
    c["judged_sentences"] += 1
    c["judged_attached"] += attached
    c["judged_citations"] += citations
    c["credited_citations"] += credited
    c[verdict] += 1
    c["faithful"] += faithful


def _count_claims(c: Counter[str], st: StructuredTurn, s: Sentence, attached: bool,
                  claims: Sequence[SentenceVerdict]) -> None:
    """A check-worthy sentence's claims (SPEC §2.1): `claims_per_sentence`, `claim_attachment_rate`
    (each claim carries its sentence's citations), the claim figure rates (each claim's own figures,
    `structural.claim_figures`); when judged, `claim_recall`, `claim_precision`
    (its links: one per (claim, label)), `claim_faithfulness` and the claim verdict rates."""
    n = len(st.claim_texts(s))
    c["check_worthy_claims"] += n
    c["claim_attached"] += n * attached
    for figures in claim_figures(st, s):
        if figures:
            _count_figures(c, figures, attached, unit="claims")
    for v in claims:
        if v.verdict == UNJUDGED or v.verdict == NOT_SELECTED:
            continue
        c["judged_claims"] += 1
        c["judged_claim_attached"] += attached
        c["judged_claim_links"] += len(v.sentence.labels)
        c["credited_claim_links"] += sum(v.credited.values())
        c["faithful_claims"] += v.faithful
        if v.verdict in _CLAIM_VERDICT_COUNTS:
            c[_CLAIM_VERDICT_COUNTS[v.verdict]] += 1


_CLAIM_VERDICT_COUNTS = {SUPPORTED: "supported_claims", MISCITED: "miscited_claims",
                         UNCITED_SUPPORTED: "uncited_supported_claims", UNSUPPORTED: "unsupported_claims"}


def _count_agreement(c: Counter[str], v: SentenceVerdict) -> None:
    """A sentence of the LLM's random escalation sample with both verdicts: `first_stage_agreement`,
    `first_stage_false_pass_rate` (first stage supported, LLM not), `first_stage_false_fail_rate`."""
    detail = v.judgment.detail if v.judgment is not None else {}
    llm = detail.get("llm")
    first = detail.get("first_stage")
    if detail.get("escalation") != "sample" or not llm or not first or llm.get("status") != "ok":
        return
    llm_supported = llm.get("verdict") == REPLY_SUPPORTED
    first_supported = bool(first.get("supported"))
    c["agreement_sample"] += 1
    c["first_stage_agree"] += llm_supported == first_supported
    if llm_supported:
        c["agreement_sample_llm_supported"] += 1
        c["first_stage_false_fail"] += not first_supported
    else:
        c["agreement_sample_llm_unsupported"] += 1
        c["first_stage_false_pass"] += first_supported


def cited_chars(turn: Any) -> int:
    """Answer characters inside at least one valid native citation's answer span (positions cover none)."""
    covered = 0
    last_end = 0
    for c in sorted((c for c in turn.native_citations if c.valid), key=lambda c: (c.start, c.end)):
        start = max(c.start, last_end)
        if c.end > start:
            covered += c.end - start
            last_end = c.end
    return covered


def full_counts(counts: Mapping[str, int]) -> dict[str, int]:
    """Every count key, zeros included, in a stable order (the claim counts only in a claims mode)."""
    claims_on = "check_worthy_claims" in counts
    return {key: int(counts.get(key, 0)) for key in COUNT_KEYS if claims_on or key not in CLAIM_COUNT_KEYS}


def verdict_counts(verdicts: Iterable[SentenceVerdict]) -> Counter[str]:
    return Counter(v.verdict for v in verdicts)
