"""`anthropic_blocks`: Anthropic Messages content blocks with their citations (SPEC §3.4).

Sources, in the order the API counts them: every `document` block of the request across all
messages (`request_documents`, `D<index>`: plain text `{title, text}`, PDF `{title, pages}`,
custom content `{title, blocks}`), every `search_result` block (`request_search_results`,
`R<index>`: `{source, title, blocks}`) and the server web search results (`web_results`,
`W<k>`: `{url, title, text?}`; when not logged, the `web_search_tool_result` blocks of the
response). The text blocks joined in order are the answer; a block's range is the answer span
of each of its citations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from citecheck.core.formats.common import (
    CITED_TEXT_MISMATCH,
    INDEX_OUT_OF_RANGE,
    MALFORMED,
    OFFSETS_OUT_OF_RANGE,
    TITLE_MISMATCH,
    UNKNOWN_SOURCE,
    Citations,
    Normalised,
    TurnError,
    blocks_text,
    clean_text,
    is_int,
    joined_equals,
    optional_list,
    squash,
    text_or_none,
    unknown_url_label,
)
from citecheck.core.model import Passage


class _Source:
    """One source the citations can point at, with what its format lets the job check."""

    __slots__ = ("_squashed", "blocks", "pages", "passage", "source", "title")

    def __init__(self, passage: Passage, title: str | None, *, pages: list[str] | None = None,
                 blocks: list[str] | None = None, source: str | None = None) -> None:
        self.passage, self.title, self.pages, self.blocks, self.source = passage, title, pages, blocks, source
        self._squashed: tuple[str, list[int]] | None = None

    def squashed(self) -> tuple[str, list[int]]:
        """The source's text with whitespace squashed, built once per source (not per citation),
        and where each page starts in it (one entry per page, plus the end): what `cited_text` is
        looked up in."""
        if self._squashed is None:
            parts = [squash(page) for page in self.pages] if self.pages is not None else [squash(self.passage.text)]
            starts, length = [], 0
            for part in parts:
                if part and length:
                    length += 1  # the space that joins it to the page before
                starts.append(length)
                length += len(part)
            self._squashed = (" ".join(part for part in parts if part), [*starts, length])
        return self._squashed

    def contains(self, cited: str, pages: tuple[int, int] | None = None) -> bool:
        """Does the text (of the 1-based pages `[start, end)` when given) contain `cited`,
        whitespace aside? A search in the squashed text, with no copy of it."""
        text, starts = self.squashed()
        lo, hi = (starts[pages[0] - 1], starts[pages[1] - 1]) if pages is not None else (0, len(text))
        return text.find(squash(cited), lo, hi) >= 0


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TurnError(f"{where} is not a list of strings")
    return [clean_text(v) for v in value]


def _documents(documents: list[Any]) -> list[_Source]:
    out = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, Mapping):
            raise TurnError(f"request_documents[{i}] needs a text string")
        title = text_or_none(doc.get("title"))
        label = f"D{i}"
        if doc.get("pages") is not None:
            pages = _strings(doc["pages"], f"request_documents[{i}].pages")
            out.append(_Source(Passage(label, "\n\n".join(pages), title or ""), title, pages=pages))
        elif doc.get("blocks") is not None:
            blocks = _strings(doc["blocks"], f"request_documents[{i}].blocks")
            out.append(_Source(Passage(label, blocks_text(blocks), title or ""), title, blocks=blocks))
        elif isinstance(doc.get("text"), str):
            out.append(_Source(Passage(label, clean_text(doc["text"]), title or ""), title))
        else:
            raise TurnError(f"request_documents[{i}] needs a text string")
    return out


def _search_results(results: list[Any]) -> list[_Source]:
    out = []
    for i, result in enumerate(results):
        if not isinstance(result, Mapping):
            raise TurnError(f"request_search_results[{i}] is not an object")
        blocks = _strings(result.get("blocks", result.get("content")), f"request_search_results[{i}].blocks")
        title, source = text_or_none(result.get("title")), text_or_none(result.get("source"))
        out.append(_Source(Passage(f"R{i}", blocks_text(blocks), title or "", document_id=source), title,
                           blocks=blocks, source=source))
    return out


def web_sources(results: list[Any], key: str = "web_results") -> list[_Source]:
    out = []
    for k, result in enumerate(results):
        if not isinstance(result, Mapping) or not isinstance(result.get("url"), str):
            raise TurnError(f"{key}[{k}] needs a url string")
        text = text_or_none(result.get("text"))
        title = text_or_none(result.get("title"))
        out.append(_Source(Passage(f"W{k}", text or "", title or "", document_id=clean_text(result["url"]),
                                   has_text=bool(text and text.strip())), title, source=clean_text(result["url"])))
    return out


def _response_web_results(blocks: Sequence[Any]) -> list[dict[str, Any]]:
    """The web results of the response's own `web_search_tool_result` blocks, in order."""
    out = []
    for block in blocks:
        if isinstance(block, Mapping) and block.get("type") == "web_search_tool_result" \
                and isinstance(block.get("content"), list):
            out.extend(r for r in block["content"] if isinstance(r, Mapping) and r.get("type") == "web_search_result")
    return out


