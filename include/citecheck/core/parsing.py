"""Answer parsing (SPEC §2): sentences, citation markers, and which sentence owns which marker.

Sentences come from `sentencex` (a real, fast rule-based segmenter; it keeps "U.S.", "Dr.",
initials and decimals together), after splitting lines so bullet items and list lines are
separate sentences, with a configurable list of abbreviations a sentence may not end on
("approx.", "e.g." …). Both follow the answer's language (SPEC §2.2; `Config.rules_for`): sentencex
gets the language code and each language has its abbreviations ("z. B.", "p. ex.", "p. ej."),
which may hold spaces; 。！？ end a sentence with no space after them. Markers are removed before
segmenting, together with the space before them, so the judge sees "… hotel." rather than
"… hotel [S2].". A marker written after a sentence's full stop — with or without a space, or
glued to the next sentence as in "… Pershing.[3]Five …" — belongs to the sentence before it.

Bracket text inside code (a fenced block or an inline `code span`) and in the middle of a URL
(`https://x.org/a[1]/b`) is code, not a citation: it stays in the text and names no label.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import regex
from sentencex import segment

from citecheck.core.config import Config
from citecheck.core.formats.common import TurnError
from citecheck.core.language_rules import THAI_SPACES, LanguageRules

_GLYPHS = "\u2022\u2023\u25aa\u25e6\u25cf\u25a0\u25ba"  # • ‣ ▪ ◦ ● ■ ►: only ever list bullets
_BULLET = re.compile(
    rf"^\s*(?:[{_GLYPHS}]\s*|(?:[-*+\u2013\u2014]|\(?\d{{1,3}}[.)]|\(?[a-zA-Z][.)])\s+)")
_LINE_BREAK = re.compile(rf"\n|(?=[{_GLYPHS}])")  # a bullet glyph inside a line starts a new item
_STOP_BEFORE = regex.compile(  # any script's stop (. ! ? … 。 ！ ？ । ؟ ։ …), then closing quotes or brackets
    r"[\p{Sentence_Terminal}\u2026][\"'\u201d\u2019\u00bb)\]\u300d\u300f\uff09]*$")
_HAS_WORD = re.compile(r"\w")
_UNIT = r"(?:\b(?:km|kg|cm|mm|ml|kWh)|(?<=\d)\s?(?:m|g|l|h))\."
_NEXT_CAPITAL = r"[A-Z\u00c0-\u00d6\u00d8-\u00de\u00bf\u00a1]"
_UNIT_STOP = re.compile(  # a unit symbol ending a sentence: the next one opens with a capital, ¿ or ¡
    rf"{_UNIT}(?=\s+{_NEXT_CAPITAL})")
_UNIT_END = re.compile(rf"{_UNIT}\s*$")  # a piece cut there: no abbreviation list ("km", "h") joins it again
_FULL_STOPS = frozenset("\u3002\uff01\uff1f")  # 。！？
_AFTER_FULL_STOP = re.compile(  # after 。！？, unless a closing quote or bracket or another stop follows
    r"(?<=[\u3002\uff01\uff1f])(?=[^\s\u3002\uff01\uff1f\u300d\u300f\uff09)\]\"'\u201d\u2019])")
# Unicode's Sentence_Terminal characters of every script (। ؟ ։ ። ။ ‼ …) other than those sentencex
# and `_AFTER_FULL_STOP` cut by themselves, then closing quotes or brackets and a space: a cut
_OTHER_TERMINAL = regex.compile(
    "(?![.?!\u3002\uff01\uff1f\uff0e\u2024\ufe52])\\p{Sentence_Terminal}"
    "[\"'\u201d\u2019\u00bb)\\]\u300d\u300f\uff09]*\\s+")
_THAI_SPACE = re.compile(r"(?<=[\u0e01-\u0e4f])[ \t\u00a0]+(?=[\u0e01-\u0e4f])")  # a space between Thai words
_SURROGATE = re.compile("[\ud800-\udfff]")
_FENCE = re.compile(r"(?m)^[ \t]*(`{3,}|~{3,})[^\n]*(?:\n|\Z)")
_INLINE_CODE = re.compile(r"(?<!`)(`{1,2})(?!`)[^\n]*?[^`\n](?<!`)\1(?!`)")
_URL = re.compile(r"(?i)\b(?:https?|ftp)://[^\s<>\"'`]+")
_URL_TAIL_CHARS = frozenset(".,;:!?)]\u2019\u201d")
_DEFAULT_CONFIG = Config()
_MAX_PASSES = 8  # marker removal passes; a second one is needed only for nested marker text


@dataclass(frozen=True, slots=True)
class ParsedSentence:
    """A sentence of an answer: judge-ready text and the labels its markers name."""

    text: str
    start: int
    end: int
    labels: tuple[str, ...]
    duplicate_labels: tuple[str, ...]
    markers: int
    markers_after_stop: int


@dataclass(slots=True)
class _Marker:
    offset: int
    labels: tuple[str, ...]
    after_stop: bool


def split_sentences(text: str, config: Config | None = None, language: str | None = None) -> list[str]:
    """Sentences of plain text (passages, key facts): lines first, then the segmenter."""
    cfg = config or _DEFAULT_CONFIG
    return [text[s:e] for s, e in _sentence_spans(text, cfg.rules_for(language))]


def parse_answer(answer: str, config: Config | None = None, language: str | None = None) -> list[ParsedSentence]:
    """Split a marker-format answer into sentences and attach each marker to its sentence
    (`language`: the turn's, None = undetermined)."""
    cfg = config or _DEFAULT_CONFIG
    clean, markers, _ = _strip_markers(answer, cfg)
    for _ in range(_MAX_PASSES):
        # removing "[S2]" from "[S1[S2]]" leaves "[S1]": marker text the model never wrote as a
        # marker. Remove it too (the judge never sees a marker) but take no labels from it.
        matches = _marker_matches(clean, cfg)
        if not matches:
            break
        clean, _, cuts = _strip_markers(clean, cfg, matches)
        _move_all(markers, cuts)
    spans = _sentence_spans(clean, cfg.rules_for(language), cfg.max_sentences_per_turn)
    owned: list[list[_Marker]] = [[] for _ in spans]
    if spans:
        starts = [s for s, _ in spans]
        for marker in markers:
            owned[max(bisect.bisect_right(starts, marker.offset) - 1, 0)].append(marker)
    return [_sentence(clean, span, mine) for span, mine in zip(spans, owned, strict=True)]


def parse_plain(text: str, spans_labels: Sequence[tuple[int, int, str] | tuple[int, int, str, bool]],
                config: Config | None = None, language: str | None = None) -> list[ParsedSentence]:
    """Split a marker-free answer; a sentence gets the labels of its citations (`cited_by`).

    Used for provider-native citations: `(start, end, label)` is an answer span, a fourth item
    True makes it a position-only citation at `start`.
    """
    points = [len(c) > 3 and bool(c[3]) for c in spans_labels]  # type: ignore[misc]
    return parse_cited(text, [(c[0], c[1]) for c in spans_labels], [c[2] for c in spans_labels], points,
                       config, language)[0]


def parse_cited(text: str, spans: Sequence[tuple[int, int]], labels: Sequence[str], points: Sequence[bool],
                config: Config | None = None, language: str | None = None
                ) -> tuple[list[ParsedSentence], list[list[int]]]:
    """`parse_plain` with the citations as columns; also returns each sentence's citation indices."""
    cfg = config or _DEFAULT_CONFIG
    check_turn_citation_count(spans, cfg)  # before the answer is segmented: a refused answer costs nothing more
    sentences = _sentence_spans(text, cfg.rules_for(language), cfg.max_sentences_per_turn)
    check_sentence_citation_counts(sentences, spans, points, cfg)
    hits_by_sentence = cited_by(text, sentences, spans, points)
    out = []
    for (start, end), hits in zip(sentences, hits_by_sentence, strict=True):
        mine = tuple(dict.fromkeys(labels[k] for k in hits))
        after_stop = len({labels[k] for k in hits if points[k] and _after_stop(text, spans[k][0])})
        out.append(ParsedSentence(_judge_text(text[start:end]), start, end, mine, (), len(mine), after_stop))
    return out, hits_by_sentence


def check_turn_citation_count(spans: Sequence[tuple[int, int]], config: Config) -> None:
    """`TurnError` with the answer's size as the reason when it has more citations than
    `[segmentation] max_citations_per_turn` (0: no limit)."""
    per_turn = config.max_citations_per_turn
    if per_turn and len(spans) > per_turn:
        raise TurnError(f"answer has {len(spans):,} citations, over the limit of {per_turn:,} "
                        "(segmentation.max_citations_per_turn)")


def check_sentence_citation_counts(sentences: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]],
                          points: Sequence[bool], config: Config) -> None:
    """`TurnError` when a sentence has more citations than `[segmentation] max_citations_per_sentence`
    (0: no limit), after `check_turn_citation_count` passed: the work of an answer is then bounded
    by its citations plus its sentences times the per-sentence cap. Counted in O(citations × log
    sentences), before any sentence owns one."""
    per_sentence = config.max_citations_per_sentence
    if not per_sentence or len(spans) <= per_sentence or not sentences:
        return
    starts = [s for s, _ in sentences]
    ends = [e for _, e in sentences]
    change = [0] * (len(sentences) + 1)  # +1 where a citation's first sentence is, -1 after its last
    for (start, end), point in zip(spans, points, strict=True):
        if point:
            first = last = max(bisect.bisect_right(starts, start) - 1, 0)
        else:
            first, last = bisect.bisect_right(ends, start), bisect.bisect_left(starts, end) - 1
        if first <= last:
            change[first] += 1
            change[last + 1] -= 1
    for index, count in enumerate(itertools.accumulate(change[:-1])):
        if count > per_sentence:
            raise TurnError(f"answer sentence {index} has {count:,} citations, over the limit of {per_sentence:,} "
                            "(segmentation.max_citations_per_sentence)")


