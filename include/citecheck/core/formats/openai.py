"""`openai_responses` and `openai_chat`: OpenAI answers with their annotations (SPEC §3.4).

Responses: the `output_text` parts of the `message` items of `response.output`, joined with a
blank line; each annotation's offsets are relative to its own part. Chat Completions:
`choices[0].message`'s `content` and `annotations`. Sources: `request_documents`
(`[{file_id?, url?, title?, text?}]`, `D<index>`), matched by url or file id.

No annotation carries cited text, so only the source is checked. A markdown link to the
annotation's own url inside its range (what web search writes) is a marker: it is cut from the
answer and the citation becomes a position there, so a link after a full stop belongs to the
sentence before it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from typing import Any

from citecheck.core.formats.common import (
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
    unknown_url_label,
)
from citecheck.core.model import CitationSpan, Passage

PART_SEPARATOR = "\n\n"
# a markdown link, bare or in parentheses as web search writes it: `([example.com](https://…))`
_LINK = re.compile(r"\(\[[^\]\n]*\]\((?P<wrapped>[^)\s]+)\)\)|\[[^\]\n]*\]\((?P<bare>[^)\s]+)\)")


def _documents(data: Mapping[str, Any]) -> tuple[Passage, ...]:
    documents = optional_list(data, "request_documents") or []
    out = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, Mapping):
            raise TurnError(f"request_documents[{i}] is not an object")
        text = optional_text(doc, "text", f"request_documents[{i}]")
        url, file_id = text_or_none(doc.get("url")), text_or_none(doc.get("file_id"))
        if url is None and file_id is None:
            raise TurnError(f"request_documents[{i}] needs a url or a file_id")
        title = text_or_none(doc.get("title")) or text_or_none(doc.get("filename")) or ""
        body = clean_text(text or "")
        out.append(Passage(f"D{i}", body, title, document_id=file_id or url, has_text=bool(body.strip())))
    return tuple(out)


def _parts_responses(response: Any) -> list[tuple[str | None, list[Any]]]:
    """(text, annotations) of each content part of the message items; text None for a part that
    is not `output_text` (a refusal): it holds no answer text, so annotations there point nowhere."""
    if isinstance(response, Mapping) and "output" not in response and isinstance(response.get("response"), Mapping):
        response = response["response"]
    if not isinstance(response, Mapping) or not isinstance(response.get("output"), list):
        raise TurnError("response.output is missing or not a list")
    parts: list[tuple[str | None, list[Any]]] = []
    for i, item in enumerate(response["output"]):
        if not isinstance(item, Mapping):
            raise TurnError(f"response.output[{i}] is not an object")
        if item.get("type") != "message":
            continue
        content = item.get("content")
        if not isinstance(content, list):
            raise TurnError(f"response.output[{i}].content is not a list")
        for j, part in enumerate(content):
            if not isinstance(part, Mapping):
                raise TurnError(f"response.output[{i}].content[{j}] is not an object")
            annotations = part.get("annotations") or []
            if not isinstance(annotations, list):
                raise TurnError(f"response.output[{i}].content[{j}].annotations is not a list")
            if part.get("type") != "output_text":
                parts.append((None, annotations))
                continue
            if not isinstance(part.get("text"), str):
                raise TurnError(f"response.output[{i}].content[{j}].text is not a string")
            parts.append((part["text"], annotations))
    return parts


def _parts_chat(response: Any) -> list[tuple[str | None, list[Any]]]:
    if isinstance(response, Mapping) and isinstance(response.get("choices"), list):
        if not response["choices"] or not isinstance(response["choices"][0], Mapping):
            raise TurnError("response.choices holds no choice")
        response = response["choices"][0].get("message")
    if not isinstance(response, Mapping):
        raise TurnError("response is not a chat completion message")
    content = response.get("content")
    if not isinstance(content, str):
        raise TurnError("response.content is missing or not a string")
    annotations = response.get("annotations") or []
    if not isinstance(annotations, list):
        raise TurnError("response.annotations is not a list")
    flat = [a.get("url_citation", a) if isinstance(a, Mapping) and a.get("type") == "url_citation" else a
            for a in annotations]
    return [(content, [{"type": "url_citation", **a} if isinstance(a, Mapping) and "type" not in a else a
                       for a in flat])]


def normalise(data: Mapping[str, Any], chat: bool) -> Normalised:
    parts = (_parts_chat if chat else _parts_responses)(data.get("response"))
    context = _documents(data)
    by_url = {p.document_id: p.label for p in context}
    found = Citations()
    texts: list[str] = []
    offset = 0
    cuts: list[tuple[int, int]] = []
    for text, notes in parts:
        if text is None:
            for _ in notes:
                found.bad(PART_OUT_OF_RANGE, "annotation in a content part that holds no output_text")
            continue
        if texts:
            offset += len(PART_SEPARATOR)
        texts.append(clean_text(text))
        for annotation in notes:
            _annotation(annotation, text, offset, by_url, found, cuts)
        offset += len(text)
    answer = PART_SEPARATOR.join(texts)
    if cuts:
        answer, spans = _cut(answer, cuts, found.spans)
        found.spans = spans
    return Normalised(answer, context, tuple(found.spans), tuple(found.problems))


def _annotation(annotation: Any, text: str, offset: int, by_url: Mapping[str | None, str], found: Citations,
                cuts: list[tuple[int, int]]) -> None:
    if not isinstance(annotation, Mapping):
        found.bad(MALFORMED, "annotation is not an object")
        return
    kind = annotation.get("type")
    if kind == "file_path":  # a generated file's path, not a citation
        return
    if kind not in ("url_citation", "file_citation", "container_file_citation"):
        found.bad(MALFORMED, f"unknown annotation type {str(kind)[:60]!r}")
        return
    key = "url" if kind == "url_citation" else "file_id"
    ref = annotation.get(key)
    if not isinstance(ref, str) or not ref:
        found.bad(MALFORMED, f"{kind} {key} is missing or not a string")
        return
    ref = clean_text(ref)
    # the logged source's label; else a file id as given, a url never (`unknown_url_label`)
    label = by_url.get(ref) or (unknown_url_label(ref) if kind == "url_citation" else ref)
    if kind == "file_citation":
        index = annotation.get("index")
        if not is_int(index):
            found.bad(MALFORMED, "file_citation index is missing or not an integer", label=label,
                      span=_placed(text, offset, None))
            return
        if not 0 <= index <= len(text):
            found.bad(OFFSETS_OUT_OF_RANGE, f"file_citation index {index} is outside its part "
                      f"({len(text)} characters)", label=label, span=_placed(text, offset, None))
            return
        span, point = (offset + index, offset + index), True
    else:
        start, end = annotation.get("start_index"), annotation.get("end_index")
        if not (is_int(start) and is_int(end)):
            found.bad(MALFORMED, f"{kind} start_index/end_index missing or not integers", label=label,
                      span=_placed(text, offset, None))
            return
        if not 0 <= start <= end <= len(text):
            found.bad(OFFSETS_OUT_OF_RANGE, f"{kind} offsets {start}-{end} are outside its part "
                      f"({len(text)} characters)", label=label,
                      span=_placed(text, offset, (start, end) if start <= end else None))
            return
        span, point = (offset + start, offset + end), False
        if kind == "url_citation":
            span, point = _link_markers(text, start, end, offset, ref, cuts) or (span, point)
    if ref not in by_url:
        found.bad(UNKNOWN_SOURCE, f"{key} {ref[:80]!r} names no logged source", label=label, span=span, point=point)
        return
    found.ok(*span, label, point=point,
             unverified=("answer_span", "cited_text") if kind == "file_citation" else ("cited_text",))


def _placed(text: str, offset: int, span: tuple[int, int] | None) -> tuple[int, int]:
    """Where a citation with broken offsets in a part (at answer offset `offset`) is counted: its
    span clipped to the part, else the part's end (its last sentence); never dropped (SPEC §3.4)."""
    start, end = placed_span(text, None, span)
    return offset + start, offset + end


