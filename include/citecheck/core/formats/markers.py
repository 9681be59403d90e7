"""`markers`: answer text with inline markers (`[S1]`) and the logged context set (SPEC §1–§2).

The markers stay in the answer: `citecheck.parsing` reads them sentence by sentence (a marker is
a position-only citation of the sentence that owns it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citecheck.core.formats.common import MAX_LABEL_CHARS, Normalised, TurnError, clean_text
from citecheck.core.model import Passage


def _as_text(value: Any) -> str:
    return clean_text(value if isinstance(value, str) else str(value))


def passages(context: Any) -> tuple[Passage, ...]:
    if not isinstance(context, list):
        kind = "missing" if context is None else f"not a list ({type(context).__name__})"
        raise TurnError(f"context is {kind}")
    out: list[Passage] = []
    seen: dict[str, str] = {}
    for i, item in enumerate(context):
        if not isinstance(item, Mapping):
            raise TurnError(f"context[{i}] is not an object")
        label = item.get("label")
        text = item.get("text")
        if not isinstance(label, str) or not label.strip():
            raise TurnError(f"context[{i}].label is missing or not a non-empty string")
        if len(label) > MAX_LABEL_CHARS:
            raise TurnError(f"context[{i}].label is longer than {MAX_LABEL_CHARS} characters")
        if not isinstance(text, str):
            raise TurnError(f"context[{i}].text is missing or not a string")
        label, text = clean_text(label), clean_text(text)
        if label in seen:
            if seen[label] != text:
                raise TurnError(f"context label {label!r} appears twice with different texts")
            continue
        seen[label] = text
        out.append(Passage(
            label=label,
            text=text,
            source=_as_text(item.get("source") or ""),
            document_id=None if item.get("document_id") is None else _as_text(item["document_id"]),
            version=None if item.get("version") is None else _as_text(item["version"]),
        ))
    return tuple(out)


def normalise(data: Mapping[str, Any]) -> Normalised:
    answer = data.get("answer")
    if not isinstance(answer, str):
        kind = "missing" if answer is None else f"not a string ({type(answer).__name__})"
        raise TurnError(f"answer is {kind}")
    if not answer.strip():
        raise TurnError("answer is empty")
    return Normalised(clean_text(answer), passages(data.get("context")), (), ())
