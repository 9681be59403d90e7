"""Claims in the warehouse (SPEC §2.1): a day of the bundled sample in the rule claims mode
publishes `claim_verdicts` and `claim_citation_verdicts` on SQLite and Postgres, consistent with
the sentence rows and the day's claim metrics; a warehouse made before claims gets the tables on
`init-warehouse`; the claim text is a BI text column; a sentence-mode day publishes no claim row."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from citecheck import demo
from citecheck.job import JobSettings, run_day
from citecheck.warehouse import init_warehouse, load_turns
from citecheck.warehouse import tables as T
from citecheck.warehouse.grants import BI_READABLE, BI_TEXT_COLUMNS

DAY = dt.date(2026, 11, 24)


def _settings(claims: bool) -> JobSettings:
    data = demo.generate(DAY, 1, turns_per_day=60)
    import tomllib

    from citecheck.core.config import config_from_mapping
    from citecheck.demo.judgments import with_claim_rows

    spec = demo.judge_spec(data)
    if claims:
        spec = {**spec, "judgments": with_claim_rows(spec["judgments"])}
    config = config_from_mapping(tomllib.loads(demo.config_toml(claims=claims)))
    return data, JobSettings(judge_spec=spec, config=config)


def _rows(engine, table):
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(table)).mappings()]


@pytest.mark.parametrize("claims", [True, False], ids=["rules", "sentence"])
def test_a_day_publishes_its_claims_and_links(engine, claims):
    data, settings = _settings(claims)
    init_warehouse(engine)
    load_turns(engine, data.turns)
    run_day(engine, DAY, settings)
    claim_rows, links = _rows(engine, T.claim_verdicts), _rows(engine, T.claim_citation_verdicts)
    metrics = {(r["metric"], r["averaging"]): r for r in _rows(engine, T.daily_metrics) if r["slice_name"] == "all"}
    if not claims:
        assert claim_rows == [] and links == [] and ("claim_recall", "micro") not in metrics
        return
    sentences = {(r["turn_id"], r["sentence_index"]): r for r in _rows(engine, T.sentence_verdicts)}
    worthy = [k for k, r in sentences.items() if r["check_worthy"]]
    by_sentence: dict[tuple[str, int], list[dict]] = {}
    for r in claim_rows:
        by_sentence.setdefault((r["turn_id"], r["sentence_index"]), []).append(r)
    assert set(by_sentence) == set(worthy)
    assert any(len(c) > 1 for c in by_sentence.values())  # the rules split some sentences of the sample
    for key, claims_of in by_sentence.items():
        sentence = sentences[key]
        assert all(c["labels"] == sentence["labels"] for c in claims_of)  # links inherited
        supported = [c["verdict"] == "supported" for c in claims_of]
        if len(claims_of) > 1 and sentence["verdict"] != "not_selected":
            assert (sentence["verdict"] == "supported") == all(supported)
    assert len(links) == sum(len(c["labels"] or []) for c in claim_rows)
    judged = [c for c in claim_rows if c["verdict"] not in ("unjudged", "not_selected")]
    recall = metrics[("claim_recall", "micro")]
    assert (recall["numerator"], recall["denominator"]) == (
        sum(c["verdict"] == "supported" for c in judged), len(judged))
    judged_keys = {(c["turn_id"], c["sentence_index"], c["claim_index"]) for c in judged}
    credited = [lk for lk in links if (lk["turn_id"], lk["sentence_index"], lk["claim_index"]) in judged_keys]
    precision = metrics[("claim_precision", "micro")]
    assert (precision["numerator"], precision["denominator"]) == (sum(lk["credited"] for lk in credited),
                                                                  len(credited))
    assert metrics[("claims_per_sentence", "micro")]["value"] > 1
    with engine.connect() as conn:  # the wide view's claim columns
        wide = conn.execute(sa.text("SELECT claim_recall, claims_per_sentence FROM daily_metrics_wide")).one()
    assert wide[0] == pytest.approx(recall["value"]) and wide[1] > 1


def test_init_warehouse_adds_the_claim_tables_to_an_older_warehouse(engine):
    init_warehouse(engine)
    with engine.begin() as conn:
        for table in (T.claim_citation_verdicts, T.claim_verdicts, T.stage_claim_verdicts,
                      T.stage_claim_citation_verdicts):
            table.drop(conn)
    assert not sa.inspect(engine).has_table("claim_verdicts", schema=T.claim_verdicts.schema)
    init_warehouse(engine)
    for name in ("claim_verdicts", "claim_citation_verdicts", "stage_claim_verdicts"):
        assert sa.inspect(engine).has_table(name, schema=T.claim_verdicts.schema)


def test_claim_text_is_a_bi_text_column():
    assert BI_TEXT_COLUMNS["claim_verdicts"] == ("text", "figures")  # figures hold pieces of the claim
    assert {"claim_verdicts", "claim_citation_verdicts"} <= set(BI_READABLE)


@pytest.mark.slow
def test_the_daily_dag_end_to_end_in_the_rule_claims_mode(tmp_path):
    """`dag.test()` of the daily DAG with `[claims] mode = "rules"` on the seed answers of
    `claims.json`: the plan sentence splits in two, claim recall 2/5 and one partially supported
    sentence are published, with its claims and links."""
    import json

    from citecheck import warehouse as W
    from citecheck.job import day_metrics
    from helpers import load_fixture
    from helpers.dags import dag_test

    fixture = load_fixture("claims.json")
    url = f"sqlite:///{tmp_path}/wh.sqlite"
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    W.load_turns(engine, list(fixture["turns"].values()))
    engine.dispose()
    judge, config = tmp_path / "claims_judge.json", tmp_path / "claims.toml"
    judge.write_text(json.dumps(fixture["judge"]), encoding="utf-8")
    config.write_text('[claims]\nmode = "rules"\n', encoding="utf-8")
    out = dag_test(tmp_path, url, "2026-11-30", CITECHECK_JUDGE=str(judge), CITECHECK_CONFIG=str(config))
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    engine = W.make_engine(url)
    day = dt.date(2026, 11, 30)
    micro = {r["metric"]: (r["numerator"], r["denominator"]) for r in day_metrics(engine, day)
             if r["slice_name"] == "all" and r["averaging"] == "micro"}
    assert micro["claim_recall"] == (2, 5) and micro["claim_precision"] == (2, 5)
    assert micro["partially_supported_rate"] == (1, 4) and micro["citation_recall"] == (1, 4)
    claims = _rows(engine, T.claim_verdicts)
    plan = sorted((c["claim_index"], c["text"], c["verdict"]) for c in claims if c["turn_id"] == "claims-plan")
    assert [(t, v) for _, t, v in plan] == list(zip(fixture["expected"]["plan"]["recorded_mode"]["claims"],
                                                    ["supported", "unsupported"], strict=True))
    assert len(_rows(engine, T.claim_citation_verdicts)) == 5


def test_the_report_shows_the_claims_panel(engine):
    """The seed answers published in the rule claims mode: the report's claims panel lists the
    partially supported plan sentence with its two claims and their verdicts."""
    from citecheck.core.config import config_from_mapping
    from citecheck.report import build_report
    from helpers import load_fixture

    fixture = load_fixture("claims.json")
    init_warehouse(engine)
    load_turns(engine, list(fixture["turns"].values()))
    settings = JobSettings(judge_spec=fixture["judge"], config=config_from_mapping({"claims": {"mode": "rules"}}))
    run_day(engine, dt.date(2026, 11, 30), settings)
    html = build_report(engine, dt.date(2026, 11, 30))
    panel = html[html.index('<section id="claims">'):]
    panel = panel[:panel.index("</section>")]
    for claim in fixture["expected"]["plan"]["recorded_mode"]["claims"]:
        assert claim in panel
    assert "<b>supported</b>" in panel and "<b>unsupported</b>" in panel
    assert "2 supported claims / 5 judged claims" in panel
