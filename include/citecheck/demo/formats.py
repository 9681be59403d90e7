"""Writes one answer and its citations in every logged format (SPEC §3.4), and its marker twin.

The sample's provider-native turns and the twin tests are built here: a list of claims (answer
sentences, each citing some sources) and the sources become an `anthropic_blocks`,
`openai_responses`, `openai_chat`, `cohere_v2` or `gemini` turn in the shape the provider
returns, offsets in the provider's own unit, and the same answer with `[D0]` markers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

NATIVE_FORMATS = ("anthropic_blocks", "openai_responses", "openai_chat", "cohere_v2", "gemini")
ANTHROPIC_KINDS = ("char", "page", "block", "search", "web")


@dataclass(frozen=True)
class Source:
    """A source the answer may cite: its title, url and text (split in pages or blocks where the
    format has them: `parts`)."""

    title: str
    url: str
    parts: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.parts)


@dataclass
class Claim:
    """One answer sentence: `body` (no final stop), the indices of the sources it cites, and
    whether its markers follow the full stop (links written after the sentence)."""

    body: str
    cites: tuple[int, ...]
    stop: str = "."
    after_stop: bool = False
    quotes: dict[int, int] = field(default_factory=dict)  # source -> the part it quotes (default 0)

    def quote(self, source: int) -> int:
        return self.quotes.get(source, 0)


def _sentences(claims: Sequence[Claim]) -> list[tuple[int, int, int]]:
    """(start of the body, end of the body, end of the sentence) in the joined answer."""
    out, pos = [], 0
    for claim in claims:
        out.append((pos, pos + len(claim.body), pos + len(claim.body) + len(claim.stop)))
        pos = out[-1][2] + 1
    return out


def plain_answer(claims: Sequence[Claim]) -> str:
    return " ".join(c.body + c.stop for c in claims)


def markers_twin(claims: Sequence[Claim], sources: Sequence[Source], prefix: str = "D") -> dict[str, Any]:
    """The same answer written with markers: before the stop, or after it where the claim says."""
    pieces = []
    for claim in claims:
        marks = "".join(f"[{prefix}{i}]" for i in claim.cites)
        pieces.append(f"{claim.body}{claim.stop} {marks}".rstrip() if claim.after_stop
                      else f"{claim.body}{' ' + marks if marks else ''}{claim.stop}")
    return {"answer_format": "markers", "answer": " ".join(pieces),
            "context": [{"label": f"{prefix}{i}", "source": s.title, "text": s.text, "document_id": s.url}
                        for i, s in enumerate(sources)]}


def anthropic_turn(claims: Sequence[Claim], sources: Sequence[Source], kind: str = "char",
                   web_text: bool = True) -> dict[str, Any]:
    """An `anthropic_blocks` turn: each cited body is a text block with its citations, its stop a
    plain block; the sources are documents (text, pages, blocks), search results or web results."""
    blocks: list[dict[str, Any]] = []
    for n, claim in enumerate(claims):
        gap = "" if n == len(claims) - 1 else " "
        if claim.cites:
            citations = [_anthropic_citation(kind, i, sources[i], claim.quote(i)) for i in claim.cites]
            blocks.append({"type": "text", "text": claim.body, "citations": citations})
            blocks.append({"type": "text", "text": claim.stop + gap})
        else:
            blocks.append({"type": "text", "text": claim.body + claim.stop + gap})
    turn: dict[str, Any] = {"answer_format": "anthropic_blocks", "answer": "", "answer_blocks": blocks}
    if kind == "search":
        turn["request_search_results"] = [{"source": s.url, "title": s.title, "blocks": list(s.parts)}
                                          for s in sources]
    elif kind == "web":
        turn["web_results"] = [{"url": s.url, "title": s.title, **({"text": s.text} if web_text else {})}
                               for s in sources]
    elif kind == "page":
        turn["request_documents"] = [{"title": s.title, "pages": list(s.parts)} for s in sources]
    elif kind == "block":
        turn["request_documents"] = [{"title": s.title, "blocks": list(s.parts)} for s in sources]
    else:
        turn["request_documents"] = [{"title": s.title, "text": s.text} for s in sources]
    return turn


def _anthropic_citation(kind: str, index: int, source: Source, part: int) -> dict[str, Any]:
    quoted = source.parts[part]
    if kind == "char":
        start = len(" ".join(source.parts[:part])) + (1 if part else 0)
        return {"type": "char_location", "cited_text": quoted, "document_index": index,
                "document_title": source.title, "start_char_index": start, "end_char_index": start + len(quoted)}
    if kind == "page":
        return {"type": "page_location", "cited_text": quoted, "document_index": index,
                "document_title": source.title, "start_page_number": part + 1, "end_page_number": part + 2}
    if kind == "block":
        return {"type": "content_block_location", "cited_text": quoted, "document_index": index,
                "document_title": source.title, "start_block_index": part, "end_block_index": part + 1}
    if kind == "search":
        return {"type": "search_result_location", "cited_text": quoted, "search_result_index": index,
                "source": source.url, "title": source.title, "start_block_index": part, "end_block_index": part + 1}
    return {"type": "web_search_result_location", "cited_text": quoted, "url": source.url, "title": source.title,
            "encrypted_index": f"enc-{index}"}


def _documents(sources: Sequence[Source], *, files: bool = False) -> list[dict[str, Any]]:
    return [{("file_id" if files else "url"): (f"file-{i:04d}" if files else s.url), "title": s.title,
             "text": s.text} for i, s in enumerate(sources)]


def _link(url: str) -> str:
    host = url.split("/")[2] if "://" in url else url
    return f"([{host}]({url}))"


def openai_parts(claims: Sequence[Claim], sources: Sequence[Source], *, parts: int = 1, files: bool = False
                 ) -> list[tuple[str, list[dict[str, Any]]]]:
    """(text, annotations) per output_text part: claims split over `parts` parts, offsets in each
    part's own characters. A claim with `after_stop` gets web search's markdown link after its
    stop (its annotation covers the link); with `files`, file_citation positions instead."""
    size = -(-len(claims) // parts)
    out = []
    for p in range(parts):
        mine = claims[p * size:(p + 1) * size]
        text, notes = "", []
        for n, claim in enumerate(mine):
            if n:
                text += " "
            body_start = len(text)
            text += claim.body
            body_end = len(text)
            text += claim.stop
            for i in claim.cites:
                if files:
                    at = len(text) if claim.after_stop else body_end
                    notes.append({"type": "file_citation", "file_id": f"file-{i:04d}", "filename": sources[i].title,
                                  "index": at})
                elif claim.after_stop:
                    link = " " + _link(sources[i].url)
                    notes.append({"type": "url_citation", "url": sources[i].url, "title": sources[i].title,
                                  "start_index": len(text) + 1, "end_index": len(text) + len(link)})
                    text += link
                else:
                    notes.append({"type": "url_citation", "url": sources[i].url, "title": sources[i].title,
                                  "start_index": body_start, "end_index": body_end})
        out.append((text, notes))
    return out


def openai_responses_turn(claims: Sequence[Claim], sources: Sequence[Source], *, parts: int = 1,
                          files: bool = False) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": notes, "logprobs": []}
               for text, notes in openai_parts(claims, sources, parts=parts, files=files)]
    response = {"id": "resp_demo", "object": "response", "created_at": 1764580000, "model": "gpt-5",
                "status": "completed", "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                "output": [{"type": "message", "id": "msg_demo", "role": "assistant", "status": "completed",
                            "content": content}]}
    return {"answer_format": "openai_responses", "answer": "", "response": response,
            "request_documents": _documents(sources, files=files)}


def openai_chat_turn(claims: Sequence[Claim], sources: Sequence[Source]) -> dict[str, Any]:
    ((text, notes),) = openai_parts(claims, sources)
    message = {"role": "assistant", "content": text, "refusal": None,
               "annotations": [{"type": "url_citation", "url_citation": {k: v for k, v in a.items() if k != "type"}}
                               for a in notes]}
    return {"answer_format": "openai_chat", "answer": "", "response": message,
            "request_documents": _documents(sources)}


def cohere_turn(claims: Sequence[Claim], sources: Sequence[Source]) -> dict[str, Any]:
    answer = plain_answer(claims)
    citations = []
    for claim, (start, end, _) in zip(claims, _sentences(claims), strict=True):
        if claim.cites:
            citations.append({"start": start, "end": end, "text": answer[start:end], "type": "TEXT_CONTENT",
                              "sources": [{"type": "document", "id": f"doc-{i}",
                                           "document": {"id": f"doc-{i}", "title": sources[i].title,
                                                        "snippet": sources[i].text}} for i in claim.cites]})
    message = {"role": "assistant", "content": [{"type": "text", "text": answer}], "citations": citations}
    return {"answer_format": "cohere_v2", "answer": "", "response": message,
            "request_documents": [{"id": f"doc-{i}", "data": {"title": s.title, "text": s.text}}
                                  for i, s in enumerate(sources)]}


def gemini_turn(claims: Sequence[Claim], sources: Sequence[Source], *, parts: int = 1, web: bool = False,
                scores: bool = True) -> dict[str, Any]:
    """A Gemini candidate: claims over `parts` parts, supports in UTF-8 bytes of each part, zero
    offsets and part indices omitted as protobuf JSON does; chunks `retrievedContext` (or `web`,
    their texts then logged in `request_documents`)."""
    size = -(-len(claims) // parts)
    part_list, supports = [], []
    for p in range(parts):
        mine = claims[p * size:(p + 1) * size]
        text = plain_answer(mine) + (" " if p < parts - 1 else "")
        part_list.append({"text": text})
        for claim, (start, end, _) in zip(mine, _sentences(mine), strict=True):
            if not claim.cites:
                continue
            b_start, b_end = len(text[:start].encode()), len(text[:end].encode())
            segment = {**({"partIndex": p} if p else {}), **({"startIndex": b_start} if b_start else {}),
                       "endIndex": b_end, "text": text[start:end]}
            support: dict[str, Any] = {"segment": segment, "groundingChunkIndices": list(claim.cites)}
            if scores:
                support["confidenceScores"] = [0.9 for _ in claim.cites]
            supports.append(support)
    chunks = [{"web": {"uri": s.url, "title": s.title}} if web else
              {"retrievedContext": {"uri": s.url, "title": s.title, "text": s.text}} for s in sources]
    candidate = {"content": {"role": "model", "parts": part_list}, "finishReason": "STOP",
                 "groundingMetadata": {"groundingChunks": chunks, "groundingSupports": supports}}
    turn: dict[str, Any] = {"answer_format": "gemini", "answer": "", "response": candidate}
    if web:
        turn["request_documents"] = [{"uri": s.url, "title": s.title, "text": s.text} for s in sources]
    return turn


def native_turn(answer_format: str, claims: Sequence[Claim], sources: Sequence[Source], **options: Any
                ) -> dict[str, Any]:
    """`claims` over `sources` in `answer_format` (options: the writer's own keywords)."""
    writer = {"anthropic_blocks": anthropic_turn, "openai_responses": openai_responses_turn,
              "openai_chat": openai_chat_turn, "cohere_v2": cohere_turn, "gemini": gemini_turn}[answer_format]
    return writer(claims, sources, **options)
