"""The recorded splitter (`[claims] mode = "recorded"`): splits read from a JSON file.

`{"claims": [{"sentence": TEXT, "claims": [TEXT, ...]}]}`, the sentence text as the judge sees it
(markers removed; whitespace is normalised on both sides). A sentence not listed is its own single
claim; a sentence listed twice is neither entry's: it stays whole, counted as a rejected split.
The file is read and checked whole before any turn is scored: a file that is not JSON, or an entry
without a sentence or with an empty claim, is a `ClaimsError` naming the entry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from citecheck.core.claims.verify import DUPLICATE_SENTENCE, RejectedSplit
from citecheck.core.config import ConfigError
from citecheck.core.text import normalise_statement


class ClaimsError(ConfigError):
    """A claims file or splitter setting that cannot be used."""


class RecordedSplitter:
    """Splits looked up by sentence text."""

    name = "recorded"
    languages: frozenset[str] | None = None  # a recorded split is looked up by text, any language

    def __init__(self, splits: Mapping[str, Sequence[str]], named_twice: Iterable[str] = ()) -> None:
        self._splits = {normalise_statement(k): tuple(v) for k, v in splits.items()}
        self._named_twice = frozenset(normalise_statement(k) for k in named_twice)

    @classmethod
    def from_file(cls, path: str | Path) -> RecordedSplitter:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ClaimsError(f"claims file {path}: cannot be read ({exc.strerror or exc})") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ClaimsError(f"claims file {path} is not JSON: {exc}") from exc
        return cls.from_data(data, str(path))

    @classmethod
    def from_data(cls, data: Any, where: str = "claims") -> RecordedSplitter:
        entries = data.get("claims") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise ClaimsError(f'{where}: expected {{"claims": [{{"sentence": ..., "claims": [...]}}]}}')
        splits: dict[str, tuple[str, ...]] = {}
        named_twice: set[str] = set()
        for n, entry in enumerate(entries):
            sentence = entry.get("sentence") if isinstance(entry, dict) else None
            claims = entry.get("claims") if isinstance(entry, dict) else None
            if not isinstance(sentence, str) or not sentence.strip():
                raise ClaimsError(f"{where}: entry {n} has no sentence text")
            if not isinstance(claims, list) or not claims:
                raise ClaimsError(f"{where}: entry {n} ({sentence[:60]!r}) has no list of claims")
            if not all(isinstance(c, str) and c.strip() for c in claims):
                raise ClaimsError(f"{where}: entry {n} ({sentence[:60]!r}) has an empty claim")
            key = normalise_statement(sentence)
            if key in splits:
                named_twice.add(key)
            splits[key] = tuple(normalise_statement(c) for c in claims)
        return cls(splits, named_twice)

    def split(self, sentences: Sequence[str]) -> list[tuple[str, ...] | RejectedSplit]:
        out: list[tuple[str, ...] | RejectedSplit] = []
        for s in sentences:
            key = normalise_statement(s)
            out.append(RejectedSplit(f"claims file: {DUPLICATE_SENTENCE}") if key in self._named_twice
                       else self._splits.get(key, (s,)))
        return out
