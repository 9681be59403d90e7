"""The counts behind every metric, for a block of answers at once (`AnswerCounts`): one row per
answer over `COUNT_KEYS`, the sum of its sentences' rows and its own answer-level counts.

The sentences of a block are read once, into columns (`_Sentences`, one element per sentence);
each population's rule is then one small function over those columns, naming the metrics its
counts feed (`definitions.METRICS` pairs them into ratios). The rare counts (pointer problems by
kind, a claims mode's claims, the judge agreement sample, orphan pointer problems, reader events)
are counted into a Counter for the sentence or answer that has them and added at their columns.
A sentence slice's counts of an answer are the sum of the rows of its sentences in the slice
(`AnswerCounts.of_sentences`): nothing is counted twice.

Counting rules that dashboards disagree on, fixed here (SPEC §5): a link is one (sentence, label)
pair; citations on sentences that are not check-worthy are left out of precision and counted
apart; judged counts cover only the turns selected for judging and leave unjudged sentences out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from citecheck.core.figures import traceable, untraced_figures
from citecheck.core.languages import LANGUAGE_UNSUPPORTED
from citecheck.core.metrics.definitions import (
    CLAIM_COUNT_KEYS,
    COUNT_COLUMN,
    COUNT_KEYS,
    MULTI_CITATION_SLICE_MIN,
    NO_SOURCE_TEXT,
    PADDING_MIN_CITATIONS,
)
from citecheck.core.metrics.ratios import answer_votes
from citecheck.core.model import Sentence, StructuredTurn
from citecheck.core.reader_events import ReaderEvent, reader_counts
from citecheck.core.structural import claim_figures
from citecheck.core.verdicts import SentenceVerdict
from citecheck.core.vocabulary import (
    BAD_VERDICTS,
    MISCITED,
    REPLY_SUPPORTED,
    SUPPORTED,
    UNCITED_SUPPORTED,
    UNSUPPORTED,
    VERDICTS,
    is_judged,
)

_NUMBER = re.compile(r"\d")
# The built-in sentence slices (SPEC §5): each one's test of a sentence; a slice's values are "yes"
# and "no". Criteria scopes (`where = { has_number = "yes" }`) read the same tests.
SENTENCE_SLICES: dict[str, Callable[[SentenceVerdict], bool]] = {
    "has_number": lambda v: bool(_NUMBER.search(v.sentence.text)),
    "multi_citation": lambda v: len(v.sentence.labels) >= MULTI_CITATION_SLICE_MIN,
}
WIDTH = len(COUNT_KEYS)
ANSWERS_PER_BLOCK = 1024  # answers counted at once (`AnswerCounts`): a day's fold holds this many
_CLAIM_KEYS = frozenset(CLAIM_COUNT_KEYS)
_BAD_AT = np.array([COUNT_COLUMN[v] for v in BAD_VERDICTS], dtype=np.intp)
_UNJUDGED_REASONS = {NO_SOURCE_TEXT: 1, LANGUAGE_UNSUPPORTED: 2}  # `_Sentences.reason`; 0: any other
_JUDGED = tuple(v for v in VERDICTS if is_judged(v))  # each one a count key


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


class _Sentences(NamedTuple):
    """A block's sentences as columns, one element per sentence (`_sentence_values` reads them)."""

    citations: Any  # its labels: links, one per (sentence, label)
    unknown: Any  # labels that name no passage
    stale: Any  # labels resolved against an earlier turn's sources
    markers: Any
    markers_after_stop: Any
    repeated: Any  # 1: some label given twice
    problems: Any  # native labels unknown by a pointer problem
    unverified: Any  # labels with fields the job could not check
    check_worthy: Any
    resolved: Any  # 1: some label resolved
    figures: Any  # 1: it has figures
    traceable: Any  # 1: some figure could be traced (a cited passage had text)
    untraced: Any  # 1: some figure is in no cited passage
    selected: Any  # 1: its answer was selected for judging
    judged: Any  # 1: a judge decided it (`is_judged`)
    reason: Any  # why it is unjudged: `_UNJUDGED_REASONS`, 0 for any other
    faithful: Any
    credited: Any  # its credited citations
    verdict: Any  # its verdict (a string column)


