"""Property tests of the claim level (SPEC §2.1) on random answers, splits and recorded judges:
claim recall ≤ claim attachment, a sentence is supported exactly when all its claims are, and claim
metrics equal sentence metrics when every sentence is one claim."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citecheck.core.claims import RecordedSplitter
from citecheck.core.claims.split import split_turn
from citecheck.core.config import Config
from citecheck.core.fold import AnswerFold
from citecheck.core.metrics import invariant_violations
from citecheck.core.pipeline import ScoreReport, judge_batch, structure_turns
from citecheck.core.turns import turn_from_dict
from citecheck.judges.recorded import RecordedJudge, RecordedJudgment

LABELS = ["S1", "S2", "S3", "S9"]
PARTS = [f"The item {i} holds for case {i}" for i in range(5)]
CLAIMS_CONFIG = replace(Config(), claims_mode="llm")  # no structural splitter: the test splits
SAME_METRICS = {"claim_recall": "citation_recall", "claim_precision": "citation_precision",
                "claim_attachment_rate": "attachment_rate", "claim_faithfulness": "faithfulness",
                "claim_judged_attachment_rate": "judged_attachment_rate", "claim_miscited_rate": "miscited_rate",
                "claim_unsupported_rate": "unsupported_rate", "claim_uncited_supported_rate": "uncited_supported_rate"}


@st.composite
def day(draw):
    turns, splits, statements = [], {}, set()
    for t in range(draw(st.integers(1, 3))):
        sentences = []
        for _ in range(draw(st.integers(0, 3))):
            parts = draw(st.lists(st.sampled_from(PARTS), min_size=1, max_size=3, unique=True))
            text = " and ".join(parts) + "."
            labels = draw(st.lists(st.sampled_from(LABELS), max_size=3, unique=True))
            sentences.append(text[:-1] + "".join(f" [{lab}]" for lab in labels) + ".")
            splits[text] = [p + "." for p in parts]
            statements.update([text, *splits[text]])
        if not sentences:
            sentences = ["Let me know if you need more help."]
        turns.append({"turn_id": f"t{t}", "answer": " ".join(sentences),
                      "context": [{"label": lab, "text": f"Passage {lab}."} for lab in LABELS[:3]]})
    table = {s: RecordedJudgment(frozenset(draw(st.lists(st.sampled_from(LABELS[:3]), max_size=2))), (), frozenset())
             for s in sorted(statements)}
    return turns, splits, table


def _score(turns, splitter, table, config):
    structured = [split_turn(s, splitter, 20) if splitter else s
                  for s in structure_turns([turn_from_dict(t) for t in turns], config)]
    fold = AnswerFold(config)
    report = ScoreReport(config=config, fold=fold)
    for scored in judge_batch(structured, RecordedJudge(table)):
        report.scored.append(scored)
        fold.add(scored)
    return report


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(day())
def test_claim_recall_at_most_attachment_and_supported_iff_every_claim_supported(case):
    turns, splits, table = case
    report = _score(turns, RecordedSplitter(splits), table, CLAIMS_CONFIG)
    out = report.to_json()
    assert out["invariant_violations"] == [] and invariant_violations(out["rows"]) == []
    micro = out["metrics"]["micro"]
    if micro["claim_recall"] is not None:
        assert micro["claim_recall"] <= micro["claim_attachment_rate"] + 1e-9
        assert micro["claim_recall"] <= micro["claim_faithfulness"] + 1e-9
    for scored in report.scored:
        for v in scored.verdicts:
            claims = (scored.claims or {}).get(v.sentence.index, ())
            if not claims:
                continue
            all_supported = all(c.verdict == "supported" for c in claims)
            assert (v.verdict == "supported") == all_supported
            some = any(c.verdict == "supported" for c in claims)
            assert (v.verdict == "partially_supported") == (some and not all_supported)
            for label in v.sentence.labels:  # a citation is credited when credited on any claim
                assert v.credited[label] == any(c.credited[label] for c in claims)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(day())
def test_claim_metrics_equal_sentence_metrics_when_every_sentence_is_one_claim(case):
    turns, _, table = case
    sentence_mode = _score(turns, None, table, Config()).to_json()
    one_claim = _score(turns, RecordedSplitter({}), table, CLAIMS_CONFIG).to_json()
    for averaging in ("micro", "macro"):
        claims, sentences = one_claim["metrics"][averaging], sentence_mode["metrics"][averaging]
        for claim_metric, sentence_metric in SAME_METRICS.items():
            assert claims[claim_metric] == sentences[sentence_metric], (averaging, claim_metric)
        assert claims["partially_supported_rate"] in (None, 0)
        assert claims["claims_per_sentence"] in (None, 1)
        assert {k: v for k, v in claims.items() if k in sentences} == sentences  # the sentence level unchanged
    assert [[s["verdict"] for s in t["sentences"]] for t in one_claim["turns"]] == \
        [[s["verdict"] for s in t["sentences"]] for t in sentence_mode["turns"]]
