"""The human review loop (issue 12): sampling, blind export, label import, judge quality,
Cohen's kappa, the NLI threshold sweep, calibrated metrics; SQLite and the real PostgreSQL."""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections import Counter
from fractions import Fraction

import pytest

from citecheck.review import labels as L
from citecheck.review import quality as Q
from citecheck.review import sample as S

DAY1, DAY2 = dt.date(2026, 11, 23), dt.date(2026, 11, 24)


# --- sampling -------------------------------------------------------------------------------

def _population(sizes: dict[str, int]) -> list[dict]:
    rows = []
    for stratum, n in sizes.items():
        verdict, judge = stratum.split("|")
        rows += [{"day": DAY1, "turn_id": f"{stratum}-t{i}", "sentence_index": i % 3, "verdict": verdict,
                  "judge": judge, "labels": ["S1", "S2"], "unknown_labels": ["S2"] if i % 2 else []}
                 for i in range(n)]
    return rows


def test_allocation_fills_the_size_within_each_stratum():
    sizes = {"supported|nli": 900, "unsupported|nli": 60, "miscited|anthropic": 30, "supported|anthropic": 10}
    alloc = S.allocate(sizes, 100)
    assert sum(alloc.values()) == 100
    assert all(0 < alloc[k] <= sizes[k] for k in sizes)
    assert alloc["supported|nli"] > alloc["unsupported|nli"] > alloc["supported|anthropic"]
    assert S.allocate(sizes, 5000) == sizes  # more than the population: everything, once
    assert S.allocate({"a|x": 3, "b|x": 1}, 2) == {"a|x": 1, "b|x": 1}


def test_stratified_draw_is_deterministic_with_exact_inclusion_probabilities():
    sizes = {"supported|nli": 500, "unsupported|nli": 40, "miscited|anthropic": 17}
    population = _population(sizes)
    first = S.draw(population, 60)
    assert first == S.draw(list(reversed(population)), 60)  # the order of the rows does not matter
    assert first != S.draw(population, 60, salt="another salt")
    per = Counter(i["stratum"] for i in first)
    alloc = S.allocate(sizes, 60)
    assert dict(per) == alloc
    for item in first:
        n_h, big_n = alloc[item["stratum"]], sizes[item["stratum"]]
        assert item["stratum_size"] == big_n and item["stratum_sampled"] == n_h
        assert Fraction(item["inclusion_probability"]).limit_denominator(10_000) == Fraction(n_h, big_n)
    # Horvitz–Thompson: the weights give every stratum, and the population, back
    assert sum(1 / i["inclusion_probability"] for i in first) == pytest.approx(len(population))
    assert len({i["item_id"] for i in first}) == 60
    assert {tuple(i["cited_labels"]) for i in first} == {("S1",), ("S1", "S2")}  # unknown labels are not graded


def test_inclusion_probability_matches_the_selection_frequency_over_salts():
    sizes = {"supported|nli": 30, "unsupported|nli": 6}
    population = _population(sizes)
    hits: Counter[str] = Counter()
    runs = 400
    for k in range(runs):
        for item in S.draw(population, 8, salt=f"salt-{k}"):
            hits[item["turn_id"]] += 1
    alloc = S.allocate(sizes, 8)
    for row in population:
        stratum = f"{row['verdict']}|{row['judge']}"
        expected = alloc[stratum] / sizes[stratum]
        assert hits[row["turn_id"]] / runs == pytest.approx(expected, abs=0.1)


# --- label files ----------------------------------------------------------------------------

KNOWN = {"r1": ["S1", "S3"], "r2": [], "r3": ["S2"]}


def _known(ids):
    return {i: KNOWN[i] for i in ids if i in KNOWN}