def _sentence_values(v: SentenceVerdict, selected: bool) -> tuple[int, ...]:
    """One sentence's `_Sentences` values but its verdict, as numbers."""
    s, j = v.sentence, v.judgment
    figures = s.figures
    return (len(s.labels), len(s.unknown_labels), len(s.stale_labels), s.markers, s.markers_after_stop,
            bool(s.duplicate_labels), len(s.pointer_problems), len(s.unverified), s.check_worthy,
            bool(s.resolved_labels),
            bool(figures), bool(figures) and traceable(figures), bool(figures) and bool(untraced_figures(figures)),
            selected, is_judged(v.verdict), 0 if j is None else _UNJUDGED_REASONS.get(j.unjudged_reason, 0),
            v.faithful, sum(v.credited.values()))


def _citation_counts(s: _Sentences) -> dict[str, Any]:
    """Every sentence's links and markers: `unknown_label_rate`, `stale_label_rate`,
    `marker_after_stop_share`, `non_claim_citation_share` (its citations on sentences that are
    not check-worthy), pointer problems (by kind: `_rare_sentence_counts`) and unverified fields."""
    return {"sentences": 1, "citations": s.citations, "unknown_labels": s.unknown, "stale_labels": s.stale,
            "markers": s.markers, "markers_after_stop": s.markers_after_stop,
            "sentences_with_repeated_labels": s.repeated, "pointer_problem_citations": s.problems,
            "unverified_citations": s.unverified, "citations_on_non_claims": s.citations * (1 - s.check_worthy)}


def _check_worthy_counts(s: _Sentences, attached: Any) -> dict[str, Any]:
    """A check-worthy sentence: `attachment_rate` (attached: some label resolved) and
    `multi_citation_share` (attached with `PADDING_MIN_CITATIONS` or more)."""
    return {"check_worthy_sentences": s.check_worthy, "attached": attached,
            "multi_citation_sentences": attached * (s.citations >= PADDING_MIN_CITATIONS)}


def figure_counts(figures: Any, attached: Any, traced: Any, untraced: Any, unit: str = "sentences") -> dict[str, Any]:
    """A check-worthy sentence (`unit` "sentences") or claim ("claims") with figures (SPEC §3 item
    5): `uncited_figure_rate` (no resolved citation) and `untraced_figure_rate` (attached, some
    figure in no cited passage; one whose cited passages all lack text cannot be traced and is
    left out), or their `claim_` twins. Element by element: columns, or one claim's 0/1 values."""
    traceable_attached = figures * attached * traced
    return {f"figure_{unit}": figures, f"uncited_figure_{unit}": figures * (1 - attached),
            f"traceable_figure_{unit}": traceable_attached, f"untraced_figure_{unit}": traceable_attached * untraced}


def _judged_share_counts(s: _Sentences, attached: Any) -> dict[str, Any]:
    """A check-worthy sentence of a selected turn: `unjudged_rate` (and why: no source text, an
    unsupported language); when judged, `judged_sentence_counts`."""
    share = s.check_worthy * s.selected
    unjudged = share * (1 - s.judged)
    judged = share * s.judged
    counts = {"selected_sentences": share, "unjudged_sentences": unjudged,
              "no_source_text_sentences": unjudged * (s.reason == _UNJUDGED_REASONS[NO_SOURCE_TEXT]),
              "language_unsupported_sentences": unjudged * (s.reason == _UNJUDGED_REASONS[LANGUAGE_UNSUPPORTED])}
    for key, n in judged_sentence_counts(s.verdict, faithful=s.faithful, attached=attached, citations=s.citations,
                                credited=s.credited).items():
        counts[key] = judged * n
    return counts


def judged_sentence_counts(verdict: Any, *, faithful: Any, attached: Any, citations: Any,
                           credited: Any) -> dict[str, Any]:
    """THE counts of a judged sentence: recall (its verdict count), precision (credited of its
    citations), `support_rate_of_cited`, `faithfulness` and the verdict rates. Element by element:
    a block's sentences as columns, or one sentence's values (`review.calibrated` counts a
    published sentence through here)."""
    counts = {"judged_sentences": 1, "judged_attached": attached, "judged_citations": citations,
              "credited_citations": credited, "faithful": faithful}
    counts.update({key: verdict == key for key in _JUDGED})
    return counts


def _sentence_rows(values: list[tuple[int, ...]], verdicts: list[str]) -> np.ndarray:
    """The block's sentences' counts, one row each over `COUNT_KEYS`, by the rules above."""
    columns = np.array(values, dtype=np.int64).reshape(len(values), len(_Sentences._fields) - 1)
    s = _Sentences(*columns.T, verdict=np.array(verdicts, dtype=str))
    attached = s.check_worthy * s.resolved
    rows = np.zeros((len(values), WIDTH), dtype=np.int64)
    for counts in (_citation_counts(s), _check_worthy_counts(s, attached),
                   figure_counts(s.check_worthy * s.figures, attached, s.traceable, s.untraced),
                   _judged_share_counts(s, attached)):
        for key, column in counts.items():
            rows[:, COUNT_COLUMN[key]] = column
    return rows


