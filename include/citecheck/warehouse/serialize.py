"""JSON round trips for what the daily job stages between tasks (structured turns, judgments).

Airflow tasks hand each other ids and counts through XCom; the data itself goes through the
warehouse's staging tables in these JSON shapes.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, fields
from typing import Any

from citecheck.core.figures import Figure
from citecheck.core.languages import UNDETERMINED
from citecheck.core.model import (
    CitationSpan,
    Judgment,
    JudgmentKey,
    Passage,
    PointerProblem,
    Sentence,
    StructuredTurn,
    Turn,
)

_NESTED = frozenset(("context", "native_citations", "pointer_problems"))
_TURN_FIELDS = tuple(f.name for f in fields(Turn))
_FIELDS = {cls: tuple(f.name for f in fields(cls)) for cls in (Passage, CitationSpan, PointerProblem, Sentence)}


def _flat(obj: Any) -> dict[str, Any]:
    out = {name: getattr(obj, name) for name in _FIELDS[type(obj)]}
    if isinstance(obj, Sentence):
        out["figures"] = tuple(_figure_dict(f) for f in obj.figures)
    return out


_FIGURE_FIELDS = tuple(f.name for f in fields(Figure))


def _figure_dict(figure: Figure) -> dict[str, Any]:
    return {name: getattr(figure, name) for name in _FIGURE_FIELDS}


def _sentence(data: dict[str, Any]) -> Sentence:
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "figures"}
    return Sentence(**values, figures=tuple(Figure(**f) for f in data.get("figures", ())))


def _turn_value(t: Turn, name: str) -> Any:
    value = getattr(t, name)
    if name in _NESTED:
        return tuple(_flat(x) for x in value)
    return dict(value) if name == "attributes" else value


def structured_to_dict(st: StructuredTurn) -> dict[str, Any]:
    """What `dataclasses.asdict` gives (same keys, order and values), built field by field:
    asdict recurses and deep-copies every value, which was half the structural step's time
    (this runs for 100% of turns). Field values are immutable (str, int, tuples of str) except
    `attributes`, which is copied."""
    t = st.turn
    turn = {name: _turn_value(t, name) for name in _TURN_FIELDS}
    out = {"turn": turn, "sentences": [_flat(s) for s in st.sentences], "is_refusal": st.is_refusal,
           "language": st.language, "language_source": st.language_source, "language_repair": st.language_repair}
    if st.claims is not None:  # a claims mode (SPEC §2.1): each check-worthy sentence's claims
        out["claims"] = {str(index): list(texts) for index, texts in st.claims.items()}
        out["claim_splits_rejected"] = st.claim_splits_rejected
        out["claim_splits_unsupported_language"] = st.claim_splits_unsupported_language
    return out


def structured_from_dict(data: dict[str, Any]) -> StructuredTurn:
    t = dict(data["turn"])
    turn = Turn(
        **{k: v for k, v in t.items() if k not in ("context", "native_citations", "pointer_problems")},
        context=tuple(Passage(**p) for p in t["context"]),
        native_citations=tuple(CitationSpan(**c) for c in t["native_citations"]),
        pointer_problems=tuple(PointerProblem(**p) for p in t["pointer_problems"]),
    )
    sentences = tuple(_sentence(s) for s in data["sentences"])
    claims = data.get("claims")
    return StructuredTurn(turn=turn, sentences=sentences, is_refusal=data["is_refusal"],
                          language=data.get("language", UNDETERMINED),
                          language_source=data.get("language_source", "detected"),
                          language_repair=data.get("language_repair"),
                          claims=None if claims is None else {int(i): tuple(c) for i, c in claims.items()},
                          claim_splits_rejected=data.get("claim_splits_rejected", 0),
                          claim_splits_unsupported_language=data.get("claim_splits_unsupported_language", 0))


_JUDGMENT_FIELDS = tuple(f.name for f in fields(Judgment))


def judgment_to_dict(j: Judgment) -> dict[str, Any]:
    """What `dataclasses.asdict` gives (same keys, order, values and container types), built field
    by field where every value is plain JSON-like data (dicts, lists, tuples, str, numbers, bools,
    None): asdict deep-copies every leaf, a third of a judge shard's time, and the dict is only
    serialised. Anything else (a dataclass or set in `detail`) goes through asdict itself."""
    try:
        return {name: _plain(getattr(j, name)) for name in _JUDGMENT_FIELDS}
    except _NotPlain:
        return asdict(j)


class _NotPlain(Exception):
    """A value `_plain` leaves to asdict."""


_ATOMS = frozenset((str, int, float, bool, type(None)))


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return kind(_plain(v) for v in value)
    raise _NotPlain


def judgment_rows(judged: Iterable[tuple[JudgmentKey, Judgment]]) -> list[tuple[tuple[str, int], dict[str, Any]]]:
    """Judgments as staged, one JSON value per (turn, sentence): a sentence's judgment, or in a
    claims mode its claims' judgments together, `{"claims": {claim index: judgment}}`."""
    rows: list[tuple[tuple[str, int], dict[str, Any]]] = []
    claims: dict[tuple[str, int], dict[str, Any]] = {}
    for key, j in judged:
        if len(key) == 2:
            rows.append(((key[0], key[1]), judgment_to_dict(j)))
        else:
            claims.setdefault((key[0], key[1]), {})[str(key[2])] = judgment_to_dict(j)
    return rows + [(key, {"claims": value}) for key, value in claims.items()]


def judgments_of_row(turn_id: str, sentence_index: int, data: Mapping[str, Any]
                     ) -> list[tuple[JudgmentKey, Judgment]]:
    """`judgment_rows` read back: the judgments of one staged value, keyed as the pipeline keys them."""
    if set(data) == {"claims"}:
        return [((turn_id, sentence_index, int(c)), judgment_from_dict(j)) for c, j in data["claims"].items()]
    return [((turn_id, sentence_index), judgment_from_dict(dict(data)))]


def judgment_from_dict(data: dict[str, Any]) -> Judgment:
    return Judgment(**{k: tuple(v) if k == "elsewhere" else v for k, v in data.items()})


def jsonable(value: Any) -> Any:
    """A value as plain JSON types, for JSON columns, XCom and reports: numpy scalars become
    Python ones, NaN becomes null, dates ISO text, tuples lists, anything else its text."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if value is None or isinstance(value, str | int | bool):
        return value
    return str(value)
