"""Chunk premises (`"premise": "chunks"`, SPEC §4): a MiniCheck-style packing of whole passages.

The sentences of a passage set, passage after passage in the order given (citation order for a
cited set), are packed in order into chunks of at most `room` tokens of the model's own tokenizer,
where `room` is what `chunk_tokens` (capped at the model's max length) leaves beside the claim and
the special tokens. A chunk may therefore join the end of one passage of the set to the start of
the next, so support that needs both is visible. A single sentence longer than `room` is cut into
overlapping token pieces, each its own chunk, and counted as a split. A sentence's score for the
set is the maximum over its chunks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from citecheck.judges.nli.premises import MEMO_LIMIT, Premise, TextUnits


class ChunkPremises:
    """Packed chunks of a passage set; see the module docstring."""

    joint = True

    def __init__(self, units: TextUnits, budget: int) -> None:
        self.units = units
        self.budget = budget
        self._chunks: dict[tuple[tuple[str, ...], int], tuple[tuple[Premise, ...], tuple[str, ...]]] = {}

    def prepare(self, texts: Iterable[str]) -> None:
        """Segment new passages and count the tokens of their sentences in one tokenizer call."""
        segmented = self.units.segment(texts)
        self.units.remember([s for sentences in segmented.values() for s in sentences])
        for text, sentences in segmented.items():
            self.units.keep(text, sentences)

    def premises(self, texts: tuple[str, ...], room: int) -> tuple[tuple[Premise, ...], tuple[str, ...]]:
        """(chunks with token lengths, the over-long sentences that were split) of the set `texts`."""
        sentences = [unit for text in texts for unit in self.units.sentences(text)]
        whole = " ".join(s for s, _ in sentences)
        if whole and sum(n for _, n in sentences) <= room and self.units.length(whole) <= room:
            return ((whole, self.units.length(whole)),), ()  # the set fits: the same for every claim
        key = (texts, room)
        if key not in self._chunks:
            if len(self._chunks) > MEMO_LIMIT:
                self._chunks.clear()
            self._chunks[key] = self._pack(sentences, room)
        return self._chunks[key]

    def _pack(self, sentences: Sequence[Premise], room: int) -> tuple[tuple[Premise, ...], tuple[str, ...]]:
        groups: list[list[str] | Premise] = []  # runs of sentences to join, or a piece as it is
        over: list[str] = []
        current: list[str] = []
        used = 0
        for sentence, n in sentences:
            if n > room:
                if current:
                    groups.append(current)
                current, used = [], 0
                over.append(sentence)
                groups.extend(self.units.pieces(sentence, room))
                continue
            if current and used + n > room:
                groups.append(current)
                current, used = [], 0
            current.append(sentence)
            used += n
        if current:
            groups.append(current)
        chunks: dict[str, int] = {}
        for group in groups:
            for chunk, n in self._fit(group, room) if isinstance(group, list) else [group]:
                chunks.setdefault(chunk, n)
        return tuple(chunks.items()), tuple(dict.fromkeys(over))

    def _fit(self, group: list[str], room: int) -> list[Premise]:
        """The group joined, measured as one text; split in two where joining the sentences made it
        longer than the sum of their lengths (a tokenizer that merges across the space)."""
        text = " ".join(group)
        n = self.units.length(text)
        if n <= room or len(group) == 1:
            return [(text, n)]
        half = len(group) // 2
        return self._fit(group[:half], room) + self._fit(group[half:], room)