def _rare_sentence_counts(scored: ScoredTurn, v: SentenceVerdict) -> Counter[str] | None:
    """The counts few sentences have, None for a sentence without: its pointer problems by kind,
    a claims mode's claims (`_count_claims`), the judge agreement sample (`_count_agreement`)."""
    s = v.sentence
    claims_on = scored.structured.claims is not None and s.check_worthy
    sample = scored.selected and v.judgment is not None and v.judgment.detail.get("escalation") == "sample"
    if not (s.pointer_problems or claims_on or sample):
        return None
    c: Counter[str] = Counter(f"pointer_problem_citations_{kind}" for _, kind in s.pointer_problems)
    if claims_on:
        decided = (scored.claims or {}).get(s.index, ()) if scored.selected else ()
        _count_claims(c, scored.structured, s, s.attached, decided)
    if sample and s.check_worthy and is_judged(v.verdict):
        _count_agreement(c, v)
    return c


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
            c.update(figure_counts(1, int(attached), int(traceable(figures)), int(bool(untraced_figures(figures))),
                                   unit="claims"))
    for v in claims:
        if not is_judged(v.verdict):
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


# An answer's own counts (`_answer_values`); the first three are also each of its sentence slices'.
_ANSWER_KEYS = ("answers", "refusals", "selected_answers", "pointer_problems", "generic_rules_answers",
                "native_answer_chars", "native_cited_chars", "claim_splits_rejected",
                "claim_splits_unsupported_language")
_ANSWER_AT = np.array([COUNT_COLUMN[key] for key in _ANSWER_KEYS], dtype=np.intp)
_SHARED = 3


def _answer_values(scored: ScoredTurn) -> tuple[int, ...]:
    """An answer's `_ANSWER_KEYS`: its pointer problems, whether its language fell back to the
    generic rules, its native citations' answer characters (`cited_char_share`) and a claims
    mode's rejected and unsupported-language splits."""
    st = scored.structured
    turn = st.turn
    native = turn.answer_format != "markers"
    return (1, st.is_refusal, scored.selected, len(turn.pointer_problems), st.language_rules_generic,
            len(turn.answer) if native else 0, cited_chars(turn) if native else 0,
            st.claim_splits_rejected if st.claims is not None else 0,
            st.claim_splits_unsupported_language if st.claims is not None else 0)


def _rare_answer_counts(scored: ScoredTurn) -> Counter[str] | None:
    """The answer-level counts few answers have, None for one without: pointer problems that
    belong to no sentence count as unknown citations (`unknown_label_rate`, `pointer_problem_rate`
    and its kind's); a logged day's reader counts (`core.reader_events.reader_counts`)."""
    orphans = [p for p in scored.structured.turn.pointer_problems if not p.placed]
    if not orphans and scored.reader_events is None:
        return None
    c: Counter[str] = Counter()
    for p in orphans:
        c["citations"] += 1
        c["unknown_labels"] += 1
        c["pointer_problem_citations"] += 1
        c[f"pointer_problem_citations_{p.kind}"] += 1
    if scored.reader_events is not None:
        c.update(reader_counts(scored.reader_events, scored.verdicts, selected=scored.selected))
    return c


def _add_counts(rows: np.ndarray, row: int, counts: Mapping[str, int]) -> None:
    for key, n in counts.items():
        column = COUNT_COLUMN.get(key)
        if column is None:
            raise ValueError(f"count {key!r} is not in COUNT_KEYS (core.metrics.definitions)")
        rows[row, column] += n


