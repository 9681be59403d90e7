"""A read never runs DDL (issue 35): the commands that only read (or only change rows) open the
warehouse with `read_warehouse`; against an uninitialised warehouse they exit 5 with one line
naming `init-warehouse`, and leave it without a table."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

READS = [
    ["metrics", "--day", "2026-11-24"],
    ["alerts", "--from", "2026-11-20", "--to", "2026-11-24"],
    ["suggestions", "--day", "2026-11-24"],
    ["report", "--day", "2026-11-24", "--out", "{tmp}/report.html"],
    ["stale", "--from", "2026-11-20", "--to", "2026-11-24"],
    ["runs", "--day", "2026-11-24"],
    ["gc"],
    ["review", "report", "--from", "2026-11-20", "--to", "2026-11-24"],
]


def _tables(url: str) -> list[str]:
    engine = sa.create_engine(url)
    try:
        return sa.inspect(engine).get_table_names()
    finally:
        engine.dispose()


@pytest.mark.parametrize("command", READS, ids=lambda c: " ".join(c[:2]))
def test_a_read_of_an_uninitialised_warehouse_is_a_clear_error_and_creates_nothing(command, tmp_path, monkeypatch,
                                                                                  capsys):
    from citecheck.cli import main

    url = f"sqlite:///{tmp_path}/warehouse.sqlite"
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", url)
    monkeypatch.delenv("CITECHECK_CONFIG", raising=False)
    assert main([part.replace("{tmp}", str(tmp_path)) for part in command]) == 5
    err = capsys.readouterr().err
    assert "is not initialised" in err and "init-warehouse" in err
    assert _tables(url) == []


def test_postgres_read_of_an_uninitialised_warehouse_creates_nothing(pg_warehouse_url, monkeypatch, capsys):
    from citecheck.cli import main

    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", pg_warehouse_url)
    monkeypatch.delenv("CITECHECK_CONFIG", raising=False)
    assert main(["metrics", "--day", "2026-11-24"]) == 5
    assert "init-warehouse" in capsys.readouterr().err
    assert _tables(pg_warehouse_url) == []


def test_reads_work_once_the_warehouse_is_initialised(engine, capsys):
    from citecheck.cli import main

    before = sorted(sa.inspect(engine).get_table_names())
    assert main(["alerts", "--from", "2026-11-20", "--to", "2026-11-24"]) == 0
    assert "no alerts" in capsys.readouterr().out
    assert sorted(sa.inspect(engine).get_table_names()) == before
