"""The no-model checks run on 100% of traffic (SPEC §3): resolution, staleness,
check-worthiness and attachment.

Labels resolve against the turn's own logged context set only. A label that does not resolve is
*unknown*; if it named a passage of an earlier turn of the same conversation it is also *stale*.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from citecheck.core.config import Config
from citecheck.core.figures import Figure, find_figures, trace_figures
from citecheck.core.languages import language_or_default, turn_language
from citecheck.core.model import Sentence, StructuredTurn, Turn
from citecheck.core.parsing import ParsedSentence, parse_answer, parse_cited
from citecheck.core.text import normalise_for_match
from citecheck.core.turns import MAX_LABEL_CHARS

_TRAILING_PUNCT = re.compile(r"[\s.!?\u2026\u3002\uff01\uff1f]+$")


class ConversationHistory:
    """Which labels each conversation's earlier turns had in their context sets.

    Feed turns in (conversation, turn_index) order; `record` after checking a turn, so a turn
    never makes its own labels stale. A day's job `forget`s each conversation once it has read
    past it, so memory holds the open conversations only, not every conversation of the day.
    """

    def __init__(self) -> None:
        self._first_seen: dict[str, dict[str, int]] = {}

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self._first_seen

    def __len__(self) -> int:
        return len(self._first_seen)

    def conversation_ids(self) -> tuple[str, ...]:
        return tuple(self._first_seen)

    def forget(self, conversation_id: str) -> None:
        """Drop a finished conversation; its later turns (if any came) would see no stale labels."""
        self._first_seen.pop(conversation_id, None)

    def keep_only(self, conversation_id: str | None) -> None:
        """Forget every conversation but this one (the job, streaming a day in conversation
        order, keeps only the conversation that may go on in the next chunk)."""
        for other in self.conversation_ids():
            if other != conversation_id:
                self.forget(other)

    def record(self, conversation_id: str, turn_index: int, labels: set[str] | list[str] | tuple[str, ...]) -> None:
        seen = self._first_seen.setdefault(conversation_id, {})
        for label in labels:
            if label not in seen or turn_index < seen[label]:
                seen[label] = turn_index

    def is_stale(self, conversation_id: str, turn_index: int, label: str) -> bool:
        first = self._first_seen.get(conversation_id, {}).get(label)
        return first is not None and first < turn_index


def check_worthiness(text: str, config: Config, language: str | None = None) -> tuple[bool, str | None]:
    """Is this sentence a statement about the world? Returns (check_worthy, reason if not).
    `language`: the turn's (None = undetermined), which picks the offer and refusal rules."""
    rules = config.rules_for(language)
    normal = normalise_for_match(text)
    refusals = _refusal_set(rules.refusals)
    if (refusals and _TRAILING_PUNCT.sub("", normal) in refusals) or _matcher(rules.refusal_patterns,
                                                                              rules.refusal_res)(normal):
        return False, "refusal"
    if config.questions_are_non_claims and rules.is_question(text):
        return False, "question"
    if _matcher(rules.non_claim_patterns, rules.non_claim_res)(normal):
        return False, "offer"
    return True, None


_REFUSAL_CACHE: dict[tuple[str, ...], frozenset[str]] = {}
_MATCHER_CACHE: dict[tuple[str, ...], Callable[[str], bool]] = {}


def _refusal_set(refusals: tuple[str, ...]) -> frozenset[str]:
    cached = _REFUSAL_CACHE.get(refusals)
    if cached is None:
        cached = frozenset(_TRAILING_PUNCT.sub("", normalise_for_match(r)) for r in refusals)
        _REFUSAL_CACHE[refusals] = cached
    return cached


def _matcher(patterns: tuple[str, ...], compiled: tuple[re.Pattern[str], ...]) -> Callable[[str], bool]:
    """Does any of the patterns match? One alternation instead of a loop: this runs per sentence.

    Patterns with capture groups (backreferences would shift) or inline global flags keep the loop.
    """
    found = _MATCHER_CACHE.get(patterns)
    if found is None:
        found = _MATCHER_CACHE[patterns] = _build_matcher(patterns, compiled)
    return found


def _build_matcher(patterns: tuple[str, ...], compiled: tuple[re.Pattern[str], ...]) -> Callable[[str], bool]:
    if not compiled:
        return lambda text: False
    if all(r.groups == 0 and r.flags == compiled[0].flags for r in compiled):
        try:
            joined = re.compile("|".join(f"(?:{p})" for p in patterns), compiled[0].flags)
        except re.error:
            pass
        else:
            return lambda text: joined.search(text) is not None
    return lambda text: any(r.search(text) for r in compiled)


def parse_turn(turn: Turn, config: Config) -> list[ParsedSentence]:
    """Sentences of a turn's answer (in its language), with the labels each one cites."""
    return _parse(turn, config, turn_language(turn.attributes, turn.answer).code)[0]


def _parse(turn: Turn, config: Config, language: str) -> tuple[list[ParsedSentence], list[list[int]] | None]:
    """Sentences of a turn, and for a native turn each sentence's citation indices."""
    if turn.answer_format == "markers":
        return parse_answer(turn.answer, config, language), None
    cites = turn.native_citations
    return parse_cited(turn.answer, [(c.start, c.end) for c in cites], [c.label for c in cites],
                       [c.point for c in cites], config, language)


