"""The judgment cache's table: `SQLCache` stores the NLI judge's raw probabilities in
`judgment_cache` (SQLite for `citecheck score --cache PATH`, the warehouse's engine for the job).

It implements `citecheck.judges.cache.JudgmentCache`; the judge receives it ready-made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from sqlalchemy import Engine, create_engine, select

from citecheck.judges.cache import CacheKey, Probabilities
from citecheck.warehouse.engine import chunked, insert_ignoring_duplicates
from citecheck.warehouse.tables import judgment_cache

_READ_CHUNK = 2000  # sentence hashes per SELECT, well within SQLite's and Postgres' parameter limits
_WRITE_CHUNK = 400


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
                for chunk in chunked(sentences, _READ_CHUNK):
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
            for chunk in chunked(rows, _WRITE_CHUNK):
                conn.execute(insert_ignoring_duplicates(judgment_cache, self.engine.dialect.name), chunk)

    def describe(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)


def open_cache(target: str | Path) -> SQLCache:
    """An `SQLCache` from a database URL (`postgresql+psycopg://…`) or an SQLite file path."""
    text = str(target)
    url = text if "://" in text else f"sqlite:///{Path(text).expanduser().resolve()}"
    return SQLCache(create_engine(url))