def _after_stop(text: str, position: int) -> bool:
    return bool(_STOP_BEFORE.search(text[max(0, position - 8):position].rstrip()))


def cited_by(text: str, sentences: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]],
             points: Sequence[bool] | None = None) -> list[list[int]]:
    """For each sentence, the citations it owns (SPEC §3.4): every span overlapping it by at least
    one non-whitespace character, and every position-only citation (`points[k]`) whose position
    is at or after the sentence's start and before the next sentence's (as a marker after a full
    stop belongs to the sentence before it)."""
    points = points or [False] * len(spans)
    ranged = [k for k in range(len(spans)) if not points[k]]
    out = [[k for k in (ranged[h] for h in hits)
            if not text[max(spans[k][0], s):min(spans[k][1], e)].isspace()]
           for (s, e), hits in zip(sentences, overlapping(sentences, [spans[k] for k in ranged]), strict=True)]
    if sentences and len(ranged) < len(spans):
        starts = [s for s, _ in sentences]
        for k in range(len(spans)):
            if points[k]:
                out[max(bisect.bisect_right(starts, spans[k][0]) - 1, 0)].append(k)
        out = [sorted(hits) for hits in out]
    return out


def overlapping(sentences: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[list[int]]:
    """For each sentence (sorted, disjoint), the indices (in input order) of the spans overlapping it.

    A sweep over spans sorted by start: linear in sentences + spans + hits, where testing every
    span against every sentence was quadratic for answers made of thousands of cited blocks.
    """
    order = sorted(range(len(spans)), key=lambda k: spans[k][0])
    active: list[int] = []
    out: list[list[int]] = []
    i = 0
    for start, end in sentences:
        while i < len(order) and spans[order[i]][0] < end:
            active.append(order[i])
            i += 1
        active = [k for k in active if spans[k][1] > start]
        out.append(sorted(active))
    return out


def _move_all(markers: list[_Marker], cuts: list[tuple[int, int, int]]) -> None:
    """Where each marker lands after `_strip_markers` cut the text (cuts: start, end, inserted).

    Markers and cuts are both in text order, so one merged walk does it (a walk over all cuts
    per marker was quadratic: 10,000 nested markers took seconds).
    """
    shift = 0
    i = 0
    for marker in markers:
        offset = marker.offset
        while i < len(cuts) and cuts[i][1] < offset:
            start, end, inserted = cuts[i]
            shift += end - start - inserted
            i += 1
        if i < len(cuts) and cuts[i][0] < offset:
            marker.offset = cuts[i][0] - shift
        else:
            marker.offset = offset - shift


def _protected(text: str, cfg: Config) -> list[tuple[int, int]]:
    """Sorted, merged [start, end) regions whose bracket text is code or URL, not a marker."""
    regions: list[tuple[int, int]] = []
    if "`" in text or "~~~" in text:
        fences = list(_FENCE.finditer(text))
        i = 0
        while i < len(fences):  # an unclosed fence runs to the end of the answer
            opening = fences[i]
            j = next((k for k in range(i + 1, len(fences)) if fences[k].group(1)[0] == opening.group(1)[0]
                      and len(fences[k].group(1)) >= len(opening.group(1))), None)
            regions.append((opening.start(), fences[j].end() if j is not None else len(text)))
            i = j + 1 if j is not None else len(fences)
        regions.extend(m.span() for m in _INLINE_CODE.finditer(text))
    if "://" in text:
        for url in _URL.finditer(text):
            quoted = text[url.end():url.end() + 1] in ("\"", "'")  # an attribute: href="…[2]"
            end = len(url.group()) if quoted else _url_end(url.group(), cfg)
            if end:
                regions.append((url.start(), url.start() + end))
    regions.sort()
    merged: list[tuple[int, int]] = []
    for start, end in regions:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _url_end(url: str, cfg: Config) -> int:
    """Length of a URL without what trails it: punctuation, and markers citing the link."""
    matches = [m for m in cfg.marker_re.finditer(url) if m.end() > m.start()]
    end = len(url)
    while end:
        while matches and matches[-1].end() > end:
            matches.pop()
        if matches and matches[-1].end() == end:
            end = matches.pop().start()
        elif url[end - 1] in _URL_TAIL_CHARS:
            end -= 1
        else:
            break
    return end


def _inside(position: int, regions: list[tuple[int, int]]) -> bool:
    i = bisect.bisect_right(regions, (position, float("inf"))) - 1
    return i >= 0 and regions[i][0] <= position < regions[i][1]


def malformed_markers(text: str, cfg: Config) -> int:
    """Markers opened but never closed (`[S1 and …`: the sentence stays uncited), outside code and
    URLs: what the day's `input_repairs` counts. For a marker pattern that ends in a closing
    bracket (the default): its opening and labels, then no closing bracket, label or separator."""
    opening = cfg.unclosed_marker_re
    if opening is None or not opening.search(text):
        return 0
    regions = _protected(text, cfg)
    return sum(1 for m in opening.finditer(text) if not (regions and _inside(m.start(), regions)))


def _marker_matches(text: str, cfg: Config) -> list[re.Match[str]]:
    """Non-empty marker matches outside code and URLs."""
    regions = _protected(text, cfg)
    return [m for m in cfg.marker_re.finditer(text)
            if m.end() > m.start() and not (regions and _inside(m.start(), regions))]


def _strip_markers(answer: str, cfg: Config, matches: list[re.Match[str]] | None = None
                   ) -> tuple[str, list[_Marker], list[tuple[int, int, int]]]:
    """Remove markers (and the whitespace before them); remember where each one stood.

    A marker glued to the next word gets a separator in its place so the words do not fuse:
    a space, or a line break when it stands between a word and a capitalised word with no stop
    ("… housemates[3]It's …"): engines that drop a line break leave exactly that behind.
    """
    pieces: list[str] = []
    markers: list[_Marker] = []
    length = 0
    pos = 0
    tail = ""  # the last few characters of the output so far
    cuts: list[tuple[int, int, int]] = []
    for match in _marker_matches(answer, cfg) if matches is None else matches:
        if match.start() < pos:
            continue
        stripped = answer[pos:match.start()].rstrip(" \t")
        cuts.append((pos + len(stripped), match.end(), 0))
        if stripped:
            pieces.append(stripped)
            length += len(stripped)
            tail = (tail + stripped)[-8:]
        labels = tuple(lab for lab in cfg.separator_re.split(match.group("labels").strip()) if lab)
        after_stop = bool(_STOP_BEFORE.search(tail))
        markers.append(_Marker(length, labels, after_stop))
        pos = match.end()
        nxt = answer[pos:pos + 1]
        prev = tail[-1:]
        if (nxt and prev and not nxt.isspace() and not prev.isspace()
                and (nxt.isalnum() or nxt in "\"'(\u201c") and cfg.marker_re.match(answer, pos) is None):
            glued_break = not after_stop and nxt.isupper() and prev.isalnum()
            pieces.append("\n" if glued_break else " ")
            length += 1
            tail = (tail + pieces[-1])[-8:]
            cuts[-1] = (cuts[-1][0], cuts[-1][1], 1)
    pieces.append(answer[pos:])
    return "".join(pieces), markers, cuts


def _sentence_spans(text: str, rules: LanguageRules, most: int = 0) -> list[tuple[int, int]]:
    """(start, end) of each sentence: per line, segmenter output, abbreviation merges, trimmed.
    `most` (an answer's `max_sentences_per_turn`; 0: a passage, no limit): `TurnError` as soon as
    the text has more sentences, before the rest is segmented (memory stays bounded)."""
    spans: list[tuple[int, int]] = []
    for offset, line in _lines(text):
        bullet = _BULLET.match(line)
        body = line[bullet.end():] if bullet else line
        offset += len(line) - len(body)
        if not _HAS_WORD.search(body):
            continue
        pos = 0
        merged: list[list[int]] = []
        # the segmenter encodes to UTF-8: a lone surrogate would raise; one stand-in keeps lengths
        for piece in _pieces(rules,
                             _SURROGATE.sub("\ufffd", body) if _SURROGATE.search(body) else body):
            s, e = pos, pos + len(piece)
            pos = e
            before = body[merged[-1][0]:merged[-1][1]] if merged else ""
            if merged and rules.ends_with_abbreviation(before, piece) \
                    and not (_UNIT_END.search(before) and re.match(rf"\s*{_NEXT_CAPITAL}", piece)):
                merged[-1][1] = e
            else:
                merged.append([s, e])
                if most and len(spans) + len(merged) > 2 * most + 1:  # far over: stop segmenting now
                    raise TurnError(f"answer has more than {most:,} sentences (segmentation.max_sentences_per_turn)")
        for s, e in merged:
            seg = body[s:e]
            lead = len(seg) - len(seg.lstrip())
            trail = len(seg.rstrip())
            if trail > lead and _HAS_WORD.search(seg):
                spans.append((offset + s + lead, offset + s + trail))
            elif spans and seg.strip():
                spans[-1] = (spans[-1][0], offset + s + trail)
        if most and len(spans) > most:
            raise TurnError(f"answer has more than {most:,} sentences (segmentation.max_sentences_per_turn)")
    return spans


def _pieces(rules: LanguageRules, body: str) -> Iterator[str]:
    """The segmenter's pieces, each also cut after 。！？ (full-width stops end a sentence with no
    space after them, even before a digit, where the segmenter keeps going), after any other
    Sentence_Terminal character and a space (`_OTHER_TERMINAL`), at a space between Thai words in
    Thai (which writes spaces between sentences, none between words), and after a unit symbol's
    full stop before a capital ("… 0,26 € por km. El taxi …": a symbol takes no abbreviation dot,
    yet the segmenter's lists for es, it and nl hold km, kg, m …)."""
    for piece in segment(rules.segmenter_language, body):
        parts = [p for p in _AFTER_FULL_STOP.split(piece) if p] if _FULL_STOPS.intersection(piece) else [piece]
        for part in parts:
            cuts = [m.end() for m in _UNIT_STOP.finditer(part)] if "." in part else []
            if not part.isascii():
                cuts.extend(m.end() for m in _OTHER_TERMINAL.finditer(part) if m.end() < len(part))
                if rules.segmenter == THAI_SPACES:
                    cuts.extend(m.end() for m in _THAI_SPACE.finditer(part)
                                if not part.startswith(rules.continuations, m.end())
                                and not part[:m.start()].endswith(rules.continuations))
                cuts.sort()
            start = 0
            for cut in cuts:
                yield part[start:cut]
                start = cut
            yield part[start:]


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, line) of each line or list item: split at line breaks and before bullet glyphs."""
    out: list[tuple[int, str]] = []
    start = 0
    for brk in _LINE_BREAK.finditer(text):
        if brk.start() > start:
            out.append((start, text[start:brk.start()]))
        start = brk.end()
    out.append((start, text[start:]))
    return out


def _judge_text(raw: str) -> str:
    return " ".join(raw.split())  # = collapse \s+ to one space and strip, without a regex pass


def _sentence(clean: str, span: tuple[int, int], markers: list[_Marker]) -> ParsedSentence:
    labels: dict[str, None] = {}  # ordered sets: a list's `in` made 100,000 markers quadratic
    duplicates: dict[str, None] = {}
    mentions = 0
    after_stop = 0
    for marker in markers:
        after_stop += len(marker.labels) if marker.after_stop else 0
        for label in marker.labels:
            mentions += 1
            if label in labels:
                duplicates[label] = None
            else:
                labels[label] = None
    start, end = span
    return ParsedSentence(_judge_text(clean[start:end]), start, end, tuple(labels), tuple(duplicates),
                          mentions, after_stop)
