"""A corpus of bad turns, generated in code (the big ones are never committed).

Each `Case` is one JSONL line and what the job must make of it, through the CLI (`citecheck
score`) and through the warehouse (`citecheck load-turns`, then the daily job):

- `outcome`: "scored", or "skipped" with `reason` (a substring of the recorded reason);
- `warehouse`: "same" (the day's job scores or skips it exactly so), "rejected" (load-turns
  refuses the line, with `warehouse_reason` or else `reason`: a column cannot hold it),
  "superseded" (a later line with the same turn id replaces it), "late" (loaded after the
  day was published; a rerun must pick it up);
- `day`: the metric day (UTC) the warehouse counts it on;
- `check`: assertions on the scored turn's sentences, run on the CLI's turn JSON and on the
  warehouse's sentence_verdicts rows alike (keys text, labels, unknown_labels, stale_labels,
  check_worthy, verdict); `cli_check` on the CLI's turn JSON only (pointer problems).

Good turns are interleaved (`good_turns`), so a test also sees that nothing around a bad
turn is lost. The right behaviour for each case is decided from SPEC §1-§3; see the README
of this folder for the reasoning behind the less obvious ones.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from helpers import load_fixture

DAY, PREV, NEXT = "2026-11-30", "2026-11-29", "2026-12-01"
AT = f"{DAY}T12:00:00Z"
GOOD_ANSWER = "The nightly hotel cap is 220 euros [S1]."
GOOD_STATEMENT = "The nightly hotel cap is 220 euros."
JUDGE = {"kind": "recorded", "judgments": [{"statement": GOOD_STATEMENT, "supported_by": ["S1"]}]}
CONTEXT = [
    {"label": "S1", "source": "Travel policy > Lodging", "text": "The nightly hotel cap is 220 euros."},
    {"label": "S2", "source": "Travel policy > Meals", "text": "Meals are reimbursed up to 50 euros a day."},
    {"label": "S3", "source": "Expenses FAQ", "text": "Reports are paid with the next payroll."},
]
NATIVE = load_fixture("anthropic_native.json")
BIG_ANSWER_CHARS = 10_000_000
MANY_MARKERS = 100_000
BIG_PASSAGE_CHARS = 1_000_000

View = dict[str, Any]  # {"sentences": [{text, labels, unknown_labels, stale_labels, check_worthy, verdict}]}


@dataclass(frozen=True)
class Case:
    kind: str
    line: bytes
    outcome: str
    reason: str = ""
    turn_id: str | None = None
    warehouse: str = "same"
    warehouse_reason: str | None = None
    day: str = DAY
    check: Callable[[View], None] | None = None
    cli_check: Callable[[View], None] | None = None
    preload: dict[str, Any] | None = field(default=None, compare=False)  # loaded before the file
    # what the row adds to its day's `runs.stats["input_repairs"]` (replaced_characters,
    # zoneless_timestamps, malformed_markers; tests/integration/test_input_repairs.py)
    repairs: dict[str, int] = field(default_factory=dict, compare=False)

    @property
    def expected_warehouse_reason(self) -> str:
        return self.warehouse_reason if self.warehouse_reason is not None else self.reason


# --- building blocks ---------------------------------------------------------------------------------

def turn(turn_id: str, **fields: Any) -> dict[str, Any]:
    """A well-formed markers turn on DAY; keyword fields override (`None` values are kept)."""
    base = {"turn_id": turn_id, "conversation_id": f"conv-{turn_id}", "turn_index": 1, "answered_at": AT,
            "question": "What is the hotel cap?", "answer": GOOD_ANSWER, "answer_format": "markers",
            "context": copy.deepcopy(CONTEXT), "attributes": {"model": "m1", "locale": "en"}}
    base.update(fields)
    return base


def without(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


def line(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def native(turn_id: str, documents: Any = None, blocks: Any = None, **fields: Any) -> dict[str, Any]:
    data = without(turn(turn_id, answer_format="anthropic_blocks", **fields), "answer", "context")
    data["answer_blocks"] = copy.deepcopy(NATIVE["response_content"]) if blocks is None else blocks
    data["request_documents"] = copy.deepcopy(
        NATIVE["request_documents_across_chat"] if documents is None else documents)
    return data


def native_citation(data: dict[str, Any], block: int, **changes: Any) -> dict[str, Any]:
    data["answer_blocks"][block]["citations"][0].update(changes)
    return data


# --- checks (they raise AssertionError with what they saw) -------------------------------------------

def _sentences(view: View) -> list[dict[str, Any]]:
    return view["sentences"]


def labels_are(*expected: list[str]) -> Callable[[View], None]:
    def check(view: View) -> None:
        got = [list(s["labels"]) for s in _sentences(view)]
        assert got == [list(e) for e in expected], got
    return check


def resolves(*labels: str, unknown: tuple[str, ...] = (), stale: tuple[str, ...] = ()) -> Callable[[View], None]:
    """Across the turn's sentences: exactly these resolved, unknown and stale labels."""
    def check(view: View) -> None:
        all_labels = [lab for s in _sentences(view) for lab in s["labels"]]
        unknown_got = [lab for s in _sentences(view) for lab in s["unknown_labels"]]
        stale_got = [lab for s in _sentences(view) for lab in s["stale_labels"]]
        resolved_got = [lab for lab in all_labels if lab not in set(unknown_got)]
        assert (sorted(resolved_got), sorted(unknown_got), sorted(stale_got)) == (
            sorted(labels), sorted(unknown), sorted(stale)), (resolved_got, unknown_got, stale_got)
    return check


def texts_are(*expected: str) -> Callable[[View], None]:
    def check(view: View) -> None:
        got = [s["text"] for s in _sentences(view)]
        assert got == list(expected), got
    return check


def all_of(*checks: Callable[[View], None]) -> Callable[[View], None]:
    def check(view: View) -> None:
        for one in checks:
            one(view)
    return check


def no_labels(view: View) -> None:
    assert _sentences(view) and not any(s["labels"] for s in _sentences(view)), _sentences(view)


def no_sentences(view: View) -> None:
    assert _sentences(view) == [], _sentences(view)


def supported(view: View) -> None:
    assert [s["verdict"] for s in _sentences(view)] == ["supported"], [s["verdict"] for s in _sentences(view)]


def pointer_problem(reason: str) -> Callable[[View], None]:
    def check(view: View) -> None:
        reasons = [p["reason"] for p in view["pointer_problems"]]
        assert any(reason in r for r in reasons), reasons
    return check


def _long_unknown_label(view: View) -> None:
    (sentence,) = _sentences(view)
    (label,) = sentence["labels"]
    assert len(label) <= 200 and label.startswith("S999") and "#" in label, label
    assert list(sentence["unknown_labels"]) == [label]


