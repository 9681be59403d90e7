"""One answer's memory is bounded even with `[segmentation] max_answer_chars = 0` (issue 37 item
6): an answer of more than `max_sentences_per_turn` sentences (default 10,000; no unlimited) is
skipped with its size as the reason as soon as the segmenter has seen that many, so structuring it
costs a few bytes per character of its text, not a record per sentence. Measured with tracemalloc
(allocations, not time): a 4,000,000-character answer of 125,000 sentences peaks at about 13 MB
(3.3 bytes a character); before the cap it was scored, each sentence a record (`parse` of a 10 MB
answer in 10 scripts: 1.97 GB max RSS, and `score` 4.4 GB)."""

from __future__ import annotations

import tracemalloc

import pytest

from citecheck.core.config import DEFAULT_MAX_SENTENCES_PER_TURN, ConfigError, config_from_mapping
from citecheck.core.figures import find_figures
from citecheck.core.languages import detect_language
from citecheck.core.pipeline import structure_turns
from citecheck.core.turns import turn_from_dict

NO_CHAR_LIMIT = config_from_mapping({"segmentation": {"max_answer_chars": 0}})
SENTENCE = "Hotels are capped at 220 euros. "  # 32 characters


def _structure_peak(answer: str, config=NO_CHAR_LIMIT):
    turn = turn_from_dict({"turn_id": "t", "answered_at": "2026-11-30T10:00:00Z", "answer": answer,
                           "context": []}, config.max_answer_chars)
    detect_language("warm the detector up")  # its model loads once per process, not per answer
    find_figures("On 19/2/2018 it cost 5 euros.", "en")
    skipped: list = []
    tracemalloc.start()
    try:
        structured = list(structure_turns([turn], config, skipped=skipped))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return structured, skipped, peak


@pytest.mark.parametrize("chars", [1_000_000, 4_000_000])
def test_an_answer_of_too_many_sentences_is_skipped_with_bounded_memory(chars):
    structured, skipped, peak = _structure_peak((SENTENCE * (chars // len(SENTENCE) + 1))[:chars])
    assert structured == []
    assert [s.reason for s in skipped] == [
        f"answer has more than {DEFAULT_MAX_SENTENCES_PER_TURN:,} sentences (segmentation.max_sentences_per_turn)"]
    assert peak < 5 * chars + 10_000_000  # bytes: the text's copies, never a record per sentence


def test_an_answer_within_the_cap_is_scored_whole():
    structured, skipped, _ = _structure_peak(SENTENCE * 100)
    assert skipped == [] and len(structured[0].sentences) == 100
    tight = config_from_mapping({"segmentation": {"max_answer_chars": 0, "max_sentences_per_turn": 99}})
    assert _structure_peak(SENTENCE * 100, tight)[0] == []


def test_the_cap_has_no_unlimited():
    with pytest.raises(ConfigError, match="max_sentences_per_turn must be at least 1"):
        config_from_mapping({"segmentation": {"max_sentences_per_turn": 0}})
