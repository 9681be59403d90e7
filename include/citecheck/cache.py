"""The judgment cache: raw model probabilities per (model, revision, sentence, window).

The NLI judge asks the cache before the model, so a rerun or backfill of an unchanged day scores
nothing (SPEC §4). Values are the softmaxed probabilities in the model's `id2label` order, not
verdicts, so a threshold change needs no re-scoring. Two implementations share one small
interface: `InMemoryCache` (one CLI run) and `SQLCache` (the `judgment_cache` table, on SQLite
for `--cache PATH` and on Postgres for the warehouse). The table is defined with every other table in
`citecheck.warehouse.tables`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from sqlalchemy import (
    Engine,
    create_engine,
    select,
)

from citecheck.text import text_hash
from citecheck.warehouse.tables import judgment_cache

Probabilities = tuple[float, ...]

_READ_CHUNK = 2000  # sentence hashes per SELECT, well within SQLite's and Postgres' parameter limits
_WRITE_CHUNK = 400


class CacheKey(NamedTuple):
    """What identifies one scored (window, sentence) pair."""

    model: str
    revision: str
    sentence_hash: str
    window_hash: str


def cache_key(model: str, revision: str | None, sentence: str, window: str) -> CacheKey:
    """The key of a pair: model id + revision + hash(sentence) + hash(window)."""
    return CacheKey(model, revision or "", text_hash(sentence), text_hash(window))


class JudgmentCache(Protocol):
    """Where the NLI judge keeps raw probabilities between runs."""

    def get_many(self, keys: Iterable[CacheKey]) -> dict[CacheKey, Probabilities]:
        """The cached values of those keys that are present."""
        ...

    def put_many(self, values: Mapping[CacheKey, Probabilities]) -> None:
        """Store values; a key already present keeps its first value."""
        ...

    def describe(self) -> str:
        """A short name for run statistics (never a password)."""
        ...


class InMemoryCache:
    """A dict: one process, one run (the CLI without `--cache`)."""

    def __init__(self) -> None:
        self._values: dict[CacheKey, Probabilities] = {}

    def get_many(self, keys: Iterable[CacheKey]) -> dict[CacheKey, Probabilities]:
        return {key: self._values[key] for key in keys if key in self._values}

    def put_many(self, values: Mapping[CacheKey, Probabilities]) -> None:
        for key, probs in values.items():
            self._values.setdefault(key, tuple(probs))

    def describe(self) -> str:
        return "memory"

    def __len__(self) -> int:
        return len(self._values)


class SQLCache:
    """The `judgment_cache` table on any SQLAlchemy engine (SQLite and Postgres tested)."""

    def __init__(self, engine: Engine, *, create: bool = True) -> None:
        self.engine = engine
        if create:
            judgment_cache.create(engine, checkfirst=True)

    def get_many(self, keys: Iterable[CacheKey]) -> dict[CacheKey, Probabilities]:
        # Select by sentence hash (a prefix of the primary key, so an index range scan on both
        # dialects; a row-value IN list is not one on Postgres) and keep the wanted windows.
        wanted: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for key in keys:
            wanted.setdefault((key.model, key.revision), set()).add((key.sentence_hash, key.window_hash))
        found: dict[CacheKey, Probabilities] = {}
        t = judgment_cache.c
        with self.engine.connect() as conn:
            for (model, revision), pairs in wanted.items():
                sentences = sorted({sentence for sentence, _ in pairs})
                for chunk in _chunks(sentences, _READ_CHUNK):
                    stmt = select(t.sentence_hash, t.window_hash, t.probabilities).where(
                        t.model == model, t.revision == revision, t.sentence_hash.in_(chunk)
                    )
                    for sentence_hash, window_hash, probs in conn.execute(stmt):
                        if (sentence_hash, window_hash) in pairs:
                            key = CacheKey(model, revision, sentence_hash, window_hash)
                            found[key] = tuple(json.loads(probs))
        return found

    def put_many(self, values: Mapping[CacheKey, Probabilities]) -> None:
        rows = [
            {**key._asdict(), "probabilities": json.dumps([float(p) for p in probs])}
            for key, probs in values.items()
        ]
        if not rows:
            return
        with self.engine.begin() as conn:
            for chunk in _chunks(rows, _WRITE_CHUNK):
                conn.execute(_insert_ignoring_duplicates(self.engine.dialect.name), chunk)

    def describe(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)


def _insert_ignoring_duplicates(dialect: str) -> Any:
    """INSERT … ON CONFLICT DO NOTHING, so two runs filling the same keys never fail."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(judgment_cache).on_conflict_do_nothing()
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(judgment_cache).on_conflict_do_nothing()
    raise ValueError(f"judgment cache: no insert-or-ignore for dialect {dialect!r} (use SQLite or Postgres)")


def _chunks(items: Sequence[Any], size: int) -> Iterable[list[Any]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def open_cache(target: str | Path) -> SQLCache:
    """An `SQLCache` from a database URL (`postgresql+psycopg://…`) or an SQLite file path."""
    text = str(target)
    url = text if "://" in text else f"sqlite:///{Path(text).expanduser().resolve()}"
    return SQLCache(create_engine(url))
