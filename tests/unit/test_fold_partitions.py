"""The per-answer fold is mergeable (`core.fold.AnswerFold`, issue 36): any partition of a day's
answers into shards, each folded alone, its state round-tripped through JSON (as the job stages
it) and the states added in `combine`'s way, gives the single fold's metric rows, intervals,
criteria results and failing answers: counts exactly, floats to 1e-9 relative."""

from __future__ import annotations

import datetime as dt
import functools
import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citecheck import demo
from citecheck.core.criteria import parse_criteria
from citecheck.core.fold import AnswerFold
from citecheck.core.metrics import SliceCap
from citecheck.core.pipeline import score
from citecheck.core.turns import turn_from_dict
from citecheck.judges import judge_from_spec

CRITERIA = parse_criteria([
    {"name": "attached", "metric": "attachment_rate", "min": 0.5},
    {"name": "recall", "metric": "citation_recall", "min": 0.9, "answers": True},
    {"name": "macro recall", "metric": "citation_recall", "averaging": "macro", "min": 0.5},
    {"name": "recall on its interval", "metric": "citation_recall", "min": 0.4, "on": "interval"},
    {"name": "numbers", "metric": "citation_recall", "min": 0.5, "where": {"has_number": "yes"}},
], "test")


@functools.cache
def _day():
    """One sample day scored once (the recorded judge on 60% of it): its config, cap and answers."""
    data = demo.generate(dt.date(2026, 11, 23), 1, 120, seed=11)
    config = demo.sample_config()
    turns = [turn_from_dict(t) for t in data.turns]
    from citecheck.core.selection import Selection

    report = score(turns, judge_from_spec(demo.judge_spec(data)), config, selection=Selection(0.6, "s"),
                   criteria=CRITERIA)
    cap = SliceCap.from_turns(turns, config)
    return config, cap, report


def _close(a, b, path=""):
    """Equal, floats to 1e-9 relative (ints and everything else exactly); the first difference."""
    if isinstance(a, float) or isinstance(b, float):
        ok = a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return None if ok else f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{path}: keys {sorted(a)} != {sorted(b)}"
        return next((d for k in a if (d := _close(a[k], b[k], f"{path}.{k}"))), None)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: {len(a)} != {len(b)} items"
        return next((d for i, (x, y) in enumerate(zip(a, b, strict=True)) if (d := _close(x, y, f"{path}[{i}]"))), None)
    return None if a == b else f"{path}: {a!r} != {b!r}"


def _outputs(fold: AnswerFold):
    rows = sorted(fold.metrics.rows(), key=lambda r: (r["slice_name"], r["slice_value"], r["metric"], r["averaging"]))
    results = [r.as_dict() | {"criterion": r.criterion.name} for r in fold.criteria.results()]
    failing = {turn: sorted(names) for turn, names in fold.criteria.failing_answers().items()}
    return {"rows": rows, "counts": dict(fold.metrics.counts()), "criteria": results, "failing": failing,
            "versions": sorted(fold.judge_versions)}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shards=st.integers(1, 16), seed=st.integers(0, 2**32 - 1), order=st.permutations(range(16)))
def test_any_partition_folds_to_the_single_fold(shards, seed, order):
    import random

    config, cap, report = _day()
    whole = AnswerFold(config, CRITERIA, cap=cap)
    for scored in report.scored:
        whole.add(scored)
    rng = random.Random(seed)
    parts = [AnswerFold(config, CRITERIA, cap=cap) for _ in range(shards)]
    for scored in report.scored:
        parts[rng.randrange(shards)].add(scored)
    states = [json.loads(json.dumps(p.state())) for p in parts]  # as staged: plain JSON
    merged = AnswerFold.combined(config, [states[i] for i in order if i < shards], CRITERIA, cap=cap)
    assert _close(_outputs(merged), _outputs(whole)) is None
    assert merged.metrics.counts() == whole.metrics.counts()  # counts exactly, every key


def test_the_score_fold_is_the_one_fold_and_one_shard_changes_nothing():
    """`score` folds through `AnswerFold`; one shard's state added into an empty fold gives exactly
    (not just closely) the same rows: adding to zero loses nothing."""
    config, cap, report = _day()
    assert report.fold is not None and report.accumulator is report.fold.metrics
    state = json.loads(json.dumps(report.fold.state()))
    merged = AnswerFold.combined(config, [state], CRITERIA, cap=cap)
    assert _outputs(merged) == _outputs(report.fold)
    assert report.fold.criteria.results() and any(r["value"] is not None for r in _outputs(merged)["criteria"])
