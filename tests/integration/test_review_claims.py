"""Claims as review items (issue 28, SPEC 2.1): `review export` of days published in a claims mode
carries each sampled sentence's claims (text and cited labels, never a verdict) and an empty
`claim_labels` column; `review import` takes one label per claim and stores it; `review report`
compares them with the published claim verdicts (judge_quality slice `claims`). SQLite and
PostgreSQL. A sentence-mode export keeps its columns (tests/e2e/test_review.py)."""

from __future__ import annotations

import csv
import datetime as dt
import json
import tomllib

import pytest
import sqlalchemy as sa

from citecheck import demo
from citecheck import warehouse as W
from citecheck.cli import main
from citecheck.core.config import config_from_mapping
from citecheck.core.vocabulary import NOT_JUDGED_VERDICTS, SUPPORTED_VERDICTS
from citecheck.demo.judgments import with_claim_rows
from citecheck.job import JobSettings, run_day
from citecheck.review import sample as S
from citecheck.review.labels import RowError, validate_row
from citecheck.warehouse import tables as T

DAY = dt.date(2026, 11, 24)
PERIOD = ("--from", DAY.isoformat(), "--to", DAY.isoformat())


@pytest.fixture
def claims_day(engine) -> str:
    """A day of the bundled sample published in the rule claims mode; the warehouse URL."""
    data = demo.generate(DAY, 1, turns_per_day=60)
    spec = demo.judge_spec(data)
    config = config_from_mapping(tomllib.loads(demo.config_toml(claims=True)))
    W.load_turns(engine, data.turns)
    run_day(engine, DAY, JobSettings(judge_spec={**spec, "judgments": with_claim_rows(spec["judgments"])},
                                     config=config))
    return engine.url.render_as_string(hide_password=False)


def _claim_rows(url: str) -> dict[tuple[str, int], list[dict]]:
    engine = W.make_engine(url)
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(sa.select(T.claim_verdicts).order_by(
            T.claim_verdicts.c.turn_id, T.claim_verdicts.c.sentence_index, T.claim_verdicts.c.claim_index)).mappings()]
        items = {r.item_id: (r.turn_id, r.sentence_index) for r in conn.execute(sa.select(T.review_items))}
    engine.dispose()
    out: dict[tuple[str, int], list[dict]] = {}
    for r in rows:
        out.setdefault((r["turn_id"], r["sentence_index"]), []).append(r)
    return out, items


