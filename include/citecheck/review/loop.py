"""The review loop over the warehouse: export a period's sample, import labels, and compute,
print or publish the period's judge quality and calibrated metrics (what the CLI's `review`
commands and the weekly DAG call)."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from citecheck.review import SENTENCE_LABELS
from citecheck.review import calibrated as C
from citecheck.review import quality as Q
from citecheck.review import sample as S
from citecheck.review.labels import LabelFile, read_label_file
from citecheck.stats.proportions import DEFAULT_CONFIDENCE
from citecheck.warehouse import review as WR


class NoSample(LookupError):
    """No review sample was exported for the period."""


def _check_period(from_day: dt.date, to_day: dt.date) -> None:
    if to_day < from_day:
        raise ValueError(f"the period ends ({to_day}) before it starts ({from_day})")


def export_sample(engine: Engine, from_day: dt.date, to_day: dt.date, size: int, out: str | Path,
                  fmt: str = "csv", salt: str = S.DEFAULT_SALT) -> dict[str, Any]:
    """Draw the period's stratified sample, store it in `review_items` (replacing an earlier
    export of the period) and write the blind file."""
    _check_period(from_day, to_day)
    if size < 1:
        raise ValueError(f"the sample size must be at least 1, got {size}")
    if fmt not in S.FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(S.FORMATS)}")
    with engine.connect() as conn:
        population = list(WR.judged_sentences(conn, from_day, to_day))
        items = S.draw(population, size, salt, reported=WR.reported_sentences(conn, from_day, to_day))
        keys = {(i["day"], i["turn_id"], i["sentence_index"]) for i in items}
        sentences = WR.sentence_texts(conn, keys)
        claims = WR.sentence_claims(conn, keys)
        turns = WR.turn_texts(conn, {i["turn_id"] for i in items})
    now = dt.datetime.now(dt.UTC)
    sid = S.sample_id(from_day, to_day)
    WR.replace_sample(engine, sid, [dict(i, exported_at=now) for i in items])
    S.write_export(S.export_records(items, sentences, turns, claims), out, fmt)
    strata: dict[str, dict[str, Any]] = {}
    for i in items:
        strata[i["stratum"]] = {"sampled": i["stratum_sampled"], "size": i["stratum_size"],
                                "inclusion_probability": i["inclusion_probability"]}
    return {"sample_id": sid, "population": len(population), "items": len(items), "file": str(out),
            "format": fmt, "strata": dict(sorted(strata.items()))}


def exported_items(engine: Engine, from_day: dt.date, to_day: dt.date) -> int:
    """How many items the period's stored sample holds (0: not exported yet)."""
    with engine.connect() as conn:
        return len(WR.sample_items(conn, S.sample_id(from_day, to_day)))


def labelled_count(engine: Engine, from_day: dt.date, to_day: dt.date) -> int:
    """How many items of the period's sample some reviewer has labelled."""
    with engine.connect() as conn:
        items = WR.sample_items(conn, S.sample_id(from_day, to_day))
        return len({lab["item_id"] for lab in WR.labels_of(conn, [i["item_id"] for i in items])})


def import_labels(engine: Engine, path: str | Path, reviewer: str, fmt: str | None = None) -> LabelFile:
    """Validate a labelled file and store its good rows as `reviewer`'s labels."""
    if not reviewer or not reviewer.strip():
        raise ValueError("a reviewer name is required")

    def known(ids: list[str]) -> dict[str, list[str]]:
        with engine.connect() as conn:
            return WR.known_items(conn, ids)

    def claims(ids: list[str]) -> dict[str, list[int]]:
        with engine.connect() as conn:
            return WR.item_claims(conn, ids)

    result = read_label_file(path, known, fmt, claims)
    WR.replace_labels(engine, reviewer.strip(), result.rows)
    return result


