"""`gemini`: one Gemini candidate with its `groundingMetadata` (SPEC §3.4).

The answer is `content.parts[*].text` joined in order. A grounding support's segment offsets
are UTF-8 bytes of its part's text (end exclusive; an absent `startIndex` or `partIndex` is 0,
as protobuf JSON omits zeros); the bytes must decode to `segment.text`. Sources are the
`groundingChunks`, `D<index>`: a `retrievedContext` chunk carries its text, a `web` chunk takes
it from the `request_documents` entry with its `uri` when the app logged one. camelCase (REST)
and snake_case (Python SDK dumps) field names are both read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citecheck.core.formats.common import (
    ANSWER_TEXT_MISMATCH,
    INDEX_OUT_OF_RANGE,
    MALFORMED,
    OFFSETS_OUT_OF_RANGE,
    PART_OUT_OF_RANGE,
    SPLIT_CHARACTER,
    Citations,
    Normalised,
    TurnError,
    clean_text,
    finite_number,
    get,
    is_int,
    optional_list,
    optional_text,
    text_or_none,
)
from citecheck.core.model import Passage


def _candidate(response: Any) -> Mapping[str, Any]:
    if isinstance(response, Mapping) and isinstance(response.get("candidates"), list):
        if not response["candidates"] or not isinstance(response["candidates"][0], Mapping):
            raise TurnError("response.candidates holds no candidate")
        response = response["candidates"][0]
    if not isinstance(response, Mapping):
        raise TurnError("response is missing or not a candidate object")
    return response


def _logged_texts(data: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for i, doc in enumerate(optional_list(data, "request_documents") or []):
        if not isinstance(doc, Mapping) or not isinstance(doc.get("uri", doc.get("url")), str):
            raise TurnError(f"request_documents[{i}] needs a uri string")
        text = optional_text(doc, "text", f"request_documents[{i}]")
        out[clean_text(doc.get("uri", doc.get("url")))] = clean_text(text or "")
    return out


def _chunks(metadata: Mapping[str, Any], logged: Mapping[str, str]) -> tuple[Passage, ...]:
    chunks = get(metadata, "groundingChunks", "grounding_chunks")
    chunks = [] if chunks is None else chunks
    if not isinstance(chunks, list):
        raise TurnError("groundingMetadata.groundingChunks is not a list")
    out = []
    for i, chunk in enumerate(chunks):
        if not isinstance(chunk, Mapping):
            raise TurnError(f"groundingChunks[{i}] is not an object")
        context = get(chunk, "retrievedContext", "retrieved_context")
        web = chunk.get("web")
        if isinstance(context, Mapping):
            text = text_or_none(context.get("text")) or ""
            uri = text_or_none(context.get("uri"))
            title = text_or_none(context.get("title")) or ""
        elif isinstance(web, Mapping):
            uri = text_or_none(web.get("uri"))
            title = text_or_none(web.get("title")) or ""
            text = logged.get(uri or "", "")
        else:
            raise TurnError(f"groundingChunks[{i}] is neither retrievedContext nor web")
        out.append(Passage(f"D{i}", text, title, document_id=uri, has_text=bool(text.strip())))
    return tuple(out)


def normalise(data: Mapping[str, Any]) -> Normalised:
    candidate = _candidate(data.get("response"))
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    if not isinstance(parts, list):
        raise TurnError("response.content.parts is missing or not a list")
    texts: list[str | None] = []
    for i, part in enumerate(parts):
        if not isinstance(part, Mapping):
            raise TurnError(f"response.content.parts[{i}] is not an object")
        text = optional_text(part, "text", f"response.content.parts[{i}]")
        texts.append(None if get(part, "thought") is True else text)  # thoughts are not the answer
    starts, length = [], 0
    for text in texts:
        starts.append(length)
        length += len(text or "")
    answer = "".join(clean_text(t) for t in texts if t)
    metadata = get(candidate, "groundingMetadata", "grounding_metadata")
    metadata = {} if metadata is None else metadata
    if not isinstance(metadata, Mapping):
        raise TurnError("groundingMetadata is not an object")
    context = _chunks(metadata, _logged_texts(data))
    supports = get(metadata, "groundingSupports", "grounding_supports")
    supports = [] if supports is None else supports
    if not isinstance(supports, list):
        raise TurnError("groundingMetadata.groundingSupports is not a list")
    found = Citations()
    for support in supports:
        _support(support, texts, starts, len(context), found)
    return Normalised(answer, context, tuple(found.spans), tuple(found.problems))


def _labels(support: Mapping[str, Any]) -> list[tuple[int | None, str | None]]:
    indices = get(support, "groundingChunkIndices", "grounding_chunk_indices")
    if not isinstance(indices, list):
        return []
    return [(i, f"D{i}") if is_int(i) else (None, None) for i in indices]


def _support(support: Any, texts: list[str | None], starts: list[int], n_chunks: int, found: Citations) -> None:
    if not isinstance(support, Mapping) or not isinstance(support.get("segment"), Mapping):
        found.bad(MALFORMED, "grounding support has no segment object")
        return
    scores = get(support, "confidenceScores", "confidence_scores")  # an unreadable one skips the turn
    scores = [finite_number(score, f"groundingSupports confidenceScores[{k}]")
              for k, score in enumerate(scores)] if isinstance(scores, list) else []
    labels = _labels(support)
    if not labels:
        found.bad(MALFORMED, "groundingChunkIndices is missing or empty")
        return
    segment = support["segment"]

    def unplaced(kind: str, reason: str) -> None:
        for index, label in labels:
            found.bad(kind, reason, label=label, index=-1 if index is None else index)

    part_index = get(segment, "partIndex", "part_index") or 0
    start = get(segment, "startIndex", "start_index") or 0
    end = get(segment, "endIndex", "end_index")
    if not (is_int(part_index) and is_int(start) and is_int(end)):
        unplaced(MALFORMED, "segment partIndex/startIndex/endIndex missing or not integers")
        return
    if not 0 <= part_index < len(texts) or texts[part_index] is None:
        unplaced(PART_OUT_OF_RANGE, f"segment partIndex {part_index} names no text part ({len(texts)} parts)")
        return
    raw = texts[part_index].encode("utf-8", "surrogatepass")  # type: ignore[union-attr]
    if not 0 <= start <= end <= len(raw):
        unplaced(OFFSETS_OUT_OF_RANGE, f"segment bytes {start}-{end} are outside its part ({len(raw)} bytes)")
        return
    try:
        before, segment_text = raw[:start].decode("utf-8", "surrogatepass"), raw[start:end].decode(
            "utf-8", "surrogatepass")
    except UnicodeDecodeError:
        unplaced(SPLIT_CHARACTER, f"segment bytes {start}-{end} cut a UTF-8 character")
        return
    base = starts[part_index] + len(before)
    span = (base, base + len(segment_text))
    logged = segment.get("text")
    for k, (index, label) in enumerate(labels):
        if label is None:
            found.bad(MALFORMED, "groundingChunkIndices holds a non-integer")
        elif not 0 <= index < n_chunks:  # type: ignore[operator]
            found.bad(INDEX_OUT_OF_RANGE, f"grounding chunk index {index} out of range ({n_chunks} chunks)",
                      label=label, span=span, index=index)  # type: ignore[arg-type]
        elif isinstance(logged, str) and clean_text(logged) != clean_text(segment_text):
            found.bad(ANSWER_TEXT_MISMATCH, "segment.text is not the text its byte offsets select", label=label,
                      span=span, index=index)  # type: ignore[arg-type]
        else:
            found.ok(*span, label, unverified=() if isinstance(logged, str) else ("segment_text",),
                     confidence=scores[k] if k < len(scores) else None)