def test_claims_export_import_and_report_claim_agreement(claims_day, tmp_path, capsys):
    out = tmp_path / "sample.jsonl"
    # the whole day (more than its judged sentences): the few the rules split are in it
    assert main(["review", "export", *PERIOD, "--size", "1000", "--format", "jsonl", "--out", str(out)]) == 0
    exported = json.loads(capsys.readouterr().out)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    claims, items = _claim_rows(claims_day)
    assert len(records) == exported["items"] == exported["population"]
    assert all(list(r) == list(S.EXPORT_FIELDS + S.CLAIM_FIELDS) for r in records)
    text = out.read_text(encoding="utf-8")
    assert all(word not in text for word in ('"verdict"', '"score"', '"judge"', "recorded"))  # still blind
    for r in records:  # every claim of the sampled sentence, in order, with the labels it carries
        published = claims[items[r["item_id"]]]
        assert [(c["claim"], c["text"]) for c in r["claims"]] == [(c["claim_index"], c["text"]) for c in published]
        assert all(set(c["cited_labels"]) <= set(r["cited_labels"]) for c in r["claims"])
        assert r["claim_labels"] is None
    assert any(len(r["claims"]) > 1 for r in records)  # the rules split some sampled sentences

    # The reviewer agrees with every published claim verdict except on 2 passed claims (false
    # passes) and 1 failed claim (a false fail); the sentence labels follow the claims.
    flips_pass, flips_fail = 2, 1
    rows, expected = [], {"fp": 0, "ff": 0, "judged": 0, "neg": 0, "pos": 0}
    for r in records:
        per_claim = {}
        for c in claims[items[r["item_id"]]]:
            judged = None if c["verdict"] in NOT_JUDGED_VERDICTS else c["verdict"] in SUPPORTED_VERDICTS
            human = bool(judged)
            if judged is True and flips_pass:
                human, flips_pass = False, flips_pass - 1
            elif judged is False and flips_fail:
                human, flips_fail = True, flips_fail - 1
            per_claim[str(c["claim_index"])] = "supported" if human else "not_supported"
            if judged is not None:
                expected["judged"] += 1
                expected["neg" if not human else "pos"] += 1
                expected["fp"] += judged and not human
                expected["ff"] += human and not judged
        sentence = "supported" if all(v == "supported" for v in per_claim.values()) else "not_supported"
        rows.append({"item_id": r["item_id"], "label": sentence,
                     "citation_labels": {c: "full" for c in r["cited_labels"]},
                     "claim_labels": ";".join(f"{k}={v}" for k, v in per_claim.items())})
    assert (expected["fp"], expected["ff"]) == (2, 1)
    labels = tmp_path / "alice.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["review", "import", "--file", str(labels), "--reviewer", "alice"]) == 0
    assert json.loads(capsys.readouterr().out)["loaded"] == len(records)

    engine = W.make_engine(claims_day)  # the labels per claim round-trip into human_labels
    with engine.connect() as conn:
        stored = {r.item_id: r.claim_labels for r in conn.execute(sa.select(T.human_labels))}
    engine.dispose()
    assert stored == {r["item_id"]: dict(e.split("=") for e in r["claim_labels"].split(";")) for r in rows}

    assert main(["review", "report", *PERIOD, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    quality = {(r["measure"], r["weighting"]): r for r in report["judge_quality"] if r["slice_name"] == "claims"}
    agree, fp, ff = (quality[(m, "raw")] for m in ("agreement", "false_pass", "false_fail"))
    assert (agree["numerator"], agree["denominator"]) == (expected["judged"] - 3, expected["judged"])
    assert (fp["numerator"], fp["denominator"]) == (2, expected["neg"])
    assert (ff["numerator"], ff["denominator"]) == (1, expected["pos"])
    assert agree["ci_low"] < agree["value"] < agree["ci_high"] and {r["judge"] for r in quality.values()} == {"final"}
    assert report["claims"]["labelled_claims"] == sum(len(claims[items[r["item_id"]]]) for r in records)
    assert report["claims"]["judges"]["final"]["false_pass"]["numerator"] == 2
    # the sentence-level figures stay where they were (slice `all`)
    assert any(r["slice_name"] == "all" and r["judge"] == "final" for r in report["judge_quality"])

    assert main(["review", "report", *PERIOD]) == 0
    printed = capsys.readouterr().out
    assert f"labelled claims of {len(records)} items" in printed

    assert main(["review", "publish", *PERIOD]) == 0  # published with the other judge_quality rows
    capsys.readouterr()
    engine = W.make_engine(claims_day)
    with engine.connect() as conn:
        published = conn.execute(sa.select(sa.func.count()).select_from(T.judge_quality).where(
            T.judge_quality.c.slice_name == "claims")).scalar_one()
    engine.dispose()
    assert published == len(quality)


def test_the_csv_export_has_the_claims_and_takes_claim_labels(claims_day, tmp_path, capsys):
    out = tmp_path / "sample.csv"
    assert main(["review", "export", *PERIOD, "--size", "10", "--out", str(out)]) == 0
    capsys.readouterr()
    with out.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(S.EXPORT_FIELDS + S.CLAIM_FIELDS)
    claims, items = _claim_rows(claims_day)
    first = claims[items[rows[0]["item_id"]]]
    assert rows[0]["claims"].startswith(f"[{first[0]['claim_index']}] {first[0]['text']} (cites ")
    assert all(r["claim_labels"] == "" for r in rows)
    good, short = rows[0], rows[1]
    good.update(label="supported", citation_labels=";".join(f"{c}=full" for c in good["cited_labels"].split(";") if c),
                claim_labels=";".join(f"{c['claim_index']}=supported" for c in claims[items[good["item_id"]]]))
    short.update(label="supported", citation_labels=";".join(f"{c}=full" for c in short["cited_labels"].split(";")
                                                             if c), claim_labels="99=supported")
    labelled = tmp_path / "bob.csv"
    with labelled.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([good, short])
    assert main(["review", "import", "--file", str(labelled), "--reviewer", "bob"]) == 1  # the bad row reported
    result = json.loads(capsys.readouterr().out)
    assert result["loaded"] == 1 and result["errors"][0]["item_id"] == short["item_id"]
    assert "no claim '99'" in result["errors"][0]["reason"]


def test_claim_labels_are_validated_row_by_row() -> None:
    cited, claims = {"r1": ["S1"]}, {"r1": [0, 1]}
    row = {"item_id": "r1", "label": "supported", "citation_labels": "S1=full"}
    assert validate_row({**row, "claim_labels": ""}, cited, claims)["claim_labels"] == {}
    assert validate_row({**row, "claim_labels": {"0": "Supported", "1": "not supported"}}, cited, claims)[
        "claim_labels"] == {"0": "supported", "1": "not_supported"}
    for bad, reason in (("0=supported", "missing claim label for claim 1"),
                        ("0=supported;1=maybe", "bad value for claim_labels: 1=maybe"),
                        ("0=supported;1=partial;0=not_supported", "claim 0 labelled twice"),
                        ("0 supported", "is not CLAIM=supported|partial|not_supported"),
                        ("2=supported", "no claim '2'")):
        with pytest.raises(RowError, match=reason):
            validate_row({**row, "claim_labels": bad}, cited, claims)
    with pytest.raises(RowError, match="has no claims"):  # an item of a sentence-mode day
        validate_row({**row, "claim_labels": "0=supported"}, cited, {"r1": []})


def test_an_older_warehouse_gains_the_claim_labels_column_on_init(tmp_path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path}/old.sqlite")
    old = sa.MetaData()
    sa.Table("human_labels", old, *(sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable)
                                    for c in T.human_labels.columns if c.name != "claim_labels"))
    old.create_all(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO human_labels (item_id, reviewer, label, citation_labels, imported_at) "
                             "VALUES ('r1', 'alice', 'supported', '{}', '2026-11-30 10:00:00')"))
    W.init_warehouse(engine)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT label, claim_labels FROM human_labels")).one() == ("supported", None)
    engine.dispose()
