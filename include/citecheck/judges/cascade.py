"""The cascade judge (SPEC §4): a cheap first stage, escalation to the LLM judge, precedence.

`{"kind": "cascade", "first": {...any judge...}, "escalate": {"kind": "anthropic", ...,
"sample_rate": 0.1, "salt": "..."}}`.

Escalated to the LLM: every sentence the first stage rejects (judged, cited passages do not
support it), plus a deterministic random sample of all first-stage-judged sentences:
`sample_fraction(turn_id, sentence_index, salt=salt) < sample_rate`. The sample is drawn
whatever the first stage said, so it is an unbiased sample for the judge-agreement metrics
(first-stage false pass and false fail with the LLM as reference); a sentence that is both
rejected and sampled is marked `"sample"`. A sentence the first stage left unjudged because no
model of its `"models"` map reads its language (`language_unsupported`, SPEC §2.2) goes too
(`"language"`): the LLM reads every language; if it cannot decide, the sentence stays unjudged.
Sentences without resolved citations are not sent: there is no cited passage to judge.

Final verdict: a verified LLM verdict wins over the first stage; an unverified, unjudged or
skipped LLM outcome (budget, no key, errors) keeps the first-stage judgment. Every Judgment's
`detail` records `escalation` ("rejected" | "sample" | None), `sampled`, `first_stage`
({judge, version, supported, score}) and `llm` (the LLM outcome, None when not escalated).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from citecheck.core.languages import LANGUAGE_UNSUPPORTED
from citecheck.core.model import JudgeItem, Judgment
from citecheck.core.vocabulary import REPLY_SUPPORTED
from citecheck.judges import judge_from_spec
from citecheck.judges import llm as llm_judge
from citecheck.judges.base import Judge, JudgeSpecError
from citecheck.stats.sampling import sample_fraction

DEFAULT_SALT = "citecheck-escalation-v1"
LANGUAGE = "language"  # the escalation of a sentence in a language the first stage has no model for


class CascadeJudge:
    """First-stage judgments, refined by verified LLM verdicts where escalated."""

    name = "cascade"

    def __init__(self, first: Judge, llm: llm_judge.AnthropicJudge, *, sample_rate: float, salt: str) -> None:
        self.first = first
        self.llm = llm
        self.sample_rate = sample_rate
        self.salt = salt
        self.version = f"{first.name}-{first.version}+{llm.name}-{llm.version}"
        self._counts: Counter[str] = Counter()

    def sampled(self, item: JudgeItem) -> bool:
        return sample_fraction(item.turn_id, item.sentence_index, salt=self.salt) < self.sample_rate

    def escalation(self, item: JudgeItem, first: Judgment) -> str | None:
        """Why a sentence goes to the LLM: "sample" (the random sample), "rejected", "language"
        (no first-stage model reads its language: `language_unsupported`), or None."""
        if not item.cited:
            return None
        if not first.judged:
            return LANGUAGE if first.unjudged_reason == LANGUAGE_UNSUPPORTED else None
        if self.sampled(item):
            return "sample"
        return None if first.cited else "rejected"

    def claim_splitter(self, cache: Any = None, max_claims: int = 20) -> Any:
        """The LLM claim splitter of the escalation judge (its client and daily budget)."""
        return self.llm.claim_splitter(cache, max_claims)

    def book_spend(self, usd: float, answers: int) -> None:
        """Book an earlier claim split's spend into the escalation judge's daily budget."""
        self.llm.book_spend(usd, answers)

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        return self.escalate(items, self.first.judge(items))

    def escalate(self, items: Sequence[JudgeItem], firsts: Sequence[Judgment]) -> list[Judgment]:
        """Final judgments from first-stage ones made earlier (the daily job judges in shards)."""
        if len(items) != len(firsts):
            raise ValueError(f"{len(items)} items but {len(firsts)} first-stage judgments")
        reasons = [self.escalation(item, j) for item, j in zip(items, firsts, strict=True)]
        asked = [pos for pos, reason in enumerate(reasons) if reason is not None]
        assessments = dict(zip(asked, self.llm.assess([items[pos] for pos in asked]), strict=True))
        out = []
        for pos, (item, first) in enumerate(zip(items, firsts, strict=True)):
            judgment = self._merge(item, first, reasons[pos], assessments.get(pos))
            self._counts[f"escalated_{reasons[pos]}" if reasons[pos] else "not_escalated"] += 1
            self._counts[f"decided_by_{judgment.judge}"] += 1
            out.append(judgment)
        return out

    def _merge(
        self, item: JudgeItem, first: Judgment, reason: str | None, assessment: llm_judge.Assessment | None
    ) -> Judgment:
        detail = {
            **first.detail,
            "escalation": reason,
            "sampled": first.judged and self.sampled(item),
            "first_stage": {
                "judge": first.judge,
                "version": first.judge_version,
                "supported": first.judged and first.cited,
                "score": first.score,
            } if reason != LANGUAGE else None,  # a language no first-stage model reads: it judged nothing
            "llm": assessment.detail() if assessment is not None else None,
        }
        if assessment is None or assessment.status != "ok":
            return dataclasses.replace(first, detail=detail)
        return llm_judge.judgment_of(
            assessment,
            judge=self.llm.name,
            version=self.llm.version,
            elsewhere=first_stage_elsewhere(item, first, assessment),
            detail=detail,
        )

    def stats(self) -> dict[str, Any]:
        return {
            "first": self.first.stats(),
            "llm": self.llm.stats(),
            "sample_rate": self.sample_rate,
            "sentences": dict(self._counts),
        }


def first_stage_elsewhere(item: JudgeItem, first: Judgment, assessment: llm_judge.Assessment) -> tuple[str, ...]:
    """The first stage's `elsewhere`, kept under a verified LLM verdict unless the LLM has just
    rejected it: a rejected sentence is `miscited` only when some passage it does not cite
    supports it."""
    if assessment.verdict == REPLY_SUPPORTED or not set(first.elsewhere) <= set(item.cited):
        return first.elsewhere
    return ()


def escalation_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The `anthropic` judge spec of a cascade's escalation (without the cascade's own `sample_rate`
    and `salt`): the LLM judge alone, e.g. for the daily job's claim split."""
    escalate = spec.get("escalate")
    if not isinstance(escalate, Mapping):
        raise JudgeSpecError("cascade judge: 'escalate' must be an anthropic judge spec object")
    llm = {k: v for k, v in escalate.items() if k not in ("sample_rate", "salt")}
    if llm.setdefault("kind", "anthropic") != "anthropic":
        raise JudgeSpecError("cascade judge: 'escalate' must be of kind 'anthropic'")
    return llm


def from_spec(spec: Mapping[str, Any], **options: Any) -> CascadeJudge:
    """Validate the escalation spec first (cheap), then build the first stage with the options."""
    unknown = set(spec) - {"kind", "first", "escalate", "about"}
    if unknown:
        raise JudgeSpecError(f"cascade judge: unknown fields {sorted(unknown)}")
    if not isinstance(spec.get("first"), Mapping):
        raise JudgeSpecError("cascade judge: 'first' must be a judge spec object")
    llm_spec = escalation_spec(spec)
    escalate = spec["escalate"]
    rate = escalate.get("sample_rate", 0.1)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
        raise JudgeSpecError("cascade judge: 'sample_rate' must be a number in [0, 1]")
    salt = escalate.get("salt", DEFAULT_SALT)
    if not isinstance(salt, str):
        raise JudgeSpecError("cascade judge: 'salt' must be a string")
    llm = llm_judge.from_spec(llm_spec, **options)
    first = judge_from_spec(spec["first"], **options)
    return CascadeJudge(first, llm, sample_rate=float(rate), salt=salt)
