"""Claims below the sentence (SPEC §2.1): the seed cases of `claims.json` in sentence and recorded
modes (every fraction), split verification, and bad claims input."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from citecheck.core.claims import ClaimsError, RecordedSplitter, split_problem, split_turn
from citecheck.core.config import Config, ConfigError, config_from_mapping, load_config
from citecheck.core.pipeline import score, structure_turns
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from helpers import score_dicts
from helpers.claims_fixture import FIXTURE, micro_fractions, recorded_config

FRACTIONS = ("citation_recall", "citation_precision", "claim_recall", "claim_precision", "claims_per_sentence",
             "partially_supported_rate")


@pytest.mark.parametrize("name", ["plan", "hardware"])
def test_seed_cases_in_recorded_mode_give_every_fraction(name, tmp_path):
    expected = FIXTURE["expected"][name]["recorded_mode"]
    out = score_dicts([FIXTURE["turns"][name]], FIXTURE["judge"], recorded_config(tmp_path))
    fractions = micro_fractions(out)
    for metric, fraction in expected.items():
        if metric in ("claims", "sentence_verdict", "claim_verdicts"):
            continue
        assert fractions[metric] == fraction, metric
    sentences = out["turns"][0]["sentences"]
    claims = [c for s in sentences for c in s["claims"]]
    assert [c["verdict"] for c in claims] == expected["claim_verdicts"]
    if "claims" in expected:
        assert [c["text"] for c in claims] == expected["claims"]
        assert [s["verdict"] for s in sentences] == [expected["sentence_verdict"]]
    assert all(c["labels"] == s["labels"] for s in sentences for c in s["claims"])  # links inherited
    assert out["invariant_violations"] == []
    assert out["run"]["claims_mode"] == "recorded" and out["run"]["claim_splits_rejected"] == 0


def test_plan_seed_in_sentence_mode_has_no_claims(tmp_path):
    expected = FIXTURE["expected"]["plan"]["sentence_mode"]
    out = score_dicts([FIXTURE["turns"]["plan"]], FIXTURE["judge"])
    fractions = micro_fractions(out)
    for metric, fraction in expected.items():
        assert fractions[metric] == fraction
    assert not any(m.startswith("claim") or m == "partially_supported_rate" for m in fractions)
    assert "claims" not in out["turns"][0]["sentences"][0]
    assert "check_worthy_claims" not in out["counts"] and "claims_mode" not in out["run"]


def test_hardware_in_sentence_mode_scores_as_its_one_claim_sentences(tmp_path):
    sentence = score_dicts([FIXTURE["turns"]["hardware"]], FIXTURE["judge"])
    claims = score_dicts([FIXTURE["turns"]["hardware"]], FIXTURE["judge"], recorded_config(tmp_path))
    for metric, fraction in micro_fractions(sentence).items():
        assert micro_fractions(claims)[metric] == fraction, metric


def test_config_hash_of_sentence_mode_is_unchanged_and_claims_modes_differ():
    base = Config()
    assert replace(base, claims_mode="sentence").rules_hash == base.rules_hash
    assert replace(base, claims_mode="rules").rules_hash != base.rules_hash
    with pytest.raises(ConfigError, match=r"claims\.mode"):
        config_from_mapping({"claims": {"mode": "words"}})
    with pytest.raises(ConfigError, match=r"claims\.recorded"):
        config_from_mapping({"claims": {"mode": "recorded"}})


def test_recorded_path_is_read_beside_its_config(tmp_path):
    (tmp_path / "claims.json").write_text(json.dumps(FIXTURE["claims"]), encoding="utf-8")
    (tmp_path / "config.toml").write_text('[claims]\nmode = "recorded"\nrecorded = "claims.json"\n', encoding="utf-8")
    config = load_config(tmp_path / "config.toml")
    assert config.claims_recorded == str(tmp_path / "claims.json")


def test_a_split_may_not_add_a_figure_or_a_capitalised_word():
    sentence = "The Starter plan costs forty units a month and includes weekend support."
    ok = ["The Starter plan costs forty units a month.", "The Starter plan includes weekend support."]
    assert split_problem(sentence, ok, 20) is None
    assert "It" in split_problem(sentence, ["It includes weekend support."], 20)  # "It": not in the sentence
    assert split_problem("The plan is cheap; it includes support.", ["It includes support."], 20) is None
    assert "figure" in split_problem(sentence, ["The Starter plan costs 45 units a month."], 20)
    assert "figure" in split_problem(sentence, ["The Starter plan costs fifty units a month."], 20)
    assert "Paris" in split_problem(sentence, ["The Starter plan includes weekend support in Paris."], 20)
    assert "empty" in split_problem(sentence, ["The Starter plan costs forty units a month.", "  "], 20)
    assert "more than 20" in split_problem(sentence, ["The Starter plan."] * 21, 20)
    assert split_problem("It costs 1,000 euros.", ["It costs 1000 euros."], 20) is None


def test_figures_are_compared_by_value_as_the_figure_reader_reads_them():
    """One figure reader (`core.figures`): a figure is the same whatever its written form, and a
    unit the sentence lacks is added content."""
    sentence = "The Starter plan costs forty units a month and includes weekend support."
    assert split_problem(sentence, ["The Starter plan costs 40 units a month."], 20) is None  # forty = 40
    assert "figure" in split_problem("Growth was 12 and costs fell.", ["Growth was 12%."], 20)  # a unit added
    assert split_problem("Growth was 12% and costs fell.", ["Growth was 12.", "Costs fell."], 20) is None
    assert "figure" in split_problem("The office opens on 3 March.", ["The office opens on 4 March."], 20)


@pytest.mark.parametrize(("language", "sentence", "same", "added"), [
    ("es", "El plan cuesta veinte euros al mes e incluye soporte.",
     "El plan cuesta 20 euros al mes.", "El plan cuesta veintidós euros al mes."),
    ("es", "El plan cuesta veinte euros al mes e incluye soporte.",
     "El plan incluye soporte.", "El plan incluye soporte durante treinta días."),
    ("de", "Der Tarif kostet zwanzig Euro im Monat und enthält Support.",
     "Der Tarif kostet 20 Euro im Monat.", "Der Tarif enthält Support für dreißig Tage."),
    ("de", "Der Zinssatz liegt bei 2,5 Prozent und steigt.",
     "Der Zinssatz liegt bei 2,5 %.", "Der Zinssatz liegt bei 3,5 Prozent."),
], ids=["es-number-word", "es-added-word", "de-number-word", "de-decimal-comma"])
def test_a_claim_adding_a_figure_is_caught_in_the_turns_language(language, sentence, same, added):
    assert split_problem(sentence, [same], 20, language) is None
    problem = split_problem(sentence, [added], 20, language)
    assert problem is not None and "figure" in problem


def test_a_claim_adding_a_foreign_number_word_is_caught_in_a_turn_of_that_language():
    """The turn's language decides how its claims are read: "zwanzig" in a German turn is 20."""
    answer = "Der Tarif kostet zehn Euro im Monat und enthält Support [S1]."
    turn = turn_from_dict({"turn_id": "t", "answer": answer, "language": "de",
                           "context": [{"label": "S1", "text": "Passage."}]})
    st = next(structure_turns([turn], Config()))
    sentence = st.sentences[0].text
    split = split_turn(st, RecordedSplitter({sentence: ["Der Tarif kostet zwanzig Euro im Monat.",
                                                        "Der Tarif enthält Support."]}), 20)
    assert st.language == "de" and split.claims == {0: (sentence,)} and split.claim_splits_rejected == 1


