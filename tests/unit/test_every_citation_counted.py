"""Every citation is counted, on one sentence (SPEC §3.4): a Cohere citation whose offsets run past
the answer, or a Gemini segment whose byte offsets do not select its `segment.text`, is placed where
its own text occurs exactly once in the answer, else by its span clipped to the answer; a span
wholly outside the answer goes to the last sentence. None is dropped from the sentence counts."""

from __future__ import annotations

from typing import Any

import pytest

from citecheck.core.config import Config
from citecheck.core.structural import structure_turn
from citecheck.core.turns import turn_from_dict

ANSWER = "The hotel cap is 220 euros a night. Dinner is paid up to 40 euros. Approved reports are paid monthly."
DOCS = [{"id": "doc-1", "title": "Lodging", "text": "Hotels are capped at 220 euros a night."},
        {"id": "doc-2", "title": "Meals", "text": "Dinner is reimbursed up to 40 euros."}]


def _cohere(citation: dict[str, Any]) -> dict[str, Any]:
    return {"turn_id": "t", "answered_at": "2026-11-30T10:00:00Z", "answer_format": "cohere_v2",
            "response": {"role": "assistant", "content": [{"type": "text", "text": ANSWER}],
                         "citations": [{**citation, "sources": [{"type": "document", "id": "doc-2"}]}]},
            "request_documents": DOCS}


def _sentence_labels(data: dict[str, Any]) -> tuple[list[tuple[str, ...]], list[Any]]:
    turn = turn_from_dict(data)
    structured = structure_turn(turn, Config())
    return [s.labels for s in structured.sentences], list(turn.pointer_problems)


@pytest.mark.parametrize(("citation", "sentence"), [
    # offsets past the answer, its text once in it: counted where the text is
    ({"start": 500, "end": 531, "text": "Dinner is paid up to 40 euros."}, 1),
    # offsets running past the end, text nowhere: the span clipped to the answer
    ({"start": 70, "end": 400, "text": "not in the answer"}, 2),
    # wholly outside, no usable text: the last sentence
    ({"start": 900, "end": 950, "text": "nowhere"}, 2),
    # offsets missing: by its text
    ({"text": "The hotel cap is 220 euros a night."}, 0),
    # in range but not its text: where its text is
    ({"start": 0, "end": 10, "text": "Dinner is paid up to 40 euros."}, 1),
])
def test_a_broken_cohere_citation_is_counted_on_one_sentence(citation, sentence):
    labels, problems = _sentence_labels(_cohere(citation))
    assert [i for i, lab in enumerate(labels) if "D1" in lab] == [sentence]
    assert len(problems) == 1 and problems[0].placed


def _gemini(segment: dict[str, Any]) -> dict[str, Any]:
    return {"turn_id": "g", "answered_at": "2026-11-30T10:00:00Z", "answer_format": "gemini",
            "response": {"content": {"role": "model", "parts": [{"text": ANSWER}]}, "groundingMetadata": {
                "groundingChunks": [{"retrievedContext": {"uri": f"u{i}", "title": d["title"], "text": d["text"]}}
                                    for i, d in enumerate(DOCS)],
                "groundingSupports": [{"segment": segment, "groundingChunkIndices": [0]}]}}}


@pytest.mark.parametrize(("segment", "sentence"), [
    # byte offsets select the second sentence, its text is the first: counted on the first
    ({"startIndex": 36, "endIndex": 66, "text": "The hotel cap is 220 euros a night."}, 0),
    # offsets past the part, text once: where the text is
    ({"startIndex": 36, "endIndex": 9000, "text": "The hotel cap is 220 euros a night."}, 0),
    # a part that does not exist and no text: the last sentence
    ({"partIndex": 4, "endIndex": 10}, 2),
])
def test_a_broken_gemini_segment_is_counted_where_its_text_is(segment, sentence):
    labels, problems = _sentence_labels(_gemini(segment))
    assert [i for i, lab in enumerate(labels) if "D0" in lab] == [sentence]
    assert len(problems) == 1 and problems[0].placed
