"""The warehouse engine: URL resolution, schemas, table creation and the project's .sql files.

The URL comes from `CITECHECK_WAREHOUSE_URL` (inside Airflow the DAG resolves the
`citecheck_warehouse` connection and passes its URL); the embedded default is a local SQLite
file, so the job runs with nothing installed beyond the README setup.
"""

from __future__ import annotations

import contextlib
import operator
import os
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck.core.config import Config
from citecheck.core.selection import SHARD_KEY_FUNCTION, shard_key
from citecheck.warehouse import tables as T
from citecheck.warehouse.naming import InvalidName, WarehouseNames, quoted, warehouse_names

DEFAULT_WAREHOUSE_URL = "sqlite:///citecheck_warehouse.sqlite"
SQL_DIR = Path(__file__).resolve().parents[1] / "sql"  # package data: the wheel carries it


def warehouse_url(url: str | None = None) -> str:
    """The URL given, else CITECHECK_WAREHOUSE_URL, else the embedded SQLite file. A plain
    `postgres://` or `postgresql://` URL (what an Airflow connection of type postgres renders)
    gets the psycopg 3 driver."""
    url = url or os.environ.get("CITECHECK_WAREHOUSE_URL") or DEFAULT_WAREHOUSE_URL
    for plain in ("postgres://", "postgresql://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain):]
    return url


def json_text(value: Any) -> str:
    """A JSON column's value as the text the warehouse stores (msgspec: several times faster than
    the standard library on the many small values a day stages; UTF-8, not `\\u` escapes)."""
    return _JSON_ENCODER.encode(value).decode()


_JSON_ENCODER = msgspec.json.Encoder()


# the JSON columns' codec on every engine (SQLAlchemy hands it to psycopg on PostgreSQL)
JSON_CODEC: dict[str, Any] = {"json_serializer": json_text, "json_deserializer": msgspec.json.decode}


def make_engine(url: str | None = None, names: WarehouseNames | None = None) -> Engine:
    """An engine with sane pooling; SQLite gets a busy timeout so parallel tasks wait, not fail.

    With configured schemas (`names`) every connection's search_path is set to them (quoted), so
    the same unqualified SQL reads and writes there.
    """
    url = warehouse_url(url)
    names = names or warehouse_names()
    if url.startswith("sqlite"):
        if names.search_path:
            raise InvalidName("an SQLite warehouse has no schemas: unset warehouse.schema and source_schema")
        engine = sa.create_engine(url, connect_args={"timeout": 60}, **JSON_CODEC)

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record):  # type: ignore[no-untyped-def]
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()
            register_shard_key(dbapi_conn)

        return engine
    engine = sa.create_engine(url, pool_pre_ping=True, **JSON_CODEC)
    if names.search_path:
        path = ", ".join(quoted(engine.dialect, s, "warehouse schema") for s in names.search_path)

        @sa.event.listens_for(engine, "connect", insert=True)
        def _search_path(dbapi_conn, _record):  # type: ignore[no-untyped-def]
            autocommit = dbapi_conn.autocommit  # outside a transaction, so a rollback keeps it
            dbapi_conn.autocommit = True
            cur = dbapi_conn.cursor()
            cur.execute(f"SET SESSION search_path TO {path}, public")
            cur.close()
            dbapi_conn.autocommit = autocommit

    _NAMES[engine] = names
    return engine


def engine_for(config: Config | None = None, url: str | None = None) -> Engine:
    """`make_engine` with the schemas of a config's `[warehouse]` section (default: the config
    file of CITECHECK_CONFIG): what the CLI, the DAG and scripts open."""
    if config is None:
        from citecheck.core.config import load_config

        config = load_config(os.environ.get("CITECHECK_CONFIG") or None)
    return make_engine(url, warehouse_names(config.extra.get("warehouse")))


_NAMES: weakref.WeakKeyDictionary[Engine, WarehouseNames] = weakref.WeakKeyDictionary()


def engine_names(engine: Engine) -> WarehouseNames:
    """The schemas an engine of `make_engine` was configured with (defaults for any other)."""
    return _NAMES.get(engine, WarehouseNames())


# The PostgreSQL advisory lock that `init_warehouse` holds: "citechec" as a big-endian integer, halved to fit a bigint.
INIT_LOCK_KEY = int.from_bytes(b"citechec", "big") >> 1


@contextlib.contextmanager
def _one_init_at_a_time(engine: Engine) -> Iterator[None]:
    """PostgreSQL: a session advisory lock around `init_warehouse`'s DDL, so inits that start
    together (a day's shard tasks on several workers, two loads) wait for each other; two
    concurrent `CREATE OR REPLACE` of one function or view fail with "tuple concurrently updated".
    SQLite lets one writer in at a time already."""
    if engine.dialect.name != "postgresql":
        yield
        return
    with engine.connect() as conn:
        conn.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": INIT_LOCK_KEY})
        conn.commit()  # a session lock: held across the init's transactions, not idle in one
        try:
            yield
        finally:
            conn.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": INIT_LOCK_KEY})
            conn.commit()


