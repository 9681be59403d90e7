"""From a judgment to a sentence verdict and per-citation credit (SPEC §5).

The verdict names, their groups and the LLM reply's names are `core.vocabulary` (one table of
what each verdict means); this module decides which one a sentence gets.

Credit follows ALCE: a citation is credited when its sentence is supported and it is not
irrelevant, irrelevant meaning it cannot support the sentence alone AND the remaining citations
still support it without it. A judge may supply its own credit (the LLM judge uses Liu et al.'s
full/partial rule). Unknown labels are never credited. Both rules live in `judges.derive`, next
to the derivation of the judgment they read.
"""

from __future__ import annotations

from dataclasses import dataclass

from citecheck.core.model import Judgment, Sentence
from citecheck.core.vocabulary import (
    FAITHFUL_VERDICTS,
    LLM_ONLY_VERDICTS,
    MISCITED,
    NOT_CHECK_WORTHY,
    NOT_SELECTED,
    SUPPORTED,
    UNCITED_SUPPORTED,
    UNJUDGED,
    UNSUPPORTED,
)
from citecheck.judges.derive import alce_credited


@dataclass(frozen=True, slots=True)
class SentenceVerdict:
    sentence: Sentence
    verdict: str
    judgment: Judgment | None
    credited: dict[str, bool]
    supported_elsewhere_by: tuple[str, ...]

    @property
    def faithful(self) -> bool:
        return self.verdict in FAITHFUL_VERDICTS or (
            self.judgment is not None and self.judgment.judged and self.judgment.faithful
        )


def decide(sentence: Sentence, judgment: Judgment | None, *, selected: bool = True) -> SentenceVerdict:
    """The verdict and credit of one sentence; `selected=False` means not chosen for judging."""
    labels = sentence.labels
    if not sentence.check_worthy:
        return SentenceVerdict(sentence, NOT_CHECK_WORTHY, None, {lab: False for lab in labels}, ())
    if not selected:
        return SentenceVerdict(sentence, NOT_SELECTED, None, {lab: False for lab in labels}, ())
    if judgment is None or not judgment.judged:
        return SentenceVerdict(sentence, UNJUDGED, judgment, {lab: False for lab in labels}, ())
    resolved = sentence.resolved_labels
    if resolved and judgment.cited:
        verdict = SUPPORTED
    elif resolved and judgment.verdict in LLM_ONLY_VERDICTS:
        verdict = judgment.verdict
    elif judgment.elsewhere:
        verdict = MISCITED if resolved else UNCITED_SUPPORTED
    else:
        verdict = UNSUPPORTED
    elsewhere = judgment.elsewhere if verdict in (MISCITED, UNCITED_SUPPORTED) else ()
    return SentenceVerdict(sentence, verdict, judgment, _credit(sentence, verdict, judgment), elsewhere)


def _credit(sentence: Sentence, verdict: str, judgment: Judgment) -> dict[str, bool]:
    unknown = set(sentence.unknown_labels)  # a set: a sentence may carry 100k distinct labels
    credited: dict[str, bool] = {}
    for label in sentence.labels:
        if label in unknown:
            credited[label] = False
        elif judgment.credit is not None:
            credited[label] = bool(judgment.credit.get(label, False))
        else:
            credited[label] = alce_credited(judgment, label, supported=verdict == SUPPORTED)
    return credited


def evidence_windows(v: SentenceVerdict) -> dict[str, str] | None:
    """The NLI judge's best premise window (`detail["best_windows"]`) of each passage the sentence
    cites or is supported by: what a reader needs to see the supporting span; None when there is none."""
    windows = v.judgment.detail.get("best_windows") if v.judgment else None
    if not windows:
        return None
    wanted = (*v.sentence.labels, *v.supported_elsewhere_by)
    kept = {label: window for label in wanted if isinstance(window := windows.get(label), str) and window}
    return kept or None