def _segment_sums(rows: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per segment (rows `bounds[i]` to `bounds[i + 1]`), the sum of its rows (zero for none)."""
    running = np.zeros((len(rows) + 1, *rows.shape[1:]), dtype=rows.dtype)
    np.cumsum(rows, axis=0, out=running[1:])
    return running[bounds[1:]] - running[bounds[:-1]]


@dataclass(frozen=True, slots=True)
class AnswerCounts:
    """The counts of a block of scored answers, one row each over `COUNT_KEYS` (`whole`), and
    what their sentence slices need: each sentence's row, the counts an answer gives each of its
    slices, and each sentence's `SENTENCE_SLICES` tests."""

    scored: Sequence[ScoredTurn]
    whole: np.ndarray  # (answers, WIDTH): each answer's counts
    claims: np.ndarray  # (answers,): scored in a claims mode (its counts have the claim counts)
    shared: np.ndarray  # (answers, WIDTH): the counts an answer gives each of its sentence slices
    sentences: np.ndarray  # (sentences, WIDTH): each sentence's counts, answer after answer
    sentence_sums: np.ndarray  # (answers, WIDTH): the sum of each answer's sentences' counts
    whole_votes: tuple[np.ndarray, np.ndarray]  # each answer's metric values and votes (`ratios.answer_votes`)
    bounds: np.ndarray  # (answers + 1,): where each answer's sentences start, then their end
    slice_tests: dict[str, np.ndarray]  # each SENTENCE_SLICES test, per sentence

    @classmethod
    def of(cls, scored: Sequence[ScoredTurn]) -> AnswerCounts:
        """Count a block of answers (all of them held: count a day a block at a time)."""
        values: list[tuple[int, ...]] = []
        verdicts: list[SentenceVerdict] = []
        rare_sentences: list[tuple[int, Counter[str]]] = []
        rare_answers: list[tuple[int, Counter[str]]] = []
        bounds = [0]
        for i, answer in enumerate(scored):
            selected = answer.selected
            for v in answer.verdicts:
                values.append(_sentence_values(v, selected))
                rare = _rare_sentence_counts(answer, v)
                if rare is not None:
                    rare_sentences.append((len(verdicts), rare))
                verdicts.append(v)
            bounds.append(len(verdicts))
            rare = _rare_answer_counts(answer)
            if rare is not None:
                rare_answers.append((i, rare))
        sentences = _sentence_rows(values, [v.verdict for v in verdicts])
        for at, counts in rare_sentences:
            _add_counts(sentences, at, counts)
        ends = np.array(bounds, dtype=np.intp)
        shared = np.zeros((len(scored), WIDTH), dtype=np.int64)
        own = np.array([_answer_values(answer) for answer in scored], dtype=np.int64).reshape(
            len(scored), len(_ANSWER_KEYS))
        shared[:, _ANSWER_AT[:_SHARED]] = own[:, :_SHARED]
        sentence_sums = _segment_sums(sentences, ends)
        whole = sentence_sums.copy()
        whole[:, _ANSWER_AT] += own
        for at, counts in rare_answers:
            _add_counts(whole, at, counts)
        # rewrite or block: some sentence the runtime checker rewrites or blocks, or an unknown label
        rewrite = (whole[:, _BAD_AT] > 0).any(axis=1) | (whole[:, COUNT_COLUMN["unknown_labels"]] > 0)
        whole[:, COUNT_COLUMN["answers_rewrite_or_block"]] = rewrite
        claims = np.array([answer.structured.claims is not None for answer in scored], dtype=bool)
        tests = {name: np.array([test(v) for v in verdicts], dtype=bool) for name, test in SENTENCE_SLICES.items()}
        return cls(scored, whole, claims, shared, sentences, sentence_sums, answer_votes(whole), ends, tests)

    def of_sentences(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per answer, the counts of its sentences that `keep` (one flag per sentence) selects,
        without the answer-level counts, and how many of its sentences it selects."""
        kept = _segment_sums(self.sentences * keep[:, None], self.bounds)
        return self.shared + kept, _segment_sums(keep.astype(np.int64), self.bounds)

    def split_sentences(self, test: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """`of_sentences` of the sentences that pass `test` and of those that do not (a sentence
        slice's "yes" and "no"); the second as the answer's sentences less the first (exact)."""
        passing = _segment_sums(self.sentences * test[:, None], self.bounds)
        n = _segment_sums(test.astype(np.int64), self.bounds)
        return ((self.shared + passing, n),
                (self.shared + self.sentence_sums - passing, self.sentence_totals - n))

    @property
    def sentence_totals(self) -> np.ndarray:
        """Each answer's number of sentences."""
        return np.diff(self.bounds)

    def counter(self, i: int) -> Counter[str]:
        """Answer `i`'s counts: every count key, the claim counts only in a claims mode."""
        return as_counter(self.whole[i], bool(self.claims[i]))


def as_counter(row: np.ndarray, claims: bool) -> Counter[str]:
    """A row over `COUNT_KEYS` as a Counter of ints (the claim counts only for a claims mode's)."""
    return Counter({key: n for key, n in zip(COUNT_KEYS, row.tolist(), strict=True)
                    if claims or key not in _CLAIM_KEYS})


def turn_counts(scored: ScoredTurn) -> Counter[str]:
    """The counts behind every metric, for one answer (a day counts a block at a time: `AnswerCounts`)."""
    return AnswerCounts.of([scored]).counter(0)


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
