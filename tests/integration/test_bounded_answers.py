"""Bounded work per answer: a native answer with more citations than `[segmentation]
max_citations_per_turn`, or a sentence with more than `max_citations_per_sentence`, is skipped
with its size as the reason (like `max_answer_chars`), in `score` and in the daily job; under the
caps the work is linear (figures in `bench/bench_answer_size.py`, not timed here)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa

from citecheck import job
from citecheck import warehouse as W
from citecheck.core.config import Config, config_from_mapping
from citecheck.core.pipeline import score
from citecheck.core.turns import turn_from_dict
from citecheck.warehouse import tables as T
from helpers import orbit_settings

DAY = dt.date(2026, 11, 30)


def _blockwide(turn_id: str, citations: int, sentences: int = 3) -> dict[str, Any]:
    """An Anthropic answer of one text block carrying `citations` citations: every one covers the
    whole block, so every sentence carries all of them."""
    doc = "Hotels are capped at 220 euros a night."
    text = " ".join(f"Sentence {i} says hotels are capped." for i in range(sentences))
    cite = {"type": "char_location", "document_index": 0, "document_title": "Lodging", "cited_text": doc,
            "start_char_index": 0, "end_char_index": len(doc)}
    return {"turn_id": turn_id, "answered_at": f"{DAY}T10:00:00Z", "answer_format": "anthropic_blocks",
            "answer_blocks": [{"type": "text", "text": text, "citations": [cite] * citations}],
            "request_documents": [{"title": "Lodging", "text": doc}]}


def _per_sentence(turn_id: str, sentences: int) -> dict[str, Any]:
    """One cited block per sentence: `sentences` citations, one on each."""
    doc = "Hotels are capped at 220 euros a night."
    cite = {"type": "char_location", "document_index": 0, "document_title": "Lodging", "cited_text": doc,
            "start_char_index": 0, "end_char_index": len(doc)}
    return {"turn_id": turn_id, "answered_at": f"{DAY}T10:00:00Z", "answer_format": "anthropic_blocks",
            "answer_blocks": [{"type": "text", "text": f"Sentence {i} says hotels are capped. ", "citations": [cite]}
                              for i in range(sentences)],
            "request_documents": [{"title": "Lodging", "text": doc}]}


def _score(turns: list[dict[str, Any]], config: Config) -> Any:
    return score([turn_from_dict(t) for t in turns], None, config)


def test_a_sentence_over_the_cap_skips_its_turn_with_its_size():
    report = _score([_blockwide("big", 201), _blockwide("fine", 200)], Config())
    assert [s.turn_id for s in report.scored] == ["fine"]
    assert [(s.turn_id, s.reason) for s in report.skipped] == [("big", (
        "answer sentence 0 has 201 citations, over the limit of 200 (segmentation.max_citations_per_sentence)"))]
    assert not _score([_blockwide("big", 201)], config_from_mapping(
        {"segmentation": {"max_citations_per_sentence": 0}})).skipped  # 0: no limit


def test_a_turn_over_the_cap_is_skipped_with_its_size():
    config = config_from_mapping({"segmentation": {"max_citations_per_turn": 10}})
    report = _score([_per_sentence("long", 11), _per_sentence("short", 10)], config)
    assert [s.turn_id for s in report.scored] == ["short"]
    assert [(s.turn_id, s.reason) for s in report.skipped] == [
        ("long", "answer has 11 citations, over the limit of 10 (segmentation.max_citations_per_turn)")]


@pytest.mark.parametrize("key", ["max_citations_per_turn", "max_citations_per_sentence"])
def test_the_caps_are_checked_configuration(key):
    from citecheck.core.config import ConfigError

    with pytest.raises(ConfigError, match=key):
        config_from_mapping({"segmentation": {key: -1}})


def test_the_job_skips_an_oversized_turn_and_publishes_the_rest(engine):
    W.load_turns(engine, [_blockwide("big", 300), _blockwide("fine", 2)])
    result = job.run_day(engine, DAY, orbit_settings(unjudged_limit=1.0))  # the recorded judge knows none of them
    assert result["structural"]["turns_skipped"] == 1 and result["structural"]["turns_scored"] == 1
    with engine.connect() as conn:
        skipped = conn.execute(sa.select(T.skipped_turns.c.turn_id, T.skipped_turns.c.reason)).all()
        published = set(conn.execute(sa.select(T.sentence_verdicts.c.turn_id).distinct()).scalars())
    assert [(s.turn_id, "300 citations" in s.reason) for s in skipped] == [("big", True)]
    assert published == {"fine"}


def test_an_answer_over_the_turn_cap_is_refused_before_it_is_segmented(monkeypatch):
    # the count of citations is known before the sentences are: the refusal costs no segmentation
    from citecheck.core import parsing
    from citecheck.core.formats import TurnError

    def segmented(*_args):
        raise AssertionError("the refused answer was segmented")

    monkeypatch.setattr(parsing, "_sentence_spans", segmented)
    config = config_from_mapping({"segmentation": {"max_citations_per_turn": 3}})
    with pytest.raises(TurnError, match="answer has 4 citations, over the limit of 3"):
        parsing.parse_cited("One. Two.", [(0, 4)] * 4, ["S1"] * 4, [False] * 4, config)