def _structured(answer: str, splits: dict[str, list[str]], max_claims: int = 20):
    turn = turn_from_dict({"turn_id": "t", "answer": answer, "context": [{"label": "S1", "text": "Passage."}]})
    st = next(structure_turns([turn], Config()))
    return split_turn(st, RecordedSplitter(splits), max_claims)


def test_rejected_splits_keep_the_sentence_whole_and_are_counted():
    sentence = "The plan costs forty units and includes support."
    st = _structured(sentence + " [S1]", {sentence: ["The plan costs 50 units.", "The plan includes support."]})
    assert st.claims == {0: (sentence,)} and st.claim_splits_rejected == 1
    st = _structured(sentence + " [S1]", {sentence: [f"The plan includes support {i}." for i in range(21)]})
    assert st.claims == {0: (sentence,)} and st.claim_splits_rejected == 1  # 21 claims > 20
    st = _structured(sentence + " [S1]", {sentence: ["The plan costs forty units.", "The plan includes support."]})
    assert st.claims == {0: ("The plan costs forty units.", "The plan includes support.")}
    assert st.claim_splits_rejected == 0


def test_recorded_claims_file_errors_are_clear_and_come_before_any_work(tmp_path):
    bad = tmp_path / "claims.json"
    bad.write_text("{not json", encoding="utf-8")
    config = replace(Config(), claims_mode="recorded", claims_recorded=str(bad))
    with pytest.raises(ClaimsError, match="is not JSON"):
        score(iter(_never()), judge_from_spec(FIXTURE["judge"]), config)  # raises before reading a turn
    for data, message in (({"claims": [{"sentence": "A b.", "claims": ["A b.", ""]}]}, "empty claim"),
                          ({"claims": [{"sentence": "A b."}]}, "no list of claims"),
                          ({"sentences": []}, "expected")):
        with pytest.raises(ClaimsError, match=message):
            RecordedSplitter.from_data(data)
    with pytest.raises(ClaimsError, match="cannot be read"):
        RecordedSplitter.from_file(tmp_path / "missing.json")


