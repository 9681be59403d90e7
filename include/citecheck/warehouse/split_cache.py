"""The LLM claim splitter's cache table: `SQLSplitCache` keeps each sentence's proposed claims in
`claim_split_cache`, keyed by `judges.llm.claims.split_key` (model, prompt version, sentence text),
so a rerun of a day asks the model nothing for sentences split before.

It implements `citecheck.judges.llm.claims.SplitCache`; the daily job hands it to the splitter.
Splits are stored as proposed: verification (`core.claims`) runs every time one is used.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import Engine, select

from citecheck.warehouse.engine import chunked, insert_ignoring_duplicates
from citecheck.warehouse.tables import claim_split_cache

_READ_CHUNK = 2000
_WRITE_CHUNK = 400


class SQLSplitCache:
    """The `claim_split_cache` table on the warehouse's engine (SQLite and Postgres tested)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get_many(self, keys: Iterable[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        t = claim_split_cache.c
        with self.engine.connect() as conn:
            for chunk in chunked(sorted(set(keys)), _READ_CHUNK):
                for key, claims in conn.execute(select(t.split_key, t.claims).where(t.split_key.in_(chunk))):
                    value = json.loads(claims)
                    if isinstance(value, list) and all(isinstance(c, str) for c in value):
                        found[key] = value
        return found

    def put_many(self, values: Mapping[str, Sequence[str]]) -> None:
        rows = [{"split_key": key, "claims": json.dumps(list(claims), ensure_ascii=False)}
                for key, claims in values.items()]
        if not rows:
            return
        with self.engine.begin() as conn:
            for chunk in chunked(rows, _WRITE_CHUNK):
                conn.execute(insert_ignoring_duplicates(claim_split_cache, self.engine.dialect.name), chunk)