def _write_csv(path, header, rows):
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def test_bad_label_rows_are_reported_with_line_and_reason_and_the_rest_loads(tmp_path):
    path = tmp_path / "labels.csv"
    _write_csv(path, ["item_id", "sentence", "label", "citation_labels"], [
        ["r1", "A sentence\nover two lines.", "supported", "S1=full;S3=none"],  # lines 2-3
        ["nope", "x", "supported", ""],  # line 4: unknown item
        ["r2", "y", "maybe", ""],  # line 5: bad value
        ["r3", "z", "partial", "S2=most"],  # line 6: bad grade
        ["r3", "z", "", "S2=full"],  # line 7: missing label
        ["r1", "w", "Not Supported", "S1=partial"],  # line 8: S3 ungraded
        ["r2", "v", "", ""],  # line 9: not labelled yet
        ["r3", "u", "not-supported", "S2=none"],  # line 10: fine
    ])
    result = L.read_label_file(path, _known)
    assert [(r["item_id"], r["label"], r["citation_labels"], r["line"]) for r in result.rows] == [
        ("r1", "supported", {"S1": "full", "S3": "none"}, 2), ("r3", "not_supported", {"S2": "none"}, 10)]
    errors = {e["line"]: e["reason"] for e in result.errors}
    assert set(errors) == {4, 5, 6, 7, 8}
    assert "unknown item" in errors[4]
    assert "bad value for label" in errors[5]
    assert "bad value for citation_labels" in errors[6]
    assert errors[7] == "missing field label"
    assert "missing citation label for S3" in errors[8]
    assert result.unlabelled == [9]


def test_a_missing_column_is_reported_on_every_row(tmp_path):
    path = tmp_path / "labels.csv"
    _write_csv(path, ["item_id", "label"], [["r2", "supported"], ["r1", "partial"]])
    result = L.read_label_file(path, _known)
    assert result.rows == []
    assert [(e["line"], e["reason"]) for e in result.errors] == [
        (2, "missing column citation_labels"), (3, "missing column citation_labels")]


def test_jsonl_labels_missing_fields_bad_json_and_a_later_line_replacing(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join([
        json.dumps({"item_id": "r1", "label": "supported", "citation_labels": {"S1": "full", "S3": "partial"}}),
        "{not json",
        json.dumps({"item_id": "r2", "citation_labels": ""}),
        json.dumps({"label": "supported", "citation_labels": ""}),
        json.dumps({"item_id": "r1", "label": "partial", "citation_labels": "S1=partial;S3=none;S4=full"}),
    ]) + "\n", encoding="utf-8")
    result = L.read_label_file(path, _known)
    assert [(r["item_id"], r["label"], r["line"]) for r in result.rows] == [("r1", "partial", 5)]
    assert result.rows[0]["citation_labels"] == {"S1": "partial", "S3": "none", "S4": "full"}
    assert [(e["line"], e["reason"].split(" (")[0]) for e in result.errors] == [
        (2, "not valid JSON"), (3, "missing field label"), (4, "missing field item_id")]
    assert result.replaced == [{"line": 1, "item_id": "r1", "replaced_by_line": 5}]


# --- judge quality --------------------------------------------------------------------------

def test_each_judges_pass_is_read_from_the_published_row():
    escalated = {"verdict": "supported", "attached": True, "judge": "anthropic", "score": None,
                 "first_stage": {"judge": "nli", "version": "m", "supported": False, "score": 0.31},
                 "llm": {"status": "ok", "verdict": "supported"}}
    assert Q.judge_passes(escalated) == {"first_stage": False, "llm": True, "final": True}
    assert Q.nli_score(escalated) == 0.31
    failed_llm = {**escalated, "verdict": "unsupported", "llm": {"status": "unjudged", "verdict": None}}
    assert Q.judge_passes(failed_llm) == {"first_stage": False, "llm": None, "final": False}
    nli_only = {"verdict": "miscited", "attached": True, "judge": "nli", "score": 0.2, "first_stage": None,
                "llm": None}
    assert Q.judge_passes(nli_only) == {"first_stage": False, "llm": None, "final": False}
    assert Q.nli_score(nli_only) == 0.2
    uncited = {"verdict": "uncited_supported", "attached": False, "judge": "recorded", "score": None,
               "first_stage": None, "llm": None}
    assert Q.judge_passes(uncited) == {"first_stage": True, "llm": None, "final": True}
    assert Q.nli_score(uncited) is None