def _link_markers(text: str, start: int, end: int, offset: int, url: str, cuts: list[tuple[int, int]]
                  ) -> tuple[tuple[int, int], bool] | None:
    """Links to the annotation's own url inside its range are markers: cut them (with the spaces
    before them). The citation keeps the rest of its range as its span, or, when the range held
    nothing but its links, becomes a position where the first link stood. None: no such link."""
    links = [m for m in _LINK.finditer(text, start, end) if (m.group("wrapped") or m.group("bare")) == url]
    if not links:
        return None
    kept, pos = [], start
    for m in links:
        begin = m.start()
        while begin > 0 and text[begin - 1] in " \t":
            begin -= 1
        cuts.append((offset + begin, offset + m.end()))
        kept.append(text[pos:m.start()])
        pos = m.end()
    kept.append(text[pos:end])
    if "".join(kept).strip():
        return (offset + start, offset + end), False  # the cut leaves the claim part of the span
    first = cuts[-len(links)][0]
    return (first, first), True


def _cut(answer: str, cuts: list[tuple[int, int]], spans: Sequence[CitationSpan]) -> tuple[str, list[CitationSpan]]:
    """Remove the link markers from the answer and move every citation to the cut text."""
    merged: list[list[int]] = []
    for start, end in sorted(cuts):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    # a link glued to the next word keeps a space so the words do not fuse
    pieces, pos = [], 0
    shifts: list[tuple[int, int, int]] = []  # (cut start, cut end, characters removed before its end)
    removed = 0
    for start, end in merged:
        pieces.append(answer[pos:start])
        glue = " " if start > 0 and end < len(answer) and not answer[end].isspace() \
            and not answer[start - 1].isspace() and answer[end].isalnum() else ""
        pieces.append(glue)
        removed += end - start - len(glue)
        shifts.append((start, end, removed))
        pos = end
    pieces.append(answer[pos:])

    cut_ends = [end for _, end, _ in shifts]

    def move(x: int) -> int:  # a binary search over the cuts (a walk over them per citation was quadratic)
        k = bisect.bisect_right(cut_ends, x)  # the cuts that end at or before x
        before = shifts[k - 1][2] if k else 0
        if k < len(shifts) and x > shifts[k][0]:  # inside a cut: at its start
            return shifts[k][0] - before
        return x - before

    return "".join(pieces), [CitationSpan(move(c.start), move(c.end), c.label, c.valid, point=c.point,
                                          problem=c.problem, unverified=c.unverified, confidence=c.confidence)
                             for c in spans]

