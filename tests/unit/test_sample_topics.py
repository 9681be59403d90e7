"""The sample's opt-in `topic` attribute (`generate(..., topics=True)`, `citecheck sample --topics`,
`citecheck.demo.topics`): every turn gets one, nothing else changes."""

from __future__ import annotations

import copy
import datetime as dt
import json

from citecheck import demo
from citecheck.demo.topics import OTHER_TOPIC, topic_of_passage, turn_topic

START = dt.date(2026, 11, 29)


def test_topics_leave_every_other_field_unchanged():
    plain = demo.generate(START, 2, 80, provider_turns=8)
    with_topics = demo.generate(START, 2, 80, provider_turns=8, topics=True)
    assert len(plain.turns) == len(with_topics.turns)
    for a, b in zip(plain.turns, with_topics.turns, strict=True):
        b = copy.deepcopy(b)
        topic = b["attributes"].pop("topic")
        assert a == b and topic
    assert plain.judgments == with_topics.judgments and plain.reader_events == with_topics.reader_events


def test_every_turn_has_a_topic_of_its_question():
    sample = demo.generate(START, 1, 120, topics=True)
    topics = {t["attributes"]["topic"] for t in sample.turns}
    assert {"leave", "travel"} <= topics
    leave = next(t for t in sample.turns if t["attributes"]["topic"] == "leave")
    assert "HR handbook" in json.dumps(leave["context"])


def test_topic_rules():
    assert topic_of_passage("hr-sick-leave") == "leave"
    assert topic_of_passage("expenses-reimbursement") == "pay"  # before the broader expenses- prefix
    assert topic_of_passage("expenses-card") == "expenses"
    assert topic_of_passage("unknown-passage") == OTHER_TOPIC
    assert turn_topic({"question": "Something nobody asked?", "context": []}) == OTHER_TOPIC


def test_the_cli_writes_topics_only_when_asked(tmp_path):
    from citecheck.cli import main

    assert main(["sample", "--start", "2026-11-29", "--days", "1", "--turns-per-day", "20", "--topics",
                 "--out", str(tmp_path / "on")]) == 0
    assert main(["sample", "--start", "2026-11-29", "--days", "1", "--turns-per-day", "20",
                 "--out", str(tmp_path / "off")]) == 0

    def attributes(folder):
        lines = (tmp_path / folder / "turns.jsonl").read_text(encoding="utf-8").splitlines()
        rows = []
        for line in lines:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # the sample's malformed lines
        return [r.get("attributes", {}) for r in rows if isinstance(r, dict)]

    # every generated turn (20) has a topic; the malformed lines are written as they were
    assert sum("topic" in a for a in attributes("on") if isinstance(a, dict)) == 20
    assert not any("topic" in a for a in attributes("off") if isinstance(a, dict))
