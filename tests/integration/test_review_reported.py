"""Reports become labelled examples: every reported citation whose sentence was judged enters the
next `review export` in its own stratum with inclusion probability 1, and `review report` keeps
judge quality on them apart from the population estimates (SQLite and PostgreSQL)."""

from __future__ import annotations

import datetime as dt
import json

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import main
from citecheck.core.reader_events import reader_event
from citecheck.review import sample as S
from citecheck.warehouse import tables as T
from helpers import orbit_settings, orbit_warehouse_turns

DAY = dt.date(2026, 11, 30)
PERIOD = ("--from", DAY.isoformat(), "--to", DAY.isoformat())


def _report(n: int, label: str | None, index: int | None, turn: str = "orbit-1"):
    return reader_event({"event_id": f"r{n}", "turn_id": f"{turn}@{DAY}", "event": "source_reported",
                         "label": label, "sentence_index": index, "occurred_at": f"{DAY}T15:00:00Z"})


def test_reported_sentences_enter_the_export_with_probability_one_and_stay_out_of_the_estimates(
        engine, tmp_path, capsys):
    W.load_turns(engine, orbit_warehouse_turns(DAY.isoformat()))
    W.load_reader_events(engine, [
        _report(1, "S2", 2),  # orbit-1 sentence 2 [S2], miscited
        _report(2, "S3", None),  # no sentence: every judged sentence citing S3 (1, 3 and 4)
        _report(3, "S1", 5),  # sentence 5 cites nothing: no reported citation
        _report(4, None, 0),  # no label: no citation to review
        _report(5, "S9", 0, turn="orbit-2"),  # a label orbit-2's sentence 0 does not cite
        reader_event({"event_id": "s1", "turn_id": f"orbit-2@{DAY}", "event": "citation_shown", "label": "S1",
                      "sentence_index": 0, "occurred_at": f"{DAY}T15:00:00Z"}),  # shown, not reported
    ])
    job.run_day(engine, DAY, orbit_settings())
    out = tmp_path / "sample.jsonl"
    capsys.readouterr()
    assert main(["review", "export", *PERIOD, "--size", "2", "--format", "jsonl", "--out", str(out)]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["strata"][S.REPORTED_STRATUM] == {"sampled": 4, "size": 4, "inclusion_probability": 1.0}
    assert exported["items"] == 2 + 4  # the random draw's size, and every reported sentence on top
    with engine.connect() as conn:
        items = [dict(r) for r in conn.execute(T.review_items.select()).mappings()]
    reported = {(i["turn_id"], i["sentence_index"]) for i in items if i["stratum"] == S.REPORTED_STRATUM}
    assert reported == {(f"orbit-1@{DAY}", k) for k in (1, 2, 3, 4)}
    assert all(i["inclusion_probability"] == 1.0 for i in items if i["stratum"] == S.REPORTED_STRATUM)
    random_items = [i for i in items if i["stratum"] != S.REPORTED_STRATUM]
    assert len(random_items) == 2 and not {(i["turn_id"], i["sentence_index"]) for i in random_items} & reported

    # the reviewer says every reported sentence is not supported, every sampled one supported
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    stratum_of = {i["item_id"]: i["stratum"] for i in items}
    labels = tmp_path / "bob.jsonl"
    labels.write_text("".join(json.dumps({
        "item_id": r["item_id"], "label": "not_supported" if stratum_of[r["item_id"]] == S.REPORTED_STRATUM
        else "supported", "citation_labels": ";".join(f"{c}=none" for c in r["cited_labels"])}) + "\n"
        for r in records), encoding="utf-8")
    assert main(["review", "import", "--file", str(labels), "--reviewer", "bob"]) == 0
    capsys.readouterr()
    assert main(["review", "report", *PERIOD, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["labelled_items"] == 2 and report["population"] == 4  # the random strata and what they stand for
    assert report["reported"]["labelled_items"] == 4
    apart = [r for r in report["judge_quality"] if r["slice_name"] == S.REPORTED_STRATUM]
    assert apart and {r["weighting"] for r in apart} == {"raw"} and max(r["labelled_items"] for r in apart) == 4
    population = [r for r in report["judge_quality"] if r["slice_name"] == "all"]
    assert population and max(r["labelled_items"] for r in population) == 2, "reported items stay out"
    agreement = report["reported"]["judges"]["final"]["agreement"]
    # final verdicts of sentences 1-4: supported, miscited, unsupported, miscited; humans: none supported
    assert (agreement["numerator"], agreement["denominator"]) == (3, 4)
    assert main(["review", "report", *PERIOD]) == 0
    assert "sentences readers reported (4 labelled" in capsys.readouterr().out
