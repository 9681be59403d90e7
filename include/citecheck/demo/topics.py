"""The opt-in `topic` attribute of the bundled sample (`citecheck sample --topics`): what a turn's
question is about, from the knowledge base and data/traffic.toml's `[topics]` table. Read from
the turn after it is generated (no random draw), so the other attributes, texts and the pinned
digests of the sample without topics stay as they are."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from citecheck.demo.knowledge import read_data
from citecheck.demo.traffic import TOPICS

OTHER_TOPIC = "other"


@cache
def _passage_ids() -> tuple[dict[str, str], dict[str, str]]:
    """(question → passage id, source → passage id) of the knowledge base."""
    passages = read_data("knowledge_base.json")["passages"]
    return {p["question"]: p["id"] for p in passages}, {p["source"]: p["id"] for p in passages}


def topic_of_passage(passage_id: str) -> str:
    for prefix, topic in TOPICS:
        if passage_id.startswith(prefix):
            return topic
    return OTHER_TOPIC


def turn_topic(turn: Mapping[str, Any]) -> str:
    """The topic of the passage the question asks about, else of the first logged source."""
    by_question, by_source = _passage_ids()
    passage_id = by_question.get(turn.get("question", ""))
    if passage_id is None:
        logged = turn.get("context") or turn.get("request_documents") or []
        sources = [p.get("source") or p.get("title") for p in logged if isinstance(p, Mapping)]
        passage_id = next((by_source[s] for s in sources if s in by_source), None)
    return OTHER_TOPIC if passage_id is None else topic_of_passage(passage_id)


def add_topics(turns: Iterable[dict[str, Any]]) -> None:
    """Set each turn's `attributes.topic` in place."""
    for turn in turns:
        turn.setdefault("attributes", {})["topic"] = turn_topic(turn)
