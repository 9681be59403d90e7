"""Answer parsing (SPEC §2): sentences, citation markers, and which sentence owns which marker.

Sentences come from `sentencex` (a real, fast rule-based segmenter; it keeps "U.S.", "Dr.",
initials and decimals together), after splitting lines so bullet items and list lines are
separate sentences, with a configurable list of abbreviations a sentence may not end on
("approx.", "e.g." …). Markers are removed before segmenting, together with the space before
them, so the judge sees "… hotel." rather than "… hotel [S2].". A marker written after a
sentence's full stop — with or without a space, or glued to the next sentence as in
"… Pershing.[3]Five …" — belongs to the sentence before it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sentencex import segment

from citecheck.config import Config

_GLYPHS = "\u2022\u2023\u25aa\u25e6\u25cf\u25a0\u25ba"  # • ‣ ▪ ◦ ● ■ ►: only ever list bullets
_BULLET = re.compile(
    rf"^\s*(?:[{_GLYPHS}]\s*|(?:[-*+\u2013\u2014]|\(?\d{{1,3}}[.)]|\(?[a-zA-Z][.)])\s+)")
_LINE_BREAK = re.compile(rf"\n|(?=[{_GLYPHS}])")  # a bullet glyph inside a line starts a new item
_STOP_BEFORE = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*$")
_HAS_WORD = re.compile(r"\w")
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


def split_sentences(text: str, config: Config | None = None) -> list[str]:
    """Sentences of plain text (passages, key facts): lines first, then the segmenter."""
    cfg = config or _DEFAULT_CONFIG
    return [text[s:e] for s, e in _sentence_spans(text, cfg)]


def parse_answer(answer: str, config: Config | None = None) -> list[ParsedSentence]:
    """Split a marker-format answer into sentences and attach each marker to its sentence."""
    cfg = config or _DEFAULT_CONFIG
    clean, markers, _ = _strip_markers(answer, cfg)
    for _ in range(_MAX_PASSES):
        # removing "[S2]" from "[S1[S2]]" leaves "[S1]": marker text the model never wrote as a
        # marker. Remove it too (the judge never sees a marker) but take no labels from it.
        if not any(m.end() > m.start() for m in cfg.marker_re.finditer(clean)):
            break
        clean, _, cuts = _strip_markers(clean, cfg)
        for marker in markers:
            marker.offset = _moved(marker.offset, cuts)
    spans = _sentence_spans(clean, cfg)
    owned: list[list[_Marker]] = [[] for _ in spans]
    if spans:
        starts = [s for s, _ in spans]
        for marker in markers:
            owned[max(bisect.bisect_right(starts, marker.offset) - 1, 0)].append(marker)
    return [_sentence(clean, span, mine) for span, mine in zip(spans, owned, strict=True)]


def parse_plain(text: str, spans_labels: Sequence[tuple[int, int, str]], config: Config | None = None
                ) -> list[ParsedSentence]:
    """Split a marker-free answer; a sentence gets every label whose char span overlaps it.

    Used for provider-native citations, where each cited text block is a span of the answer.
    """
    cfg = config or _DEFAULT_CONFIG
    out = []
    for start, end in _sentence_spans(text, cfg):
        labels: list[str] = []
        for s, e, label in spans_labels:
            if s < end and e > start and label not in labels:
                labels.append(label)
        out.append(ParsedSentence(_judge_text(text[start:end]), start, end, tuple(labels), (), len(labels), 0))
    return out


def _moved(offset: int, cuts: list[tuple[int, int, int]]) -> int:
    """Where a position of a text lands after `_strip_markers` cut it (cuts: start, end, inserted)."""
    shift = 0
    for start, end, inserted in cuts:
        if end < offset:
            shift += end - start - inserted
        elif start < offset:
            return start - shift
        else:
            break
    return offset - shift


def _strip_markers(answer: str, cfg: Config) -> tuple[str, list[_Marker], list[tuple[int, int, int]]]:
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
    for match in cfg.marker_re.finditer(answer):
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


def _sentence_spans(text: str, cfg: Config) -> list[tuple[int, int]]:
    """(start, end) of each sentence: per line, segmenter output, abbreviation merges, trimmed."""
    spans: list[tuple[int, int]] = []
    for offset, line in _lines(text):
        bullet = _BULLET.match(line)
        body = line[bullet.end():] if bullet else line
        offset += len(line) - len(body)
        if not _HAS_WORD.search(body):
            continue
        pos = 0
        merged: list[list[int]] = []
        for piece in segment("en", body):
            s, e = pos, pos + len(piece)
            pos = e
            if merged and _ends_with_abbreviation(body[merged[-1][0]:merged[-1][1]], cfg):
                merged[-1][1] = e
            else:
                merged.append([s, e])
        for s, e in merged:
            seg = body[s:e]
            lead = len(seg) - len(seg.lstrip())
            trail = len(seg.rstrip())
            if trail > lead and _HAS_WORD.search(seg):
                spans.append((offset + s + lead, offset + s + trail))
            elif spans and seg.strip():
                spans[-1] = (spans[-1][0], offset + s + trail)
    return spans


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


def _ends_with_abbreviation(sentence: str, cfg: Config) -> bool:
    words = sentence.rstrip().rsplit(None, 1)
    return bool(words) and words[-1].casefold() in cfg.abbreviations


def _judge_text(raw: str) -> str:
    return " ".join(raw.split())  # = collapse \s+ to one space and strip, without a regex pass


def _sentence(clean: str, span: tuple[int, int], markers: list[_Marker]) -> ParsedSentence:
    labels: list[str] = []
    duplicates: list[str] = []
    mentions = 0
    after_stop = 0
    for marker in markers:
        after_stop += len(marker.labels) if marker.after_stop else 0
        for label in marker.labels:
            mentions += 1
            if label in labels:
                if label not in duplicates:
                    duplicates.append(label)
            else:
                labels.append(label)
    start, end = span
    return ParsedSentence(_judge_text(clean[start:end]), start, end, tuple(labels), tuple(duplicates),
                          mentions, after_stop)