def normalise(data: Mapping[str, Any]) -> Normalised:
    blocks = data.get("answer_blocks")
    if blocks is None and isinstance(data.get("response"), Mapping):
        blocks = data["response"].get("content")
    if not isinstance(blocks, list):
        raise TurnError("answer_blocks is missing or not a list")
    documents = data.get("request_documents")
    search = optional_list(data, "request_search_results")
    web = optional_list(data, "web_results")
    if documents is not None and not isinstance(documents, list):
        raise TurnError("request_documents is missing or not a list")
    web_logged = web if web is not None else _response_web_results(blocks)
    if documents is None and search is None and web is None and not web_logged:
        raise TurnError("request_documents is missing or not a list (and no request_search_results or "
                        "web_results were logged)")
    sources = {"D": _documents(documents or []), "R": _search_results(search or []),
               "W": web_sources(web_logged)}
    pieces: list[str] = []
    found = Citations()
    length = 0
    for b, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            raise TurnError(f"answer_blocks[{b}] is not an object")
        if block.get("type", "text") != "text":
            continue
        text = block.get("text")
        if not isinstance(text, str):
            raise TurnError(f"answer_blocks[{b}].text is not a string")
        start, length = length, length + len(text)
        pieces.append(clean_text(text))
        citations = block.get("citations") or []
        if not isinstance(citations, list):
            raise TurnError(f"answer_blocks[{b}].citations is not a list")
        for citation in citations:
            _check(citation, sources, (start, length), found)
    context = tuple(s.passage for kind in "DRW" for s in sources[kind])
    return Normalised("".join(pieces), context, tuple(found.spans), tuple(found.problems))


_INDEX_KEY = {"char_location": "document_index", "page_location": "document_index",
              "content_block_location": "document_index", "search_result_location": "search_result_index"}


def _check(citation: Any, sources: Mapping[str, list[_Source]], span: tuple[int, int], found: Citations) -> None:
    if not isinstance(citation, Mapping):
        found.bad(MALFORMED, "citation is not an object")
        return
    kind = citation.get("type", "char_location")
    if kind == "web_search_result_location":
        _check_web(citation, sources["W"], span, found)
        return
    key = _INDEX_KEY.get(kind) if isinstance(kind, str) else None
    if key is None:
        found.bad(MALFORMED, f"unknown citation type {str(kind)[:60]!r}")
        return
    index = citation.get(key)
    if not is_int(index):
        found.bad(MALFORMED, f"{key} is missing or not an integer")
        return
    pool = sources["R" if kind == "search_result_location" else "D"]
    label = f"{'R' if kind == 'search_result_location' else 'D'}{index}"
    title_key = "title" if kind == "search_result_location" else "document_title"
    cited_title = text_or_none(citation.get(title_key))
    where = {"label": label, "span": span, "index": index, "cited_title": cited_title}
    if not 0 <= index < len(pool):
        what = "search_result_index" if kind == "search_result_location" else "document_index"
        found.bad(INDEX_OUT_OF_RANGE, f"{what} out of range", **where)
        return
    record = pool[index]
    where["recorded_title"] = record.title if record.title is not None else record.passage.source
    if cited_title is not None and cited_title != (record.title or ""):
        found.bad(TITLE_MISMATCH, "title does not match the request document", **where)
        return
    if kind == "search_result_location":
        cited_source = text_or_none(citation.get("source"))
        if cited_source is not None and cited_source != record.source:
            found.bad(TITLE_MISMATCH, "source does not match the search result", **where)
            return
    cited = citation.get("cited_text")
    if not isinstance(cited, str):
        found.bad(MALFORMED, "cited_text is missing or not a string", **where)
        return
    cited = clean_text(cited)
    problem = {"char_location": _char_problem, "page_location": _page_problem}.get(kind, _block_problem)(
        citation, record, cited)
    if problem is None:
        found.ok(*span, label, unverified=_unverifiable(kind, record))
    else:
        found.bad(*problem, **where)


