"""A judgment as staged: the dataclass as msgspec writes it (`warehouse.engine.json_text`: the
keys, order and values `dataclasses.asdict` gives), read straight back into the same dataclass
(`warehouse.serialize.judgments_of_row`); a claims mode's claims of one sentence in one value."""

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
from citecheck.warehouse.engine import json_text
from citecheck.warehouse.serialize import judgment_rows, judgments_of_row
from helpers import load_fixture


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
                     "first_stage": {"supported": True, "scores": [0.9, 0.2], "premise": None}}),
]


def _staged(key, judgment):
    [(staged_key, value)] = judgment_rows([(key, judgment)])
    return staged_key, json_text(value)


@pytest.mark.parametrize("judgment", [*HAND_MADE, *_judged_orbit()])
def test_a_staged_judgment_reads_back_as_itself(judgment):
    key, text = _staged(("t1", 3), judgment)
    assert key == ("t1", 3)
    assert list(json.loads(text)) == [f.name for f in dataclasses.fields(Judgment)]
    assert json.loads(text) == json.loads(json.dumps(dataclasses.asdict(judgment)))
    [(read_key, read)] = judgments_of_row("t1", 3, text)
    assert read_key == ("t1", 3) and read == judgment and type(read.elsewhere) is tuple


def test_the_orbit_day_has_judgments_to_compare():
    assert len(_judged_orbit()) > 5


def test_a_sentences_claims_are_one_staged_value_and_read_back_by_claim():
    first, second = HAND_MADE[2], HAND_MADE[1]
    [(key, value)] = judgment_rows([(("t1", 2, 0), first), (("t1", 2, 1), second)])
    text = json_text(value)
    assert key == ("t1", 2) and list(json.loads(text)) == ["claims"]
    assert judgments_of_row("t1", 2, text) == [(("t1", 2, 0), first), (("t1", 2, 1), second)]


def test_a_value_inside_detail_that_is_not_plain_data_is_written_as_asdict_would():
    judgment = Judgment(detail={"span": _Span(1, 5), "labels": ["S1"]})
    _, text = _staged(("t", 0), judgment)
    assert json.loads(text)["detail"] == {"span": {"start": 1, "end": 5}, "labels": ["S1"]}
    [(_, read)] = judgments_of_row("t", 0, text)
    assert read.detail["span"] == {"start": 1, "end": 5}