def _never():
    raise AssertionError("a turn was read before the claims file was checked")
    yield  # pragma: no cover


def test_a_sentence_of_ten_thousand_characters_splits_and_scores(tmp_path):
    long_sentence = "The plan includes " + ", ".join(f"feature {i}" for i in range(1200)) + " and costs forty units"
    long_sentence = long_sentence[:9990] + " and costs forty units"
    turn = {"turn_id": "long", "answer": long_sentence + " [S1].", "context": [{"label": "S1", "text": "Plans."}]}
    st = next(structure_turns([turn_from_dict(turn)], replace(Config(), claims_mode="rules")))
    texts = st.claim_texts(st.sentences[0])
    assert 1 <= len(texts) <= 20
    assert all(split_problem(st.sentences[0].text, texts, 20) is None for _ in [0])


def test_the_cli_scores_and_parses_in_a_claims_mode(tmp_path, capsys):
    from citecheck.cli import main

    (tmp_path / "claims.json").write_text(json.dumps(FIXTURE["claims"]), encoding="utf-8")
    (tmp_path / "judge.json").write_text(json.dumps(FIXTURE["judge"]), encoding="utf-8")
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in FIXTURE["turns"].values()),
                                          encoding="utf-8")
    (tmp_path / "config.toml").write_text('[claims]\nmode = "recorded"\nrecorded = "claims.json"\n', encoding="utf-8")
    args = ["--turns", str(tmp_path / "turns.jsonl"), "--config", str(tmp_path / "config.toml")]
    assert main(["score", *args, "--judge", str(tmp_path / "judge.json"), "--summary",
                 "--out", str(tmp_path / "out.json")]) == 0
    summary = capsys.readouterr().err
    assert "claim_recall" in summary and "claims mode recorded: 5 claims, 0 splits rejected" in summary
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["metrics"]["micro"]["claim_recall"] == pytest.approx(2 / 5)  # 1/2 (plan) + 1/3 (hardware) pooled
    assert out["counts"]["partially_supported"] == 1
    assert main(["parse", *args, "--out", str(tmp_path / "parsed.json")]) == 0
    parsed = json.loads((tmp_path / "parsed.json").read_text())
    assert [c["text"] for c in parsed["turns"][0]["sentences"][0]["claims"]] == \
        FIXTURE["expected"]["plan"]["recorded_mode"]["claims"]
    assert "verdict" not in parsed["turns"][0]["sentences"][0]["claims"][0]


