"""Property tests for the metric invariants of SPEC §5, on random turns and random recorded judges."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citecheck.core.config import Config
from citecheck.core.metrics import RATE_METRICS, invariant_violations
from citecheck.core.pipeline import score
from citecheck.core.turns import turn_from_dict
from citecheck.judges.recorded import RecordedJudge, RecordedJudgment

LABELS = ["S1", "S2", "S3", "S4", "S9"]
CLAIMS = [f"Claim number {i} holds for item {i}." for i in range(6)]


@st.composite
def day(draw):
    turns, table = [], {}
    for t in range(draw(st.integers(1, 4))):
        sentences = []
        for _ in range(draw(st.integers(0, 4))):
            claim = draw(st.sampled_from([*CLAIMS, "Let me know if you need more help."]))
            labels = draw(st.lists(st.sampled_from(LABELS), max_size=3, unique=True))
            sentences.append(claim[:-1] + "".join(f" [{lab}]" for lab in labels) + ".")
        if not sentences:
            sentences = ["I can't find that in the documents."]
        turns.append({"turn_id": f"t{t}", "answer": " ".join(sentences),
                      "context": [{"label": lab, "text": f"Passage {lab}."} for lab in LABELS[:4]]})
    for claim in CLAIMS:
        table[claim] = RecordedJudgment(
            frozenset(draw(st.lists(st.sampled_from(LABELS[:4]), max_size=2))),
            tuple(frozenset(j) for j in draw(st.lists(st.lists(st.sampled_from(LABELS[:4]), min_size=2, max_size=2,
                                                               unique=True), max_size=1))),
            frozenset())
    return turns, table


def _run(turns, table):
    report = score([turn_from_dict(t) for t in turns], RecordedJudge(table), Config())
    return report.to_json()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(day())
def test_invariants_hold_on_every_output(case):
    turns, table = case
    out = _run(turns, table)
    assert out["invariant_violations"] == []
    assert invariant_violations(out["rows"]) == []
    for row in out["rows"]:
        if row["metric"] in RATE_METRICS and row["value"] is not None:
            assert 0 <= row["value"] <= 1
        if row["denominator"] == 0:
            assert row["value"] is None
    micro = out["metrics"]["micro"]
    if micro["citation_recall"] is not None:
        assert micro["citation_recall"] <= micro["attachment_rate"] + 1e-9
        assert micro["citation_recall"] <= micro["faithfulness"] + 1e-9
    assert out["run"]["turns_read"] == out["run"]["turns_scored"] + out["run"]["turns_skipped"]
    assert out["counts"]["answers"] == len(turns)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(day(), st.data())
def test_adding_an_irrelevant_citation_never_raises_precision(case, data):
    turns, table = case
    # S4 supports nothing in this judge: appending it to a sentence can only add an uncredited link
    table = {k: RecordedJudgment(v.supported_by - {"S4"}, tuple(j for j in v.jointly_supported_by if "S4" not in j),
                                 frozenset()) for k, v in table.items()}
    before = _run(turns, table)["metrics"]["micro"]["citation_precision"]
    index = data.draw(st.integers(0, len(turns) - 1))
    answer = turns[index]["answer"]
    if "[S4]" in answer:
        return
    cut = answer.find(".")
    padded = [dict(t) for t in turns]
    padded[index]["answer"] = answer[:cut] + " [S4]" + answer[cut:]
    after = _run(padded, table)["metrics"]["micro"]["citation_precision"]
    if before is not None and after is not None:
        assert after <= before + 1e-9