def _many_distinct(view: View) -> None:
    (sentence,) = _sentences(view)
    assert len(sentence["labels"]) == MANY_MARKERS and len(sentence["unknown_labels"]) == MANY_MARKERS - 3
    assert sentence["text"] == GOOD_STATEMENT


def _many_same(view: View) -> None:
    (sentence,) = _sentences(view)
    assert list(sentence["labels"]) == ["S1"] and list(sentence["unknown_labels"]) == []
    assert sentence["text"] == GOOD_STATEMENT and sentence["verdict"] == "supported"


def _replacement_char(view: View) -> None:
    assert any("\ufffd" in s["text"] for s in _sentences(view)), [s["text"] for s in _sentences(view)]
    resolves("S1")(view)


# --- the corpus -----------------------------------------------------------------------------------------

def _malformed_lines() -> Iterator[Case]:
    good = line(turn("x"))
    yield Case("json_truncated", good[: len(good) // 2], "skipped", "invalid JSON", warehouse="rejected")
    yield Case("python_repr_not_json", repr(turn("repr")).encode(), "skipped", "invalid JSON", warehouse="rejected")
    yield Case("json_trailing_garbage", line(turn("trail")) + b" trailing", "skipped", "Extra data",
               warehouse="rejected")
    yield Case("two_objects_on_one_line", line(turn("two-a")) + line(turn("two-b")), "skipped", "Extra data",
               warehouse="rejected")
    yield Case("raw_control_character_in_string", line(turn("ctrl")).replace(b"hotel cap", b"hotel\x01cap"),
               "skipped", "Invalid control character", warehouse="rejected")
    yield Case("top_level_array", line([turn("arr")]), "skipped", "not a JSON object", warehouse="rejected")
    yield Case("top_level_string", b'"just a string"', "skipped", "not a JSON object", warehouse="rejected")
    yield Case("top_level_null", b"null", "skipped", "not a JSON object", warehouse="rejected")
    yield Case("non_utf8_bytes", line(turn("latin1", answer="Caf\u00e9 rates [S1].")).replace(
        "\u00e9".encode(), b"\xe9"), "skipped", "not valid UTF-8", warehouse="rejected")
    yield Case("utf8_bom_at_line_start", b"\xef\xbb\xbf" + line(turn("bom")), "scored", turn_id="bom",
               check=all_of(resolves("S1"), supported))
    yield Case("json_nested_100k_deep", b'{"turn_id": "deep", "attributes": ' + b"[" * 100_000 + b"]" * 100_000
               + b"}", "skipped", "nested too deeply", warehouse="rejected")
    yield Case("json_integer_of_5000_digits", line(turn("bigint"))[:-1] + b', "n": ' + b"9" * 5000 + b"}",
               "skipped", "integer string conversion", warehouse="rejected")
    yield Case("json_nan_literal_in_attributes", line(turn("nan"))[:-1] + b', "attributes": {"score": NaN}}',
               "scored", turn_id="nan", check=resolves("S1"))
    yield Case("json_infinity_turn_index", line(turn("inf"))[:-1] + b', "turn_index": Infinity}', "skipped",
               "turn_index is not an integer (float)", turn_id="inf", warehouse="rejected",
               warehouse_reason="turn_index is not an integer")
    yield Case("json_duplicate_keys_last_wins", line(turn("dupkey"))[:-1] + b', "answer": 5}', "skipped",
               "answer is not a string (int)", turn_id="dupkey", warehouse="rejected")


def _field_types() -> Iterator[Case]:
    yield Case("turn_id_missing", line(without(turn("-"), "turn_id")), "skipped", "turn_id is missing",
               warehouse="rejected")
    yield Case("turn_id_number", line(turn(12345)), "skipped", "turn_id is not a string (int)",
               warehouse="rejected", warehouse_reason="turn_id is missing or not a string")
    yield Case("turn_id_empty", line(turn("")), "skipped", "turn_id is empty", warehouse="rejected",
               warehouse_reason="turn_id is missing or not a string")
    yield Case("turn_id_longer_than_its_column", line(turn("t" * 300)), "skipped", "turn_id is longer than 200",
               turn_id="t" * 300, warehouse="rejected")
    sql = "t'; DROP TABLE source_turns; --\"\\"
    yield Case("turn_id_sql_quotes_backslash", line(turn(sql)), "scored", turn_id=sql, check=resolves("S1"))
    odd = "turn-\u202e\U0001f3e8-\u00e9\u200b"
    yield Case("turn_id_rtl_override_emoji_zero_width", line(turn(odd)), "scored", turn_id=odd,
               check=resolves("S1"))
    yield Case("answer_number", line(turn("ans-num", answer=42)), "skipped", "answer is not a string (int)",
               turn_id="ans-num", warehouse="rejected")
    yield Case("answer_list", line(turn("ans-list", answer=[GOOD_ANSWER])), "skipped",
               "answer is not a string (list)", turn_id="ans-list", warehouse="rejected")
    yield Case("answer_missing", line(without(turn("ans-missing"), "answer")), "skipped", "answer is missing",
               turn_id="ans-missing")
    yield Case("answer_null", line(turn("ans-null", answer=None)), "skipped", "answer is missing",
               turn_id="ans-null")
    yield Case("answer_empty", line(turn("ans-empty", answer="")), "skipped", "answer is empty", turn_id="ans-empty")
    yield Case("answer_whitespace_only", line(turn("ans-ws", answer=" \n\t\u00a0 ")), "skipped", "answer is empty",
               turn_id="ans-ws")
    yield Case("context_missing", line(without(turn("ctx-missing"), "context")), "skipped", "context is missing",
               turn_id="ctx-missing", warehouse="rejected")
    yield Case("context_null", line(turn("ctx-null", context=None)), "skipped", "context is missing",
               turn_id="ctx-null", warehouse="rejected")
    yield Case("context_dict", line(turn("ctx-dict", context={"S1": "text"})), "skipped",
               "context is not a list (dict)", turn_id="ctx-dict", warehouse="rejected")
    yield Case("context_string", line(turn("ctx-str", context="S1: text")), "skipped", "context is not a list (str)",
               turn_id="ctx-str", warehouse="rejected")
    yield Case("context_empty_list", line(turn("ctx-empty", context=[])), "scored", turn_id="ctx-empty",
               check=resolves(unknown=("S1",)))
    yield Case("context_item_not_object", line(turn("ctx-item", context=["The cap is 220 euros."])), "skipped",
               "context[0] is not an object", turn_id="ctx-item", warehouse="rejected")
    yield Case("context_label_int", line(turn("lab-int", context=[{"label": 1, "text": "x"}])), "skipped",
               "context[0].label is missing or not a non-empty string", turn_id="lab-int", warehouse="rejected",
               warehouse_reason="context[0].label is not a string (int)")
    yield Case("context_label_missing", line(turn("lab-missing", context=[{"text": "x"}])), "skipped",
               "context[0].label is missing", turn_id="lab-missing")
    yield Case("context_label_empty", line(turn("lab-empty", context=[{"label": " ", "text": "x"}])), "skipped",
               "context[0].label is missing or not a non-empty string", turn_id="lab-empty")
    yield Case("context_label_longer_than_its_column",
               line(turn("lab-long", context=[{"label": "S" * 300, "text": "x"}])), "skipped",
               "context[0].label is longer than 200", turn_id="lab-long", warehouse="rejected")
    yield Case("context_text_dict", line(turn("txt-dict", context=[{"label": "S1", "text": {"t": 1}}])), "skipped",
               "context[0].text is missing or not a string", turn_id="txt-dict", warehouse="rejected",
               warehouse_reason="context[0].text is not a string (dict)")
    yield Case("context_text_missing", line(turn("txt-missing", context=[{"label": "S1"}])), "skipped",
               "context[0].text is missing", turn_id="txt-missing")
    yield Case("context_duplicate_label_same_text", line(turn("dup-same", context=CONTEXT + CONTEXT[:1])),
               "scored", turn_id="dup-same", check=all_of(resolves("S1"), supported))
    yield Case("context_duplicate_label_different_text",
               line(turn("dup-diff", context=[*CONTEXT, {"label": "S1", "text": "Another text."}])), "skipped",
               "appears twice with different texts", turn_id="dup-diff")
    odd_labels = [{"label": lab, "text": "The nightly hotel cap is 220 euros."}
                  for lab in ("S 1", "[S1]", 'S1"', "S1'; DROP TABLE source_passages; --", "\u00e91", "S1\u200b")]
    yield Case("labels_with_spaces_brackets_quotes_sql_unicode", line(turn("lab-odd", context=odd_labels)), "scored",
               turn_id="lab-odd", check=resolves(unknown=("S1",)))
    yield Case("label_with_arabic_indic_digit",
               line(turn("lab-arabic", answer="The nightly hotel cap is 220 euros [S\u0661].",
                         context=[{"label": "S\u0661", "text": "x"}])), "scored", turn_id="lab-arabic",
               check=resolves("S\u0661"))
    yield Case("marker_label_longer_than_its_column",
               line(turn("mark-long", answer="The nightly hotel cap is 220 euros [S" + "9" * 300 + "].")), "scored",
               turn_id="mark-long", check=_long_unknown_label)
    yield Case("attributes_not_object", line(turn("attr-list", attributes=["m1"])), "skipped",
               "attributes is not an object", turn_id="attr-list")
    yield Case("attributes_long_key_and_value_nested",
               line(turn("attr-long", attributes={"k" * 500: "v" * 5000, "nested": {"a": [1, {"b": None}]},
                                                  "none": None, "n": 3})), "scored", turn_id="attr-long",
               check=resolves("S1"))
    deep: Any = "leaf"
    for _ in range(500):
        deep = [deep]
    yield Case("attributes_nested_500_deep", line(turn("attr-deep", attributes={"deep": deep})), "scored",
               turn_id="attr-deep", warehouse="rejected", warehouse_reason="nested deeper than",
               check=resolves("S1"))
    yield Case("turn_index_digit_string", line(turn("idx-str", turn_index=" 3 ")), "scored", turn_id="idx-str",
               check=resolves("S1"))
    yield Case("turn_index_word", line(turn("idx-word", turn_index="three")), "skipped",
               "turn_index is not an integer", turn_id="idx-word", warehouse="rejected")
    yield Case("turn_index_superscript_digit", line(turn("idx-sup", turn_index="\u00b2")), "skipped",
               "turn_index is not an integer", turn_id="idx-sup", warehouse="rejected")
    yield Case("turn_index_float", line(turn("idx-float", turn_index=2.5)), "skipped",
               "turn_index is not an integer (float)", turn_id="idx-float", warehouse="rejected")
    yield Case("turn_index_bool", line(turn("idx-bool", turn_index=True)), "skipped",
               "turn_index is not an integer (bool)", turn_id="idx-bool", warehouse="rejected")
    yield Case("turn_index_beyond_32_bits", line(turn("idx-huge", turn_index=2 ** 40)), "skipped",
               "turn_index is out of range", turn_id="idx-huge", warehouse="rejected")
    yield Case("turn_index_negative", line(turn("idx-neg", turn_index=-1)), "scored", turn_id="idx-neg",
               check=resolves("S1"))
    yield Case("conversation_id_integer", line(turn("conv-int", conversation_id=42)), "scored", turn_id="conv-int",
               check=resolves("S1"))
    yield Case("conversation_id_list", line(turn("conv-list", conversation_id=["c"])), "skipped",
               "conversation_id is not a string", turn_id="conv-list", warehouse="rejected")
    yield Case("question_number", line(turn("q-num", question=7)), "skipped", "question is not a string (int)",
               turn_id="q-num", warehouse="rejected")
    yield Case("answer_format_unknown", line(turn("fmt-html", answer_format="html")), "skipped",
               "answer_format 'html' is not one of", turn_id="fmt-html")
    yield Case("answer_format_uppercase", line(turn("fmt-upper", answer_format="MARKERS")), "skipped",
               "answer_format 'MARKERS' is not one of", turn_id="fmt-upper")
    yield Case("unknown_extra_fields", line(turn("extra", model_output={"raw": [1, 2]}, foo=None)), "scored",
               turn_id="extra", check=all_of(resolves("S1"), supported))


def _timestamps() -> Iterator[Case]:
    yield Case("answered_at_null", line(turn("ts-null", answered_at=None)), "scored", turn_id="ts-null",
               warehouse="rejected", warehouse_reason="answered_at is missing", check=resolves("S1"))
    yield Case("answered_at_missing", line(without(turn("ts-missing"), "answered_at")), "scored",
               turn_id="ts-missing", warehouse="rejected", warehouse_reason="answered_at is missing",
               check=resolves("S1"))
    yield Case("answered_at_not_iso", line(turn("ts-word", answered_at="yesterday")), "skipped",
               "answered_at is not an ISO timestamp", turn_id="ts-word", warehouse="rejected")
    yield Case("answered_at_epoch_number", line(turn("ts-epoch", answered_at=1764504000)), "skipped",
               "answered_at is not a string (int)", turn_id="ts-epoch", warehouse="rejected")
    yield Case("answered_at_leap_second", line(turn("ts-leap", answered_at=f"{DAY}T23:59:60Z")), "skipped",
               "answered_at is not an ISO timestamp", turn_id="ts-leap", warehouse="rejected")
    yield Case("answered_at_overflows_utc", line(turn("ts-9999", answered_at="9999-12-31T23:00:00-08:00")),
               "skipped", "answered_at is out of range in UTC", turn_id="ts-9999", warehouse="rejected")
    # +05:30 on Dec 1 local is still Nov 30 in UTC; -08:00 on Nov 30 local is already Dec 1 in UTC
    yield Case("answered_at_plus_0530_is_previous_utc_day", line(turn("ts-ist", answered_at=f"{NEXT}T03:00:00+05:30")),
               "scored", turn_id="ts-ist", day=DAY, check=resolves("S1"))
    yield Case("answered_at_minus_0800_is_next_utc_day", line(turn("ts-pst", answered_at=f"{DAY}T20:00:00-08:00")),
               "scored", turn_id="ts-pst", day=NEXT, check=resolves("S1"))
    yield Case("answered_at_without_zone_is_utc", line(turn("ts-naive", answered_at=f"{DAY}T23:59:59.999999")),
               "scored", turn_id="ts-naive", day=DAY, check=resolves("S1"), repairs={"zoneless_timestamps": 1})
    yield Case("answered_at_exactly_midnight", line(turn("ts-midnight", answered_at=f"{DAY}T00:00:00+00:00")),
               "scored", turn_id="ts-midnight", day=DAY, check=resolves("S1"))


def _unicode() -> Iterator[Case]:
    yield Case("nul_character_in_answer", line(turn("nul-answer", answer="The nightly\u0000 hotel cap [S1].")),
               "scored", turn_id="nul-answer", check=_replacement_char, repairs={"replaced_characters": 1})
    yield Case("nul_character_in_passage_and_label_source",
               line(turn("nul-passage", context=[{"label": "S1", "source": "a\u0000b", "text": "cap\u0000 220"}])),
               "scored", turn_id="nul-passage", check=resolves("S1"), repairs={"replaced_characters": 2})
    yield Case("lone_surrogate_in_answer", line(turn("surrogate")).replace(b"hotel cap", b"hotel \\ud800cap"),
               "scored", turn_id="surrogate", check=_replacement_char,
               repairs={"replaced_characters": 3})  # "hotel cap" is in the question, answer and passage S1
    yield Case("lone_surrogate_in_attributes_key",
               line(turn("surrogate-key"))[:-1] + b', "attributes": {"\\udc00k": "\\ud83d"}}', "scored",
               turn_id="surrogate-key", check=resolves("S1"), repairs={"replaced_characters": 2})
    yield Case("rtl_marks_around_text_and_marker",
               line(turn("rtl", answer="\u200fThe nightly hotel cap is 220 euros\u200f [S1]\u200f.")), "scored",
               turn_id="rtl", check=resolves("S1"))
    yield Case("rtl_mark_inside_marker_is_not_a_marker",
               line(turn("rtl-in", answer="The nightly hotel cap is 220 euros [\u200fS1].")), "scored",
               turn_id="rtl-in", check=labels_are([]))
    yield Case("zero_width_space_inside_and_before_marker",
               line(turn("zwsp", answer="The cap is 220 euros [S\u200b1]. Meals are capped\u200b[S2].")), "scored",
               turn_id="zwsp", check=labels_are([], ["S2"]))
    yield Case("emoji_and_astral_characters",
               line(turn("emoji", answer="\U0001f3e8 The nightly hotel cap is 220 euros \U0001f4b6 [S1].")),
               "scored", turn_id="emoji", check=resolves("S1"))
    yield Case("curly_quotes_around_markers",
               line(turn("curly", answer="\u201cThe nightly hotel cap is 220 euros\u201d \u201c[S1]\u201d.")),
               "scored", turn_id="curly", check=resolves("S1"))
    yield Case("combining_marks_in_text_and_marker",
               line(turn("combining", answer="Cafe\u0301 rates: the cap is 220 euros [S1]. Also [S\u03012].")),
               "scored", turn_id="combining", check=labels_are(["S1"], []))
    yield Case("fullwidth_brackets_are_not_markers",
               line(turn("fullwidth", answer="The nightly hotel cap is 220 euros \uff3bS1\uff3d.")), "scored",
               turn_id="fullwidth", check=labels_are([]))
    yield Case("line_and_paragraph_separators",
               line(turn("u2028", answer="The cap is 220 euros [S1].\u2028Meals are 50 euros [S2].\u2029End.")),
               "scored", turn_id="u2028", check=resolves("S1", "S2"))
    yield Case("crlf_line_ending", line(turn("crlf")) + b"\r", "scored", turn_id="crlf", check=resolves("S1"))


def _markers() -> Iterator[Case]:
    fenced = "Run this:\n```python\nrates = caps[1]\nprint(rates[S2])\n```\nThe nightly hotel cap is 220 euros [S1]."
    yield Case("markers_inside_fenced_code_block", line(turn("code-fenced", answer=fenced)), "scored",
               turn_id="code-fenced", check=resolves("S1"))
    yield Case("markers_inside_inline_code",
               line(turn("code-inline", answer="Use `caps[0]` or ``x[S2]`` for the first cap [S1].")), "scored",
               turn_id="code-inline",
               check=all_of(resolves("S1"), texts_are("Use `caps[0]` or ``x[S2]`` for the first cap.")))
    yield Case("markers_inside_urls",
               line(turn("url", answer="See https://x.org/wiki/Cap[1]/notes[S2]x and https://y.org/a[S1].")),
               "scored", turn_id="url", check=all_of(resolves("S1"), texts_are(
                   "See https://x.org/wiki/Cap[1]/notes[S2]x and https://y.org/a.")))
    yield Case("markdown_link_with_marker_text",
               line(turn("md-link", answer="The cap is 220 euros [S1](https://intranet/policy#lodging).")),
               "scored", turn_id="md-link", check=resolves("S1"))
    yield Case("html_link_and_sup_marker",
               line(turn("html", answer='<a href="https://x.org/p?a=1&b=[2]">Policy</a> caps hotels at 220 euros '
                                        "<sup>[S1]</sup>.")), "scored", turn_id="html", check=resolves("S1"))
    yield Case("nested_brackets", line(turn("nested", answer="The cap is 220 euros [S1[S2]] and [[S3]].")), "scored",
               turn_id="nested", check=resolves("S2", "S3"), repairs={"malformed_markers": 1})
    yield Case("unbalanced_brackets",
               line(turn("unbalanced", answer="The cap [S1 is 220 euros. Meals S2] are 50 euros [S3.")), "scored",
               turn_id="unbalanced", check=no_labels,  # one sentence: the segmenter keeps "[…" together
               repairs={"malformed_markers": 2})
    yield Case("marker_unclosed", line(turn("unclosed", answer="The nightly hotel cap is 220 euros [S1. Meals are "
                                                              "50 euros [S2].")), "scored", turn_id="unclosed",
               check=labels_are([], ["S2"]), repairs={"malformed_markers": 1})
    yield Case("malformed_marker_list", line(turn("list", answer="The cap is 220 euros [S1, S3; S2].")), "scored",
               turn_id="list", check=resolves("S1", "S2", "S3"))
    yield Case("marker_after_full_stop", line(turn("after-stop", answer="The cap is 220 euros. [S1] Meals are 50.")),
               "scored", turn_id="after-stop", check=labels_are(["S1"], []))
    yield Case("answer_of_markers_only", line(turn("markers-only", answer="[S1][S2] [S3]")), "scored",
               turn_id="markers-only", check=no_sentences)
    yield Case("answer_of_punctuation_and_emoji_only", line(turn("punct-only", answer="... !? \U0001f44d")),
               "scored", turn_id="punct-only", check=no_sentences)


def _big() -> Iterator[Case]:
    sentence = GOOD_ANSWER + " "
    big = sentence * (BIG_ANSWER_CHARS // len(sentence) + 1)
    yield Case("answer_10mb", line(turn("answer-10mb", answer=big)), "skipped", "over the limit of 1,000,000",
               turn_id="answer-10mb")
    yield Case("markers_100k_same_label",
               line(turn("markers-100k", answer="The nightly hotel cap is 220 euros" + "[S1]" * MANY_MARKERS + ".")),
               "scored", turn_id="markers-100k", check=_many_same)
    many = "".join(f"[S{i}]" for i in range(1, MANY_MARKERS + 1))
    yield Case("markers_100k_distinct_labels_one_sentence",
               line(turn("markers-100k-distinct", answer="The nightly hotel cap is 220 euros" + many + ".")),
               "scored", turn_id="markers-100k-distinct", check=_many_distinct)
    filler = "Unrelated policy text about parking and trains. " * (BIG_PASSAGE_CHARS // 48 + 1)
    passage = [{"label": "S1", "text": "The nightly hotel cap is 220 euros. " + filler}, *CONTEXT[1:]]
    yield Case("context_passage_1mb", line(turn("passage-1mb", context=passage)), "scored", turn_id="passage-1mb",
               check=all_of(resolves("S1"), supported))


def _native() -> Iterator[Case]:
    ok = labels_are(["D2"], ["D1"], ["D3"])
    yield Case("native_valid_pointers", line(native("nat-ok")), "scored", turn_id="nat-ok",
               check=all_of(ok, resolves("D2", "D1", "D3")))
    for kind, block, changes, label, why in [
        ("native_document_index_out_of_range", 0, {"document_index": 7}, "D7", "document_index out of range"),
        ("native_document_index_negative", 0, {"document_index": -1}, "D-1", "document_index out of range"),
        ("native_start_offset_negative", 2, {"start_char_index": -5}, "D1", "char offsets out of range"),
        ("native_end_offset_past_the_end", 4, {"end_char_index": 10_000}, "D3", "char offsets out of range"),
        ("native_start_after_end", 4, {"start_char_index": 60, "end_char_index": 10}, "D3",
         "char offsets out of range"),
        ("native_offsets_as_strings", 2, {"start_char_index": "78", "end_char_index": "156"}, "D1",
         "char offsets missing"),
        ("native_title_mismatch", 2, {"document_title": "Travel policy v3"}, "D1", "title does not match"),
        ("native_cited_text_mismatch", 4, {"cited_text": "Reports are paid weekly."}, "D3",
         "cited_text does not match"),
    ]:
        others = [lab for lab in ("D2", "D1", "D3") if lab != {0: "D2", 2: "D1", 4: "D3"}[block]]
        yield Case(kind, line(native_citation(native(kind), block, **changes)), "scored", turn_id=kind,
                   check=resolves(*others, unknown=(label,)), cli_check=pointer_problem(why))
    yield Case("native_document_index_not_an_integer", line(native_citation(native("nat-idx-str"), 0,
                                                                            document_index="2")),
               "scored", turn_id="nat-idx-str", check=labels_are([], ["D1"], ["D3"]),
               cli_check=pointer_problem("document_index is missing or not an integer"))
    yield Case("native_document_index_250_digits", line(native_citation(native("nat-idx-huge"), 0,
                                                                        document_index=10 ** 250)),
               "scored", turn_id="nat-idx-huge",
               check=lambda view: (resolves("D1", "D3", unknown=tuple(view["sentences"][0]["labels"]))(view),
                                   _short(view["sentences"][0]["labels"][0])),
               cli_check=pointer_problem("document_index out of range"))
    yield Case("native_documents_indexed_from_this_turn_only",
               line(native("nat-this-turn", documents=NATIVE["request_documents_this_turn_only"])), "scored",
               turn_id="nat-this-turn", check=resolves(unknown=("D2", "D1", "D3")),
               cli_check=pointer_problem("title does not match"))
    yield Case("native_citation_not_an_object",
               line(native("nat-cit-str", blocks=[{"type": "text", "text": "The cap is 220 euros.",
                                                   "citations": ["D1"]}])), "scored", turn_id="nat-cit-str",
               check=labels_are([]), cli_check=pointer_problem("citation is not an object"))
    yield Case("native_non_text_blocks_are_ignored",
               line(native("nat-tool", blocks=[{"type": "tool_use", "input": {}}, *NATIVE["response_content"]])),
               "scored", turn_id="nat-tool", check=ok)
    yield Case("native_answer_blocks_not_a_list", line(native("nat-blocks-dict", blocks={"text": "x"})), "skipped",
               "answer_blocks is missing or not a list", turn_id="nat-blocks-dict")
    yield Case("native_request_documents_missing", line(without(native("nat-no-docs"), "request_documents")),
               "skipped", "request_documents is missing or not a list", turn_id="nat-no-docs")
    yield Case("native_blocks_without_text", line(native("nat-empty", blocks=[{"type": "text", "text": " "}])),
               "skipped", "answer_blocks hold no text", turn_id="nat-empty")
    yield Case("native_citations_not_a_list",
               line(native("nat-cits-dict", blocks=[{"type": "text", "text": "x", "citations": {"a": 1}}])),
               "skipped", "citations is not a list", turn_id="nat-cits-dict")
    yield Case("native_block_text_a_number", line(native("nat-text-num", blocks=[{"type": "text", "text": 5}])),
               "skipped", "answer_blocks[0].text is not a string", turn_id="nat-text-num")
    yield Case("native_document_without_text", line(native("nat-doc-num", documents=[{"title": "t", "text": 3}])),
               "skipped", "request_documents[0] needs a text string", turn_id="nat-doc-num")


def provider(turn_id: str, answer_format: str, mutate: Callable[[dict[str, Any]], Any] | None = None,
             **options: Any) -> dict[str, Any]:
    """A well-formed native turn of `answer_format` (citecheck.demo.formats) on DAY, then `mutate`d:
    "東京 hotels: the nightly hotel cap is 220 euros." citing S1's text, then a meals sentence."""
    from citecheck.demo.formats import Claim, Source, native_turn

    sources = [Source(p["source"], f"https://policy.example/{p['label'].lower()}", (p["text"],)) for p in CONTEXT]
    claims = [Claim("東京 hotels: the nightly hotel cap is 220 euros", (0,)),
              Claim("Meals are reimbursed up to 50 euros a day", (1,))]
    data = {**without(turn(turn_id), "answer", "context"), **native_turn(answer_format, claims, sources, **options)}
    if mutate is not None:
        mutate(data)
    return data


def unknown_count(n: int) -> Callable[[View], None]:
    """Exactly `n` unknown labels across the turn's sentences (a placed pointer problem is one)."""
    def check(view: View) -> None:
        got = [lab for s in _sentences(view) for lab in s["unknown_labels"]]
        assert len(got) == n, got
    return check


def _first_citation(data: dict[str, Any]) -> dict[str, Any]:
    return next(c for b in data["answer_blocks"] for c in b.get("citations", []))


def _responses_part(data: dict[str, Any]) -> dict[str, Any]:
    return data["response"]["output"][0]["content"][0]


def _segment(data: dict[str, Any]) -> dict[str, Any]:
    return data["response"]["groundingMetadata"]["groundingSupports"][0]["segment"]


def _set(getter: Callable[[dict[str, Any]], Any], **changes: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: getter(data).update(changes)


def _provider_formats() -> Iterator[Case]:
    """Malformed provider-native shapes (SPEC §3.4): a pointer problem (scored, counted like an
    unknown label; `placed` ones mark their sentence) or a per-turn skip reason."""
    pointer_cases = [
        # kind, format, writer options, mutate, unknown labels on sentences, reason
        ("anthropic_page_past_the_end", "anthropic_blocks", {"kind": "page"},
         _set(_first_citation, start_page_number=2, end_page_number=3), 1, "are not among the 1 logged pages"),
        ("anthropic_page_number_zero", "anthropic_blocks", {"kind": "page"},
         _set(_first_citation, start_page_number=0), 1, "are not among the 1 logged pages"),
        ("anthropic_block_index_past_the_end", "anthropic_blocks", {"kind": "block"},
         _set(_first_citation, end_block_index=4), 1, "are not among the 1 logged blocks"),
        ("anthropic_block_indices_as_strings", "anthropic_blocks", {"kind": "block"},
         _set(_first_citation, start_block_index="0"), 1, "block indices missing"),
        ("anthropic_search_result_index_out_of_range", "anthropic_blocks", {"kind": "search"},
         _set(_first_citation, search_result_index=5), 1, "search_result_index out of range"),
        ("anthropic_search_result_wrong_source", "anthropic_blocks", {"kind": "search"},
         _set(_first_citation, source="https://policy.example/s2"), 1, "source does not match the search result"),
        ("anthropic_web_url_not_logged", "anthropic_blocks", {"kind": "web"},
         _set(_first_citation, url="https://elsewhere.example/"), 1, "url is not among the logged web results"),
        ("anthropic_web_url_missing", "anthropic_blocks", {"kind": "web"},
         lambda d: _first_citation(d).pop("url"), 0, "url is missing or not a string"),
        ("anthropic_unknown_citation_type", "anthropic_blocks", {},
         _set(_first_citation, type="sentence_location"), 0, "unknown citation type"),
        ("anthropic_cited_text_missing", "anthropic_blocks", {"kind": "page"},
         lambda d: _first_citation(d).pop("cited_text"), 1, "cited_text is missing or not a string"),
        ("openai_offsets_past_the_end", "openai_responses", {},
         lambda d: _responses_part(d)["annotations"][0].update(end_index=10_000), 1, "outside its part"),
        ("openai_offset_negative", "openai_responses", {},
         lambda d: _responses_part(d)["annotations"][0].update(start_index=-1), 1, "outside its part"),
        ("openai_annotation_not_an_object", "openai_responses", {},
         lambda d: _responses_part(d)["annotations"].append("https://policy.example/s1"), 0,
         "annotation is not an object"),
        ("openai_url_not_logged", "openai_responses", {},
         lambda d: _responses_part(d)["annotations"][0].update(url="https://elsewhere.example/"), 1,
         "names no logged source"),
        ("openai_file_citation_index_a_string", "openai_responses", {"files": True},
         lambda d: _responses_part(d)["annotations"][0].update(index="12"), 1,
         "file_citation index is missing or not an integer"),
        ("openai_annotation_in_a_refusal_part", "openai_responses", {},
         lambda d: d["response"]["output"][0]["content"].append(
             {"type": "refusal", "refusal": "No.", "annotations": [{"type": "url_citation"}]}), 0,
         "annotation in a content part that holds no output_text"),
        ("openai_chat_end_before_start", "openai_chat", {},
         lambda d: d["response"]["annotations"][0]["url_citation"].update(start_index=40, end_index=10), 1,
         "outside its part"),
        ("cohere_start_negative", "cohere_v2", {},
         lambda d: d["response"]["citations"][0].update(start=-2), 1, "outside the answer"),
        ("cohere_end_past_the_end", "cohere_v2", {},
         lambda d: d["response"]["citations"][0].update(end=10_000), 1, "outside the answer"),
        ("cohere_text_not_the_answer_span", "cohere_v2", {},
         lambda d: d["response"]["citations"][0].update(text="the cap"), 1, "citation text is not answer[start:end]"),
        ("cohere_source_id_never_sent", "cohere_v2", {},
         lambda d: d["response"]["citations"][0]["sources"][0].update(id="doc-42"), 1, "names no logged document"),
        ("cohere_citation_without_sources", "cohere_v2", {},
         lambda d: d["response"]["citations"][0].update(sources=[]), 0, "sources is missing or empty"),
        ("cohere_content_index_past_the_content", "cohere_v2", {},
         lambda d: d["response"]["citations"][0].update(content_index=3), 1, "names no content item"),
        ("gemini_part_index_past_the_parts", "gemini", {}, _set(_segment, partIndex=2), 1, "names no text part"),
        ("gemini_byte_range_cuts_a_character", "gemini", {}, _set(_segment, startIndex=1), 1,
         "cut a UTF-8 character"),
        ("gemini_end_past_the_part", "gemini", {}, _set(_segment, endIndex=10_000), 1, "outside its part"),
        ("gemini_start_negative", "gemini", {}, _set(_segment, startIndex=-3), 1, "outside its part"),
        ("gemini_end_index_missing", "gemini", {}, lambda d: _segment(d).pop("endIndex"), 1,
         "partIndex/startIndex/endIndex missing or not integers"),
        ("gemini_chunk_index_out_of_range", "gemini", {},
         lambda d: d["response"]["groundingMetadata"]["groundingSupports"][0].update(groundingChunkIndices=[9]), 1,
         "grounding chunk index 9 out of range"),
        ("gemini_segment_text_not_the_bytes", "gemini", {}, _set(_segment, text="hotels"), 1,
         "segment.text is not the text its byte offsets select"),
    ]
    for kind, answer_format, options, mutate, unknown, why in pointer_cases:
        yield Case(kind, line(provider(kind, answer_format, mutate, **options)), "scored", turn_id=kind,
                   check=unknown_count(unknown), cli_check=pointer_problem(why))
    yield Case("anthropic_search_results_only", line(provider("nat-search-only", "anthropic_blocks", kind="search")),
               "scored", turn_id="nat-search-only", check=resolves("R0", "R1"))
    skip_cases = [
        ("anthropic_search_results_not_a_list", "anthropic_blocks", {"kind": "search"},
         lambda d: d.update(request_search_results={"source": "x"}), "request_search_results is not a list"),
        ("anthropic_search_result_without_blocks", "anthropic_blocks", {"kind": "search"},
         lambda d: d["request_search_results"][0].pop("blocks"), "request_search_results[0].blocks is not a list"),
        ("anthropic_web_result_without_url", "anthropic_blocks", {"kind": "web"},
         lambda d: d["web_results"][0].pop("url"), "web_results[0] needs a url string"),
        ("anthropic_pages_not_strings", "anthropic_blocks", {"kind": "page"},
         lambda d: d["request_documents"][0].update(pages=[1, 2]), "request_documents[0].pages is not a list"),
        ("openai_response_missing", "openai_responses", {}, lambda d: d.pop("response"),
         "response.output is missing or not a list"),
        ("openai_part_text_a_number", "openai_responses", {}, lambda d: _responses_part(d).update(text=7),
         "content[0].text is not a string"),
        ("openai_document_without_url_or_file", "openai_responses", {},
         lambda d: d["request_documents"][0].pop("url"), "request_documents[0] needs a url or a file_id"),
        ("openai_chat_content_not_a_string", "openai_chat", {}, lambda d: d["response"].update(content=None),
         "response.content is missing or not a string"),
        ("cohere_content_not_a_list", "cohere_v2", {}, lambda d: d["response"].update(content="hi"),
         "response.content is missing or not a list"),
        ("cohere_document_without_id", "cohere_v2", {}, lambda d: d["request_documents"][0].pop("id"),
         "request_documents[0].id is missing"),
        ("gemini_parts_missing", "gemini", {}, lambda d: d["response"]["content"].pop("parts"),
         "response.content.parts is missing or not a list"),
        ("gemini_chunk_of_unknown_kind", "gemini", {},
         lambda d: d["response"]["groundingMetadata"]["groundingChunks"].append({"maps": {}}),
         "groundingChunks[3] is neither retrievedContext nor web"),
        ("gemini_supports_not_a_list", "gemini", {},
         lambda d: d["response"]["groundingMetadata"].update(groundingSupports={}), "groundingSupports is not a list"),
        ("native_format_without_text", "gemini", {},
         lambda d: d["response"]["content"].update(parts=[{"text": "  "}]), "response holds no text"),
    ]
    for kind, answer_format, options, mutate, why in skip_cases:
        yield Case(kind, line(provider(kind, answer_format, mutate, **options)), "skipped", why, turn_id=kind)


def _short(label: str) -> None:
    assert len(label) <= 200 and label.startswith("D1000"), label


def _conversations_and_days() -> Iterator[Case]:
    yield Case("stale_label_setup_turn", line(turn("stale-1", conversation_id="conv-stale", turn_index=1)),
               "scored", turn_id="stale-1", check=resolves("S1"))
    yield Case("stale_label_from_an_earlier_turn",
               line(turn("stale-2", conversation_id="conv-stale", turn_index=2, answer="Reports pay monthly [S3].",
                         context=CONTEXT[:1])), "scored", turn_id="stale-2",
               check=resolves(unknown=("S3",), stale=("S3",)))
    yield Case("duplicate_turn_id_same_day_earlier_line", line(turn("dup-day", answer="An old version [S1].")),
               "skipped", "duplicate turn_id: replaced by line", turn_id="dup-day", warehouse="superseded")
    yield Case("duplicate_turn_id_same_day_later_line", line(turn("dup-day")), "scored", turn_id="dup-day",
               check=all_of(texts_are(GOOD_STATEMENT), supported))
    yield Case("duplicate_turn_id_across_days_earlier_line",
               line(turn("dup-days", answered_at=f"{PREV}T09:00:00Z", answer="Yesterday's version [S1].")),
               "skipped", "duplicate turn_id: replaced by line", turn_id="dup-days", warehouse="superseded")
    yield Case("duplicate_turn_id_across_days_later_line", line(turn("dup-days")), "scored", turn_id="dup-days",
               check=all_of(texts_are(GOOD_STATEMENT), supported))
    yield Case("reloaded_turn_moves_to_another_day", line(turn("reload-days")), "scored", turn_id="reload-days",
               check=supported, preload=turn("reload-days", answered_at=f"{PREV}T08:00:00Z"))
    yield Case("late_turn_loaded_after_publish", line(turn("late", answered_at=f"{NEXT}T15:00:00Z")), "scored",
               turn_id="late", warehouse="late", day=NEXT, check=supported)


def good_turns(count: int) -> list[Case]:
    """Plain good turns to interleave; the first one is on PREV so that day has a turn too."""
    out = [Case("good", line(turn("good-prev", answered_at=f"{PREV}T10:00:00Z")), "scored", turn_id="good-prev",
                day=PREV, check=supported)]
    out += [Case("good", line(turn(f"good-{i:02d}")), "scored", turn_id=f"good-{i:02d}", check=supported)
            for i in range(count)]
    return out


def bad_cases() -> list[Case]:
    """Every bad-input case, in file order (the duplicate pairs keep their order)."""
    cases = [*_malformed_lines(), *_field_types(), *_timestamps(), *_unicode(), *_markers(), *_big(), *_native(),
             *_provider_formats(), *_conversations_and_days()]
    kinds = [c.kind for c in cases]
    duplicates = {k for k in kinds if kinds.count(k) > 1}
    assert not duplicates, f"case kinds must be distinct: {duplicates}"
    return cases


def corpus(good_every: int = 4) -> list[Case]:
    """Bad cases with a good turn after every `good_every` of them, and one at each end."""
    bad = bad_cases()
    goods = good_turns(len(bad) // good_every + 2)
    out: list[Case] = [goods[0]]
    g = 1
    for i, case in enumerate(bad, start=1):
        out.append(case)
        if i % good_every == 0:
            out.append(goods[g])
            g += 1
    out.extend(goods[g:])
    return out


def write_jsonl(cases: list[Any], path: Any, *, blank_lines: bool = True) -> dict[int, Any]:
    """Write the cases as one JSONL file; returns line number → case. Blank and whitespace-only
    lines are written between some cases: they are not turns and count nowhere."""
    numbers: dict[int, Case] = {}
    number = 0
    with open(path, "wb") as handle:
        for i, case in enumerate(cases):
            if blank_lines and i % 10 == 5:
                handle.write(b"\n   \t\n")
                number += 2
            handle.write(case.line + b"\n")
            number += 1
            numbers[number] = case
    return numbers


def hot_cases(scale: float = 1.0) -> dict[str, Callable[[float], dict[str, Any]]]:
    """The parser's former hot spots, each a builder of its turn at a share of its full size
    (`scale` sets the full size; 1.0 is a 10 MB answer, 100k distinct markers, 20k nested markers,
    20k native blocks): `tests/integration/test_bad_input.py` checks what they structure to,
    `bench/bench_hot_spots.py` times them at half and full size."""
    sentence = "The nightly hotel cap is 220 euros [S1]. "

    def size(full: int, share: float) -> int:
        return max(1, int(full * scale * share))

    def blocks(n: int) -> list[dict[str, Any]]:
        return [{"type": "text", "text": f"Fact {i}. ", "citations": [
            {"type": "char_location", "document_index": 1, "document_title": "Travel policy v4 > Lodging",
             "cited_text": "The nightly hotel cap is 220 euros", "start_char_index": 0, "end_char_index": 34}]}
            for i in range(n)]

    return {
        "10 MB, 170k sentences": lambda share: turn("a", answer=sentence * size(10_000_000 // len(sentence), share)),
        "100k distinct markers in one sentence": lambda share: turn(
            "b", answer="Cap" + "".join(f"[S{i}]" for i in range(size(100_000, share))) + "."),
        "20k nested markers": lambda share: turn("c", answer="Cap [S1[S2]] " * size(20_000, share) + "."),
        "20k native blocks": lambda share: native("d", blocks=blocks(size(20_000, share))),
    }


# --- reader events (SPEC §1): `citecheck load-events` ------------------------------------------

EVENT_TURN = "event-turn"  # the turn the event cases name; the test loads it first


@dataclass(frozen=True)
class EventCase:
    """One JSONL line of reader events and what `load-events` must make of it: `outcome` is
    "loaded", "orphaned" (loaded, its turn not in the warehouse), "duplicate" (an event id already
    given, unchanged), "conflict" (an event id already given with other content, `reason` naming
    the fields that differ: the first stays either way) or "rejected" with `reason` (a substring
    of the reported reason)."""

    kind: str
    line: bytes
    outcome: str
    reason: str = ""
    event_id: str | None = None


def _event(event_id: str, **fields: Any) -> dict[str, Any]:
    return {"event_id": event_id, "turn_id": EVENT_TURN, "event": "citation_shown", "label": "S1",
            "sentence_index": 0, "occurred_at": AT, **fields}


def event_cases() -> list[EventCase]:
    """Reader-event lines, good and bad, in file order (a duplicate comes after its original)."""
    good = [EventCase(f"good_{kind}", line(_event(f"ev-{kind}", event=kind)), "loaded", event_id=f"ev-{kind}")
            for kind in ("citation_shown", "citation_opened", "source_reported")]
    return [
        *good,
        EventCase("no_label_or_sentence", line(without(_event("ev-bare", event="source_reported"), "label",
                                                       "sentence_index")), "loaded", event_id="ev-bare"),
        EventCase("orphan", line(_event("ev-orphan", turn_id="turn-logged-later")), "orphaned", event_id="ev-orphan"),
        EventCase("repeated_event_id", line(_event("ev-citation_opened", event="citation_opened")), "duplicate",
                  event_id="ev-citation_opened"),
        EventCase("repeated_event_id_other_type", line(_event("ev-citation_shown", event="source_reported")),
                  "conflict", "event", event_id="ev-citation_shown"),
        EventCase("repeated_event_id_other_turn", line(_event("ev-orphan")), "conflict", "turn_id",
                  event_id="ev-orphan"),
        EventCase("truncated_json", line(_event("ev-t"))[:30], "rejected", "malformed line: invalid JSON"),
        EventCase("not_utf8", b'{"event_id": "ev-\xff"}', "rejected", "malformed line: line is not valid UTF-8"),
        EventCase("not_an_object", line([_event("ev-list")]), "rejected", "malformed line: not a JSON object (list)"),
        EventCase("missing_event_id", line(without(_event("x"), "event_id")), "rejected", "missing field: event_id"),
        EventCase("empty_turn_id", line(_event("ev-e", turn_id="")), "rejected", "missing field: turn_id"),
        EventCase("missing_event", line(without(_event("ev-m"), "event")), "rejected", "missing field: event"),
        EventCase("missing_occurred_at", line(without(_event("ev-o"), "occurred_at")), "rejected",
                  "missing field: occurred_at"),
        EventCase("unknown_event_type", line(_event("ev-u", event="citation_clicked")), "rejected",
                  "unknown event type 'citation_clicked'"),
        EventCase("event_type_not_a_string", line(_event("ev-n", event=3)), "rejected", "unknown event type"),
        EventCase("bad_timestamp", line(_event("ev-ts", occurred_at="30/11/2026")), "rejected",
                  "occurred_at is not an ISO timestamp"),
        EventCase("sentence_index_not_a_number", line(_event("ev-si", sentence_index="2")), "rejected",
                  "sentence_index is not a sentence number"),
        EventCase("sentence_index_negative", line(_event("ev-sn", sentence_index=-1)), "rejected",
                  "sentence_index is not a sentence number"),
        EventCase("label_not_a_string", line(_event("ev-l", label=["S1"])), "rejected",
                  "label is not a non-empty string"),
        EventCase("event_id_too_long", line(_event("e" * 201)), "rejected", "event_id is longer than 200 characters"),
        EventCase("label_too_long", line(_event("ev-ll", label="S" * 201)), "rejected",
                  "label is longer than 200 characters"),
    ]
