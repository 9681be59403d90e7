"""The one verdict vocabulary (`citecheck.core.vocabulary`): its groups, the LLM reply's mapping,
and no verdict name written as a literal anywhere else in the package."""

from __future__ import annotations

import ast
from pathlib import Path

import citecheck
from citecheck.core import vocabulary as V
from citecheck.core.metrics import COUNT_KEYS, METRICS

PACKAGE = Path(citecheck.__file__).parent


def test_every_verdict_is_judged_or_not_and_the_groups_are_made_of_verdicts():
    assert set(V.JUDGED_VERDICTS) | set(V.NOT_JUDGED_VERDICTS) == set(V.VERDICTS)
    assert not set(V.JUDGED_VERDICTS) & set(V.NOT_JUDGED_VERDICTS)
    assert len(V.VERDICTS) == len(set(V.VERDICTS))
    for group in (V.SUPPORTED_VERDICTS, V.FAITHFUL_VERDICTS, V.BAD_VERDICTS, V.LLM_ONLY_VERDICTS, V.RECITE_KINDS):
        assert set(group) <= set(V.JUDGED_VERDICTS), group
    assert set(V.SUPPORTED_VERDICTS) <= set(V.FAITHFUL_VERDICTS)
    assert not set(V.BAD_VERDICTS) & set(V.SUPPORTED_VERDICTS)


def test_contradicted_is_bad_and_partial_is_not():
    assert V.CONTRADICTED in V.BAD_VERDICTS and V.PARTIAL not in V.BAD_VERDICTS
    assert V.BAD_VERDICTS[0] == V.CONTRADICTED  # worst first: the report's order


def test_the_llm_reply_and_review_labels_map_once_to_sentence_verdicts():
    from citecheck.judges.llm.prompt import REPLY_SCHEMA, RUBRIC

    assert set(V.REPLY_TO_VERDICT) == set(V.REPLY_VERDICTS)
    assert set(V.REPLY_TO_VERDICT.values()) <= set(V.JUDGED_VERDICTS)
    assert V.verdict_of_reply(V.REPLY_NOT_SUPPORTED) == V.UNSUPPORTED
    assert V.verdict_of_reply(V.REPLY_CONTRADICTED) == V.CONTRADICTED and V.verdict_of_reply(None) is None
    assert set(V.REVIEW_LABELS) <= set(V.REPLY_VERDICTS)
    entry = REPLY_SCHEMA["properties"]["sentences"]["items"]["properties"]
    assert entry["verdict"]["enum"] == list(V.REPLY_VERDICTS)
    assert entry["citations"]["items"]["properties"]["support"]["enum"] == list(V.SUPPORT_LEVELS)
    for name in (*V.REPLY_VERDICTS, *V.SUPPORT_LEVELS):
        assert f'"{name}"' in RUBRIC, name


def test_every_judged_verdict_is_counted_and_has_a_metric():
    numerators = {num for num, _, _ in METRICS.values()}
    for verdict in V.JUDGED_VERDICTS:
        assert verdict in COUNT_KEYS and verdict in numerators, verdict


def test_an_llm_partial_or_contradicted_reply_becomes_that_sentence_verdict():
    from citecheck.judges.llm.assessment import Assessment, judgment_of

    for reply in (V.REPLY_PARTIAL, V.REPLY_CONTRADICTED, V.REPLY_NOT_SUPPORTED):
        a = Assessment(status="ok", verdict=reply, citations=({"label": "S1", "support": V.NO_SUPPORT},))
        j = judgment_of(a, judge="llm", version="v")
        expected = V.verdict_of_reply(reply)
        assert j.verdict == (expected if expected in V.LLM_ONLY_VERDICTS else None)


def _key_positions(tree: ast.AST) -> set[int]:
    """Constants used as a mapping key (a dict key, `.get(key)`, `x[key]`): field names, not verdicts."""
    keys: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys.update(id(k) for k in node.keys if k is not None)
        elif isinstance(node, ast.Subscript):
            keys.add(id(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args:
            keys.add(id(node.args[0]))
    return keys


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            out.add(id(node.body[0].value))
    return out


def test_no_module_writes_a_verdict_name_as_a_literal():
    """A verdict or reply name outside `core/vocabulary.py` is a copy that drifts (issue 27). The
    demo generator is left out: its sentence kinds (`demo.judgments.KINDS`: supported, padded,
    miscited, ...) are its own names and some read like verdicts."""
    names = set(V.VERDICTS) | set(V.REPLY_VERDICTS)
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "core/vocabulary.py" or rel.startswith("demo/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _key_positions(tree) | _docstrings(tree)
        found += [f"{rel}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
                  and id(node) not in skip]
    assert found == []
