"""Splitting a structured turn's check-worthy sentences into claims (SPEC §2.1).

A splitter maps sentence texts (as the judge sees them) to their claims; `split_turn` verifies each
split (`verify.split_problem`), keeps a rejected one whole and counts it. `splitter_for` builds the
configured splitter once, before any turn is read, so a bad claims file stops a run before work.
The `llm` mode splits with the LLM judge (`judges.llm.claims`): `score` per judge batch, the daily
job right after its structural pass (`job.steps.split_claims_with_llm`); at the structural pass
itself its sentences are each one claim.

A splitter declares the languages it splits (`languages`: primary BCP 47 subtags, None for any):
the rule splitter knows English only, so a turn in another language keeps every check-worthy
sentence whole, counted as `claim_splits_unsupported_language`. A turn whose language is `und`
(undetermined, SPEC §2.2) is split as English, the rules' language: a sentence whose words they do
not recognise stays whole anyway.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Protocol

from citecheck.core.claims.verify import RejectedSplit, split_problem
from citecheck.core.config import Config
from citecheck.core.languages import primary_language
from citecheck.core.model import StructuredTurn
from citecheck.core.text import normalise_statement

log = logging.getLogger(__name__)


class Splitter(Protocol):
    name: str
    languages: frozenset[str] | None  # the primary subtags it splits; None: any language

    def split(self, sentences: Sequence[str]) -> list[tuple[str, ...] | RejectedSplit]:
        """The claims of each sentence, in order (a sentence not split: its own text alone; one it
        cannot split cleanly: a `RejectedSplit`)."""


@lru_cache(maxsize=8)
def splitter_for(config: Config) -> Splitter | None:
    """The structural pass's splitter of the configured mode (None: sentence and llm modes),
    built once per configuration: a recorded file is read and checked whole here."""
    if config.claims_mode == "rules":
        from citecheck.core.claims.rules import RulesSplitter

        return RulesSplitter()
    if config.claims_mode == "recorded":
        from citecheck.core.claims.recorded import RecordedSplitter

        return RecordedSplitter.from_file(config.claims_recorded)
    return None


def apply_splits(st: StructuredTurn, splits: Mapping[int, Sequence[str] | RejectedSplit], max_claims: int
                 ) -> StructuredTurn:
    """The turn with these proposed splits (sentence index → claims, or a `RejectedSplit`) verified
    and set; a rejected one keeps its sentence whole, counted in `claim_splits_rejected` (its reason
    logged); a sentence missing from `splits` keeps its current claims (itself when it has none)."""
    claims = dict(st.claims or {})
    rejected = st.claim_splits_rejected
    for s in st.sentences:
        if not s.check_worthy:
            continue
        proposed = splits.get(s.index)
        if proposed is None:
            claims.setdefault(s.index, (s.text,))
            continue
        if isinstance(proposed, RejectedSplit):
            problem: str | None = proposed.reason
            texts: tuple[str, ...] = (s.text,)
        else:
            texts = tuple(normalise_statement(c) if isinstance(c, str) else c for c in proposed)
            problem = split_problem(s.text, texts, max_claims, st.language) if texts != (s.text,) else None
        if problem is not None:
            log.info("turn %s sentence %d: split rejected, kept whole: %s", st.turn_id, s.index, problem[:300])
            rejected += 1
            texts = (s.text,)
        claims[s.index] = texts
    return replace(st, claims=claims, claim_splits_rejected=rejected)


def splits_language(splitter: Splitter, language: str) -> bool:
    """Whether `splitter` splits sentences of this turn language (`und` is split as English)."""
    if splitter.languages is None:
        return True
    return primary_language(language) in splitter.languages


def split_turn(st: StructuredTurn, splitter: Splitter | None, max_claims: int) -> StructuredTurn:
    """Every check-worthy sentence of the turn split by `splitter` (None: each its own claim). A
    turn whose language the splitter does not split (`splits_language`; `und` counts as English)
    keeps each sentence whole, and its check-worthy sentences are counted as
    `claim_splits_unsupported_language`."""
    worthy = [s for s in st.sentences if s.check_worthy]
    if splitter is None or not worthy:
        return apply_splits(st, {}, max_claims)
    if not splits_language(splitter, st.language):
        log.debug("turn %s: language %s is not split by the %s splitter; %d sentences kept whole",
                  st.turn_id, st.language, splitter.name, len(worthy))
        return replace(apply_splits(st, {}, max_claims), claim_splits_unsupported_language=len(worthy))
    proposed = splitter.split([s.text for s in worthy])
    return apply_splits(st, {s.index: p for s, p in zip(worthy, proposed, strict=True)}, max_claims)
