"""The judgment cache: in memory, on SQLite and on the real Postgres, and its generated DDL."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck.core.text import text_hash
from citecheck.judges.cache import CacheKey, InMemoryCache, cache_key
from citecheck.warehouse.judgment_cache import SQLCache, open_cache
from citecheck.warehouse.tables import judgment_cache

REPO = Path(__file__).resolve().parents[2]


def sample(model: str, n: int) -> dict[CacheKey, tuple[float, ...]]:
    probs = [(i / (n + 1), 0.5 - i / (2 * n + 2), 0.5) for i in range(n)]
    return {cache_key(model, "rev1", f"sentence {i}", f"window {i % 7}"): probs[i] for i in range(n)}


def check_roundtrip(cache, model: str) -> None:
    """get_many returns exactly what put_many stored; a second put of a key keeps the first value."""
    values = sample(model, 1000)  # more than one query chunk
    assert cache.get_many(values) == {}
    cache.put_many(values)
    got = cache.get_many([*values, cache_key(model, "rev1", "never stored", "w")])
    assert got == values
    first = next(iter(values))
    cache.put_many({first: (9.0, 9.0, 9.0)})  # a rerun filling a present key: no error, no overwrite
    assert cache.get_many([first]) == {first: values[first]}
    other_revision = first._replace(revision="rev2")
    assert cache.get_many([other_revision]) == {}


def test_the_key_is_model_revision_and_text_hashes():
    key = cache_key("org/model", None, "A sentence.", "A window.")
    assert key == CacheKey("org/model", "", text_hash("A sentence."), text_hash("A window."))


def test_in_memory_cache():
    cache = InMemoryCache()
    check_roundtrip(cache, "m")
    assert len(cache) == 1000 and cache.describe() == "memory"


def test_sqlite_file_cache_persists_across_opens(tmp_path):
    path = tmp_path / "cache.sqlite"
    check_roundtrip(open_cache(path), "m")
    reopened = open_cache(str(path))
    assert len(reopened.get_many(sample("m", 1000))) == 1000
    assert reopened.describe() == f"sqlite:///{path.resolve()}"


def test_sqlite_url(tmp_path):
    cache = open_cache(f"sqlite:///{tmp_path / 'by-url.sqlite'}")
    check_roundtrip(cache, "m")


def test_postgres_cache(pg_url):
    model = f"test-model-{uuid.uuid4().hex}"  # isolates this run's rows from any other data
    cache = open_cache(pg_url)
    try:
        check_roundtrip(cache, model)
        # a second writer racing on the same keys (two backfills) must not fail
        SQLCache(sa.create_engine(pg_url)).put_many(sample(model, 1000))
        assert len(cache.get_many(sample(model, 1000))) == 1000
    finally:
        with cache.engine.begin() as conn:
            conn.execute(sa.delete(judgment_cache).where(judgment_cache.c.model == model))
        cache.engine.dispose()


def test_generated_schema_holds_the_cache_and_creates_a_usable_table_on_postgres(pg_url):
    from citecheck.warehouse.ddl import ddl

    schema = f"cache_ddl_{uuid.uuid4().hex[:12]}"
    text = (REPO / "include" / "citecheck" / "sql" / "schema.sql").read_text(encoding="utf-8")
    assert "CREATE TABLE IF NOT EXISTS judgment_cache" in text and text == ddl("postgresql")
    engine = sa.create_engine(pg_url, connect_args={"options": f"-csearch_path={schema}"})
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
            conn.exec_driver_sql(text)
            conn.exec_driver_sql(text)  # IF NOT EXISTS: applying it twice is safe
        check_roundtrip(SQLCache(engine, create=False), "m")
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        engine.dispose()


def test_sqlite_ddl_runs_on_sqlite(tmp_path):
    from citecheck.warehouse.ddl import ddl

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'ddl.sqlite'}")
    raw = engine.raw_connection()
    try:
        raw.driver_connection.executescript(ddl("sqlite"))
    finally:
        raw.close()
    check_roundtrip(SQLCache(engine, create=False), "m")


def test_unknown_dialects_are_refused():
    from citecheck.warehouse.ddl import ddl

    with pytest.raises(ValueError, match="dialect"):
        ddl("oracle")
