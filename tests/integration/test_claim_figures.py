"""Figures per claim (SPEC §3 item 5, "of a claim, in a claims mode"; SPEC §2.1): each claim's
figures are its own text's, traced against the resolved cited passages of its links; the claim
rows, the CLI's claims and the `claim_` figure rates carry them; sentence mode is unchanged."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from citecheck.core.claims import RecordedSplitter, split_turn
from citecheck.core.config import Config
from citecheck.core.metrics import CLAIM_METRICS, ratios, turn_counts
from citecheck.core.pipeline import judge_batch, structure_turns
from citecheck.core.records import claim_rows
from citecheck.core.structural import claim_figures
from citecheck.core.turns import turn_from_dict
from citecheck.judges.recorded import RecordedJudge
from helpers import score_dicts
from helpers.claims_fixture import FIXTURE, micro_fractions, recorded_config

PLAN = "The Starter plan costs 40 units monthly and includes weekend support"
PRICE, SUPPORT = "The Starter plan costs 40 units monthly.", "The Starter plan includes weekend support."


def _turn(answer: str, context: list[dict]) -> dict:
    return {"turn_id": "t1", "conversation_id": "c1", "turn_index": 1, "answered_at": "2026-11-30T10:00:00Z",
            "answer": answer, "answer_format": "markers", "context": context, "attributes": {}}


def _structured(turn: dict, splits: dict[str, list[str]]):
    claims_config = replace(Config(), claims_mode="llm")  # no structural splitter: the test splits
    (st,) = structure_turns([turn_from_dict(turn)], claims_config)
    return split_turn(st, RecordedSplitter(splits), 20)


def _figures(figures) -> list[tuple[str, str, bool | None]]:
    return [(f.kind, f.value, f.traced) for f in figures]


def test_the_figure_belongs_to_the_claim_that_states_it():
    """'costs 40 units monthly and includes weekend support' [S1]: the price claim has the figure,
    traced in S1; the support claim has none. The same claim cited to a passage without the price
    (S2) has it untraced; a sentence with no resolved citation has it with `traced` null."""
    context = [{"label": "S1", "text": "The Starter plan costs forty units per month."},
               {"label": "S2", "text": "Support is available on weekdays from 9:00 to 17:00."}]
    splits = {f"{PLAN}.": [PRICE, SUPPORT]}
    for label, traced in (("S1", True), ("S2", False), ("S9", None)):
        st = _structured(_turn(f"{PLAN} [{label}].", context), splits)
        (sentence,) = st.sentences
        assert st.claim_texts(sentence) == (PRICE, SUPPORT)
        price, support = claim_figures(st, sentence)
        assert _figures(price) == [("number", "40", traced)] and support == ()
        assert price[0].text == "40"
        assert _figures(sentence.figures) == [("number", "40", traced)]  # the sentence's stay as they were


def test_a_claim_traces_only_against_its_own_sentences_links():
    """Two sentences, each with its own citation: a claim's figure traces in its sentence's passage,
    never in the other sentence's (the 30 of S2 does not trace the first sentence's 30 days)."""
    context = [{"label": "S1", "text": "Returns are accepted within 14 days."},
               {"label": "S2", "text": "Refunds take 30 days to arrive."}]
    answer = "Hardware can be returned within 30 days and software cannot be returned [S1]. Refunds take 30 days [S2]."
    first = "Hardware can be returned within 30 days and software cannot be returned."
    st = _structured(_turn(answer, context), {first: ["Hardware can be returned within 30 days.",
                                                      "Software cannot be returned."]})
    first_sentence, second = st.sentences
    returns, software = claim_figures(st, first_sentence)
    assert _figures(returns) == [("number", "30", False)] and software == ()
    (refunds,) = claim_figures(st, second)  # not split: the sentence's own figures
    assert _figures(refunds) == [("number", "30", True)] and refunds == second.figures


def test_a_figure_in_a_split_claim_is_read_in_the_turns_language():
    context = [{"label": "S1", "text": "Der Tarif kostet 1.500,50 Euro im Jahr."}]
    sentence = "Der Tarif kostet 1.500,50 Euro und enthält Support"
    turn = {**_turn(f"{sentence} [S1].", context), "attributes": {"language": "de"}}
    st = _structured(turn, {f"{sentence}.": ["Der Tarif kostet 1.500,50 Euro.", "Der Tarif enthält Support."]})
    assert st.language == "de"
    price, support = claim_figures(st, st.sentences[0])
    assert _figures(price) == [("amount", "1500.5 EUR", True)] and support == ()


def test_sentence_mode_has_no_claim_figures_and_no_claim_figure_rates():
    context = [{"label": "S1", "text": "The Starter plan costs forty units per month."}]
    (st,) = structure_turns([turn_from_dict(_turn(f"{PLAN} [S1].", context))], Config())
    assert st.claims is None and claim_figures(st, st.sentences[0]) == ()
    out = score_dicts([_turn(f"{PLAN} [S1].", context)], {"kind": "recorded", "judgments": []}, Config())
    metrics = {r["metric"] for r in out["rows"]}
    assert "untraced_figure_rate" in metrics and not metrics & CLAIM_METRICS
    assert "claims" not in out["turns"][0]["sentences"][0]


def test_the_seed_plan_in_recorded_mode_has_its_figure_on_the_price_claim(tmp_path):
    """claims.json's plan answer: the price claim's 'forty' (40) traces in S1; the weekend-support
    claim has no figure; the claim figure rates count the one attached claim with a figure."""
    out = score_dicts([FIXTURE["turns"]["plan"]], FIXTURE["judge"], recorded_config(tmp_path))
    (sentence,) = out["turns"][0]["sentences"]
    expected = FIXTURE["expected"]["plan"]
    assert [c["text"] for c in sentence["claims"]] == expected["recorded_mode"]["claims"]
    price, support = sentence["claims"]
    assert [{k: f[k] for k in ("kind", "value", "traced")} for f in price["figures"]] == expected["figures"]
    assert price["figures"][0]["text"] == "forty" and support["figures"] == []
    assert [c["verdict"] for c in sentence["claims"]] == expected["recorded_mode"]["claim_verdicts"]
    fractions = micro_fractions(out)
    assert fractions["claim_untraced_figure_rate"] == [0, 1] and fractions["claim_uncited_figure_rate"] == [0, 1]
    assert fractions["untraced_figure_rate"] == [0, 1]  # the sentence metric keeps its meaning
    counts = out["turns"][0]["counts"]
    assert (counts["figure_claims"], counts["traceable_figure_claims"]) == (1, 1)


def test_the_seed_hardware_answer_in_recorded_mode_has_a_figure_per_claim(tmp_path):
    """claims.json's hardware answer (three one-claim sentences): the returns claim's 30 traces in
    passage 1 (of consumers: the judge's job), the other claims have none."""
    out = score_dicts([FIXTURE["turns"]["hardware"]], FIXTURE["judge"], recorded_config(tmp_path))
    claims = [s["claims"] for s in out["turns"][0]["sentences"]]
    assert [len(c) for c in claims] == [1, 1, 1]
    expected = FIXTURE["expected"]["hardware"]["figures"]["0"]
    assert [{k: f[k] for k in ("kind", "value", "traced")} for f in claims[0][0]["figures"]] == expected
    assert claims[1][0]["figures"] == [] and claims[2][0]["figures"] == []
    fractions = micro_fractions(out)
    assert fractions["claim_untraced_figure_rate"] == fractions["untraced_figure_rate"] == [0, 1]


def test_claim_figure_rates_count_claims_not_sentences():
    """One sentence split in two claims with a figure each, one traced and one not, and an uncited
    one-claim sentence with a figure: the claim rates are 1/2 untraced and 1/3 uncited, the
    sentence rates 1/1 and 1/2."""
    context = [{"label": "S1", "text": "The plan costs 40 units a month."}]
    text = "The plan costs 40 units a month and includes 3 seats"
    answer = f"{text} [S1]. Support answers within 2 hours."
    st = _structured(_turn(answer, context), {f"{text}.": ["The plan costs 40 units a month.",
                                                           "The plan includes 3 seats."]})
    (scored,) = judge_batch([st], RecordedJudge({}))
    rows, _ = claim_rows(scored)
    micro = ratios(turn_counts(scored))
    assert (micro["claim_untraced_figure_rate"].numerator, micro["claim_untraced_figure_rate"].denominator) == (1, 2)
    assert (micro["claim_uncited_figure_rate"].numerator, micro["claim_uncited_figure_rate"].denominator) == (1, 3)
    assert (micro["untraced_figure_rate"].numerator, micro["untraced_figure_rate"].denominator) == (1, 1)
    assert (micro["uncited_figure_rate"].numerator, micro["uncited_figure_rate"].denominator) == (1, 2)
    by_claim = {(r["sentence_index"], r["claim_index"]): r["figures"] for r in rows}
    assert [f["traced"] for f in by_claim[(0, 0)]] == [True]
    assert [(f["value"], f["traced"]) for f in by_claim[(0, 1)]] == [("3", False)]
    assert [(f["value"], f["traced"]) for f in by_claim[(1, 0)]] == [("2", None)]


@pytest.mark.parametrize("judged", [True, False], ids=["score", "parse"])
def test_the_cli_json_shows_each_claims_figures(tmp_path, judged):
    from citecheck.cli import main

    (tmp_path / "claims.json").write_text(json.dumps(FIXTURE["claims"]), encoding="utf-8")
    (tmp_path / "config.toml").write_text('[claims]\nmode = "recorded"\nrecorded = "claims.json"\n', encoding="utf-8")
    turns = tmp_path / "turns.jsonl"
    turns.write_text(json.dumps(FIXTURE["turns"]["plan"]) + "\n", encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(FIXTURE["judge"]), encoding="utf-8")
    args = ["--turns", str(turns), "--config", str(tmp_path / "config.toml"), "--out", str(tmp_path / "out.json")]
    assert main(["score", *args, "--judge", str(judge)] if judged else ["parse", *args]) == 0
    out = json.loads((tmp_path / "out.json").read_text())
    (sentence,) = out["turns"][0]["sentences"]
    assert [[f["value"] for f in c["figures"]] for c in sentence["claims"]] == [["40"], []]
    assert [f["traced"] for f in sentence["claims"][0]["figures"]] == [True]


def test_a_claims_mode_day_publishes_each_claims_figures(engine, tmp_path):
    """The seed answers of claims.json published in the recorded claims mode (SQLite and Postgres):
    `claim_verdicts.figures` holds each claim's own figures, the day's claim figure rates match
    them, and the sentence rows keep theirs."""
    import datetime as dt

    import sqlalchemy as sa

    from citecheck.core.config import config_from_mapping
    from citecheck.job import JobSettings, day_metrics, run_day
    from citecheck.warehouse import load_turns
    from citecheck.warehouse import tables as T

    (tmp_path / "claims.json").write_text(json.dumps(FIXTURE["claims"]), encoding="utf-8")
    config = config_from_mapping({"claims": {"mode": "recorded", "recorded": str(tmp_path / "claims.json")}})
    load_turns(engine, list(FIXTURE["turns"].values()))
    day = dt.date(2026, 11, 30)
    run_day(engine, day, JobSettings(judge_spec=FIXTURE["judge"], config=config))
    with engine.connect() as conn:
        claims = {(r.turn_id, r.sentence_index, r.claim_index): r
                  for r in conn.execute(sa.select(T.claim_verdicts).where(T.claim_verdicts.c.day == day))}
        sv = T.sentence_verdicts.c
        sentences = {(r.turn_id, r.sentence_index): r.figures
                     for r in conn.execute(sa.select(sv.turn_id, sv.sentence_index, sv.figures))}
    assert len(claims) == 5
    price, support = claims[("claims-plan", 0, 0)], claims[("claims-plan", 0, 1)]
    assert price.text == FIXTURE["expected"]["plan"]["recorded_mode"]["claims"][0]
    assert price.figures == [{"text": "forty", "kind": "number", "value": "40", "traced": True}]
    assert support.figures == []
    assert claims[("claims-hardware", 0, 0)].figures == [{"text": "30", "kind": "number", "value": "30",
                                                          "traced": True}]
    assert claims[("claims-hardware", 1, 0)].figures == [] and claims[("claims-hardware", 2, 0)].figures == []
    assert sentences[("claims-plan", 0)] == price.figures  # the sentence's figure, the price claim's
    micro = {r["metric"]: (r["numerator"], r["denominator"]) for r in day_metrics(engine, day)
             if r["slice_name"] == "all" and r["averaging"] == "micro"}
    assert micro["claim_untraced_figure_rate"] == (0, 2) and micro["claim_uncited_figure_rate"] == (0, 2)
    assert micro["untraced_figure_rate"] == (0, 2)


def test_init_warehouse_adds_the_claim_figures_column_to_an_older_warehouse(engine):
    import sqlalchemy as sa

    from citecheck.warehouse import init_warehouse
    from citecheck.warehouse import tables as T

    schema = T.claim_verdicts.schema
    with engine.begin() as conn:
        for table in ("claim_verdicts", "stage_claim_verdicts"):
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN figures")
    assert "figures" not in {c["name"] for c in sa.inspect(engine).get_columns("claim_verdicts", schema=schema)}
    init_warehouse(engine)
    for table in ("claim_verdicts", "stage_claim_verdicts"):
        assert "figures" in {c["name"] for c in sa.inspect(engine).get_columns(table, schema=schema)}


def test_the_reports_claims_panel_shows_a_claims_untraced_figure(engine, tmp_path):
    """A partially supported sentence whose price claim states a figure its citation does not:
    the claims panel marks that claim's figure, not the other claim, and gives the claim rate."""
    import datetime as dt

    from citecheck.core.config import config_from_mapping
    from citecheck.job import JobSettings, run_day
    from citecheck.report import build_report
    from citecheck.warehouse import load_turns

    sentence = "The Starter plan costs fifty units a month and includes weekend support."
    price, support = "The Starter plan costs fifty units a month.", "The Starter plan includes weekend support."
    turn = {**_turn(sentence[:-1] + " [S1].", [{"label": "S1", "text": "The Starter plan includes weekend support."}]),
            "turn_id": "fifty", "conversation_id": "fifty"}
    (tmp_path / "claims.json").write_text(json.dumps({"claims": [{"sentence": sentence, "claims": [price, support]}]}),
                                          encoding="utf-8")
    judge = {"kind": "recorded", "judgments": [{"statement": price, "supported_by": []},
                                               {"statement": support, "supported_by": ["S1"]}]}
    config = config_from_mapping({"claims": {"mode": "recorded", "recorded": str(tmp_path / "claims.json")}})
    load_turns(engine, [turn])
    day = dt.date(2026, 11, 30)
    run_day(engine, day, JobSettings(judge_spec=judge, config=config))
    html = build_report(engine, day)
    panel = html[html.index('<section id="claims">'):]
    panel = panel[:panel.index("</section>")]
    price_item = panel[panel.index(price):]
    price_item = price_item[:price_item.index("</li>")]
    support_item = panel[panel.index(support):]
    support_item = support_item[:support_item.index("</li>")]
    assert "fifty (not in the cited text)" in price_item and "<b>unsupported</b>" in price_item
    assert "not in the cited text" not in support_item and "<b>supported</b>" in support_item
    assert "Claims with a figure their cited passages do not state" in panel
    assert "1 claims with an untraced figure" in panel
