"""Property-based fuzzing of the input path: JSONL line → turn → parsed sentences → structural checks.

Whatever arrives (arbitrary text, unicode, brackets, JSON-ish dicts, raw bytes), the only
exception allowed is `TurnError` from `turn_from_dict` (the turn is skipped with that reason),
and the results keep their invariants. Examples are bounded so the file runs in a few seconds;
every crash these found is pinned below as an `@example` and in tests/bad_input/corpus.py.
"""

from __future__ import annotations

import json
import os
import string

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from citecheck.core.config import Config, config_from_mapping
from citecheck.core.model import Turn
from citecheck.core.parsing import parse_answer, split_sentences
from citecheck.core.structural import ConversationHistory, structure_turn
from citecheck.core.turns import MAX_LABEL_CHARS, Skipped, TurnError, parse_line, turn_from_dict

DEFAULT = Config()
NUMERIC = config_from_mapping({"markers": {"pattern": r"\[(?P<labels>\d+(?:\s*,\s*\d+)*)\]"}})
# CI runs 150 examples per property (the whole file in ~2 s); CITECHECK_FUZZ_EXAMPLES=20000 digs deeper
FAST = settings(max_examples=int(os.environ.get("CITECHECK_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

# pieces that hit the parser's special cases far more often than uniform text does
_PIECES = st.sampled_from([
    "[S1]", "[S2]", "[S1, S3]", "[S1][S1]", "[1]", "[12]", "[S1[S2]]", "[[S1]]", "[S", "1]", "[", "]", "(", ")",
    " ", ".", "!", "?", "\n", "\n\n", "- ", "* ", "1. ", "\u2022", "e.g.", "U.S.", "2.5", "The cap", "is",
    "\u200b", "\u200f", "\u202e", "\u2028", "\u00a0", "\ufeff", "\u0301", "\x00", "\U0001f600", "\ud800",
    "\u201c", "\u201d",
    "`", "```", "```\n", "https://x.org/a", "<a href='https://x.org'>", "</a>", "[x](https://x.org)", "\\",
    "\u0661", "\uff3bS1\uff3d", "\t", "\r\n", ";", ",", ":", "\u2026", "Dr.", "a", "\ufffd",
])
ANSWERS = st.one_of(st.text(max_size=300), st.lists(_PIECES, max_size=60).map("".join))
LABELS = st.one_of(st.sampled_from(["S1", "S2", "S3", "1", "D0", "S 1", "[S1]", "\u00e91", "S1\u200b", "'; --"]),
                   st.text(min_size=1, max_size=12))

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


def _marker_labels(answer: str, config: Config) -> set[str]:
    found: set[str] = set()
    for match in config.marker_re.finditer(answer):
        found.update(lab for lab in config.separator_re.split(match.group("labels").strip()) if lab)
    return found


def _check_sentences(parsed, answer: str, config: Config) -> None:
    allowed = _marker_labels(answer, config)
    previous_end = 0
    for sentence in parsed:
        assert sentence.text and sentence.text == sentence.text.strip()
        assert previous_end <= sentence.start < sentence.end
        previous_end = sentence.end
        if not any(c in answer for c in ("`", "~~~", "://")):  # code and URLs keep their bracket text
            assert config.marker_re.search(sentence.text) is None, sentence.text
        assert set(sentence.labels) <= allowed
        assert len(set(sentence.labels)) == len(sentence.labels)
        assert set(sentence.duplicate_labels) <= set(sentence.labels)
        assert sentence.markers >= len(sentence.labels)
        assert 0 <= sentence.markers_after_stop <= sentence.markers


@FAST
@given(ANSWERS)
@example("[S1]\ud800")  # the segmenter encodes to UTF-8: a lone surrogate raised UnicodeEncodeError
@example("Cap" + "".join(f"[S{i}]" for i in range(3000)) + ".")  # labels per sentence were quadratic
@example("x\u2028[S1]\u2028y [S2].")
@example("[S1[S2[S3]]] nested [S1[S2]] twice.")
@example("Code `xs[0]` and ```\nys[1]\n``` and https://x.org/a[1]/b stay code [S1].")
def test_parse_answer_keeps_its_invariants(answer: str) -> None:
    for config in (DEFAULT, NUMERIC):
        _check_sentences(parse_answer(answer, config), answer, config)


@FAST
@given(ANSWERS)
@example("A fact.\ud800 Another [S1].")
def test_split_sentences_returns_trimmed_pieces_of_the_text_in_order(text: str) -> None:
    position = 0
    for sentence in split_sentences(text):
        assert sentence and sentence == sentence.strip()
        position = text.index(sentence, position) + len(sentence)


def _turn_dicts() -> st.SearchStrategy[dict]:
    """Mostly well-formed turns with fuzzed values, and some pure noise dicts."""
    passage = st.fixed_dictionaries({"label": LABELS, "text": st.text(max_size=40)},
                                    optional={"source": JSONISH, "document_id": JSONISH, "version": JSONISH})
    field = st.one_of(JSONISH, st.text(max_size=20))
    markers = st.fixed_dictionaries(
        {"turn_id": st.one_of(st.text(min_size=1, max_size=10), JSONISH), "answer": st.one_of(ANSWERS, JSONISH),
         "context": st.one_of(st.lists(st.one_of(passage, JSONISH), max_size=4), JSONISH)},
        optional={"conversation_id": field, "turn_index": st.one_of(st.integers(), field), "answered_at": field,
                  "question": field, "attributes": st.one_of(st.dictionaries(st.text(max_size=5), JSONISH), JSONISH),
                  "answer_format": st.sampled_from(["markers", "", None, "MARKERS", 3])})
    citation = st.fixed_dictionaries(
        {"type": st.sampled_from(["char_location", "page_location", 7]),
         "document_index": st.one_of(st.integers(-3, 6), JSONISH),
         "start_char_index": st.one_of(st.integers(-5, 60), JSONISH),
         "end_char_index": st.one_of(st.integers(-5, 60), JSONISH),
         "cited_text": st.one_of(st.text(max_size=20), JSONISH),
         "document_title": st.one_of(st.sampled_from(["T0", "T1"]), JSONISH)})
    block = st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use"]), "text": st.one_of(ANSWERS, JSONISH)},
                                  optional={"citations": st.one_of(st.lists(st.one_of(citation, JSONISH), max_size=3),
                                                                   JSONISH)})
    native = st.fixed_dictionaries({
        "turn_id": st.text(min_size=1, max_size=10), "answer_format": st.just("anthropic_blocks"),
        "answer_blocks": st.one_of(st.lists(st.one_of(block, JSONISH), max_size=5), JSONISH),
        "request_documents": st.one_of(
            st.lists(st.fixed_dictionaries({"title": st.sampled_from(["T0", "T1"]), "text": st.text(max_size=60)}),
                     max_size=4), JSONISH)})
    noise = st.dictionaries(st.sampled_from(["turn_id", "answer", "context", "answer_format", "answer_blocks",
                                             "request_documents", "turn_index", "attributes", "answered_at"]),
                            JSONISH)
    return st.one_of(markers, native, noise)


def _check_structured(turn: Turn) -> None:
    history = ConversationHistory()
    history.record(turn.conversation_id, turn.turn_index - 1, ["S1", "S2", "D0", "1"])
    st_turn = structure_turn(turn, DEFAULT, history)
    context = {p.label for p in turn.context}
    for s in st_turn.sentences:
        assert set(s.unknown_labels) <= set(s.labels)
        assert set(s.stale_labels) <= set(s.unknown_labels)
        assert all(len(label) <= MAX_LABEL_CHARS for label in s.labels)
        if turn.answer_format == "markers":
            assert set(s.resolved_labels) <= context
            assert set(s.unknown_labels).isdisjoint(context)
        assert s.attached == (s.check_worthy and bool(s.resolved_labels))
    if turn.answer_format == "anthropic_blocks":
        for c in turn.native_citations:
            assert 0 <= c.start <= c.end <= len(turn.answer)
        for s in st_turn.sentences:
            assert 0 <= s.start < s.end <= len(turn.answer)
    assert len(turn.turn_id) > 0
    json.dumps([turn.answer, turn.question, [p.text for p in turn.context]], ensure_ascii=False).encode("utf-8")


@FAST
@given(_turn_dicts())
@example({"turn_id": "t", "answer": "x [S1].", "context": [{"label": "S1", "text": "a\x00b"}]})
@example({"turn_id": "t", "answer": "x", "context": [], "turn_index": "\u00b2"})  # int("²") raised ValueError
@example({"turn_id": "t", "answer": "x", "context": [], "turn_index": "--5"})  # so did int("--5")
@example({"turn_id": "t", "answer": "x", "context": [], "answered_at": "9999-12-31T23:00:00-08:00"})
@example({"turn_id": "t", "answer": "x\ud800 [S1].", "context": [], "turn_index": 2 ** 70})
@example({"turn_id": "t", "answer": "x [S1].", "context": [], "attributes": {"k": float("nan")}})
@example({"turn_id": "t", "answer": "Fact [S" + "9" * 300 + "].", "context": []})
@example({"turn_id": "t", "answer_format": "anthropic_blocks", "request_documents": [{"title": "T0", "text": "x"}],
          "answer_blocks": [{"type": "text", "text": "Fact.", "citations": [{"document_index": 10 ** 300}]}]})
def test_turn_from_dict_raises_only_turn_error_and_structures_cleanly(data: dict) -> None:
    try:
        turn = turn_from_dict(data)
    except TurnError as exc:
        assert str(exc)
        return
    _check_structured(turn)


@FAST
@given(st.one_of(st.binary(max_size=200), JSONISH.map(lambda v: json.dumps(v).encode()),
                 _turn_dicts().map(lambda d: json.dumps(d, allow_nan=True).encode())))
@example(b'{"turn_id": "t", "answer": "x", "context": [], "n": ' + b"9" * 5000 + b"}")
@example(b"[" * 100_000)
@example(b'\xef\xbb\xbf{"turn_id": "bom", "answer": "A fact [S1].", "context": []}')
@example(b'{"turn_id": "t", "answer": "\\ud800 lone", "context": []}')
def test_parse_line_turns_any_bytes_into_a_turn_or_a_reasoned_skip(raw: bytes) -> None:
    result = parse_line(raw, 1)
    if isinstance(result, Skipped):
        assert result.reason and result.line == 1
    else:
        _check_structured(result)


@FAST
@given(st.text(alphabet=string.printable + "\u00e9\u200b\u202e[]", max_size=80), st.integers(-3, 3))
def test_stale_labels_need_an_earlier_turn_of_the_same_conversation(answer: str, delta: int) -> None:
    turn = turn_from_dict({"turn_id": "t", "conversation_id": "c", "turn_index": 5, "answer": answer + " x",
                           "context": [{"label": "S1", "text": "a"}]})
    history = ConversationHistory()
    history.record("c", 5 + delta, ["S2", "S3"])
    for s in structure_turn(turn, DEFAULT, history).sentences:
        assert (set(s.stale_labels) <= {"S2", "S3"}) and (not s.stale_labels or delta < 0)


_STAMPED = _turn_dicts().map(lambda d: {**d, "answered_at": "2026-11-30T10:00:00+05:30"})


@FAST
@given(st.one_of(_turn_dicts(), _STAMPED, _STAMPED, JSONISH))
@example({"turn_id": "t", "answer": "x", "context": [], "answered_at": "9999-12-31T23:00:00-08:00"})  # OverflowError
@example({"turn_id": "t", "answer": "a\x00", "answered_at": "2026-11-30T10:00:00Z", "context": [],
          "attributes": {"\ud800": float("nan")}})
def test_the_loader_refuses_with_value_error_or_returns_storable_rows(data) -> None:
    """`source_rows` (load-turns) raises ValueError with a reason, or gives rows every warehouse
    stores: no NUL or lone surrogate in any text, no NaN in JSON, ids within their columns."""
    from citecheck.warehouse import source_rows

    try:
        row, passages = source_rows(data)
    except ValueError as exc:
        assert str(exc)
        return
    blob = json.dumps([row, passages], default=str, allow_nan=False, ensure_ascii=False)
    blob.encode("utf-8")
    assert "\\u0000" not in blob and "\x00" not in blob
    assert len(row["turn_id"]) <= 200 and all(len(p["label"] or "") <= MAX_LABEL_CHARS for p in passages)
    assert row["turn_index"] is None or -2 ** 31 <= row["turn_index"] < 2 ** 31
    assert row["answered_at"] is not None and row["answered_at"].tzinfo is not None
