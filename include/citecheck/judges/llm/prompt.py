"""What the LLM judge asks: the rubric (`rubric.txt`, the shared system prompt), the re-ask note,
and the reply contract (`REPLY_SCHEMA`, asked for as structured output and checked on receipt)."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from citecheck.core.vocabulary import REPLY_VERDICTS as VERDICTS
from citecheck.core.vocabulary import SUPPORT_LEVELS

RUBRIC = files(__package__).joinpath("rubric.txt").read_text(encoding="utf-8")

REASK_NOTE = (
    "Your previous reply could not be used ({reason}). Reply again with only the JSON object "
    "described in the instructions, one entry per sentence."
)


def _closed_object(**properties: Any) -> dict[str, Any]:
    """A JSON-schema object that requires exactly these properties and allows no others."""
    return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}


REPLY_SCHEMA: dict[str, Any] = _closed_object(
    sentences={
        "type": "array",
        "items": _closed_object(
            id={"type": "string"},
            verdict={"type": "string", "enum": list(VERDICTS)},
            citations={
                "type": "array",
                "items": _closed_object(
                    label={"type": "string"},
                    support={"type": "string", "enum": list(SUPPORT_LEVELS)},
                ),
            },
            quotes={
                "type": "array",
                "items": _closed_object(label={"type": "string"}, quote={"type": "string"}),
            },
        ),
    }
)
