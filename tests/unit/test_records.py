"""One sentence row shape (`citecheck.core.records`): the warehouse row, the CLI's JSON and the
`+` join of labels are projections of one record, and the job selects the judged share with the
same rule `score` can use (`citecheck.core.selection`)."""

from __future__ import annotations

from citecheck.core.config import Config
from citecheck.core.model import Judgment, Sentence
from citecheck.core.pipeline import judge_items, score, structure_turns
from citecheck.core.records import (
    STRUCTURAL_FIELDS,
    VERDICT_FIELDS,
    citation_rows,
    join_labels,
    sentence_json,
    sentence_record,
    sentence_row,
    split_labels,
)
from citecheck.core.selection import Selection, is_selected
from citecheck.core.turns import turn_from_dict
from citecheck.core.verdicts import SentenceVerdict, decide
from citecheck.core.vocabulary import UNJUDGED
from citecheck.judges.recorded import RecordedJudge
from citecheck.warehouse import tables as T

TURN = {
    "turn_id": "t1", "conversation_id": "c1", "turn_index": 0, "answered_at": "2026-11-23T10:00:00Z",
    "question": "q", "answer": "Paris is the capital of France [S1][S2]. Its population is 2.1 million [S3].",
    "context": [{"label": "S1", "text": "Paris is the capital of France."},
                {"label": "S2", "text": "France is in Europe."},
                {"label": "S3", "text": "About 2.1 million people live in Paris."}],
}


def _verdicts():
    st = next(structure_turns([turn_from_dict(TURN)], Config()))
    items = judge_items(st)
    judgment = Judgment(cited=False, alone={"S1": False, "S2": False}, rest={"S1": False, "S2": False},
                        elsewhere=("S3",), faithful=True, judge="recorded", judge_version="1")
    return st, [decide(s, judgment if s.index == items[0].sentence_index else None, selected=True)
                for s in st.sentences]


def test_labels_join_and_split_back():
    assert join_labels(["S3", "S1"]) == "S3+S1"
    assert split_labels("S3+S1") == ("S3", "S1")
    assert join_labels([]) is None and split_labels(None) == () and split_labels("") == ()


def test_the_warehouse_row_and_the_json_are_projections_of_one_record():
    st, verdicts = _verdicts()
    table_columns = {c.name for c in T.sentence_verdicts.columns} - {"day", "run_id", "config_hash", "judge_versions"}
    for v in verdicts:
        record = sentence_record(v)
        row = sentence_row(v, st.turn_id, st.turn.conversation_id)
        assert set(row) == table_columns  # every column filled, nothing the table lacks
        assert row["sentence_index"] == record["index"]
        assert all(row[k] == record[k] for k in (*STRUCTURAL_FIELDS, *VERDICT_FIELDS)
                   if k not in ("index", "unjudged_reason"))
        assert row["reason"] == (record["unjudged_reason"] or record["non_claim_reason"])
        shown = sentence_json(v)
        assert all(shown[k] == record[k] for k in (*STRUCTURAL_FIELDS, *VERDICT_FIELDS))
        assert {c.name for c in T.citation_verdicts.columns} - {"day", "run_id", "config_hash", "judge_versions"} \
            >= {k for r in citation_rows(v, st.turn_id) for k in r}
        assert split_labels(row["supported_elsewhere_by"]) == v.supported_elsewhere_by
    assert any(v.supported_elsewhere_by for v in verdicts)  # the `+` join was exercised


def test_score_judges_only_the_selected_share_when_given_the_jobs_selection():
    turns = [turn_from_dict({**TURN, "turn_id": f"t{i}", "conversation_id": f"c{i}"}) for i in range(40)]
    selection = Selection(share=0.5, salt="citecheck-v1")
    judge = RecordedJudge({})
    report = score(turns, judge, Config(), selection=selection)
    picked = {s.turn_id for s in report.scored if s.selected}
    assert picked == {t.turn_id for t in turns if is_selected(t.turn_id, 0.5, "citecheck-v1")}
    assert 0 < len(picked) < len(turns)
    assert all(s.selected for s in score(turns, judge, Config()).scored)


class _CountedLabel(str):
    """A label that counts its equality tests (a set finds it by hash and identity, a tuple by `==`
    against every label before it)."""

    tests = 0

    def __eq__(self, other: object) -> bool:
        _CountedLabel.tests += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_a_sentence_with_thousands_of_unknown_labels_is_read_in_one_pass():
    """`resolved_labels`, `decide`'s credit and `citation_rows` look a label up in a set, not a
    tuple: the bad-input corpus has one sentence with 100,000 distinct unknown markers, and a
    lookup in a tuple made it quadratic (the day's CLI run timed out)."""
    labels = tuple(_CountedLabel(f"S{i}") for i in range(2_000))
    sentence = Sentence(index=0, text="Cap.", start=0, end=4, labels=labels, unknown_labels=labels,
                        stale_labels=labels[:1_000])
    _CountedLabel.tests = 0
    assert sentence.resolved_labels == () and not sentence.attached
    rows = citation_rows(SentenceVerdict(sentence, UNJUDGED, None, credited={}, supported_elsewhere_by=()), "t1")
    assert [r["status"] for r in rows] == ["stale"] * 1_000 + ["unknown"] * 1_000
    assert _CountedLabel.tests <= 2 * len(labels), _CountedLabel.tests  # with tuple lookups: 3,998,000

    # judged, with one resolved label among them: every unknown one is credited False
    judged = Sentence(index=0, text="Cap.", start=0, end=4, labels=labels, unknown_labels=labels[1:])
    _CountedLabel.tests = 0
    verdict = decide(judged, Judgment(cited=True, alone={"S0": True}, rest={"S0": False}, faithful=True,
                                      judge="recorded", judge_version="1"))
    assert verdict.credited == {"S0": True, **{label: False for label in labels[1:]}}
    assert _CountedLabel.tests <= 4 * len(labels), _CountedLabel.tests  # with a tuple lookup in the credit: 1,999,000