def test_the_sentence_verdict_from_its_claims():
    from citecheck.core.claims import decide_claims
    from citecheck.core.model import Judgment, Sentence, unjudged

    sentence = Sentence(index=0, text="A costs two units and B holds.", start=0, end=30, labels=("S1",))
    yes = Judgment(cited=True, alone={"S1": True}, rest={"S1": False}, faithful=True, judge="t")
    no = Judgment(cited=False, alone={"S1": False}, rest={"S1": False}, judge="t")
    elsewhere = Judgment(cited=False, alone={"S1": False}, rest={"S1": False}, elsewhere=("S2",), faithful=True)
    texts = ("A costs two units.", "B holds.")
    cases = [((yes, yes), "supported"), ((yes, no), "partially_supported"), ((yes, unjudged("timeout")), "unjudged"),
             ((no, unjudged("timeout")), "unjudged"), ((elsewhere, elsewhere), "miscited"),
             ((no, elsewhere), "unsupported"), ((elsewhere, yes), "partially_supported")]
    for judgments, expected in cases:
        verdict, claims = decide_claims(sentence, texts, list(judgments))
        assert verdict.verdict == expected, judgments
        assert verdict.credited == {"S1": any(c.credited["S1"] for c in claims)}
    verdict, claims = decide_claims(sentence, texts, [yes, yes], selected=False)
    assert verdict.verdict == "not_selected" and claims == ()


def test_the_sample_in_the_rule_claims_mode(tmp_path):
    import datetime as dt

    from citecheck import demo
    from citecheck.judges import read_judge_file

    data = demo.generate(dt.date(2026, 11, 23), 1, turns_per_day=80)
    files = demo.write_sample(data, tmp_path, claims=True)
    config = load_config(files.config)
    assert config.claims_mode == "rules"
    spec = read_judge_file(files.judge)
    assert len(spec["judgments"]) > len(data.judgments)  # a row per claim of a split sentence
    report = score([turn_from_dict(t) for t in data.turns], judge_from_spec(spec), config)
    out = report.to_json()
    assert out["metrics"]["micro"]["claims_per_sentence"] > 1 and out["invariant_violations"] == []
    assert out["stats"]["missing_statements"] <= 0.05 * out["counts"]["check_worthy_claims"]
    assert demo.config_toml() == demo.config_toml(claims=False) and "[claims]" not in demo.config_toml()


def test_compare_adds_the_claim_metrics_when_both_outputs_have_claims(tmp_path):
    from citecheck.features.compare import compare, format_comparison

    turns = list(FIXTURE["turns"].values())
    claims = score_dicts(turns, FIXTURE["judge"], recorded_config(tmp_path))["turns"]
    sentences = score_dicts(turns, FIXTURE["judge"])["turns"]
    both = compare(claims, claims)
    assert both["metrics"]["claim_recall"]["micro"]["base"] == pytest.approx(2 / 5)
    assert both["metrics"]["claim_recall"]["micro"]["difference"] == 0
    assert "partially_supported_rate" in format_comparison(both)
    mixed = compare(sentences, claims)
    assert "claim_recall" not in mixed["metrics"] and "citation_recall" in mixed["metrics"]


def test_the_rule_splitter_gives_the_seed_split_and_its_figures(tmp_path):
    out = score_dicts([FIXTURE["turns"]["plan"]], FIXTURE["judge"], replace(Config(), claims_mode="rules"))
    expected = FIXTURE["expected"]["plan"]["recorded_mode"]
    [sentence] = out["turns"][0]["sentences"]
    assert [c["text"] for c in sentence["claims"]] == expected["claims"]
    fractions = micro_fractions(out)
    for metric in ("claim_recall", "claim_precision", "claims_per_sentence", "citation_recall", "citation_precision"):
        assert fractions[metric] == expected[metric], metric
