"""The rule splitter splits English only (issue 28): a turn in another language keeps each
check-worthy sentence one claim in `[claims] mode = "rules"`, counted as
`claim_splits_unsupported_language` in the structured turn, `score`'s JSON and `--summary`, a
published day's run stats and the report's claims panel; `und` (undetermined) is split as
English; the recorded and LLM splitters split any language."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest

from citecheck.core.claims import RecordedSplitter, split_turn
from citecheck.core.claims.rules import RulesSplitter
from citecheck.core.config import Config, config_from_mapping
from citecheck.core.pipeline import structure_turns
from citecheck.core.turns import turn_from_dict
from citecheck.judges.llm.claims import LLMClaimSplitter

RULES = replace(Config(), claims_mode="rules")
GERMAN = "Der Tarif kostet zehn Euro im Monat und enthält Support."
FRENCH = "Le forfait coûte dix euros par mois et comprend l'assistance."
ENGLISH = "The plan costs ten euros a month and includes support."
ENGLISH_CLAIMS = ("The plan costs ten euros a month.", "The plan includes support.")
DAY = dt.date(2026, 11, 30)


def _turn(turn_id: str, language: str, *sentences: str) -> dict:
    """One answer, each sentence citing S1, its language logged."""
    answer = " ".join(s[:-1] + " [S1]." for s in sentences)
    return {"turn_id": turn_id, "conversation_id": turn_id, "turn_index": 1, "answered_at": "2026-11-30T10:00:00Z",
            "answer": answer, "answer_format": "markers", "attributes": {"language": language},
            "context": [{"label": "S1", "text": "Passage."}]}


def _structured(turn: dict, config: Config = RULES):
    (st,) = structure_turns([turn_from_dict(turn)], config)
    return st


@pytest.mark.parametrize(("language", "sentence"), [("de", GERMAN), ("fr", FRENCH)])
def test_a_compound_sentence_in_another_language_stays_one_claim_and_is_counted(language, sentence):
    st = _structured(_turn("t", language, sentence, sentence.replace("zehn", "elf").replace("dix", "onze")))
    assert st.language == language and st.language_source == "logged"
    assert [len(c) for c in st.claims.values()] == [1, 1]
    assert st.claims[0] == (sentence,)
    assert st.claim_splits_unsupported_language == 2 and st.claim_splits_rejected == 0


def test_an_english_compound_sentence_still_splits_and_counts_nothing():
    st = _structured(_turn("t", "en", ENGLISH))
    assert st.claims == {0: ENGLISH_CLAIMS} and st.claim_splits_unsupported_language == 0


def test_an_undetermined_turn_is_split_as_english():
    st = _structured(_turn("t", "en", ENGLISH), replace(Config(), claims_mode="llm"))  # structured, not split
    undetermined = split_turn(replace(st, language="und", claims=None), RulesSplitter(), 20)
    assert undetermined.claims == {0: ENGLISH_CLAIMS} and undetermined.claim_splits_unsupported_language == 0


def test_a_regional_tag_is_read_by_its_primary_language():
    st = _structured(_turn("t", "en", ENGLISH), replace(Config(), claims_mode="llm"))
    british = split_turn(replace(st, language="en-GB", claims=None), RulesSplitter(), 20)
    assert british.claims == {0: ENGLISH_CLAIMS}
    swiss = split_turn(replace(st, language="de-CH", claims=None), RulesSplitter(), 20)
    assert swiss.claims == {0: (ENGLISH,)} and swiss.claim_splits_unsupported_language == 1


def test_only_check_worthy_sentences_are_counted():
    st = _structured(_turn("t", "de", GERMAN) | {"answer": GERMAN[:-1] + " [S1]. Möchten Sie mehr wissen?"})
    assert [s.check_worthy for s in st.sentences] == [True, False]
    assert st.claim_splits_unsupported_language == 1


def test_the_recorded_and_llm_splitters_split_any_language():
    assert RulesSplitter.languages == frozenset({"en"})
    assert RecordedSplitter.languages is None and LLMClaimSplitter.languages is None
    st = _structured(_turn("t", "de", GERMAN), replace(Config(), claims_mode="llm"))
    claims = ["Der Tarif kostet zehn Euro im Monat.", "Der Tarif enthält Support."]
    split = split_turn(replace(st, claims=None), RecordedSplitter({GERMAN: claims}), 20)
    assert split.claims == {0: tuple(claims)} and split.claim_splits_unsupported_language == 0


def test_the_count_survives_staging():
    from citecheck.warehouse.engine import json_text
    from citecheck.warehouse.serialize import structured_from_json

    st = _structured(_turn("t", "fr", FRENCH))
    text = json_text(st)
    assert json.loads(text)["claim_splits_unsupported_language"] == 1
    assert structured_from_json(text) == st


def _write_inputs(tmp_path, turns: list[dict], judgments: list[dict]) -> list[str]:
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    (tmp_path / "judge.json").write_text(json.dumps({"kind": "recorded", "judgments": judgments}), encoding="utf-8")
    (tmp_path / "config.toml").write_text('[claims]\nmode = "rules"\n', encoding="utf-8")
    return ["--turns", str(tmp_path / "turns.jsonl"), "--config", str(tmp_path / "config.toml"),
            "--judge", str(tmp_path / "judge.json")]


TURNS = [_turn("de1", "de", GERMAN), _turn("fr1", "fr", FRENCH), _turn("en1", "en", ENGLISH)]
JUDGMENTS = [{"statement": s, "supported_by": ["S1"]} for s in (GERMAN, FRENCH, *ENGLISH_CLAIMS)]


def test_score_json_and_summary_carry_the_count(tmp_path, capsys):
    from citecheck.cli import main

    args = _write_inputs(tmp_path, TURNS, JUDGMENTS)
    assert main(["score", *args, "--summary", "--out", str(tmp_path / "out.json")]) == 0
    summary = capsys.readouterr().err
    assert "claims mode rules: 4 claims, 0 splits rejected" in summary
    assert "2 sentences not split (a language the splitter does not split)" in summary
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["run"]["claim_splits_unsupported_language"] == 2
    assert out["counts"]["claim_splits_unsupported_language"] == 2
    by_turn = {t["turn_id"]: [c["text"] for s in t["sentences"] for c in s["claims"]] for t in out["turns"]}
    assert by_turn == {"de1": [GERMAN], "fr1": [FRENCH], "en1": list(ENGLISH_CLAIMS)}
    assert {t["turn_id"]: t["counts"]["claim_splits_unsupported_language"] for t in out["turns"]} == {
        "de1": 1, "fr1": 1, "en1": 0}


def test_a_published_day_carries_the_count_in_its_run_stats_and_report(engine):
    import sqlalchemy as sa

    from citecheck.job import JobSettings, run_day
    from citecheck.report import build_report
    from citecheck.warehouse import load_turns, runs
    from citecheck.warehouse import tables as T

    load_turns(engine, TURNS)
    config = config_from_mapping({"claims": {"mode": "rules"}})
    out = run_day(engine, DAY, JobSettings(judge_spec={"kind": "recorded", "judgments": JUDGMENTS}, config=config))
    counts = runs.run_row(engine, out["run_id"])["stats"]["counts"]
    assert counts["claim_splits_unsupported_language"] == 2 and counts["claim_splits_rejected"] == 0
    with engine.connect() as conn:
        claims = conn.execute(sa.select(T.claim_verdicts.c.turn_id, T.claim_verdicts.c.text)).all()
    assert sorted(claims) == sorted([("de1", GERMAN), ("fr1", FRENCH), *(("en1", c) for c in ENGLISH_CLAIMS)])
    html = build_report(engine, DAY)
    panel = html[html.index('<section id="claims">'):]
    panel = panel[:panel.index("</section>")]
    assert "Sentences not split (a language the splitter does not split, kept whole): 2." in panel
