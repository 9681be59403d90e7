"""Property-based fuzzing of every provider-native format: a valid turn of each format (written by
`citecheck.demo.formats`) with one value anywhere in it replaced by arbitrary JSON is scored or
skipped with a `TurnError` reason, never a crash, and what is scored keeps its invariants."""

from __future__ import annotations

import copy
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citecheck.core.config import Config
from citecheck.core.formats import POINTER_PROBLEM_KINDS
from citecheck.core.structural import structure_turn
from citecheck.core.turns import TurnError, turn_from_dict
from citecheck.demo.formats import ANTHROPIC_KINDS, Claim, Source, native_turn

FAST = settings(max_examples=int(os.environ.get("CITECHECK_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**6, max_value=10**6) | st.integers() | st.floats()
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
SOURCES = [Source("Hotel § 東京", "https://p.example/a", ("Hotels in 東京 cost €220.", "Über it, approval 📝.")),
           Source("Meals", "https://p.example/b", ("Dinner is €40.",))]
CLAIMS = [Claim("In 東京 hotels cost €220 🏨", (0,)), Claim("Über the cap you need approval", (0, 1), quotes={0: 1}),
          Claim("Dinner is €40", (1,), after_stop=True)]
VARIANTS = [("anthropic_blocks", {"kind": k}) for k in ANTHROPIC_KINDS] + [
    ("openai_responses", {"parts": 2}), ("openai_responses", {"files": True}), ("openai_chat", {}),
    ("cohere_v2", {}), ("gemini", {"parts": 2}), ("gemini", {"web": True})]
TURNS = [{"turn_id": f"t{i}", **native_turn(f, CLAIMS, SOURCES, **o)} for i, (f, o) in enumerate(VARIANTS)]


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _paths(child, (*path, i))


PATHS = [(i, p) for i, t in enumerate(TURNS) for p in _paths(t) if p and p[0] != "turn_id"]


@FAST
@given(st.sampled_from(PATHS), JSONISH, st.booleans())
def test_one_value_anywhere_replaced_scores_or_skips_with_a_reason(where, value, drop):
    index, path = where
    data = copy.deepcopy(TURNS[index])
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    try:
        turn = turn_from_dict(data)
    except TurnError as exc:
        assert str(exc)
        return
    structured = structure_turn(turn, Config())
    assert all(p.kind in POINTER_PROBLEM_KINDS and p.reason for p in turn.pointer_problems)
    for c in turn.native_citations:
        assert 0 <= c.start <= c.end <= len(turn.answer)
        assert c.valid == (c.problem is None)
    labels = {p.label for p in turn.context}
    for s in structured.sentences:
        assert set(s.resolved_labels) <= labels
        assert {lab for lab, _ in s.pointer_problems} <= set(s.unknown_labels)


def test_every_variant_is_valid_before_fuzzing():
    for data in TURNS:
        turn = turn_from_dict(data)
        assert not turn.pointer_problems and turn.native_citations
