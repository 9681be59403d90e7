"""Counting a block of answers at once (`core.metrics.counts.AnswerCounts`, issue 36): each answer's
row is what counting it alone gives; a sentence slice's "yes" and "no" parts are each the sum of
their sentences' rows (the "no" part, taken as the answer's sentences less the "yes" part, is
exact); and a fold's state is the same whatever the size of the blocks it counts."""

from __future__ import annotations

import datetime as dt
import functools
import json
from dataclasses import replace

import numpy as np
import pytest

from citecheck import demo
from citecheck.core.config import Config
from citecheck.core.criteria import parse_criteria
from citecheck.core.fold import AnswerFold
from citecheck.core.metrics import SENTENCE_SLICES, AnswerCounts, turn_counts
from citecheck.core.metrics import counts as counts_module
from citecheck.core.metrics.definitions import CLAIM_COUNT_KEYS
from citecheck.core.pipeline import score
from citecheck.core.selection import Selection
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from helpers import load_fixture

CRITERIA = parse_criteria([
    {"name": "recall", "metric": "citation_recall", "min": 0.9, "answers": True},
    {"name": "macro recall", "metric": "citation_recall", "averaging": "macro", "min": 0.5},
    {"name": "numbers", "metric": "citation_recall", "min": 0.5, "where": {"has_number": "yes"}},
    {"name": "few citations", "metric": "attachment_rate", "min": 0.5, "where": {"multi_citation": "no"}},
], "test")


@functools.cache
def _sample_day():
    """A generated day (every sentence slice, native citations, pointer problems) judged on 70%."""
    data = demo.generate(dt.date(2026, 11, 23), 1, 150, seed=5)
    turns = [turn_from_dict(t) for t in data.turns]
    report = score(turns, judge_from_spec(demo.judge_spec(data)), demo.sample_config(),
                   selection=Selection(0.7, "s"))
    return report.scored


def _claims_day(tmp_path):
    fixture = load_fixture("claims.json")
    table = tmp_path / "claims.json"
    table.write_text(json.dumps(fixture["claims"]), encoding="utf-8")
    config = replace(Config(), claims_mode="recorded", claims_recorded=str(table))
    turns = [turn_from_dict(t) for t in fixture["turns"].values()]
    return score(turns, judge_from_spec(fixture["judge"]), config).scored


@pytest.mark.parametrize("day", ["sample", "claims"])
def test_a_blocks_rows_are_each_answer_counted_alone(day, tmp_path):
    scored = _sample_day() if day == "sample" else _claims_day(tmp_path)
    counted = AnswerCounts.of(scored)
    assert counted.whole.shape[0] == len(scored) and counted.whole.dtype == np.int64
    for i, answer in enumerate(scored):
        alone = turn_counts(answer)
        assert counted.counter(i) == alone, answer.turn_id
        assert ("check_worthy_claims" in alone) == (day == "claims")
        assert all(type(n) is int for n in alone.values())
    assert sum(c["sentences"] for c in map(turn_counts, scored)) == len(counted.sentences)


@pytest.mark.parametrize("name", sorted(SENTENCE_SLICES))
def test_a_sentence_slices_two_parts_are_the_sums_of_their_sentences(name):
    scored = _sample_day()
    counted = AnswerCounts.of(scored)
    test = counted.slice_tests[name]
    assert test.any() and not test.all()  # both parts are exercised
    for i, answer in enumerate(scored):  # the tests are the slice's, sentence by sentence
        start, end = counted.bounds[i], counted.bounds[i + 1]
        assert test[start:end].tolist() == [SENTENCE_SLICES[name](v) for v in answer.verdicts]
    (yes, n_yes), (no, n_no) = counted.split_sentences(test)
    for part, n, keep in ((yes, n_yes, test), (no, n_no, ~test)):
        rows, kept = counted.of_sentences(keep)
        assert np.array_equal(part, rows) and np.array_equal(n, kept)
        for i, answer in enumerate(scored):  # the answer's common counts plus its kept sentences' rows
            start, end = counted.bounds[i], counted.bounds[i + 1]
            expected = counted.shared[i] + counted.sentences[start:end][keep[start:end]].sum(axis=0)
            assert np.array_equal(rows[i], expected), answer.turn_id
            assert kept[i] == keep[start:end].sum()
    assert np.array_equal(n_yes + n_no, counted.sentence_totals)


def test_the_claim_counts_stay_out_of_a_sentence_mode_answers_counts():
    counts = turn_counts(_sample_day()[0])
    assert not set(CLAIM_COUNT_KEYS) & set(counts)


@pytest.mark.parametrize("block", [1, 7, 64])
def test_a_folds_state_is_the_same_whatever_its_block_size(block, monkeypatch):
    scored = _sample_day()
    config = demo.sample_config()

    def folded():
        fold = AnswerFold(config, CRITERIA)
        for answer in scored:
            fold.add(answer)
        state = fold.state()
        state["metrics"]["slices"].sort(key=lambda s: (s[0], s[1]))  # slices are listed as first met
        return json.dumps(state, sort_keys=True)

    whole = folded()
    monkeypatch.setattr(counts_module, "ANSWERS_PER_BLOCK", block)
    assert folded() == whole  # to the last bit: the same sums in the same order
