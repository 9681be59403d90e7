"""The report's flagged sentences (`read_model.flagged_sentences`): the bad verdicts worst first,
then the sentences flagged only for an untraced figure, decided by `core.figures.untraced_figures`
over the stored JSON (no pattern on its text), at most `limit` rows; `untraced_figure_sentences`
likewise, by turn and sentence."""

from __future__ import annotations

import datetime as dt

from citecheck.core.vocabulary import BAD_VERDICTS, CONTRADICTED, NOT_CHECK_WORTHY, SUPPORTED, UNSUPPORTED
from citecheck.warehouse import tables as T
from citecheck.warehouse.read_model import flagged_sentences, untraced_figure_sentences

DAY = dt.date(2026, 11, 29)


def _figure(traced):
    return {"text": "5", "kind": "number", "value": "5", "traced": traced}


def _row(turn, index, verdict, figures=(), score=None, contradiction=None, check_worthy=True):
    return {"day": DAY, "turn_id": turn, "sentence_index": index, "run_id": "r", "config_hash": "h",
            "verdict": verdict, "check_worthy": check_worthy, "figures": list(figures), "score": score,
            "contradiction": contradiction, "text": f"{turn}/{index}"}


ROWS = [
    _row("t1", 0, SUPPORTED, [_figure(True), _figure(False)], score=0.9),  # untraced, supported
    _row("t1", 1, UNSUPPORTED, score=0.2),
    _row("t2", 0, CONTRADICTED, contradiction=0.8),
    _row("t2", 1, SUPPORTED, [_figure(None)], score=0.95),  # no cited text to trace in: not untraced
    _row("t3", 0, SUPPORTED, [_figure(False)], score=0.4),  # untraced, lower score: before t1/0
    _row("t3", 1, NOT_CHECK_WORTHY, [_figure(False)], check_worthy=False),  # not check-worthy: never flagged
    _row("t4", 0, SUPPORTED, [{"text": "false", "kind": "word", "value": "x", "traced": True}]),  # the word false
]


def test_flagged_sentences_put_the_untraced_figures_after_the_bad_verdicts_and_keep_the_limit(engine):
    with engine.begin() as conn:
        conn.execute(T.sentence_verdicts.insert(), ROWS)
    order = [(r["turn_id"], r["sentence_index"]) for r in flagged_sentences(engine, DAY, BAD_VERDICTS, 10)]
    assert order == [("t2", 0), ("t1", 1), ("t3", 0), ("t1", 0)]
    assert [(r["turn_id"], r["sentence_index"]) for r in flagged_sentences(engine, DAY, BAD_VERDICTS, 3)] == order[:3]
    assert [(r["turn_id"], r["sentence_index"]) for r in flagged_sentences(engine, DAY, BAD_VERDICTS, 1)] == order[:1]
    full = flagged_sentences(engine, DAY, BAD_VERDICTS, 10)[-1]
    assert full["text"] == "t1/0" and full["figures"] == [_figure(True), _figure(False)]
    untraced = untraced_figure_sentences(engine, DAY, 10)
    assert [(r["turn_id"], r["sentence_index"]) for r in untraced] == [("t1", 0), ("t3", 0)]
    assert [(r["turn_id"], r["sentence_index"]) for r in untraced_figure_sentences(engine, DAY, 1)] == [("t1", 0)]
