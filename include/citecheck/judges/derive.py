"""What a judge's answers mean: the one derivation from "which passage sets support the sentence"
to a `Judgment`, shared by every judge with set-level answers (SPEC §4, §5).

A judge answers `supports(labels)`: do these passages, together, support the sentence? (None:
the judge has no answer for that set.) The recorded judge looks the set up in its table; the NLI
judge says a set supports when some member entails the sentence; the LLM judge answers for the
cited set with its verdict and for each citation alone with `full`. The rule, as in ALCE's
eval.py (Gao et al., 2023), for a citation c of the sentence:

    cited      = supports(the cited set)
    alone[c]   = supports({c})
    rest[c]    = supports(the cited set without c)          (False with a single citation)
    elsewhere  = the first passage, in the judge's order of preference, that supports the sentence
                 alone (uncited ones first when the citations fail); else a set that does jointly
    faithful   = cited or elsewhere
    credited c = supported and not (not alone[c] and rest[c])  (ALCE: an irrelevant citation is not)
                 or, for the LLM judge, Liu et al.'s rule on full / partial / none (`liu_credit`)

`verdicts.decide` turns the Judgment into a sentence verdict and applies the credit rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from citecheck.core.model import Judgment
from citecheck.core.vocabulary import FULL, PARTIAL_SUPPORT, REPLY_SUPPORTED

SetOracle = Callable[[frozenset[str]], bool | None]


def derive_judgment(
    cited: Sequence[str],
    supports: SetOracle,
    *,
    judge: str,
    judge_version: str,
    prefer: Sequence[str] = (),
    joint_elsewhere: Callable[[], tuple[str, ...]] | None = None,
    together: bool | None = None,
    rest_known: bool = True,
    verdict: str | None = None,
    credit: dict[str, bool] | None = None,
    score: float | None = None,
    contradiction: float | None = None,
    detail: dict[str, Any] | None = None,
) -> Judgment:
    """The Judgment of one sentence citing `cited`, from the judge's answers to `supports`.

    `prefer` lists the passages that may be named `elsewhere`, best first (context order for the
    recorded judge, entailment for NLI); `joint_elsewhere` names a jointly supporting set when no
    single one does. A judge that answers for the cited set directly passes `together` (the LLM's
    verdict); one that is never asked "the others without c" passes `rest_known=False` (rest is
    then empty). Answers of None are left out of `alone`. The other fields pass through.
    """
    cited_set = frozenset(cited)
    is_cited = bool(bool(cited_set) and supports(cited_set)) if together is None else together
    alone = {c: a for c in cited if (a := supports(frozenset((c,)))) is not None}
    rest = {c: len(cited_set) > 1 and bool(supports(cited_set - {c})) for c in cited} if rest_known else {}
    single = [lab for lab in prefer if (alone[lab] if lab in alone else supports(frozenset((lab,))))]
    if not is_cited:
        single.sort(key=lambda lab: lab in cited_set)
    elsewhere: tuple[str, ...] = (single[0],) if single else ()
    if not elsewhere and joint_elsewhere is not None:
        elsewhere = joint_elsewhere()
    return Judgment(
        cited=is_cited,
        alone=alone,
        rest=rest,
        elsewhere=elsewhere,
        faithful=is_cited or bool(elsewhere),
        score=score,
        contradiction=contradiction,
        verdict=verdict,
        credit=credit,
        judge=judge,
        judge_version=judge_version,
        detail=detail or {},
    )


def alce_credited(judgment: Judgment, label: str, *, supported: bool) -> bool:
    """ALCE: a citation of a supported sentence is credited unless irrelevant (it cannot support
    the sentence alone and the other citations still support it without it)."""
    irrelevant = not judgment.alone.get(label, False) and judgment.rest.get(label, False)
    return supported and not irrelevant


def liu_credit(verdict: str | None, supports: Mapping[str, str]) -> dict[str, bool]:
    """Liu et al.: `full` credited; `partial` only if supported and no citation is `full`; `none` never."""
    any_full = any(s == FULL for s in supports.values())
    return {
        label: s == FULL or (s == PARTIAL_SUPPORT and verdict == REPLY_SUPPORTED and not any_full)
        for label, s in supports.items()
    }