def init_warehouse(engine: Engine) -> None:
    """Create the output schema and every table that does not exist yet, and (re)create the views
    (idempotent; on SQLite an unchanged view is not rewritten, so opening a warehouse writes nothing;
    on PostgreSQL one init at a time: `_one_init_at_a_time`)."""
    with _one_init_at_a_time(engine):
        _create_objects(engine)


def _create_objects(engine: Engine) -> None:
    names = engine_names(engine)
    if names.schema:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA IF NOT EXISTS {quoted(engine.dialect, names.schema)}")
    T.metadata.create_all(engine)
    add_missing_columns(engine)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":  # SQLite's are registered per connection (`register_shard_key`)
            for statement in sql_statements("functions.postgresql.sql"):
                conn.exec_driver_sql(statement)
        for statement in sql_statements("views.sql"):
            if conn.dialect.name == "sqlite":  # no CREATE OR REPLACE VIEW in SQLite
                view = statement.split()[4] if statement.upper().startswith("CREATE OR REPLACE VIEW") else None
                if view:
                    statement = statement.replace("CREATE OR REPLACE VIEW", "CREATE VIEW", 1)
                    if conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?",
                                            (view,)).scalar() == statement:
                        continue  # unchanged: no write (one would wait on any writer of the database)
                    conn.exec_driver_sql(f"DROP VIEW IF EXISTS {view}")
            conn.exec_driver_sql(statement)


class WarehouseNotInitialised(RuntimeError):
    """A read found the warehouse without its tables: `citecheck init-warehouse` creates them."""


def require_initialised(engine: Engine) -> None:
    """What a reader calls instead of `init_warehouse` (a read never runs DDL): raise
    `WarehouseNotInitialised`, naming the missing tables, when any table of the output schema
    (every table but the source ones, which may live elsewhere) is not there."""
    inspector = sa.inspect(engine)
    schema = engine_names(engine).schema
    source = {t.name for t in T.SOURCE_TABLES}
    missing = [t.name for t in T.metadata.sorted_tables
               if t.name not in source and not inspector.has_table(t.name, schema=schema)]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        where = f" (schema {schema})" if schema else ""
        raise WarehouseNotInitialised(f"the warehouse{where} is not initialised: no table {shown}; create its "
                                      "tables with `citecheck init-warehouse` (or load data), then rerun")


def register_shard_key(dbapi_conn: Any) -> None:
    """THE shard key (`citecheck.core.selection.shard_key`) as the SQL function
    `citecheck_shard_key(conversation_id)` on an SQLite connection, deterministic, so
    `extract_turns.sql` filters a shard as PostgreSQL does with `functions.postgresql.sql`'s."""
    dbapi_conn.create_function(SHARD_KEY_FUNCTION, 1, shard_key, deterministic=True)


def add_missing_columns(engine: Engine) -> list[str]:
    """Add the nullable columns a newer release defines to tables an older release created
    (`create_all` leaves existing tables alone), e.g. `daily_metrics.ci_low`/`ci_high`, where the
    table is: the output schema, else the source schema (`[warehouse] source_schema`).
    Returns the ALTER statements it ran; earlier days keep null there."""
    inspector = sa.inspect(engine)
    names = engine_names(engine)
    schemas = list(dict.fromkeys([names.schema, *names.search_path]))  # the source tables may be in source_schema
    statements = []
    for table in T.metadata.sorted_tables:
        found = [s for s in schemas if inspector.has_table(table.name, schema=s)]
        if not found:
            continue
        schema = found[0]
        present = {c["name"] for c in inspector.get_columns(table.name, schema=schema)}
        for column in table.columns:
            if column.name not in present and column.nullable and not column.primary_key:
                kind = column.type.compile(dialect=engine.dialect)
                name = quoted(engine.dialect, table.name)
                name = f"{quoted(engine.dialect, schema)}.{name}" if schema else name
                statements.append(f"ALTER TABLE {name} ADD COLUMN {quoted(engine.dialect, column.name)} {kind}")
    if statements:
        with engine.begin() as conn:
            for statement in statements:
                conn.exec_driver_sql(statement)
    return statements


