"""Pooling answers into slices as rows (`core.metrics.accumulator`: a block's counts and macro
votes computed once, each slice's share added in one step) gives exactly what adding the
counts and values one by one as Python numbers gives: same keys in the same order, same ints,
same float sums; and the criteria decide the same whether the answers come one at a time or as
the fold's counted blocks."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citecheck.core.config import Config
from citecheck.core.criteria import CriteriaEvaluator, parse_criteria
from citecheck.core.metrics import AnswerCounts, MetricAccumulator, macro_values, ratios
from citecheck.core.metrics.counts import turn_counts
from citecheck.core.metrics.definitions import COUNT_KEYS
from citecheck.core.pipeline import score
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from helpers import load_fixture


def _orbit_scored(copies: int = 3):
    fixture = load_fixture("orbit_labs.json")
    turns = [dict(t, turn_id=f"{t['turn_id']}#{k}") for k in range(copies) for t in fixture["turns"]]
    return score([turn_from_dict(t) for t in turns], judge_from_spec(fixture["judge"]), Config()).scored


def _claims_scored(tmp_path):
    fixture = load_fixture("claims.json")
    table = tmp_path / "claims.json"
    table.write_text(json.dumps(fixture["claims"]), encoding="utf-8")
    config = replace(Config(), claims_mode="recorded", claims_recorded=str(table))
    turns = [dict(t, turn_id=f"{t['turn_id']}#{k}") for k in range(3) for t in fixture["turns"].values()]
    return score([turn_from_dict(t) for t in turns], judge_from_spec(fixture["judge"]), config).scored


def _one_by_one(scored):
    """The overall slice the plain way: each answer's counts and `ratios` values added as Python numbers."""
    counts: Counter[str] = Counter()
    sums: dict[str, float] = {}
    votes: dict[str, int] = {}
    for s in scored:
        c = turn_counts(s)
        for key, n in c.items():
            counts[key] = counts.get(key, 0) + n
        for name, r in ratios(c).items():
            if r.value is not None:
                sums[name] = sums.get(name, 0) + r.value
                votes[name] = votes.get(name, 0) + 1
    return counts, sums, votes


@pytest.mark.parametrize("day", ["orbit", "claims"])
def test_the_overall_slice_is_the_plain_sum_of_its_answers(day, tmp_path):
    scored = _orbit_scored() if day == "orbit" else _claims_scored(tmp_path)
    acc = MetricAccumulator(Config() if day == "orbit" else replace(Config(), claims_mode="recorded"))
    for s in scored:
        acc.add(s)
    counts, sums, votes = _one_by_one(scored)
    pooled = acc.counts()
    assert list(pooled.items()) == list(counts.items())  # same keys (zeros too), same order, same values
    assert all(type(n) is int for n in pooled.values())
    macro = {r["metric"]: r for r in acc.rows()
             if r["slice_name"] == "all" and r["averaging"] == "macro"}
    assert macro
    if day == "claims":
        assert votes.get("claim_recall")  # the claim metrics are pooled too
    for metric, row in macro.items():
        expected = (sums.get(metric, 0), votes.get(metric, 0))
        assert (row["numerator"], row["denominator"]) == expected, metric  # exact: same float additions
        assert type(row["numerator"]) is type(expected[0]), metric


counts_strategy = st.dictionaries(st.sampled_from(COUNT_KEYS), st.integers(0, 7), max_size=len(COUNT_KEYS))


@settings(max_examples=300, deadline=None)
@given(counts_strategy)
def test_an_answers_macro_votes_are_its_ratios(raw):
    counts = Counter(raw)
    counts["check_worthy_claims"] += 0  # `ratios` gives every metric, the claim ones too
    expected = [(name, r.value) for name, r in ratios(counts).items() if r.value is not None]
    assert macro_values(counts) == expected


def test_criteria_given_counted_blocks_decide_as_one_answer_at_a_time():
    criteria = parse_criteria([
        {"name": "attached", "metric": "attachment_rate", "min": 0.5},
        {"name": "recall", "metric": "citation_recall", "min": 0.9, "answers": True},
        {"name": "macro recall", "metric": "citation_recall", "min": 0.5, "averaging": "macro"},
        {"name": "numbers", "metric": "citation_recall", "min": 0.5, "where": {"has_number": "yes"}},
        {"name": "unsupported", "metric": "unsupported_rate", "max": 0.0, "answers": True},  # a max bound
    ])
    scored = _orbit_scored()
    one_by_one, blocks = CriteriaEvaluator(criteria), CriteriaEvaluator(criteria)
    for s in scored:
        one_by_one.add(s)
    for start in range(0, len(scored), 4):
        blocks.add_counted(AnswerCounts.of(scored[start:start + 4]))
    assert [r.as_dict() for r in blocks.results()] == [r.as_dict() for r in one_by_one.results()]
    assert blocks.failing_answers() == one_by_one.failing_answers()
    failed = {name for names in one_by_one.failing_answers().values() for name in names}
    assert failed == {"recall", "unsupported"}, failed  # the comparison covers a min and a max bound
    above_max = {s.turn_id for s in scored if (ratios(turn_counts(s))["unsupported_rate"].value or 0) > 0}
    assert {t for t, names in one_by_one.failing_answers().items() if "unsupported" in names} == above_max
