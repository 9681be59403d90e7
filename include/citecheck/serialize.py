"""JSON round trips for what the daily job stages between tasks (structured turns, judgments).

Airflow tasks hand each other ids and counts through XCom; the data itself goes through the
warehouse's staging tables in these JSON shapes.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from citecheck.model import CitationSpan, Judgment, Passage, PointerProblem, Sentence, StructuredTurn, Turn


def structured_to_dict(st: StructuredTurn) -> dict[str, Any]:
    return {"turn": asdict(st.turn), "sentences": [asdict(s) for s in st.sentences], "is_refusal": st.is_refusal}


def structured_from_dict(data: dict[str, Any]) -> StructuredTurn:
    t = dict(data["turn"])
    turn = Turn(
        **{k: v for k, v in t.items() if k not in ("context", "native_citations", "pointer_problems")},
        context=tuple(Passage(**p) for p in t["context"]),
        native_citations=tuple(CitationSpan(**c) for c in t["native_citations"]),
        pointer_problems=tuple(PointerProblem(**p) for p in t["pointer_problems"]),
    )
    sentences = tuple(
        Sentence(**{k: tuple(v) if isinstance(v, list) else v for k, v in s.items()}) for s in data["sentences"]
    )
    return StructuredTurn(turn=turn, sentences=sentences, is_refusal=data["is_refusal"])


def judgment_to_dict(j: Judgment) -> dict[str, Any]:
    return asdict(j)


def judgment_from_dict(data: dict[str, Any]) -> Judgment:
    return Judgment(**{k: tuple(v) if k == "elsewhere" else v for k, v in data.items()})
