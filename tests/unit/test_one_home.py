"""One home for each rule issue 35 found restated (in the spirit of `test_vocabulary.py`): each
rule is written once, in its home, and every other module reads it there. A restatement in an old
spelling fails here with its file and line; the rule's home says what to call instead.

- a judged sentence (or claim): `core/vocabulary.py` `is_judged` (`JUDGED_VERDICTS`); read by the
  counts, the reader counts, judge quality and `warehouse/review.py` (`_judged`, its SQL image);
- a reader event's citations: `core/reader_events.py` `resolve_event`; read by the reader counts
  and `warehouse/review.py` `reported_sentences`;
- an untraced figure: `core/figures.py` `is_untraced`, `untraced_figures`, `traceable`; read by the
  counts, the read model, the review sample and the report template;
- the turns of a day: `sql/extract_turns.sql` (`source.day_turn_ids`); read by extract, the day's
  reader events and `warehouse/freshness.py`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import citecheck

PACKAGE = Path(citecheck.__file__).parent

# (rule, old spelling, the files where it is the rule's home)
RESTATEMENTS = [
    ("judged", r"\bNOT_JUDGED_VERDICTS\b", {"core/vocabulary.py"}),
    ("judged", r"\bJUDGED_VERDICTS\b", {"core/vocabulary.py", "warehouse/review.py"}),
    ("judged", r"(==|!=)\s*UNJUDGED\b|\bUNJUDGED\s*(==|!=)", set()),
    ("judged", r"check_worthy\s+and\s+\w+\.verdict\s*!=", set()),
    ("reader event resolution", r"(reader_events\.c|\be)\.(label|sentence_index)\s*(==|!=|\.is_)", set()),
    ("reader event resolution", r"[\"']source_reported[\"']", {"core/reader_events.py", "demo/readers.py"}),
    ("untraced figure", r"traced[\"']?\)?\s+is\s+(sameas\s+)?(False|false)", {"core/figures.py"}),
    ("untraced figure", r"\"traced\":\s*false|selectattr\(\s*[\"']traced", set()),
    ("day membership", r"[^_]answered_at\s*>=\s*:?start\b", {"sql/extract_turns.sql"}),
]


def _sources() -> list[tuple[str, str]]:
    files = [p for ext in ("*.py", "*.sql", "*.j2") for p in PACKAGE.rglob(ext)]
    return [(p.relative_to(PACKAGE).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(files)]


@pytest.mark.parametrize(("rule", "pattern", "homes"), RESTATEMENTS, ids=lambda v: v if isinstance(v, str) else "")
def test_no_module_restates_a_rule_outside_its_home(rule, pattern, homes):
    found = [f"{rel}:{text.count(chr(10), 0, m.start()) + 1} {m.group(0)!r}"
             for rel, text in _sources() if rel not in homes for m in re.finditer(pattern, text)]
    assert found == [], f"{rule} restated outside {sorted(homes) or 'its home'}: {found}"


def test_each_home_holds_its_rule():
    """The patterns above find the rules where they live (so a pattern that matches nothing any
    more is noticed, not silently passing)."""
    texts = dict(_sources())
    assert "def is_judged(" in texts["core/vocabulary.py"]
    assert "def resolve_event(" in texts["core/reader_events.py"]
    assert re.search(r"figure_traced\(figure\) is False", texts["core/figures.py"])
    assert re.search(r"answered_at >= :start", texts["sql/extract_turns.sql"])


def test_the_judged_predicate_is_the_judged_verdicts():
    from citecheck.core import vocabulary as V

    assert [v for v in V.VERDICTS if V.is_judged(v)] == list(V.JUDGED_VERDICTS)
    assert not V.is_judged(None)


def test_the_untraced_rule_reads_a_figure_and_its_stored_form_alike():
    from citecheck.core.figures import Figure, is_untraced, traceable, untraced_figures

    figures = [Figure("3", "number", "3", traced=True), Figure("4", "number", "4", traced=False),
               Figure("5", "number", "5", traced=None)]
    stored = [f.as_dict() for f in figures]
    assert [is_untraced(f) for f in figures] == [is_untraced(f) for f in stored] == [False, True, False]
    assert untraced_figures(stored) == [stored[1]] and untraced_figures(None) == []
    assert traceable(figures) and traceable(stored) and not traceable([figures[2]]) and not traceable(None)
