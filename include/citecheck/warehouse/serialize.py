"""JSON round trips for what the daily job stages between tasks (structured turns, judgments).

Airflow tasks hand each other ids and counts through XCom; the data itself goes through the
warehouse's staging tables as JSON: the dataclasses as msgspec writes them (`engine.json_text`),
read back into the same dataclasses.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from citecheck.core.model import Judgment, JudgmentKey, StructuredTurn

# Staged values are the dataclasses themselves: msgspec encodes them field by field (a tuple as a
# list, a claims map's int keys as text) and decodes the text straight back into them, with no
# intermediate dicts (the dict round trip was a fifth of every step that reads staged turns).
_STRUCTURED = msgspec.json.Decoder(StructuredTurn)
_JUDGMENT = msgspec.json.Decoder(Judgment)


@dataclass(frozen=True, slots=True)
class ClaimJudgments:
    """A claims mode's staged value for one sentence: its claims' judgments by claim index."""

    claims: dict[int, Judgment]


_CLAIM_JUDGMENTS = msgspec.json.Decoder(ClaimJudgments)
_CLAIMS_VALUE = re.compile(r'\s*\{\s*"claims"\s*:')  # a `ClaimJudgments` (a Judgment has no field "claims")


def structured_from_json(text: str) -> StructuredTurn:
    """A staged structured turn (the JSON text msgspec wrote for it) read back."""
    return _STRUCTURED.decode(text)


def judgment_rows(judged: Iterable[tuple[JudgmentKey, Judgment]]
                  ) -> list[tuple[tuple[str, int], Judgment | ClaimJudgments]]:
    """Judgments as staged, one JSON value per (turn, sentence): a sentence's judgment, or in a
    claims mode its claims' judgments together (`ClaimJudgments`)."""
    rows: list[tuple[tuple[str, int], Judgment | ClaimJudgments]] = []
    claims: dict[tuple[str, int], dict[int, Judgment]] = {}
    for key, j in judged:
        if len(key) == 2:
            rows.append(((key[0], key[1]), j))
        else:
            claims.setdefault((key[0], key[1]), {})[key[2]] = j
    return rows + [(key, ClaimJudgments(value)) for key, value in claims.items()]


def judgments_of_row(turn_id: str, sentence_index: int, text: str) -> list[tuple[JudgmentKey, Judgment]]:
    """`judgment_rows` read back from a staged value's JSON text: its judgments, keyed as the
    pipeline keys them."""
    if _CLAIMS_VALUE.match(text):
        return [((turn_id, sentence_index, c), j) for c, j in _CLAIM_JUDGMENTS.decode(text).claims.items()]
    return [((turn_id, sentence_index), _JUDGMENT.decode(text))]


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
