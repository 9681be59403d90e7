"""The warehouse's bulk path (`warehouse.engine.bulk_insert`: COPY on PostgreSQL, executemany on
SQLite) stores exactly what a plain INSERT stores, awkward values included, in the caller's
transaction."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from citecheck.warehouse import tables as T
from citecheck.warehouse.engine import bulk_insert, in_parameter

TABLE = T.stage_sentence_verdicts
DAY = dt.date(2026, 3, 4)


def _rows(run_id: str) -> list[dict]:
    awkward = "tab\there, new\nline, back\\slash, \\N, quote \" and ' , naïve 数字 ١٢٣ \u2028 end"
    rows = []
    for i in range(40):
        rows.append({
            "run_id": run_id, "day": DAY, "turn_id": f"t{i // 4}", "sentence_index": i % 4,
            "conversation_id": None if i % 5 == 0 else f"c{i}",
            "text": awkward if i % 2 else "",
            "labels": ["1", "2"] if i % 3 else [],
            "unknown_labels": None,  # a JSON column given None: JSON null, as an INSERT writes it
            "stale_labels": {"nested": [1, 2.5, None, True, awkward]},
            "check_worthy": bool(i % 2), "attached": None,
            "verdict": "supported", "score": 0.1 + i / 3 if i % 4 else None, "contradiction": 1e-300,
            "llm": {"reason": awkward}, "language": "ar", "language_rules_generic": False,
        })
    return rows


def _stored(conn: sa.Connection, run_id: str) -> list[dict]:
    cols = [c for c in TABLE.c if c.name != "run_id"]
    q = sa.select(*cols, sa.cast(TABLE.c.unknown_labels, sa.Text).label("unknown_as_text"),
                  sa.cast(TABLE.c.stale_labels, sa.Text).label("stale_as_text")).where(
        TABLE.c.run_id == run_id).order_by(TABLE.c.turn_id, TABLE.c.sentence_index)
    return [dict(r) for r in conn.execute(q).mappings()]


def test_bulk_rows_read_back_as_inserted_rows(engine):
    with engine.begin() as conn:
        assert bulk_insert(conn, TABLE, _rows("bulk")) == 40
        conn.execute(TABLE.insert(), _rows("plain"))
    with engine.connect() as conn:
        bulk, plain = _stored(conn, "bulk"), _stored(conn, "plain")
    assert len(bulk) == 40
    assert bulk == plain  # the JSON columns' stored text too (`stale_as_text`): one codec for both paths
    assert {r["unknown_as_text"] for r in bulk} == {"null"}  # JSON null, not SQL NULL
    assert bulk[1]["text"].startswith("tab\there, new\nline, back\\slash, \\N")


def test_columns_given_once_as_constants_are_stored_on_every_row(engine):
    constants = {"run_id": "constants", "day": DAY, "check_worthy": True}
    rows = [{k: v for k, v in row.items() if k not in constants} for row in _rows("unused")]
    with engine.begin() as conn:
        assert bulk_insert(conn, TABLE, rows, constants) == 40
        conn.execute(TABLE.insert(), [{**row, **constants, "run_id": "plain"} for row in rows])
    with engine.connect() as conn:
        given, plain = _stored(conn, "constants"), _stored(conn, "plain")
    assert len(given) == 40 and given == plain
    assert {r["check_worthy"] for r in given} == {True} and {r["day"] for r in given} == {DAY}
    with pytest.raises(ValueError, match="both as constants and in the rows"), engine.begin() as conn:
        bulk_insert(conn, TABLE, _rows("twice"), {"day": DAY})


def test_bulk_rows_roll_back_with_the_callers_transaction(engine):
    with pytest.raises(RuntimeError), engine.begin() as conn:
        bulk_insert(conn, TABLE, _rows("undone"))
        raise RuntimeError("the step failed after staging")
    with engine.connect() as conn:
        assert _stored(conn, "undone") == []


def test_rows_of_different_keys_are_refused_naming_the_table(engine):
    rows = _rows("mixed")
    del rows[3]["llm"]
    with pytest.raises((ValueError, sa.exc.StatementError), match=r"stage_sentence_verdicts|llm"), \
            engine.begin() as conn:
        bulk_insert(conn, TABLE, rows)
    with engine.connect() as conn:
        assert _stored(conn, "mixed") == []
        assert bulk_insert(conn, TABLE, []) == 0


def test_an_id_list_parameter_selects_what_an_in_list_selects(engine):
    """`in_parameter`: one array on PostgreSQL (`= ANY`), an expanding IN list elsewhere."""
    with engine.begin() as conn:
        bulk_insert(conn, TABLE, _rows("ids"))
    wanted = ["t0", "t3", "t9", "t3", "absent", "t'quote"]
    c = TABLE.c
    with engine.connect() as conn:
        q = sa.select(c.turn_id, c.sentence_index).where(c.run_id == "ids",
                                                         in_parameter(c.turn_id, "ids", conn.dialect))
        got = sorted(conn.execute(q, {"ids": wanted}).all())
        plain = sorted(conn.execute(sa.select(c.turn_id, c.sentence_index).where(
            c.run_id == "ids", c.turn_id.in_(wanted))).all())
        assert got == plain and {t for t, _ in got} == {"t0", "t3", "t9"} and len(got) == 12
        assert "ANY" in str(q.compile(dialect=conn.dialect)) or conn.dialect.name != "postgresql"