def labelled_items(engine: Engine, from_day: dt.date, to_day: dt.date
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(population rows, labelled items, every label of the sample's items) of a period.

    A labelled item carries its weight (stratum size / labelled items of the stratum), the
    reviewers' consensus, each judge's pass, the NLI
    score, its slices' attributes and the judges' metric values; an item whose sentence is no
    longer published (the day was rerun without it) is left out."""
    _check_period(from_day, to_day)
    sid = S.sample_id(from_day, to_day)
    with engine.connect() as conn:
        items = WR.sample_items(conn, sid)
        if not items:
            raise NoSample(f"no review sample was exported for {sid} (run `citecheck review export` first)")
        population = list(WR.judged_sentences(conn, from_day, to_day))
        labels = WR.labels_of(conn, [i["item_id"] for i in items])
        by_item: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for lab in labels:
            by_item[lab["item_id"]].append(lab)
        rows = {(r["turn_id"], r["sentence_index"]): r for r in population}
        chosen = [i for i in items if i["item_id"] in by_item and (i["turn_id"], i["sentence_index"]) in rows]
        # the reported census is no random sample: the population the random strata stand for is the rest
        census = {(i["turn_id"], i["sentence_index"]) for i in items if not S.is_random_stratum(i["stratum"])}
        population = [r for r in population if (r["turn_id"], r["sentence_index"]) not in census]
        turns = WR.turn_texts(conn, {i["turn_id"] for i in chosen})
        claims = WR.sentence_claims(conn, {(i["day"], i["turn_id"], i["sentence_index"]) for i in chosen})
    # A stratum labelled only in part counts as a random subsample of it: weight N_h / labelled_h
    # (= 1 / inclusion probability once the whole sample is labelled).
    labelled_per_stratum = Counter(i["stratum"] for i in chosen)
    out = []
    for item in chosen:
        row = rows[(item["turn_id"], item["sentence_index"])]
        supported, grades = Q.consensus(by_item[item["item_id"]])
        out.append({
            "item_id": item["item_id"], "stratum": item["stratum"],
            "weight": item["stratum_size"] / labelled_per_stratum[item["stratum"]],
            "human_supported": supported, "grades": grades, "cited_labels": list(item["cited_labels"] or []),
            "passes": Q.judge_passes(row), "nli_score": Q.nli_score(row), "judge": C.judge_values(row),
            "attributes": turns.get(item["turn_id"], {}).get("attributes", {}),
            "claims": _labelled_claims(claims.get((item["turn_id"], item["sentence_index"]), ()),
                                       by_item[item["item_id"]]),
        })
    return population, out, labels


def _labelled_claims(claims: Sequence[Mapping[str, Any]], labels: Sequence[Mapping[str, Any]]
                     ) -> list[dict[str, Any]]:
    """The item's claims some reviewer labelled: index, the reviewers' consensus, the claim verdict's pass."""
    human = Q.claim_consensus(labels)
    return [{"claim_index": c["claim_index"], "human_supported": human[str(c["claim_index"])],
             "passes": Q.claim_passes(c["verdict"])} for c in claims if str(c["claim_index"]) in human]


def build_report(engine: Engine, from_day: dt.date, to_day: dt.date, *, confidence: float = DEFAULT_CONFIDENCE,
                 false_pass_target: float = Q.DEFAULT_FALSE_PASS_TARGET,
                 thresholds: Sequence[float] = Q.DEFAULT_THRESHOLDS) -> dict[str, Any]:
    """The period's judge quality rows and calibrated metric rows (not stored).

    The population estimates (judge quality, weighted back, and the calibrated metrics) use the
    random strata only: they stand for the judged sentences nobody reported. Judge quality on the
    sentences readers reported (`REPORTED_STRATUM`, a census) is apart, under `reported` and as
    `judge_quality` rows of the slice `reader_reported` (raw: labelled items as they are)."""
    population, items, labels = labelled_items(engine, from_day, to_day)
    sampled = [i for i in items if S.is_random_stratum(i["stratum"])]
    reported = [i for i in items if not S.is_random_stratum(i["stratum"])]
    sampled_ids = {i["item_id"] for i in sampled}
    quality = (Q.quality_rows(sampled, confidence) + Q.kappa_rows([lab for lab in labels
                                                                    if lab["item_id"] in sampled_ids], SENTENCE_LABELS)
               + Q.threshold_sweep(sampled, thresholds, false_pass_target, confidence))
    reported_quality = [dict(r, slice_name=S.REPORTED_STRATUM, slice_value="all")
                        for r in Q.quality_rows(reported, confidence)
                        if r["slice_name"] == "all" and r["weighting"] == "raw"]
    calibrated = C.calibrated_rows(population, sampled, confidence)
    # a claims mode: the random strata's claims a reviewer labelled, each weighted as its item
    claims = [dict(c, weight=i["weight"]) for i in sampled for c in i["claims"]]
    claim_quality = Q.claim_quality_rows(claims, confidence)
    return {"from": from_day.isoformat(), "to": to_day.isoformat(), "population": len(population),
            "labelled_items": len(sampled), "reviewers": sorted({lab["reviewer"] for lab in labels}),
            "judges": judges_summary(quality), "judge_quality": quality + reported_quality + claim_quality,
            "calibrated_metrics": calibrated,
            "claims": {"labelled_claims": len(claims), "labelled_items": len({i["item_id"] for i in sampled
                                                                               if i["claims"]}),
                       "judges": judges_summary([dict(r, slice_name="all") for r in claim_quality])},
            "reported": {"labelled_items": len(reported),
                         "judges": judges_summary([dict(r, slice_name="all") for r in reported_quality])}}


def judges_summary(quality: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Slice `all` of the quality rows as {judge: {measure: {numerator, denominator, value,
    interval, weighted: {...}}}}: what a reader of `review report --json` looks up first."""
    out: dict[str, dict[str, Any]] = {}
    for r in quality:
        if r["slice_name"] != "all" or r["judge"] not in Q.JUDGES:
            continue
        entry = {"numerator": r["numerator"], "denominator": r["denominator"], "value": r["value"],
                 "interval": [r["ci_low"], r["ci_high"]], "labelled_items": r["labelled_items"]}
        measure = out.setdefault(r["judge"], {}).setdefault(r["measure"], {})
        if r["weighting"] == "raw":
            measure.update(entry)
        else:
            measure["weighted"] = entry
    return out


def publish(engine: Engine, from_day: dt.date, to_day: dt.date, **options: Any) -> dict[str, Any]:
    """Compute and publish the period (replacing an earlier publish of it): idempotent."""
    report = build_report(engine, from_day, to_day, **options)
    counts = WR.publish_review(engine, from_day, to_day, report["judge_quality"], report["calibrated_metrics"])
    return {"from": report["from"], "to": report["to"], "labelled_items": report["labelled_items"], **counts}


def calibration_rows(engine: Engine, from_day: dt.date, to_day: dt.date) -> list[dict[str, Any]]:
    """The period's labelled items as `calibration_report` rows (`human`, `judge` = the final
    verdict's pass, `first_stage`, and the slices), so `calibrate` reads the same labels."""
    _population, items, _labels = labelled_items(engine, from_day, to_day)
    return [{"human": i["human_supported"], "judge": i["passes"]["final"], "first_stage": i["passes"]["first_stage"],
             **{name: value for name, value in Q.slices_of(i) if name != "all"}} for i in items]


def _number(value: float | None, fmt: str = ".3f") -> str:
    return "null" if value is None else format(value, fmt)


def text_lines(report: Mapping[str, Any]) -> Iterator[str]:
    """The report for a terminal: overall per judge, the kappas, the sweep's pick, the metrics."""
    yield (f"review {report['from']}..{report['to']}: {report['labelled_items']} labelled items of "
           f"{report['population']} judged sentences; reviewers: {', '.join(report['reviewers']) or 'none'}")
    yield f"{'judge':<12}{'measure':<12}{'weighting':<10}{'value':>8}  {'n/d':<16}{'interval':<18}"
    for r in report["judge_quality"]:
        if r["slice_name"] != "all":
            continue
        frac = f"{r['numerator']:g}/{r['denominator']:g}"
        yield (f"{r['judge']:<12}{r['measure']:<12}{r['weighting']:<10}{_number(r['value']):>8}  {frac:<16}"
               f"[{_number(r['ci_low'])}, {_number(r['ci_high'])}]")
    for r in report["judge_quality"]:
        if r["measure"] == "cohens_kappa":
            yield (f"cohen's kappa {r['slice_value']}: {_number(r['value'])} on {r['labelled_items']} shared items "
                   f"[{_number(r['ci_low'])}, {_number(r['ci_high'])}]")
        elif r["measure"] == "threshold_for_false_pass_target":
            yield f"NLI threshold meeting false pass <= {r['slice_value']}: {_number(r['value'], '.2f')}"
    yield f"{'metric':<34}{'value':>8}  interval"
    for r in report["calibrated_metrics"]:
        interval = "" if r["ci_low"] is None else f"[{_number(r['ci_low'])}, {_number(r['ci_high'])}]"
        yield f"{r['metric']:<34}{_number(r['value']):>8}  {interval}"
    claims = report.get("claims") or {}
    if claims.get("labelled_claims"):
        yield (f"claims ({claims['labelled_claims']} labelled claims of {claims['labelled_items']} items; "
               "the published claim verdicts against the reviewers' claim labels):")
        for r in report["judge_quality"]:
            if r["slice_name"] == Q.CLAIMS_SLICE:
                frac = f"{r['numerator']:g}/{r['denominator']:g}"
                yield (f"{r['judge']:<12}{r['measure']:<12}{r['weighting']:<10}{_number(r['value']):>8}  {frac:<16}"
                       f"[{_number(r['ci_low'])}, {_number(r['ci_high'])}]")
    reported = report.get("reported") or {}
    if reported.get("labelled_items"):
        yield (f"sentences readers reported ({reported['labelled_items']} labelled, all of them exported; "
               "no random sample, so apart from the estimates above):")
        for r in report["judge_quality"]:
            if r["slice_name"] == S.REPORTED_STRATUM:
                yield (f"{r['judge']:<12}{r['measure']:<12}{r['weighting']:<10}{_number(r['value']):>8}  "
                       f"{r['numerator']:g}/{r['denominator']:g}")
