"""What the LLM said about one sentence (`Assessment`), and the one mapping from it to a Judgment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from citecheck.core.model import Judgment
from citecheck.core.vocabulary import FULL, LLM_ONLY_VERDICTS, REPLY_SUPPORTED, UNJUDGED, verdict_of_reply
from citecheck.judges.derive import derive_judgment, liu_credit


@dataclass(frozen=True, slots=True)
class Assessment:
    """The LLM's outcome for one sentence. Only `status == "ok"` (verified) counts."""

    status: str  # "ok" | "unverified" | "unjudged"
    verdict: str | None = None
    citations: tuple[dict[str, str], ...] = ()
    quotes: tuple[dict[str, Any], ...] = ()
    quotes_verified: bool = False
    reason: str | None = None

    @property
    def supports(self) -> dict[str, str]:
        return {c["label"]: c["support"] for c in self.citations}

    @property
    def supported(self) -> bool:
        return self.status == "ok" and self.verdict == REPLY_SUPPORTED

    def detail(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "quotes_verified": self.quotes_verified,
            "citations": [dict(c) for c in self.citations],
            "quotes": [dict(q) for q in self.quotes],
            "status": self.status,
            "reason": self.reason,
        }


def not_judged(reason: str) -> Assessment:
    """No verdict for this sentence, with the reason."""
    return Assessment(status=UNJUDGED, reason=reason)


def judgment_of(
    assessment: Assessment,
    *,
    judge: str,
    version: str,
    elsewhere: tuple[str, ...] = (),
    detail: dict[str, Any] | None = None,
) -> Judgment:
    """The Judgment an LLM verdict stands for; unverified or missing ones are unjudged.

    The LLM answers for the cited passages together (its verdict) and for each citation alone
    (`full`), never for the others without one; it names no other passage, so `elsewhere` is
    what the caller knows (the cascade: its first stage's). Credit follows Liu et al. `detail`
    is {"llm": the assessment's detail} unless the caller passes its own.
    """
    detail = {"llm": assessment.detail()} if detail is None else detail
    if assessment.status != "ok":
        reason = assessment.reason or assessment.status
        return Judgment(
            judge=judge,
            judge_version=version,
            unjudged_reason=f"llm {assessment.status}: {reason}",
            detail=detail,
        )
    levels = assessment.supports

    def full_alone(labels: frozenset[str]) -> bool | None:
        level = levels.get(next(iter(labels))) if len(labels) == 1 else None
        return None if level is None else level == FULL

    return derive_judgment(
        tuple(levels),
        full_alone,
        judge=judge,
        judge_version=version,
        together=assessment.verdict == REPLY_SUPPORTED,
        rest_known=False,
        joint_elsewhere=lambda: elsewhere,
        verdict=mapped if (mapped := verdict_of_reply(assessment.verdict)) in LLM_ONLY_VERDICTS else None,
        credit=liu_credit(assessment.verdict, levels),
        detail=detail,
    )
