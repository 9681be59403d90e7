"""The data the job passes between its stages.

Plain frozen dataclasses: a parsed turn (`Turn`), its sentences after the structural checks
(`Sentence`), and what a judge says about one sentence (`Judgment`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from citecheck.core.figures import Figure
from citecheck.core.language_rules import has_shipped_rules
from citecheck.core.languages import UNDETERMINED


@dataclass(frozen=True, slots=True)
class Passage:
    """One passage of a turn's logged context set, as the prompt labelled it."""

    label: str
    text: str
    source: str = ""
    document_id: str | None = None
    version: str | None = None
    has_text: bool = True  # False: a source the app logged without its text (a web page): never judged


@dataclass(frozen=True, slots=True)
class CitationSpan:
    """A provider-native citation: the answer characters [start, end) cite `label`.

    `valid` is False when its pointer failed the checks of SPEC §3.4 (a pointer problem; `problem`
    is its kind). `point`: a position-only citation at `start` (= `end`), owned by the last
    sentence that starts at or before it. `unverified`: the fields the job could not check
    (e.g. `cited_text` of a web page the app did not log). `confidence`: the provider's own score
    where it gives one (Gemini), kept, never used as support.
    """

    start: int
    end: int
    label: str
    valid: bool = True
    point: bool = False
    problem: str | None = None
    unverified: tuple[str, ...] = ()
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class PointerProblem:
    """A native citation whose pointer does not match the logged sources (SPEC §3.4).

    `kind` is one of `citecheck.core.formats.POINTER_PROBLEM_KINDS`; `label` the label it points at
    where one is known. `placed`: it has an answer span, so its sentence carries the label as an
    unknown one; an unplaced problem counts as one citation with an unknown label for the turn.
    `document_index` is the source index the citation named (-1: none).
    """

    document_index: int
    reason: str
    cited_title: str | None = None
    recorded_title: str | None = None
    kind: str = "malformed"
    label: str | None = None
    placed: bool = True