def test_cohens_kappa_on_a_hand_computed_case():
    # 10 shared items: the reviewers agree on 7 (4 supported, 2 partial, 1 not supported).
    pairs = ([("supported", "supported")] * 4 + [("partial", "partial")] * 2 + [("not_supported", "not_supported")]
             + [("supported", "partial"), ("partial", "not_supported"), ("not_supported", "supported")])
    # p_o = 0.7; marginals A = (5, 3, 2), B = (5, 3, 2) over (supported, partial, not_supported):
    # p_e = (25 + 9 + 4) / 100 = 0.38; kappa = (0.7 - 0.38) / (1 - 0.38) = 0.32 / 0.62
    k = Q.cohens_kappa(pairs, ("supported", "partial", "not_supported"))
    assert k["value"] == pytest.approx(0.32 / 0.62)
    assert k["numerator"] == 7 and k["denominator"] == 10
    assert k["ci_low"] < k["value"] < k["ci_high"]
    labels = [{"reviewer": "ann", "item_id": str(i), "label": a} for i, (a, _) in enumerate(pairs)]
    labels += [{"reviewer": "bob", "item_id": str(i), "label": b} for i, (_, b) in enumerate(pairs)]
    labels += [{"reviewer": "cy", "item_id": "other", "label": "supported"}]  # shares nothing: no row
    rows = Q.kappa_rows(labels, ("supported", "partial", "not_supported"))
    assert [(r["slice_value"], r["labelled_items"]) for r in rows] == [("ann|bob", 10)]
    assert rows[0]["value"] == pytest.approx(0.32 / 0.62)


def _item(human: bool, score: float | None, weight: float = 1.0, **passes):
    return {"human_supported": human, "nli_score": score, "weight": weight,
            "passes": {"first_stage": passes.get("first"), "llm": passes.get("llm"), "final": passes.get("final")}}


def test_threshold_sweep_counts_false_passes_and_fails_from_the_stored_scores():
    items = [_item(False, 0.9), _item(False, 0.6), _item(False, 0.2), _item(True, 0.95), _item(True, 0.7),
             _item(True, 0.4), _item(True, None)]
    rows = Q.threshold_sweep(items, thresholds=(0.3, 0.5, 0.8), false_pass_target=0.34)
    got = {(r["slice_value"], r["measure"]): (r["numerator"], r["denominator"]) for r in rows
           if r["weighting"] == "raw"}
    assert got[("0.30", "false_pass")] == (2, 3) and got[("0.30", "false_fail")] == (0, 3)
    assert got[("0.50", "false_pass")] == (2, 3) and got[("0.50", "false_fail")] == (1, 3)
    assert got[("0.80", "false_pass")] == (1, 3) and got[("0.80", "false_fail")] == (2, 3)
    pick = [r for r in rows if r["measure"] == "threshold_for_false_pass_target"]
    assert [(p["slice_value"], p["value"]) for p in pick] == [("0.34", 0.8)]
    assert Q.threshold_sweep(items, (0.3,), 0.1)[-1]["value"] is None  # no swept threshold meets it


def test_weighted_rates_weigh_items_back_to_the_population():
    # judge passes everything; two not-supported items, one of weight 3
    items = [_item(False, None, 3.0, first=True, final=True), _item(False, None, 1.0, first=False, final=False),
             _item(True, None, 1.0, first=True, final=True)]
    rows = {(r["judge"], r["measure"], r["weighting"]): r for r in Q.quality_rows(items)
            if r["slice_name"] == "all"}
    assert (rows[("final", "false_pass", "raw")]["numerator"], rows[("final", "false_pass", "raw")]["denominator"]) \
        == (1, 2)
    weighted = rows[("final", "false_pass", "weighted")]
    assert (weighted["numerator"], weighted["denominator"], weighted["value"]) == (3.0, 4.0, 0.75)
    assert ("llm", "false_pass", "raw") not in rows  # the LLM judged none of them


def test_calibrated_estimate_equals_the_judges_when_they_never_err():
    from citecheck.review.calibrated import estimate

    population = [1.0] * 70 + [0.0] * 30
    labelled = [1.0] * 14 + [0.0] * 6
    rows = {r["metric"]: r for r in estimate("citation_recall", population, labelled, labelled, [5.0] * 20)}
    assert rows["citation_recall"]["value"] == pytest.approx(0.7)
    assert rows["citation_recall_calibrated"]["value"] == pytest.approx(0.7)
    # PPI++ tunes lambda = 1 / (1 + n/N) here; the interval is the judged sentences' own sampling
    # error plus the small rectifier term: sqrt((l^2 * 0.21 / 100) + ((1 - l)^2 * 0.21 / 20))
    lam = 1 / (1 + 20 / 100)
    half = 1.959964 * (lam ** 2 * 0.21 / 100 + (1 - lam) ** 2 * 0.21 / 20) ** 0.5
    cal = rows["citation_recall_calibrated"]
    assert (cal["ci_low"], cal["ci_high"]) == pytest.approx((0.7 - half, 0.7 + half), rel=1e-3)
    human = rows["citation_recall_human_only"]
    assert human["value"] == pytest.approx(0.7) and human["ci_high"] - human["ci_low"] > cal["ci_high"] - cal["ci_low"]


