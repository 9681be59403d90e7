"""The scoring path shared by the CLI and the daily job, as pure per-chunk functions:
structure (100% of turns) → judge (selected turns, in batches) → verdicts → records and metrics
(the rows of a scored sentence: `citecheck.core.records`).

The CLI runs them over a file in one process (`score`); the job runs the same functions per
chunk and stages what they return in the warehouse between steps (`citecheck.job.steps`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from citecheck.core.claims import ClaimsError, decide_claims, split_turn, splitter_for
from citecheck.core.config import Config
from citecheck.core.criteria import Criteria
from citecheck.core.fold import AnswerFold
from citecheck.core.metrics import (
    NO_SOURCE_TEXT,
    MetricAccumulator,
    ScoredTurn,
    SliceCap,
    full_counts,
    invariant_violations,
)
from citecheck.core.model import JudgeItem, Judgment, JudgmentKey, StructuredTurn, Turn, unjudged
from citecheck.core.reader_events import ReaderEvent
from citecheck.core.records import turn_json
from citecheck.core.selection import Selection
from citecheck.core.structural import ConversationHistory, structure_turn
from citecheck.core.turns import Skipped, TurnError
from citecheck.core.verdicts import decide
from citecheck.judges.base import Judge

logger = logging.getLogger(__name__)

JUDGE_BATCH_TURNS = 256  # turns per judge call: the CLI's `score` and the job's judge_shard step


def in_conversation_order(turns: Iterable[Turn]) -> list[Turn]:
    """Turns ordered by conversation and turn index, so stale labels see earlier turns first."""
    return sorted(turns, key=lambda t: (t.conversation_id, t.turn_index))


def structure_turns(turns: Iterable[Turn], config: Config, history: ConversationHistory | None = None,
                    skipped: list[Skipped] | None = None) -> Iterator[StructuredTurn]:
    """Structural checks on every turn; pass turns in conversation order (see above). In a claims
    mode each check-worthy sentence is also split into its claims (SPEC §2.1). A turn over a size
    limit found while parsing (`[segmentation] max_citations_per_turn`, `..._per_sentence`) goes to
    `skipped` with its size as the reason (raised as `TurnError` when no list is given). Any other
    error while checking one turn skips that turn too, the error its reason (`unexpected_reason`):
    one turn never sinks the rest."""
    history = history if history is not None else ConversationHistory()
    splitter = splitter_for(config) if config.claims_on else None
    for turn in turns:
        try:
            structured = structure_turn(turn, config, history)
            if splitter is not None:
                structured = split_turn(structured, splitter, config.claims_max)
        except TurnError as exc:
            if skipped is None:
                raise
            skipped.append(Skipped(None, turn.turn_id, str(exc)))
            continue
        except Exception as exc:  # a bug met by one turn's text: that turn is skipped, named, counted
            if skipped is None:
                raise
            logger.warning("turn %s skipped: %s", turn.turn_id, unexpected_reason(exc), exc_info=exc)
            skipped.append(Skipped(None, turn.turn_id, unexpected_reason(exc)))
            continue
        yield structured


UNEXPECTED_ERROR = "unexpected error"  # the reason a turn skipped by an error of the checks starts with


def unexpected_reason(exc: BaseException) -> str:
    """A turn's skip reason for an error the checks did not expect: its type and first line."""
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"{UNEXPECTED_ERROR}: {type(exc).__name__}" + (f": {first}" if first else "")


def judge_items(structured: StructuredTurn) -> list[JudgeItem]:
    """One item per check-worthy sentence (per claim in a claims mode): its text, the sentence's
    resolved citations and the whole context set."""
    context = structured.turn.context
    if structured.claims is None:
        return [JudgeItem(structured.turn_id, s.index, s.text, s.resolved_labels, context,
                          language=structured.language)
                for s in structured.sentences if s.check_worthy]
    return [JudgeItem(structured.turn_id, s.index, text, s.resolved_labels, context, claim_index=c,
                      language=structured.language)
            for s in structured.sentences if s.check_worthy
            for c, text in enumerate(structured.claim_texts(s))]


