"""Window premises (the default, SPEC §4): every one- and two-sentence window inside one passage.

A window never joins the end of one passage to the start of the next, so citation order cannot
change a score, and a set of passages has no premises of its own: it supports a sentence when
some member does. A window that does not fit next to the claim is split (a two-sentence window
into its one-sentence windows, an over-long sentence into overlapping token pieces) and counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

from citecheck.judges.nli.premises import MEMO_LIMIT, Premise, TextUnits


class WindowPremises:
    """One- and two-sentence windows of a single passage; see the module docstring."""

    joint = False

    def __init__(self, units: TextUnits, budget: int) -> None:
        self.units = units
        self.budget = budget
        self._doubles: dict[str, tuple[Premise, ...]] = {}
        self._windows: dict[tuple[str, int], tuple[tuple[Premise, ...], tuple[str, ...]]] = {}

    def prepare(self, texts: Iterable[str]) -> None:
        """Segment new passages and count the tokens of all their windows in one tokenizer call."""
        segmented = self.units.segment(t for t in texts if t not in self._doubles)
        if not segmented:
            return
        if len(self._doubles) + len(segmented) > MEMO_LIMIT:
            self._doubles.clear()
            self._windows.clear()
        doubles = {t: [f"{a} {b}" for a, b in pairwise(s)] for t, s in segmented.items()}
        self.units.remember([w for t, s in segmented.items() for w in s + doubles[t]])
        for text, sentences in segmented.items():
            self.units.keep(text, sentences)
            self._doubles[text] = tuple((d, self.units.length(d)) for d in doubles[text])

    def premises(self, texts: tuple[str, ...], room: int) -> tuple[tuple[Premise, ...], tuple[str, ...]]:
        """(windows with token lengths, the over-long windows that were split) of one passage."""
        (text,) = texts
        if text not in self._doubles:
            self.prepare([text])
        singles, doubles = self.units.sentences(text), self._doubles[text]
        longest = max((n for _, n in singles + doubles), default=0)
        key = (text, room if longest > room else -1)  # a passage that fits is the same for every sentence
        if key not in self._windows:
            if len(self._windows) > MEMO_LIMIT:
                self._windows.clear()
            windows: dict[str, int] = {}
            over: list[str] = []
            for sentence, n in singles:
                if n <= room:
                    windows.setdefault(sentence, n)
                else:
                    over.append(sentence)
                    windows.update((p, m) for p, m in self.units.pieces(sentence, room) if p not in windows)
            for double, n in doubles:
                if n <= room:
                    windows.setdefault(double, n)
                else:
                    over.append(double)  # its one-sentence windows (or their pieces) are already there
            self._windows[key] = (tuple(windows.items()), tuple(over))
        return self._windows[key]
