"""`cohere_v2`: a Cohere v2 chat `message` with its `citations` (SPEC §3.4).

The answer is the `text` items of `message.content`, joined. A citation's `start`/`end` are
characters of the answer (end exclusive; with `content_index`, of that content item) and its
`text` must be what they select; each of its `sources` cites the logged document (or tool
result) with that `id`: `request_documents` `[{id, title?, text}]` (or `{id, data: {...}}` as
sent), `D<index>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citecheck.core.formats.common import (
    ANSWER_TEXT_MISMATCH,
    MALFORMED,
    OFFSETS_OUT_OF_RANGE,
    PART_OUT_OF_RANGE,
    UNKNOWN_SOURCE,
    Citations,
    Normalised,
    TurnError,
    clean_text,
    is_int,
    optional_list,
    optional_text,
    placed_span,
    text_or_none,
)
from citecheck.core.model import Passage


def _documents(data: Mapping[str, Any]) -> tuple[Passage, ...]:
    out = []
    for i, doc in enumerate(optional_list(data, "request_documents") or []):
        if not isinstance(doc, Mapping):
            raise TurnError(f"request_documents[{i}] is not an object")
        fields = doc.get("data") if isinstance(doc.get("data"), Mapping) else doc
        doc_id = doc.get("id")
        if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
            raise TurnError(f"request_documents[{i}].id is missing or not a string")
        text = optional_text(fields, "text" if "text" in fields else "snippet", f"request_documents[{i}]")
        body = clean_text(text or "")
        out.append(Passage(f"D{i}", body, text_or_none(fields.get("title")) or "", document_id=clean_text(str(doc_id)),
                           has_text=bool(body.strip())))
    return tuple(out)


def normalise(data: Mapping[str, Any]) -> Normalised:
    message = data.get("response")
    if isinstance(message, Mapping) and "content" not in message and isinstance(message.get("message"), Mapping):
        message = message["message"]  # the whole chat response was logged
    if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
        raise TurnError("response.content is missing or not a list")
    starts: list[int] = []
    pieces: list[str] = []
    length = 0
    for i, item in enumerate(message["content"]):
        if not isinstance(item, Mapping):
            raise TurnError(f"response.content[{i}] is not an object")
        if item.get("type", "text") != "text":
            starts.append(length)
            continue
        if not isinstance(item.get("text"), str):
            raise TurnError(f"response.content[{i}].text is not a string")
        starts.append(length)
        pieces.append(clean_text(item["text"]))
        length += len(item["text"])
    answer = "".join(pieces)
    context = _documents(data)
    by_id = {p.document_id: p.label for p in context}
    citations = message.get("citations") or []
    if not isinstance(citations, list):
        raise TurnError("response.citations is not a list")
    found = Citations()
    for citation in citations:
        _check(citation, answer, starts, by_id, found)
    return Normalised(answer, context, tuple(found.spans), tuple(found.problems))


def _check(citation: Any, answer: str, starts: list[int], by_id: Mapping[str | None, str], found: Citations) -> None:
    if not isinstance(citation, Mapping):
        found.bad(MALFORMED, "citation is not an object")
        return
    sources = citation.get("sources")
    if not isinstance(sources, list) or not sources:
        found.bad(MALFORMED, "citation sources is missing or empty")
        return
    ids = [clean_text(str(s.get("id"))) if isinstance(s, Mapping) and isinstance(s.get("id"), (str, int))
           else None for s in sources]
    start, end = citation.get("start"), citation.get("end")
    text = citation.get("text")
    base = 0
    content_index = citation.get("content_index")

    def broken(kind: str, reason: str, span: tuple[int, int] | None) -> None:
        """Offsets that select nothing usable: counted where its text is, else as placed_span says."""
        for ref in ids:
            found.bad(kind, reason, label=by_id.get(ref, ref), span=placed_span(answer, text, span))

    if is_int(content_index):
        if not 0 <= content_index < len(starts):
            broken(PART_OUT_OF_RANGE, f"content_index {content_index} names no content item", None)
            return
        base = starts[content_index]
    if not (is_int(start) and is_int(end)):
        broken(MALFORMED, "citation start/end missing or not integers", None)
        return
    if not 0 <= start <= end or not base + end <= len(answer):
        broken(OFFSETS_OUT_OF_RANGE, f"citation offsets {start}-{end} are outside the answer "
               f"({len(answer)} characters)", (base + start, base + end) if start <= end else None)
        return
    span = (base + start, base + end)
    mismatch = not isinstance(text, str) or answer[span[0]:span[1]] != clean_text(text)
    if mismatch:  # counted where its own text is, when the answer has it once
        span = placed_span(answer, text, span)
    for ref in ids:
        if ref is None:
            found.bad(MALFORMED, "citation source has no id")
            continue
        label = by_id.get(ref)
        if label is None:
            found.bad(UNKNOWN_SOURCE, f"source id {ref[:80]!r} names no logged document", label=ref, span=span)
        elif mismatch:
            found.bad(ANSWER_TEXT_MISMATCH, "citation text is not answer[start:end]", label=label, span=span)
        else:
            found.ok(*span, label)