@dataclass(frozen=True, slots=True)
class Turn:
    """One logged assistant answer with the context set that was in its prompt (SPEC §1)."""

    turn_id: str
    conversation_id: str
    turn_index: int
    answered_at: str | None
    question: str
    answer: str
    answer_format: str
    context: tuple[Passage, ...]
    attributes: dict[str, str] = field(default_factory=dict)
    native_citations: tuple[CitationSpan, ...] = ()
    pointer_problems: tuple[PointerProblem, ...] = ()

    def passage(self, label: str) -> Passage | None:
        for p in self.context:
            if p.label == label:
                return p
        return None


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of an answer after parsing and the structural checks (SPEC §2–§3)."""

    index: int
    text: str
    start: int
    end: int
    labels: tuple[str, ...]
    unknown_labels: tuple[str, ...] = ()
    stale_labels: tuple[str, ...] = ()
    duplicate_labels: tuple[str, ...] = ()
    markers: int = 0
    markers_after_stop: int = 0
    check_worthy: bool = True
    non_claim_reason: str | None = None
    is_refusal: bool = False
    pointer_problems: tuple[tuple[str, str], ...] = ()  # (label, kind): native labels unknown by a pointer problem
    unverified: tuple[tuple[str, str], ...] = ()  # (label, "field,field"): what the job could not check
    figures: tuple[Figure, ...] = ()  # check-worthy sentences: figures traced against the resolved cited passages

    @property
    def resolved_labels(self) -> tuple[str, ...]:
        if not self.unknown_labels:
            return self.labels
        unknown = set(self.unknown_labels)  # a set: a sentence may carry 100k distinct labels
        return tuple(lab for lab in self.labels if lab not in unknown)

    @property
    def attached(self) -> bool:
        return self.check_worthy and bool(self.resolved_labels)


@dataclass(frozen=True, slots=True)
class StructuredTurn:
    """A turn with its sentences: everything the no-model checks know. `language` is the turn's
    (SPEC §2.2: an ISO 639 code or `und`), `language_source` `logged` or `detected`,
    `language_repair` the input repair its logged tag needed (`invalid_language_tag`) or None."""

    turn: Turn
    sentences: tuple[Sentence, ...]
    is_refusal: bool
    language: str = UNDETERMINED
    language_source: str = "detected"
    language_repair: str | None = None
    # a claims mode (SPEC §2.1): each check-worthy sentence's claims by sentence index (a sentence
    # not split is its own single claim); None in sentence mode. `claim_splits_rejected`: splits
    # that added content or broke a limit, kept whole. `claim_splits_unsupported_language`:
    # check-worthy sentences kept whole because the splitter does not split the turn's language.
    claims: dict[int, tuple[str, ...]] | None = None
    claim_splits_rejected: int = 0
    claim_splits_unsupported_language: int = 0

    def claim_texts(self, sentence: Sentence) -> tuple[str, ...]:
        """The claims of a check-worthy sentence (itself when not split)."""
        if self.claims is None:
            return (sentence.text,)
        return self.claims.get(sentence.index) or (sentence.text,)

    @property
    def language_rules_generic(self) -> bool:
        """The turn's language has no shipped rules: it was split and read by the generic
        (Unicode) rules (`citecheck.core.language_rules`), and is counted as such."""
        return not has_shipped_rules(self.language)

    @property
    def turn_id(self) -> str:
        return self.turn.turn_id


# a judgment's key: (turn, sentence), or (turn, sentence, claim) in a claims mode
JudgmentKey = tuple[str, int] | tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """What a judge is asked about one check-worthy sentence.

    `cited` are the sentence's resolved labels in order; `context` is the turn's whole context
    set (needed for `elsewhere` and faithfulness).
    """

    turn_id: str
    sentence_index: int
    sentence: str
    cited: tuple[str, ...]
    context: tuple[Passage, ...]
    claim_index: int | None = None  # a claims mode: the claim of the sentence (`sentence` is its text)
    language: str = UNDETERMINED  # the turn's language (SPEC §2.2): picks the NLI model of a `"models"` map

    @property
    def key(self) -> JudgmentKey:
        """(turn, sentence) — or (turn, sentence, claim) for a claim."""
        if self.claim_index is None:
            return (self.turn_id, self.sentence_index)
        return (self.turn_id, self.sentence_index, self.claim_index)

    @property
    def item_id(self) -> str:
        """The item's id inside its answer (an LLM request's sentence id): "3", or "3.1" for a claim."""
        if self.claim_index is None:
            return str(self.sentence_index)
        return f"{self.sentence_index}.{self.claim_index}"


@dataclass(frozen=True, slots=True)
class Judgment:
    """A judge's answer for one sentence (SPEC §4). `unjudged_reason` set means no answer.

    - `cited`: the resolved cited passages support the sentence.
    - `alone[label]`: that passage alone supports it; `rest[label]`: the other cited passages
      still support it without this one.
    - `elsewhere`: the best supporting passage(s) of the whole context set, or () if none.
    - `faithful`: some context passage (or set, for judges that see sets) supports it.
    - `verdict`: an optional judge-specific verdict (`partial`, `contradicted`) that refines
      the structural verdict; `credit`: optional per-citation credit that replaces ALCE's rule
      (the LLM judge's Liu et al. rule).
    """

    cited: bool = False
    alone: dict[str, bool] = field(default_factory=dict)
    rest: dict[str, bool] = field(default_factory=dict)
    elsewhere: tuple[str, ...] = ()
    faithful: bool = False
    score: float | None = None
    contradiction: float | None = None
    verdict: str | None = None
    credit: dict[str, bool] | None = None
    judge: str = ""
    judge_version: str = ""
    unjudged_reason: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        return self.unjudged_reason is None


def unjudged(reason: str, judge: str = "", judge_version: str = "") -> Judgment:
    """A missing judgment: the sentence is excluded from judged metrics and counted."""
    return Judgment(judge=judge, judge_version=judge_version, unjudged_reason=reason)
