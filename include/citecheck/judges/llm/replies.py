"""Reading replies (SPEC §4): the contract object of a Message, or `MalformedReply`.

A reply that is not JSON, breaks `REPLY_SCHEMA` or was cut off is malformed (the judge re-asks
once). Ids that were not asked for are counted; asked ids missing from the reply are unjudged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema

from citecheck.judges.llm.assessment import Assessment, not_judged
from citecheck.judges.llm.prompt import REPLY_SCHEMA
from citecheck.judges.llm.requests import AnswerRequest
from citecheck.judges.llm.verify import assess_entry

_VALIDATOR = jsonschema.Draft202012Validator(REPLY_SCHEMA)


class MalformedReply(ValueError):
    """A reply that cannot be read as the contract object (the reason never quotes the reply)."""


def parse_reply(message: Any, validator: jsonschema.protocols.Validator | None = None) -> dict[str, Any]:
    """The reply object of a Message, validated against REPLY_SCHEMA (or `validator`'s schema: the
    claim splitter's)."""
    if message.stop_reason in ("max_tokens", "model_context_window_exceeded"):
        raise MalformedReply(f"reply cut off ({message.stop_reason})")
    text = "".join(getattr(block, "text", "") for block in message.content if block.type == "text")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedReply(f"reply is not valid JSON (line {exc.lineno} column {exc.colno})") from None
    error = next(iter((validator or _VALIDATOR).iter_errors(data)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "top level"
        raise MalformedReply(f"reply breaks the schema at {where} ({error.validator})")
    return data


def entries_by_id(data: Mapping[str, Any]) -> tuple[dict[str, Mapping[str, Any]], set[str]]:
    """A reply's `sentences` entries by id, and the ids it gives more than once (neither entry of
    such an id is used: the judge's and the claim splitter's replies alike)."""
    entries: dict[str, Mapping[str, Any]] = {}
    duplicated: set[str] = set()
    for entry in data["sentences"]:
        if entry["id"] in entries:
            duplicated.add(entry["id"])
        entries[entry["id"]] = entry
    return entries, duplicated


def assess_reply(request: AnswerRequest, data: Mapping[str, Any]) -> tuple[dict[str, Assessment], int]:
    """Assessments by sentence id, and how many ids the reply had that were not asked for."""
    entries, duplicated = entries_by_id(data)
    asked = {sid for sid, _ in request.sentences}
    out = {}
    for sid, cites in request.sentences:
        if sid in duplicated:
            out[sid] = not_judged("sentence id given twice in the reply")
        elif sid not in entries:
            out[sid] = not_judged("sentence missing from the reply")
        else:
            out[sid] = assess_entry(entries[sid], cites, request.passages)
    return out, len(set(entries) - asked)