def chunked(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """`items` in lists of at most `size` (an IN list or an executemany kept to a bounded size)."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def in_parameter(column: sa.ColumnElement[Any], name: str, dialect: sa.Dialect) -> sa.ColumnElement[bool]:
    """`column IN :name`, the list bound when the statement runs: on PostgreSQL `column =
    ANY(:name)`, one array parameter (an IN list of a chunk's thousands of ids is thousands of
    parameters that SQLAlchemy renders and psycopg parses again for every statement); elsewhere
    an expanding IN list (the caller bounds its size)."""
    if dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import ARRAY

        return column == sa.any_(sa.bindparam(name, type_=ARRAY(column.type)))
    return column.in_(sa.bindparam(name, expanding=True))


def bulk_insert(conn: sa.Connection, table: sa.Table, rows: Sequence[Mapping[str, Any]],
                constants: Mapping[str, Any] | None = None) -> int:
    """Insert many rows in the connection's transaction the warehouse's fastest way: on PostgreSQL
    one `COPY … FROM STDIN` through psycopg, each value as an INSERT would bind it (`_copy_value`);
    elsewhere one batched executemany. Every row has the first row's keys; `constants`: columns
    with one value for every row (a run and its day), given once instead of in each row. The
    number of rows."""
    if not rows:
        return 0
    constants = dict(constants or {})
    if both := set(constants) & set(rows[0]):
        raise ValueError(f"{table.name}: {sorted(both)} given both as constants and in the rows")
    if conn.dialect.name != "postgresql":
        conn.execute(table.insert(), [{**constants, **row} for row in rows] if constants else list(rows))
        return len(rows)
    dialect, names = conn.dialect, list(rows[0])
    processed = [(i, process) for i, name in enumerate(names)
                 if (process := _copy_value(table.c[name], dialect)) is not None]
    fixed = [value if (process := _copy_value(table.c[name], dialect)) is None else process(value)
             for name, value in constants.items()]
    get = operator.itemgetter(*names) if len(names) > 1 else (lambda row: (row[names[0]],))
    quote = dialect.identifier_preparer
    columns = ", ".join(quote.quote(n) for n in (*names, *constants))
    sql = f"COPY {quote.format_table(table)} ({columns}) FROM STDIN"
    try:
        with conn.connection.driver_connection.cursor() as cursor, cursor.copy(sql) as copy:
            for row in rows:
                if len(row) != len(names):
                    raise ValueError(f"{table.name}: a row with the keys {sorted(row)} among rows with {sorted(names)}")
                values = list(get(row))
                for i, process in processed:
                    values[i] = process(values[i])
                values.extend(fixed)
                copy.write_row(values)
    except dialect.loaded_dbapi.Error as exc:  # raised as an INSERT's: SQLAlchemy's class, a lost link invalidated
        lost = dialect.is_disconnect(exc, conn.connection.dbapi_connection, None)
        if lost:
            conn.invalidate(exc)
        raise sa.exc.DBAPIError.instance(sql, None, exc, dialect.loaded_dbapi.Error,
                                         connection_invalidated=lost, dialect=dialect) from exc
    return len(rows)


def _copy_value(column: sa.Column[Any], dialect: sa.Dialect) -> Callable[[Any], Any] | None:
    """What a value of `column` becomes in a COPY, as an INSERT binds it: a JSON column's value its
    JSON text (`json_text`; None is JSON null, SQL NULL where the type says `none_as_null`), any
    other its type's own bind processing (None: the value as it is)."""
    kind = column.type
    if isinstance(kind, sa.JSON):
        none = None if kind.none_as_null else "null"
        return lambda value: none if value is None else json_text(value)
    if isinstance(kind, sa.Boolean):  # psycopg writes Python's bool (and 0 / 1) as PostgreSQL reads one
        return None
    return kind.dialect_impl(dialect).bind_processor(dialect)


def insert_ignoring_duplicates(table: sa.Table, dialect: str) -> sa.Insert:
    """INSERT … ON CONFLICT DO NOTHING on the table's primary key, so two writers of the same keys
    never fail (the judgment and split caches, reader events; what was really inserted: add
    `.returning(...)`)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing()
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table).on_conflict_do_nothing()
    raise ValueError(f"{table.name}: no insert-or-ignore for dialect {dialect!r} (use SQLite or Postgres)")


def sql_statements(name: str) -> list[str]:
    """The statements of a file in `citecheck/sql/`, comments dropped."""
    text = (SQL_DIR / name).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def read_sql(name: str, dialect: str | None = None) -> str:
    """A file of `citecheck/sql/` as text; with a dialect, `NAME.<dialect>.sql` where the
    dialects need different SQL (else `NAME.sql`)."""
    if dialect is not None:
        specific = SQL_DIR / f"{Path(name).stem}.{dialect}.sql"
        if specific.exists():
            return specific.read_text(encoding="utf-8")
    return (SQL_DIR / name).read_text(encoding="utf-8")