def storable_label(label: str) -> str:
    """The label as stored: one longer than the warehouse's label column (only ever unknown: no
    context label is that long) keeps a prefix and a hash, so distinct labels stay distinct."""
    if len(label) <= MAX_LABEL_CHARS:
        return label
    import hashlib

    digest = hashlib.blake2b(label.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{label[:150]}\u2026#{digest}"


@dataclass(frozen=True, slots=True)
class _NativeLabels:
    """What a sentence's native citations say about each of its labels."""

    valid: set[str]
    problems: dict[str, str]  # label -> pointer problem kind (labels with no valid citation)
    unverified: dict[str, str]  # label -> the fields the job could not check, comma-joined


def _native_labels(turn: Turn, hits: list[list[int]]) -> list[_NativeLabels]:
    """Per sentence, its native citations' labels: valid ones, problems, unverified fields."""
    cites = turn.native_citations
    out = []
    for h in hits:
        valid = {cites[k].label for k in h if cites[k].valid}
        problems = {cites[k].label: cites[k].problem or "malformed" for k in h
                    if not cites[k].valid and cites[k].label not in valid}
        unverified = {cites[k].label: ",".join(cites[k].unverified) for k in h
                      if cites[k].valid and cites[k].unverified}
        out.append(_NativeLabels(valid, problems, unverified))
    return out


def sentence_figures(text: str, resolved: tuple[str, ...], turn: Turn, language: str) -> tuple[Figure, ...]:
    """A check-worthy sentence's figures, traced against its resolved cited passages that have
    text (SPEC §3 item 5); `traced` is null when no resolved cited passage has text to trace in."""
    figures = find_figures(text, language)
    if not figures:
        return ()
    passages = [p.text for p in (turn.passage(label) for label in resolved) if p is not None and p.has_text]
    return trace_figures(figures, passages, language)


def claim_figures(st: StructuredTurn, sentence: Sentence) -> tuple[tuple[Figure, ...], ...]:
    """In a claims mode, the figures of each claim of a check-worthy sentence (SPEC §3 item 5: "of a
    claim, in a claims mode"): the figures of the claim's own text, traced as a sentence's are
    against the resolved cited passages of its links (a claim inherits its sentence's citations).
    A claim that is its whole sentence has the sentence's figures. Empty for a sentence that is not
    check-worthy, and in sentence mode (where a sentence is its own claim: `Sentence.figures`)."""
    if st.claims is None or not sentence.check_worthy:
        return ()
    language = language_or_default(st.language)
    return tuple(sentence.figures if text == sentence.text
                 else sentence_figures(text, sentence.resolved_labels, st.turn, language)
                 for text in st.claim_texts(sentence))


def structure_turn(turn: Turn, config: Config, history: ConversationHistory | None = None) -> StructuredTurn:
    """Find the turn's language (SPEC §2.2), parse it and run every structural check on its
    sentences, in its language (segmentation, check-worthiness, figures)."""
    context_labels = {p.label for p in turn.context}
    sentences: list[Sentence] = []
    language = turn_language(turn.attributes, turn.answer)
    language_of_figures = language_or_default(language.code)
    parsed_sentences, hits = _parse(turn, config, language.code)
    native = hits is not None
    by_sentence = _native_labels(turn, hits) if hits is not None else []
    for i, parsed in enumerate(parsed_sentences):
        notes = by_sentence[i] if native else None
        resolvable = notes.valid if notes is not None else context_labels
        unknown = tuple(lab for lab in parsed.labels if lab not in resolvable or len(lab) > MAX_LABEL_CHARS)
        stale = tuple(
            lab for lab in unknown
            if history is not None and history.is_stale(turn.conversation_id, turn.turn_index, lab)
        )
        worthy, reason = check_worthiness(parsed.text, config, language.code)
        unknown_set = frozenset(unknown)
        resolved = tuple(dict.fromkeys(lab for lab in parsed.labels if lab not in unknown_set))
        figures = sentence_figures(parsed.text, resolved, turn, language_of_figures) if worthy else ()
        sentences.append(Sentence(
            index=i,
            text=parsed.text,
            start=parsed.start,
            end=parsed.end,
            labels=tuple(map(storable_label, parsed.labels)),
            unknown_labels=tuple(map(storable_label, unknown)),
            stale_labels=tuple(map(storable_label, stale)),
            duplicate_labels=tuple(map(storable_label, parsed.duplicate_labels)),
            markers=parsed.markers,
            markers_after_stop=parsed.markers_after_stop,
            check_worthy=worthy,
            non_claim_reason=reason,
            is_refusal=reason == "refusal",
            pointer_problems=tuple((storable_label(k), v) for k, v in notes.problems.items()) if notes else (),
            unverified=tuple((storable_label(k), v) for k, v in notes.unverified.items()) if notes else (),
            figures=figures,
        ))
    if history is not None:
        history.record(turn.conversation_id, turn.turn_index, context_labels)
    is_refusal = any(s.is_refusal for s in sentences) and not any(s.check_worthy for s in sentences)
    return StructuredTurn(turn=turn, sentences=tuple(sentences), is_refusal=is_refusal, language=language.code,
                          language_source=language.source, language_repair=language.repair)
