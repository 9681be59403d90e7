"""The sample's provider-native turns (`generate(..., provider_turns=N)`, `citecheck.demo.providers`):
every format, its apps' pointer bugs and sources without text, the rest of the sample unchanged."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest

from citecheck import demo
from citecheck.core.config import Config
from citecheck.core.turns import turn_from_dict
from citecheck.demo.providers import PROVIDER_VARIANTS
from helpers import score_dicts

START = dt.date(2026, 11, 29)


@pytest.fixture(scope="module")
def samples():
    return demo.generate(START, 2, 120), demo.generate(START, 2, 120, provider_turns=40)


def test_provider_turns_leave_every_other_turn_unchanged(samples):
    plain, mixed = samples
    others = [t for t in mixed.turns if not t["turn_id"].startswith("prov-")]
    assert others == plain.turns and mixed.malformed_lines == plain.malformed_lines
    assert len(mixed.turns) - len(plain.turns) == 80


def test_every_provider_format_is_there_and_scores(samples):
    _, mixed = samples
    provider = [t for t in mixed.turns if t["turn_id"].startswith("prov-")]
    assert {t["answer_format"] for t in provider} == {f for f, _ in PROVIDER_VARIANTS}
    for t in provider:
        turn_from_dict(t)  # none is skipped
    out = score_dicts(provider, demo.judge_spec(mixed), demo.sample_config())
    assert out["skipped"] == [] and out["invariant_violations"] == []
    kinds = Counter(p["kind"] for t in out["turns"] for p in t["pointer_problems"])
    assert {"title_mismatch", "unknown_source", "answer_text_mismatch"} <= set(kinds), kinds
    assert out["counts"]["no_source_text_sentences"] > 0
    assert 0 < out["metrics"]["micro"]["cited_char_share"] < 1


def test_the_generator_knows_each_provider_sentence_as_the_pipeline_reads_it(samples):
    _, mixed = samples
    provider = [t for t in mixed.turns if t["turn_id"].startswith("prov-")]
    out = score_dicts(provider, demo.judge_spec(mixed), Config())
    wrong = []
    for t in out["turns"]:
        expected = mixed.expected[t["turn_id"]]
        got = [(s["text"], tuple(s["labels"]), s["verdict"]) for s in t["sentences"]]
        want = [(e.text, e.labels, e.verdict) for e in expected]
        if got != want:
            wrong.append((t["turn_id"], got, want))
    assert not wrong, wrong[:3]


def test_the_bundled_change_raises_the_provider_bug_rate_from_its_day(samples):
    _, mixed = samples
    change_day = demo.BUNDLED_CHANGES[0].start
    assert START < change_day == START + dt.timedelta(days=1)
    provider = [t for t in mixed.turns if t["turn_id"].startswith("prov-")]
    out = score_dicts(provider, demo.judge_spec(mixed), Config())
    day_of = {t["turn_id"]: t["turn_id"][5:13] for t in provider}
    buggy = Counter(day_of[t["turn_id"]] for t in out["turns"] if t["pointer_problems"])
    assert buggy[f"{change_day:%Y%m%d}"] > 1.5 * buggy[f"{START:%Y%m%d}"] > 0
