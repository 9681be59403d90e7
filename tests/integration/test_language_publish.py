"""A day in several languages through the daily job on both warehouses (SQLite, PostgreSQL): the
built-in `language` slice, `language_unsupported` counted and shown in the report."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck import demo, job
from citecheck import warehouse as W
from citecheck.core.config import Config
from citecheck.job import JobSettings
from citecheck.report import write_report
from citecheck.warehouse import tables as T
from helpers.tiny_models import save_tiny_nli

DAY = dt.date(2026, 11, 2)


@pytest.fixture(scope="module")
def sample() -> demo.Sample:
    return demo.generate(DAY, 1, 40, language_turns=24)


def _language_rows(engine) -> dict[str, dict]:
    rows = job.day_metrics(engine, DAY)
    return {r["slice_value"]: r for r in rows
            if r["slice_name"] == "language" and r["averaging"] == "micro" and r["metric"] == "attachment_rate"}


def test_the_language_slice_is_published(engine, sample):
    W.load_turns(engine, sample.turns)
    job.run_day(engine, DAY, JobSettings(judge_spec=demo.judge_spec(sample), config=Config()))
    by_language = _language_rows(engine)
    assert set(by_language) == {"en", "de", "fr", "es", "ja"}
    everything = next(r for r in job.day_metrics(engine, DAY) if r["slice_name"] == "all"
                      and r["averaging"] == "micro" and r["metric"] == "attachment_rate")
    assert sum(r["answers"] for r in by_language.values()) == everything["answers"]
    assert sum(r["denominator"] for r in by_language.values()) == everything["denominator"]
    with engine.connect() as conn:
        languages = dict(conn.execute(sa.select(T.sentence_verdicts.c.turn_id, T.sentence_verdicts.c.language)).all())
    assert {languages[t["turn_id"]] for t in sample.turns if t["turn_id"].startswith("lang-")} == {
        "de", "fr", "es", "ja"}


def test_sentences_no_model_reads_are_counted_and_shown(engine, sample, tmp_path: Path):
    tiny = save_tiny_nli(tmp_path / "tiny")
    W.load_turns(engine, sample.turns)
    settings = JobSettings(judge_spec={"kind": "nli", "models": {"en": str(tiny)}}, config=Config(),
                           unjudged_limit=1.0)
    job.run_day(engine, DAY, settings)
    micro = {r["metric"]: r for r in job.day_metrics(engine, DAY) if r["slice_name"] == "all"
             and r["averaging"] == "micro"}
    with engine.connect() as conn:
        rows = conn.execute(sa.select(T.sentence_verdicts.c.reason, T.sentence_verdicts.c.language)
                            .where(T.sentence_verdicts.c.verdict == "unjudged")).all()
    unsupported = [lang for reason, lang in rows if reason == "language_unsupported"]
    assert unsupported and "en" not in unsupported
    assert micro["language_unsupported_rate"]["numerator"] == len(unsupported)
    report = write_report(engine, DAY, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "What could not be checked and why" in report
    assert 'data-metric="language_unsupported_rate"' in report


def test_an_older_warehouse_gains_the_language_columns(engine):
    """`init-warehouse` on tables created before languages: the columns are added, null on old rows."""
    old = sa.MetaData()
    with engine.begin() as conn:
        for table in (T.sentence_verdicts, T.source_turns):
            conn.execute(sa.text(f"DROP TABLE {table.name}"))
    for table in (T.sentence_verdicts, T.source_turns):
        sa.Table(table.name, old, *[sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable)
                                    for c in table.columns if c.name not in T.LANGUAGE_COLUMNS]).create(engine)
    added = W.add_missing_columns(engine)
    assert sorted(s.split()[-2].strip('"') for s in added) == sorted(T.LANGUAGE_COLUMNS * 2)
    assert W.add_missing_columns(engine) == []


def test_metrics_prints_a_slice(engine, sample, capsys):
    from citecheck.cli import main

    W.load_turns(engine, sample.turns)
    job.run_day(engine, DAY, JobSettings(judge_spec=demo.judge_spec(sample), config=Config()))
    capsys.readouterr()
    assert main(["metrics", "--day", DAY.isoformat(), "--slice", "language"]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert {words[0] for words in lines if words[1] == "attachment_rate"} == {"de", "en", "es", "fr", "ja"}
