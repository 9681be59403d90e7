"""The demo's acceptance criteria (the sample config's [[criteria]], SPEC 5.1): the template-change
day 2026-11-30 fails, a quiet day before it passes (what `bin/demo` prints and the report shows)."""

from __future__ import annotations

import datetime as dt

from citecheck import demo
from citecheck.core.criteria import FAIL, PASS, evaluate, overall_decision
from citecheck.core.pipeline import score
from citecheck.core.turns import turn_from_dict
from citecheck.job import JobSettings
from citecheck.judges import judge_from_spec


def decide(sample, day: str, criteria):
    turns = [turn_from_dict(t) for t in sample.turns if t["answered_at"].startswith(day)]
    report = score(turns, judge_from_spec(demo.judge_spec(sample)), demo.sample_config())
    results, _ = evaluate(report.scored, criteria)
    return {r.criterion.name: r for r in results}


def test_the_template_change_day_fails_and_a_quiet_day_passes():
    criteria = JobSettings(config=demo.sample_config()).criteria
    assert len(criteria) == 4
    sample = demo.generate(dt.date(2026, 11, 29), 2, 300, provider_turns=24, topics=True)
    quiet = decide(sample, "2026-11-29", criteria)
    change = decide(sample, "2026-11-30", criteria)
    assert overall_decision(r.decision for r in quiet.values()) == PASS
    assert overall_decision(r.decision for r in change.values()) == FAIL
    failed = [name for name, r in change.items() if r.decision == FAIL]
    assert failed == ["citations fully support their claims"]  # the pads support nothing
    assert quiet["no contradicted claims about pay, leave or termination"].answers > 0


def test_without_topics_the_topic_criterion_is_no_data():
    criteria = JobSettings(config=demo.sample_config()).criteria
    sample = demo.generate(dt.date(2026, 11, 29), 1, 80)
    result = decide(sample, "2026-11-29", criteria)["no contradicted claims about pay, leave or termination"]
    assert result.decision == "no_data" and result.answers == 0
