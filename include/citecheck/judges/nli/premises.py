"""What the two premise modes share: passages cut into sentences, token counts by the model's own
tokenizer (memoised for the judge's lifetime) and over-long sentences cut into pieces that fit.

A premise builder (`windows.WindowPremises`, `chunks.ChunkPremises`) answers `premises(texts,
room)`: the distinct premises of those passages (in that order) that fit in `room` tokens next to
the claim, with their token lengths, and the units that did not fit and were split (counted in the
judge's `splits`). Nothing is ever truncated.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from citecheck.core.text import normalise_statement
from citecheck.judges.nli.scorer import CrossEncoderScorer

MEMO_LIMIT = 200_000
"""Memoised passages / premise sets before a memo is cleared (bounded memory on long runs)."""

Premise = tuple[str, int]
"""A premise text and its token length (without special tokens)."""


class PremiseBuilder(Protocol):
    """How a passage set becomes premises; see the module docstring."""

    joint: bool
    """Whether a multi-passage set has premises of its own (chunks may join passages; windows never do)."""
    budget: int
    """The most tokens of one (premise, claim) pair, special tokens included."""

    def prepare(self, texts: Iterable[str]) -> None: ...

    def premises(self, texts: tuple[str, ...], room: int) -> tuple[tuple[Premise, ...], tuple[str, ...]]: ...


class TextUnits:
    """Token lengths and sentence segmentation, memoised; the pieces of an over-long sentence."""

    def __init__(self, scorer: CrossEncoderScorer) -> None:
        self.scorer = scorer
        self._lengths: dict[str, int] = {}
        self._sentences: dict[str, tuple[Premise, ...]] = {}

    def length(self, text: str) -> int:
        if text not in self._lengths:
            self.remember([text])
        return self._lengths[text]

    def remember(self, texts: Sequence[str]) -> None:
        """Count the tokens of every new text in one tokenizer call."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._lengths))
        if not missing:
            return
        if len(self._lengths) + len(missing) > 4 * MEMO_LIMIT:
            self._lengths.clear()
        self._lengths.update(zip(missing, self.scorer.token_lengths(missing), strict=True))

    def segment(self, texts: Iterable[str]) -> dict[str, list[str]]:
        """The normalised, non-empty sentences of each passage (not yet counted, nor kept)."""
        from citecheck.core.parsing import split_sentences

        new = list(dict.fromkeys(texts))
        if len(self._sentences) + len(new) > MEMO_LIMIT:
            self._sentences.clear()
        out = {}
        for text in new:
            sentences = [normalise_statement(s) for s in split_sentences(text)]
            out[text] = [s for s in sentences if s]
        return out

    def keep(self, text: str, sentences: Sequence[str]) -> None:
        """Remember a passage's sentences with their (already counted) token lengths."""
        self._sentences[text] = tuple((s, self._lengths[s]) for s in sentences)

    def sentences(self, text: str) -> tuple[Premise, ...]:
        """A passage's sentences with their token lengths."""
        if text not in self._sentences:
            for new, sentences in self.segment([text]).items():
                self.remember(sentences)
                self.keep(new, sentences)
        return self._sentences[text]

    def pieces(self, text: str, room: int) -> list[Premise]:
        """Overlapping pieces of an over-long sentence, cut at token boundaries, each within `room`."""
        offsets = self.scorer.token_offsets(text)
        overlap = max(1, room // 4)
        pieces: list[Premise] = []
        start = 0
        while start < len(offsets):
            end = min(start + room, len(offsets))
            while True:
                piece = text[offsets[start][0] : offsets[end - 1][1]].strip()
                n = self.scorer.token_lengths([piece])[0]
                if n <= room or end - start <= 1:
                    break
                end -= max(1, n - room)
            if piece and n <= room:
                pieces.append((piece, n))
            if end >= len(offsets):
                break
            start = max(start + 1, end - overlap)
        return pieces