# --- through the warehouse: export → import → report, SQLite and PostgreSQL -----------------

def _published_days(engine) -> None:
    """Two published days of the bundled demo data (recorded judge) in the warehouse."""
    from dataclasses import replace

    from citecheck import demo
    from citecheck import warehouse as W
    from citecheck.core.config import config_from_mapping
    from citecheck.job import JobSettings, run_day

    data = demo.generate(DAY1, 2, 40, seed=3)
    W.load_turns(engine, data.turns)
    settings = replace(JobSettings(judge_spec=demo.judge_spec(data), config=config_from_mapping(
        {"check_worthiness": {"refusals": list(demo.REFUSAL_SENTENCES)}})), shards=1)
    for day in (DAY1, DAY2):
        run_day(engine, day, settings)


@pytest.fixture
def warehouse(engine) -> str:
    """The URL of a fresh warehouse (SQLite, then PostgreSQL) with two published demo days."""
    _published_days(engine)
    return engine.url.render_as_string(hide_password=False)


def _cli(*args: str) -> int:
    from citecheck.cli import main

    return main(list(args))


def _final_passes(url: str) -> dict[tuple[str, int], bool]:
    from citecheck import warehouse as W
    from citecheck.warehouse import review as WR

    engine = W.make_engine(url)
    with engine.connect() as conn:
        rows = list(WR.judged_sentences(conn, DAY1, DAY2))
    engine.dispose()
    return {(r["turn_id"], r["sentence_index"]): r["verdict"] in ("supported", "uncited_supported") for r in rows}