def without_source_text(item: JudgeItem) -> bool:
    """A sentence whose cited sources all lack text (web pages the app did not log): no judge
    can see them, so it is unjudged with the reason `no_source_text` (SPEC §3.4)."""
    if not item.cited:
        return False
    passages = {p.label: p for p in item.context}
    return all(label in passages and not passages[label].has_text for label in item.cited)


def judge_turns(batch: Sequence[StructuredTurn], judge: Judge) -> dict[JudgmentKey, Judgment]:
    """One judge call for every check-worthy sentence of the turns: judgments keyed (turn, sentence)."""
    items = []
    out: dict[JudgmentKey, Judgment] = {}
    for st in batch:
        for item in judge_items(st):
            if without_source_text(item):
                out[item.key] = unjudged(NO_SOURCE_TEXT, judge.name, judge.version)
            else:
                items.append(item)
    if not items:
        return out
    results = judge.judge(items)
    if len(results) != len(items):
        raise RuntimeError(f"judge {judge.name} returned {len(results)} judgments for {len(items)} items")
    out.update((item.key, j) for item, j in zip(items, results, strict=True))
    return out


def decide_turn(st: StructuredTurn, judgments: Mapping[JudgmentKey, Judgment], *, selected: bool,
                reader_events: tuple[ReaderEvent, ...] | None = None) -> ScoredTurn:
    """Every sentence's verdict from its judgment (none for turns outside the judged share);
    `reader_events`: the turn's reader events, None on a day that logs none."""
    if st.claims is None:
        verdicts = tuple(decide(s, judgments.get((st.turn_id, s.index)), selected=selected) for s in st.sentences)
        return ScoredTurn(st, verdicts, selected=selected, reader_events=reader_events)
    decided = []
    claims = {}
    for s in st.sentences:
        texts = st.claim_texts(s) if s.check_worthy else ()
        keys = ((st.turn_id, s.index, c) for c in range(len(texts)))
        verdict, claim_verdicts = decide_claims(s, texts, [judgments.get(k) for k in keys], selected=selected)
        decided.append(verdict)
        if claim_verdicts:
            claims[s.index] = claim_verdicts
    return ScoredTurn(st, tuple(decided), selected=selected, reader_events=reader_events, claims=claims)


TurnSplitter = Callable[[Sequence[StructuredTurn]], list[StructuredTurn]]


def judge_batch(batch: Sequence[StructuredTurn], judge: Judge | None,
                selected: Callable[[StructuredTurn], bool] | None = None,
                split: TurnSplitter | None = None) -> list[ScoredTurn]:
    """Judge the selected turns of a batch in one judge call and decide every verdict; `split`
    (the LLM claim splitter) splits the selected turns' sentences first."""
    chosen = [judge is not None and (selected is None or selected(st)) for st in batch]
    if split is not None and any(chosen):
        picked = [i for i, ok in enumerate(chosen) if ok]
        batch = list(batch)
        for i, st in zip(picked, split([batch[i] for i in picked]), strict=True):
            batch[i] = st
    judgments = judge_turns([st for st, ok in zip(batch, chosen, strict=True) if ok], judge) if judge else {}
    return [decide_turn(st, judgments, selected=ok) for st, ok in zip(batch, chosen, strict=True)]


def score_structured(structured: Iterable[StructuredTurn], judge: Judge | None,
                     selected: Callable[[StructuredTurn], bool] | None = None,
                     batch_turns: int = JUDGE_BATCH_TURNS, split: TurnSplitter | None = None
                     ) -> Iterator[ScoredTurn]:
    """Stream structured turns through the judge in batches of `batch_turns` turns."""
    batch: list[StructuredTurn] = []
    for st in structured:
        batch.append(st)
        if len(batch) >= batch_turns:
            yield from judge_batch(batch, judge, selected, split)
            batch = []
    if batch:
        yield from judge_batch(batch, judge, selected, split)