def _unverifiable(kind: str, record: _Source) -> tuple[str, ...]:
    """Fields of a valid citation that the logged source could not check."""
    if kind == "page_location" and record.pages is None:
        return ("page_numbers",)
    if kind in ("content_block_location", "search_result_location") and record.blocks is None:
        return ("block_indices",)
    return ()


def _offsets(citation: Mapping[str, Any], start_key: str, end_key: str, what: str) -> tuple[int, int] | tuple[str, str]:
    start, end = citation.get(start_key), citation.get(end_key)
    if not (is_int(start) and is_int(end)):
        return MALFORMED, f"{what} missing"
    return start, end


def _char_problem(citation: Mapping[str, Any], record: _Source, cited: str) -> tuple[str, str] | None:
    offsets = _offsets(citation, "start_char_index", "end_char_index", "char offsets")
    if isinstance(offsets[0], str):
        return offsets  # type: ignore[return-value]
    start, end = offsets
    text = record.passage.text
    if not 0 <= start <= end <= len(text):  # type: ignore[operator]
        return OFFSETS_OUT_OF_RANGE, "char offsets out of range"
    if text[start:end].strip() != cited.strip():
        return CITED_TEXT_MISMATCH, "cited_text does not match the record span"
    return None


def _page_problem(citation: Mapping[str, Any], record: _Source, cited: str) -> tuple[str, str] | None:
    offsets = _offsets(citation, "start_page_number", "end_page_number", "page numbers")
    if isinstance(offsets[0], str):
        return offsets  # type: ignore[return-value]
    start, end = offsets
    if record.pages is not None and not 1 <= start < end <= len(record.pages) + 1:  # type: ignore[operator]
        return OFFSETS_OUT_OF_RANGE, f"pages {start} to {end} (end exclusive) are not among the " \
                                     f"{len(record.pages)} logged pages"
    # a PDF logged as plain text: the page numbers cannot be checked, the whole text is looked in
    if not record.contains(cited, None if record.pages is None else (start, end)):  # type: ignore[arg-type]
        return CITED_TEXT_MISMATCH, "cited_text is not on the cited pages"
    return None


def _block_problem(citation: Mapping[str, Any], record: _Source, cited: str) -> tuple[str, str] | None:
    offsets = _offsets(citation, "start_block_index", "end_block_index", "block indices")
    if isinstance(offsets[0], str):
        return offsets  # type: ignore[return-value]
    start, end = offsets
    if record.blocks is None:
        return None if record.contains(cited) else (CITED_TEXT_MISMATCH, "cited_text is not in the document")
    if not 0 <= start < end <= len(record.blocks):  # type: ignore[operator]
        return OFFSETS_OUT_OF_RANGE, f"blocks {start} to {end} (end exclusive) are not among the " \
                                     f"{len(record.blocks)} logged blocks"
    if not joined_equals(record.blocks[start:end], cited):  # type: ignore[misc]
        return CITED_TEXT_MISMATCH, "cited_text is not the text of the cited blocks"
    return None


def _check_web(citation: Mapping[str, Any], web: list[_Source], span: tuple[int, int], found: Citations) -> None:
    url = citation.get("url")
    if not isinstance(url, str):
        found.bad(MALFORMED, "url is missing or not a string")
        return
    url = clean_text(url)
    k = next((k for k, w in enumerate(web) if w.source == url), None)
    if k is None:
        found.bad(UNKNOWN_SOURCE, "url is not among the logged web results", label=unknown_url_label(url), span=span)
        return
    record = web[k]
    cited = citation.get("cited_text")
    if not record.passage.has_text:
        found.ok(*span, f"W{k}", unverified=("cited_text",))
    elif isinstance(cited, str) and not record.contains(clean_text(cited)):
        found.bad(CITED_TEXT_MISMATCH, "cited_text is not in the logged web result", label=f"W{k}", span=span,
                  index=k)
    else:
        found.ok(*span, f"W{k}", unverified=() if isinstance(cited, str) else ("cited_text",))
