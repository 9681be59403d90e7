"""Every native format through the warehouse (SQLite and PostgreSQL): `load-turns` stores the
`response`, `request_search_results` and `web_results` JSON columns, the day's job publishes what
`score` prints (pointer problems by kind in `citation_verdicts`, their rates and the no_source_text
share in `daily_metrics`), and an older warehouse gains the columns on `init-warehouse`."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.warehouse import tables as T
from helpers import load_fixture, score_dicts

FIXTURES = ("anthropic_native.json", "anthropic_locations.json", "openai.json", "cohere_v2.json", "gemini.json")
DAY = "2026-11-30"


def _turns() -> tuple[list[dict], dict]:
    """The provider fixtures' turns on one day (ids made distinct), and one recorded judge for all."""
    turns, judgments = [], {}
    for name in FIXTURES[1:]:
        data = load_fixture(name)
        prefix = name.split(".")[0]
        turns += [dict(t, turn_id=f"{prefix}-{t['turn_id']}", conversation_id=f"{prefix}-{t['conversation_id']}")
                  for t in data["turns"]]
        for j in data["judge"]["judgments"]:
            judgments.setdefault(j["statement"], set()).update(j["supported_by"])
    judge = {"kind": "recorded",
             "judgments": [{"statement": s, "supported_by": sorted(v)} for s, v in judgments.items()]}
    return turns, judge


def test_every_format_loads_and_publishes_what_score_prints(engine):
    turns, judge = _turns()
    assert W.load_turns(engine, turns) == len(turns)
    with engine.connect() as conn:
        stored = {r.turn_id: r for r in conn.execute(sa.select(T.source_turns))}
    assert stored["openai-t1"].response["output"][0]["type"] == "message"
    assert stored["anthropic_locations-t3"].request_search_results[0]["blocks"]
    assert stored["anthropic_locations-t4"].web_results[0]["url"].startswith("https://")

    job.run_day(engine, dt.date.fromisoformat(DAY), job.JobSettings(judge_spec=judge, unjudged_limit=1.0))
    cli = score_dicts(turns, judge)
    with engine.connect() as conn:
        problems = conn.execute(sa.text(
            "SELECT turn_id, label, pointer_problem FROM citation_verdicts WHERE pointer_problem IS NOT NULL")).all()
        metrics = {(r.metric, r.averaging): (r.numerator, r.denominator) for r in conn.execute(sa.text(
            "SELECT metric, averaging, numerator, denominator FROM daily_metrics WHERE slice_name = 'all'"))}
        unjudged = conn.execute(sa.text(
            "SELECT COUNT(*) FROM sentence_verdicts WHERE reason = 'no_source_text'")).scalar_one()
    cli_problems = sorted((t["turn_id"], label, kind) for t in cli["turns"] for s in t["sentences"]
                          for label, kind in (s.get("pointer_problems") or {}).items())
    assert sorted(tuple(p) for p in problems) == cli_problems and cli_problems
    counts = cli["counts"]
    assert metrics[("pointer_problem_rate", "micro")] == (counts["pointer_problem_citations"], counts["citations"])
    for kind in ("offsets_out_of_range", "unknown_source", "split_character", "answer_text_mismatch"):
        assert metrics[(f"pointer_problem_rate_{kind}", "micro")][0] == counts[f"pointer_problem_citations_{kind}"] > 0
    assert metrics[("no_source_text_rate", "micro")] == (counts["no_source_text_sentences"],
                                                         counts["selected_sentences"])
    assert unjudged == counts["no_source_text_sentences"] == 5
    assert metrics[("unknown_label_rate", "micro")][0] >= counts["pointer_problem_citations"]
    cited = metrics[("cited_char_share", "micro")]
    assert cited == (counts["native_cited_chars"], counts["native_answer_chars"]) and 0 < cited[0] < cited[1]


def test_an_older_warehouse_gains_the_native_columns_on_init(tmp_path):
    url = f"sqlite:///{tmp_path}/old.sqlite"
    old = sa.MetaData()
    new_columns = ("response", "request_search_results", "web_results")
    def columns(table: sa.Table, leave_out: tuple[str, ...]) -> list[sa.Column]:
        return [sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable)
                for c in table.columns if c.name not in leave_out]

    sa.Table("source_turns", old, *columns(T.source_turns, new_columns))
    sa.Table("citation_verdicts", old, *columns(T.citation_verdicts, ("pointer_problem", "unverified")))
    engine = sa.create_engine(url)
    old.create_all(engine)
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    inspector = sa.inspect(engine)
    assert set(new_columns) <= {c["name"] for c in inspector.get_columns("source_turns")}
    assert {"pointer_problem", "unverified"} <= {c["name"] for c in inspector.get_columns("citation_verdicts")}
    turns, _ = _turns()
    assert W.load_turns(engine, turns[:2]) == 2


def test_no_column_the_bi_role_reads_holds_a_cited_url(engine):
    """A cited url that names no logged source (OpenAI `url_citation`, Anthropic web results) is
    published under `unknown_url_label`, never as itself: its path and query can carry personal data,
    and `citation_verdicts.label` is readable by the BI role (`grant-bi` without --with-texts)."""
    from citecheck.core.formats.common import unknown_url_label
    from citecheck.warehouse.grants import bi_readable_columns

    turns, judge = _turns()
    W.load_turns(engine, turns)
    job.run_day(engine, dt.date.fromisoformat(DAY), job.JobSettings(judge_spec=judge, unjudged_limit=1.0))
    with engine.connect() as conn:
        unknown = {r.label for r in conn.execute(sa.text(
            "SELECT label FROM citation_verdicts WHERE pointer_problem = 'unknown_source'"))}
        leaked = []
        for table, columns in bi_readable_columns().items():
            listed = ", ".join(columns) if columns else "*"  # None: every column (the views too)
            for row in conn.execute(sa.text(f"SELECT {listed} FROM {table}")):
                leaked += [(table, c, v) for c, v in row._mapping.items()
                           if ("label" in c and "://" in str(v)) or "blog.example/old-payroll" in str(v)]
    # no label column holds a url; the url no logged source has is in no column at all (a logged
    # source's own url stays its `recite_suggestions.document_id`: the document to cite)
    assert leaked == []
    # both unknown urls of the fixtures are there, as labels that name their host only
    assert {unknown_url_label("https://intranet.example/faq/payment"),
            unknown_url_label("https://blog.example/old-payroll")} <= unknown
    assert unknown_url_label("https://blog.example/old-payroll").startswith("web:blog.example#")