def llm_claim_splitter(judge: Judge | None, config: Config) -> Any:
    """`[claims] mode = "llm"`: the splitter of the run's LLM judge (an `anthropic` judge, or a
    cascade escalating to one), which shares its client and daily budget; None in other modes."""
    if config.claims_mode != "llm":
        return None
    make = getattr(judge, "claim_splitter", None)
    if make is None:
        raise ClaimsError('claims.mode = "llm" needs an anthropic judge, or a cascade escalating to one')
    return make(max_claims=config.claims_max)


@dataclass
class ScoreReport:
    """Everything one scoring run produced, ready for JSON output or the warehouse."""

    config: Config
    scored: list[ScoredTurn] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    fold: AnswerFold | None = None  # the run's fold: its metric totals (`accumulator`) and criteria tallies
    judge_stats: dict[str, Any] = field(default_factory=dict)
    judge_name: str | None = None
    judge_version: str | None = None

    @property
    def accumulator(self) -> MetricAccumulator | None:
        """The fold's metric totals (None without a fold)."""
        return None if self.fold is None else self.fold.metrics

    def to_json(self, *, judged: bool = True) -> dict[str, Any]:
        acc = self.accumulator or MetricAccumulator(self.config)
        rows = acc.rows()
        out: dict[str, Any] = {
            "turns": [turn_json(t, judged=judged) for t in self.scored],
            "metrics": acc.summary(),
            "counts": full_counts(acc.counts()),
            "rows": rows,
            "invariant_violations": invariant_violations(rows),
            "slices_cut": {k: dict(v) for k, v in acc.cap.cut.items()} if acc.cap else {},
            "skipped": [s.as_dict() for s in self.skipped],
            "run": {
                "config_hash": self.config.rules_hash,
                "judge": self.judge_name,
                "judge_version": self.judge_version,
                "turns_read": len(self.scored) + len(self.skipped),
                "turns_scored": len(self.scored),
                "turns_skipped": len(self.skipped),
            },
        }
        if self.config.claims_on:
            out["run"].update(claims_mode=self.config.claims_mode,
                              claim_splits_rejected=sum(t.structured.claim_splits_rejected for t in self.scored),
                              claim_splits_unsupported_language=sum(
                                  t.structured.claim_splits_unsupported_language for t in self.scored))
        if judged:
            out["stats"] = self.judge_stats
        else:
            for key in ("metrics", "rows", "invariant_violations"):
                out.pop(key)
        return out


def score(turns: Iterable[Turn], judge: Judge | None, config: Config,
          skipped: Sequence[Skipped] = (), selection: Selection | None = None,
          criteria: Criteria | None = None) -> ScoreReport:
    """Score turns end to end (output in input order); `judge=None` runs the structural checks only.
    `selection`: judge only its share of the turns, as the job does (default: every turn);
    `criteria`: tallied by the same fold (`report.fold.criteria`)."""
    if config.claims_on:
        splitter_for(config)  # a claims file that cannot be used stops the run before any work
    llm_splitter = llm_claim_splitter(judge, config)
    turns = list(turns)
    cap = SliceCap.from_turns(turns, config)
    cap.log_cuts()
    fold = AnswerFold(config, criteria, cap=cap)
    report = ScoreReport(config=config, skipped=list(skipped), fold=fold)
    position = {t.turn_id: i for i, t in enumerate(turns)}
    structured = structure_turns(in_conversation_order(turns), config, skipped=report.skipped)
    chosen = None if selection is None else (lambda st: selection.selected(st.turn_id))
    split = llm_splitter.split_turns if llm_splitter is not None else None
    for scored in score_structured(structured, judge, chosen, split=split):
        report.scored.append(scored)
        fold.add(scored)
    report.scored.sort(key=lambda s: position.get(s.turn_id, 0))
    if judge is not None:
        report.judge_stats = judge.stats()
        if llm_splitter is not None:
            report.judge_stats["claim_splitter"] = llm_splitter.stats()
        report.judge_name, report.judge_version = judge.name, judge.version
    return report