def test_export_import_report_gives_the_known_false_passes_and_fails(warehouse, tmp_path, capsys):
    period = ("--from", DAY1.isoformat(), "--to", DAY2.isoformat())
    out = tmp_path / "sample.jsonl"
    assert _cli("review", "export", *period, "--size", "30", "--format", "jsonl", "--out", str(out)) == 0
    exported = json.loads(capsys.readouterr().out)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == exported["items"] == 30
    assert all(set(r) == set(S.EXPORT_FIELDS) for r in records)  # blind: no verdict, score or judge
    text = out.read_text(encoding="utf-8")
    assert all(word not in text for word in ('"verdict"', '"score"', '"judge"', "recorded"))
    assert all(r["sentence"] and r["question"] and r["label"] is None for r in records)

    from citecheck import warehouse as W
    from citecheck.warehouse import tables as T

    engine = W.make_engine(warehouse)
    with engine.connect() as conn:
        items = {r.item_id: r for r in conn.execute(T.review_items.select())}
    engine.dispose()
    passes = _final_passes(warehouse)
    # Known truth: the reviewer agrees with the judge except on 3 passed items (false passes) and
    # 2 failed ones (false fails); one agreeing not-supported item is labelled `partial`.
    flips_pass, flips_fail, partial_done = 3, 2, False
    rows, expected = [], Counter()
    for r in records:
        judged = passes[(items[r["item_id"]].turn_id, items[r["item_id"]].sentence_index)]
        human = judged
        if judged and flips_pass:
            human, flips_pass = False, flips_pass - 1
        elif not judged and flips_fail:
            human, flips_fail = True, flips_fail - 1
        label = "supported" if human else "not_supported"
        if not human and not judged and not partial_done:
            label, partial_done = "partial", True
        expected["neg"] += not human
        expected["pos"] += human
        expected["fp"] += judged and not human
        expected["ff"] += human and not judged
        rows.append({"item_id": r["item_id"], "label": label,
                     "citation_labels": ";".join(f"{c}={'full' if human else 'none'}" for c in r["cited_labels"])})
    assert (expected["fp"], expected["ff"]) == (3, 2) and partial_done
    labels = tmp_path / "alice.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert _cli("review", "import", "--file", str(labels), "--reviewer", "alice") == 0
    assert json.loads(capsys.readouterr().out)["loaded"] == 30

    assert _cli("review", "report", *period, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    quality = {(r["judge"], r["measure"], r["weighting"]): r for r in report["judge_quality"]
               if r["slice_name"] == "all"}
    fp, ff = quality[("final", "false_pass", "raw")], quality[("final", "false_fail", "raw")]
    assert (fp["numerator"], fp["denominator"]) == (3, expected["neg"])
    assert (ff["numerator"], ff["denominator"]) == (2, expected["pos"])
    summary = report["judges"]["final"]["false_pass"]
    assert (summary["numerator"], summary["denominator"]) == (3, expected["neg"])
    assert summary["interval"] == [fp["ci_low"], fp["ci_high"]] and "weighted" in summary
    agree = quality[("final", "agreement", "raw")]
    assert (agree["numerator"], agree["denominator"]) == (25, 30)
    assert fp["ci_low"] < fp["value"] < fp["ci_high"]
    assert quality[("final", "false_pass", "weighted")]["denominator"] > expected["neg"]  # population scale
    metrics = {r["metric"]: r for r in report["calibrated_metrics"]}
    assert {"citation_recall", "citation_recall_calibrated", "citation_recall_human_only", "faithfulness_calibrated",
            "citation_precision_calibrated"} <= set(metrics)
    cal = metrics["citation_recall_calibrated"]
    assert cal["ci_low"] <= cal["value"] <= cal["ci_high"] and cal["labelled_items"] == 30

    # the text report prints the same figures
    assert _cli("review", "report", *period) == 0
    assert "final       false_pass  raw" in capsys.readouterr().out

    # calibrate (SPEC §6) reads the same labels
    assert _cli("calibrate", *period) == 0
    calib = json.loads(capsys.readouterr().out)
    assert calib["overall"]["false_pass"] == [3, expected["neg"]]

    # reimport replaces alice's label on that item; a second reviewer adds a kappa
    bob = tmp_path / "bob.jsonl"
    bob.write_text("".join(json.dumps(r) + "\n" for r in rows[:10]), encoding="utf-8")
    rows[0]["label"] = "supported" if rows[0]["label"] != "supported" else "not_supported"
    labels.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    assert _cli("review", "import", "--file", str(labels), "--reviewer", "alice") == 0
    assert _cli("review", "import", "--file", str(bob), "--reviewer", "bob") == 0
    capsys.readouterr()
    engine = W.make_engine(warehouse)
    with engine.connect() as conn:
        stored = [dict(r) for r in conn.execute(T.human_labels.select()).mappings()]
    engine.dispose()
    assert Counter(r["reviewer"] for r in stored) == {"alice": 30, "bob": 10}
    assert next(r["label"] for r in stored if r["reviewer"] == "alice" and r["item_id"] == rows[0]["item_id"]) \
        == rows[0]["label"]

    # publish is idempotent
    assert _cli("review", "publish", *period) == 0
    first = json.loads(capsys.readouterr().out)
    assert _cli("review", "publish", *period) == 0
    assert json.loads(capsys.readouterr().out) == first
    engine = W.make_engine(warehouse)
    with engine.connect() as conn:
        published = [dict(r) for r in conn.execute(T.judge_quality.select()).mappings()]
        calibrated = conn.execute(T.calibrated_metrics.select()).all()
    engine.dispose()
    assert len(published) == first["judge_quality"] and len(calibrated) == first["calibrated_metrics"]
    kappa = [r for r in published if r["measure"] == "cohens_kappa"]
    assert [(k["slice_value"], k["labelled_items"]) for k in kappa] == [("alice|bob", 10)]
    assert kappa[0]["numerator"] == 9  # they differ on the one item alice relabelled


def test_csv_export_opens_in_a_spreadsheet_and_bad_rows_load_the_rest(warehouse, tmp_path, capsys):
    period = ("--from", DAY1.isoformat(), "--to", DAY1.isoformat())
    out = tmp_path / "week.csv"
    assert _cli("review", "export", *period, "--size", "12", "--out", str(out)) == 0
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 byte-order mark: spreadsheets read the encoding
    with out.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12 and list(rows[0]) == list(S.EXPORT_FIELDS)
    assert all(r["label"] == "" and r["citation_labels"] == "" for r in rows)
    for r in rows:
        r["label"] = "supported"
        r["citation_labels"] = ";".join(f"{c}=full" for c in r["cited_labels"].split(";") if c)
    rows[3]["item_id"] = "r-not-exported"
    rows[5]["label"] = "yes"
    filled = tmp_path / "filled.csv"
    with filled.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(S.EXPORT_FIELDS))
        writer.writeheader()
        writer.writerows(rows)
    capsys.readouterr()
    assert _cli("review", "import", "--file", str(filled), "--reviewer", "carol") == 1
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["loaded"] == 10
    assert [e["reason"].split(" ")[0:2] for e in result["errors"]] == [["unknown", "item"], ["bad", "value"]]
    assert "line " in captured.err
    assert _cli("review", "report", "--from", DAY2.isoformat(), "--to", DAY2.isoformat()) == 2  # no sample


