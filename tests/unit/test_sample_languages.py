"""The sample speaks several languages (`generate(..., language_turns=N)`, `citecheck sample
--language-turns N`): German, French, Spanish and Japanese turns the pipeline reads as their
generator meant them, without changing the English sample."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from citecheck import demo
from citecheck.core.config import Config
from citecheck.core.pipeline import score
from citecheck.core.turns import turns_from_dicts
from citecheck.judges import judge_from_spec

START = dt.date(2026, 11, 2)


def test_language_turns_leave_every_other_turn_unchanged():
    plain = demo.generate(START, 1, 80)
    with_languages = demo.generate(START, 1, 80, language_turns=20)
    others = [t for t in with_languages.turns if not t["turn_id"].startswith("lang-")]
    assert others == plain.turns
    assert sum(t["turn_id"].startswith("lang-") for t in with_languages.turns) == 20


def test_every_language_turn_is_read_as_its_generator_meant_it():
    sample = demo.generate(START, 2, 60, language_turns=60)
    rows = [t for t in sample.turns if t["turn_id"].startswith("lang-")]
    turns, skipped = turns_from_dicts(rows)
    assert not skipped
    report = score(turns, judge_from_spec(demo.judge_spec(sample)), Config())
    languages: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    for scored in report.scored:
        st = scored.structured
        languages[st.language] += 1
        sources[st.language_source] += 1
        expected = sample.expected[st.turn_id]
        assert [(v.sentence.text, v.verdict) for v in scored.verdicts] == [(e.text, e.verdict) for e in expected]
        locale = st.turn.attributes.get("locale", "")
        if locale and "_" not in locale:
            assert st.language == locale.split("-")[0]
    assert set(languages) == {"de", "fr", "es", "ja"}
    assert sources["detected"] > 0 and sources["logged"] > sources["detected"]
    kinds = Counter(e.kind for t in report.scored for e in sample.expected[t.turn_id])
    assert {"supported", "miscited", "unsupported", "offer"} <= set(kinds)


def test_the_full_judge_knows_every_language_statement():
    statements = {row["statement"] for row in demo.full_judge_spec()["judgments"]}
    sample = demo.generate(START, 1, 30, language_turns=40)
    written = {e.text for t in sample.turns if t["turn_id"].startswith("lang-") for e in sample.expected[t["turn_id"]]}
    assert written <= statements
