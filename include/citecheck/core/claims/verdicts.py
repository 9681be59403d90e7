"""Claim verdicts and the sentence verdict derived from them (SPEC §2.1).

A claim is judged exactly as a sentence is (`core.verdicts.decide` on the sentence with the claim's
text: it inherits every citation of its sentence, so a link is one (claim, label) pair). The
sentence's verdict comes from its claims: all supported → `supported`; some supported and some judged
not supported → `partially_supported`; otherwise any claim unjudged gives `unjudged` (supported claims
next to unjudged ones say nothing about the rest: an unjudged claim is not a failed one), else every
claim supported by some passage gives `miscited` (attached) or `uncited_supported`, else `unsupported`.
A citation of the sentence is credited when it is credited on any of its claims. A sentence of one
claim has that claim's verdict, so claim numbers equal sentence numbers when nothing is split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from citecheck.core.model import Judgment, Sentence
from citecheck.core.verdicts import SentenceVerdict, decide
from citecheck.core.vocabulary import (
    MISCITED,
    PARTIALLY_SUPPORTED,
    SUPPORTED,
    UNCITED_SUPPORTED,
    UNJUDGED,
    UNSUPPORTED,
    is_judged,
)


def decide_claims(sentence: Sentence, texts: Sequence[str], judgments: Sequence[Judgment | None], *,
                  selected: bool = True) -> tuple[SentenceVerdict, tuple[SentenceVerdict, ...]]:
    """The sentence's verdict and one verdict per claim (`texts`, with their `judgments`)."""
    if not sentence.check_worthy or not selected or not texts:
        return decide(sentence, None, selected=selected), ()
    claims = tuple(decide(replace(sentence, text=text), judgment, selected=True)
                   for text, judgment in zip(texts, judgments, strict=True))
    return sentence_from_claims(sentence, claims), claims


def sentence_from_claims(sentence: Sentence, claims: Sequence[SentenceVerdict]) -> SentenceVerdict:
    if len(claims) == 1:
        only = claims[0]
        return SentenceVerdict(sentence, only.verdict, only.judgment, only.credited, only.supported_elsewhere_by)
    verdicts = [c.verdict for c in claims]
    supported = sum(v == SUPPORTED for v in verdicts)
    judged = sum(is_judged(v) for v in verdicts)
    if supported == len(claims):
        verdict = SUPPORTED
    elif supported and judged > supported:
        verdict = PARTIALLY_SUPPORTED
    elif UNJUDGED in verdicts:
        verdict = UNJUDGED
    elif all(c.faithful for c in claims):
        verdict = MISCITED if sentence.resolved_labels else UNCITED_SUPPORTED
    else:
        verdict = UNSUPPORTED
    elsewhere = tuple(dict.fromkeys(label for c in claims for label in c.supported_elsewhere_by)) \
        if verdict in (MISCITED, UNCITED_SUPPORTED) else ()
    credited = {label: any(c.credited.get(label, False) for c in claims) for label in sentence.labels}
    return SentenceVerdict(sentence, verdict, _summary(claims, verdict, elsewhere, credited), credited, elsewhere)


def _summary(claims: Sequence[SentenceVerdict], verdict: str, elsewhere: tuple[str, ...],
             credited: dict[str, bool]) -> Judgment:
    """The sentence's judgment as its claims' judgments sum it up (what its record shows)."""
    judgments = [c.judgment for c in claims if c.judgment is not None]
    judged = [j for j in judgments if j.judged]
    labels = claims[0].sentence.labels
    scores = [j.score for j in judged if j.score is not None]
    contradictions = [j.contradiction for j in judged if j.contradiction is not None]
    reason = next((j.unjudged_reason for j in judgments if not j.judged), None) if not is_judged(verdict) else None
    return Judgment(
        cited=verdict == SUPPORTED,
        alone={label: any(j.alone.get(label, False) for j in judged) for label in labels},
        rest={label: any(j.rest.get(label, False) for j in judged) for label in labels},
        elsewhere=elsewhere,
        faithful=all(c.faithful for c in claims),
        score=min(scores) if scores and len(scores) == len(claims) else None,
        contradiction=max(contradictions) if contradictions else None,
        credit=credited,
        judge="+".join(dict.fromkeys(j.judge for j in judgments if j.judge)),
        judge_version="+".join(dict.fromkeys(j.judge_version for j in judgments if j.judge_version)),
        unjudged_reason=reason,
        detail={"claims": len(claims)},
    )