# --- the weekly DAG under dag.test() --------------------------------------------------------

@pytest.mark.slow
def test_weekly_dag_exports_then_publishes_once_labels_are_in(tmp_path):
    import os
    import subprocess
    import sys

    from citecheck import warehouse as W
    from helpers import REPO
    from helpers.airflow_db import copy_migrated_db

    url = f"sqlite:///{tmp_path}/wh.sqlite"
    engine = W.make_engine(url)
    W.init_warehouse(engine)
    _published_days(engine)
    engine.dispose()
    script = (
        "import datetime as dt, sys; from airflow.dag_processing.dagbag import DagBag;"
        "bag = DagBag(dag_folder=sys.argv[1]); assert not bag.import_errors, bag.import_errors;"
        "run = bag.dags['citation_review_weekly'].test(logical_date=dt.datetime(2026, 11, 30, tzinfo=dt.UTC));"
        "print('STATE', run.state)"
    )

    def dag_test(home: str) -> str:
        env = dict(os.environ, AIRFLOW_HOME=str(tmp_path / home), AIRFLOW__CORE__LOAD_EXAMPLES="False",
                   AIRFLOW__CORE__DAGS_FOLDER=str(REPO / "dags"),
                   AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{tmp_path}/{home}.db",
                   CITECHECK_WAREHOUSE_URL=url, CITECHECK_REVIEW_DIR=str(tmp_path / "review"))
        env.pop("CITECHECK_CONFIG", None)
        copy_migrated_db(tmp_path / f"{home}.db")
        out = subprocess.run([sys.executable, "-c", script, str(REPO / "dags")], env=env, capture_output=True,
                             text=True, timeout=500)
        assert out.returncode == 0 and "STATE success" in out.stdout, out.stdout[-2000:] + out.stderr[-3000:]
        return out.stdout + out.stderr

    from citecheck import warehouse as W
    from citecheck.review import loop as R
    from citecheck.warehouse import tables as T

    dag_test("first")
    sample = tmp_path / "review" / "review_2026-11-23_2026-11-29.csv"
    assert sample.exists()
    engine = W.make_engine(url)
    assert R.exported_items(engine, dt.date(2026, 11, 23), dt.date(2026, 11, 29)) > 0
    with engine.connect() as conn:
        assert conn.execute(T.judge_quality.select()).first() is None  # nothing labelled yet
    before = sample.read_bytes()
    with sample.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for r in rows:
        r["label"] = "supported"
        r["citation_labels"] = ";".join(f"{c}=full" for c in r["cited_labels"].split(";") if c)
    filled = tmp_path / "filled.csv"
    with filled.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(S.EXPORT_FIELDS))
        writer.writeheader()
        writer.writerows(rows)
    assert len(R.import_labels(engine, filled, "dana").rows) == len(rows)

    dag_test("second")
    assert sample.read_bytes() == before  # the week already exported is left alone
    with engine.connect() as conn:
        quality = conn.execute(T.judge_quality.select()).all()
        calibrated = {r.metric for r in conn.execute(T.calibrated_metrics.select())}
    engine.dispose()
    assert quality and "citation_recall_calibrated" in calibrated


def test_weekly_dag_properties():
    from airflow.dag_processing.dagbag import DagBag

    from helpers import REPO

    bag = DagBag(dag_folder=str(REPO / "dags"))
    assert not bag.import_errors
    dag = bag.dags["citation_review_weekly"]
    assert dag.catchup is False and dag.doc_md and "review" in dag.tags
    assert type(dag.timetable).__name__ == "CronDataIntervalTimetable"
    assert {t.task_id for t in dag.tasks} == {"export_sample", "publish_quality"}
    assert dag.get_task("publish_quality").upstream_task_ids == {"export_sample"}
    assert {"sample_size", "format", "false_pass_target"} <= set(dag.params)


