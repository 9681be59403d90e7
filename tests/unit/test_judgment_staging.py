"""A judgment as staged (`warehouse.serialize.judgment_to_dict`, built field by field for the judge
shards' speed) is exactly what `dataclasses.asdict` gives: same keys and order, same values, same
container types, so the staged JSON does not change; what is not plain data goes through asdict."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import pytest

from citecheck.core.config import Config
from citecheck.core.model import Judgment, unjudged
from citecheck.core.pipeline import score
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec
from citecheck.warehouse.serialize import judgment_from_dict, judgment_to_dict
from helpers import load_fixture


def _same(a, b) -> bool:
    """Equal, and of the same type at every level (a tuple is not a list here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@dataclass(frozen=True)
class _Span:
    start: int
    end: int


def _judged_orbit() -> list[Judgment]:
    fixture = load_fixture("orbit_labs.json")
    scored = score([turn_from_dict(t) for t in fixture["turns"]], judge_from_spec(fixture["judge"]), Config()).scored
    return [v.judgment for s in scored for v in s.verdicts if v.judgment is not None]


HAND_MADE = [
    Judgment(),
    unjudged("no_source_text", "nli", "2"),
    Judgment(cited=True, alone={"S1": True, "S2": False}, rest={"S1": False, "S2": True}, elsewhere=("S3", "S4"),
             faithful=True, score=0.75, contradiction=0.01, verdict="partial", credit={"S1": True},
             judge="cascade", judge_version="nli:1+llm:2",
             detail={"escalation": "sample",
                     "llm": {"status": "ok", "verdict": "supported", "spans": [[0, 4], [9, 12]]},
                     "first_stage": {"supported": True, "scores": (0.9, 0.2), "premise": None}}),
]


@pytest.mark.parametrize("judgment", [*HAND_MADE, *_judged_orbit()])
def test_staged_judgment_is_what_asdict_gives(judgment):
    staged = judgment_to_dict(judgment)
    assert _same(staged, dataclasses.asdict(judgment))
    assert json.dumps(staged) == json.dumps(dataclasses.asdict(judgment))
    assert judgment_from_dict(json.loads(json.dumps(staged))).elsewhere == judgment.elsewhere


def test_the_orbit_day_has_judgments_to_compare():
    assert len(_judged_orbit()) > 5


def test_what_is_not_plain_data_goes_through_asdict():
    judgment = Judgment(detail={"span": _Span(1, 5), "labels": {"S1"}})
    staged = judgment_to_dict(judgment)
    assert staged == dataclasses.asdict(judgment)
    assert staged["detail"]["span"] == {"start": 1, "end": 5}  # a dataclass inside becomes a dict, as asdict does
    assert staged["detail"] is not judgment.detail