def test_a_cascade_day_publishes_each_stage_and_the_review_measures_them(tmp_path, monkeypatch):
    """The Orbit Labs day through the job with the cascade (the real SDK against the project's fake
    Messages API): escalated sentences keep their first-stage outcome in `first_stage`, and the
    review report measures the first stage, the LLM and the final verdict separately."""
    from test_cascade import ORBIT_REPLIES, cascade_spec

    from citecheck import warehouse as W
    from citecheck.job import run_day
    from citecheck.review import loop as R
    from citecheck.warehouse import review as WR
    from helpers import orbit_settings, orbit_warehouse_turns
    from helpers.fake_anthropic import grade_by_id, serve_with_env

    server_gen = serve_with_env(monkeypatch, "sk-test-review-0815")
    server = next(server_gen)
    try:
        server.grader = grade_by_id(ORBIT_REPLIES)
        url = f"sqlite:///{tmp_path}/wh.sqlite"
        engine = W.make_engine(url)
        W.init_warehouse(engine)
        W.load_turns(engine, orbit_warehouse_turns())
        day = dt.date(2026, 11, 30)
        run_day(engine, day, orbit_settings(judge_spec=cascade_spec(sample_rate=0.0), shards=1))
    finally:
        next(server_gen, None)
    with engine.connect() as conn:
        rows = list(WR.judged_sentences(conn, day, day))
    escalated = [r for r in rows if r["judge"] == "anthropic"]
    assert escalated and all(r["first_stage"]["supported"] is False and r["llm"]["status"] == "ok"
                             for r in escalated)
    assert all(r["first_stage"] and r["first_stage"]["judge"] == "recorded" for r in rows if r["attached"])

    out = tmp_path / "orbit.jsonl"
    R.export_sample(engine, day, day, 1000, out, "jsonl")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == len(rows)  # a small day: everything, each with probability 1
    labels = tmp_path / "labels.jsonl"  # the reviewer says "supported" to everything
    labels.write_text("".join(json.dumps({"item_id": r["item_id"], "label": "supported", "citation_labels": ";".join(
        f"{c}=full" for c in r["cited_labels"])}) + "\n" for r in records), encoding="utf-8")
    assert not R.import_labels(engine, labels, "erin").errors
    judges = R.build_report(engine, day, day)["judges"]
    # every sentence the first stage rejected was escalated; the LLM passed some of them back
    first_fails = sum(1 for r in rows if not Q.judge_passes(r)["first_stage"])
    assert judges["first_stage"]["false_fail"]["numerator"] == first_fails
    assert judges["llm"]["agreement"]["denominator"] == len(escalated)
    assert judges["llm"]["false_fail"]["numerator"] == sum(1 for r in escalated if r["llm"]["verdict"] != "supported")
    assert judges["final"]["false_fail"]["numerator"] == sum(
        1 for r in rows if r["verdict"] not in ("supported", "uncited_supported"))
    engine.dispose()


def test_the_export_shows_the_figures_the_cited_passages_do_not_state(tmp_path):
    import datetime as dt_

    item = {"item_id": "i1", "day": dt_.date(2026, 11, 30), "turn_id": "t1", "sentence_index": 3,
            "cited_labels": ["S3", "S4"]}
    figures = [{"text": "5", "kind": "number", "value": "5", "traced": False},
               {"text": "220 euros", "kind": "amount", "value": "220 EUR", "traced": True}]
    sentences = {("t1", 3): {"text": "Approved reports are paid within 5 business days.", "figures": figures}}
    turns = {"t1": {"question": "q", "answer": "a", "passages": [("S3", "p3"), ("S4", "p4")]}}
    (record,) = S.export_records([item], sentences, turns)
    assert record["untraced_figures"] == ["5"] and set(record) == set(S.EXPORT_FIELDS)
    S.write_export([record], tmp_path / "x.csv")
    with (tmp_path / "x.csv").open(encoding="utf-8-sig", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["untraced_figures"] == "5" and row["label"] == ""
