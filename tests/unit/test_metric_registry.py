"""The one metric registry (`citecheck.core.metrics.definitions.REGISTRY`): every metric is
classified by its entry, every product's list of metrics is read from it, no module keeps a copy,
and a value is shown as a person reads it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import citecheck
from citecheck.core.metrics import (
    BY_NAME,
    HEADLINE_METRICS,
    JUDGED,
    JUDGED_METRICS,
    METRIC_NAMES,
    REGISTRY,
    STRUCTURAL,
    WIDE_CLAIM_METRICS,
    Metric,
    definitions,
    invariant_violations,
    ratios,
)
from citecheck.core.metrics.display import describe, format_value, fraction, with_unit

PACKAGE = Path(citecheck.__file__).parent


def test_every_metric_is_classified_by_its_entry():
    assert definitions.registry_problems() == []
    assert tuple(m.name for m in REGISTRY) == METRIC_NAMES
    for m in REGISTRY:
        assert m.population in (STRUCTURAL, JUDGED), m.name
        assert m.scale in (1.0, 1000.0), m.name
        if not m.derived:
            assert all(m.units), f"{m.name}: say what its numerator and denominator count"
    assert {m.name for m in REGISTRY if m.population == JUDGED} == JUDGED_METRICS


def test_judged_is_what_the_entry_says_not_what_the_name_or_denominator_suggests():
    claim = Metric("claim_support_rate", "supported_claims", "claims", JUDGED, ("supported claims", "claims"))
    structural = Metric("judged_looking_share", "x", "judged_x", STRUCTURAL, ("x", "judged x"))
    assert claim.judged and not structural.judged
    # the two that the old prefix guess covered only by accident are judged because their entries say so
    assert {"unjudged_rate", "no_source_text_rate", "first_stage_agreement"} <= JUDGED_METRICS


def test_f1_is_the_one_derived_metric_and_every_rule_handles_it_from_its_entry():
    f1 = BY_NAME["citation_f1"]
    assert f1.harmonic_mean_of == ("citation_recall", "citation_precision") and f1.rate and f1.judged
    counts = {"supported": 3, "judged_sentences": 4, "credited_citations": 1, "judged_citations": 2}
    values = {k: r.value for k, r in ratios(counts).items()}
    assert values["citation_f1"] == pytest.approx(2 * 0.75 * 0.5 / 1.25)


def test_the_products_lists_are_views_of_the_registry():
    from citecheck.bi.catalog import wide_view_columns
    from citecheck.bi.superset import d3_format
    from citecheck.features import monitor
    from citecheck.job.validation import RULES
    from citecheck.report import data as report_data
    from citecheck.review import calibrated

    watched = {m.name: m.watch for m in REGISTRY if m.watch is not None}
    assert set(monitor.DEFAULT_METRICS) == set(watched)
    thresholds = {k: (t.abs, t.rel) for k, t in monitor.DEFAULT_THRESHOLDS.items()}
    assert thresholds == {k: tuple(w) for k, w in watched.items()}
    for section, listed in (("slices", report_data.SLICE_METRICS), ("agreement", report_data.AGREEMENT_METRICS),
                            ("native", report_data.NATIVE_METRICS), ("readers", report_data.READER_METRICS)):
        assert listed == tuple(m.name for m in REGISTRY if section in m.report), section
    assert tuple(m.name for m in REGISTRY if m.calibrated) == calibrated.METRICS
    by_position = sorted((m for m in REGISTRY if m.headline), key=lambda m: m.headline)
    assert tuple(m.name for m in by_position) == HEADLINE_METRICS
    # the wide view: the headline metrics, then a claims mode's columns (null in sentence mode)
    assert [c.name for c in wide_view_columns() if c.name in BY_NAME] == [*HEADLINE_METRICS, *WIDE_CLAIM_METRICS]
    assert set(WIDE_CLAIM_METRICS) <= {m.name for m in REGISTRY if m.claims}
    for name in HEADLINE_METRICS:
        assert d3_format(name) == d3_format(f"{name}_ci_low") == BY_NAME[name].bi_format
    for rule, checks in definitions.BOUNDS_RULES.values():
        assert RULES.get(rule) == checks


def test_each_metric_is_checked_against_its_own_range():
    rows = [{"slice_name": "all", "slice_value": "all", "averaging": "micro", "metric": m, "value": v}
            for m, v in (("unknown_labels_per_1000_answers", 1500.0), ("refusal_rate", 0.2))]
    assert invariant_violations(rows) == []
    rows[0]["value"], rows[1]["value"] = -1.0, 1.5
    problems = invariant_violations(rows)
    assert len(problems) == 2 and "unknown_labels_per_1000_answers" in problems[0] and "[0, 1]" in problems[1]


def test_a_value_is_shown_as_a_person_reads_it():
    opens = {"metric": "citation_opens_per_1000_answers", "numerator": 43000.0, "denominator": 324.0,
             "value": 43000 / 324}
    assert fraction(opens) == "43 opens / 324 answers"
    assert with_unit(opens["metric"], opens["value"]) == "132.7 per 1,000 answers"
    recall = {"metric": "citation_recall", "numerator": 3.0, "denominator": 8.0, "value": 0.375}
    precision = {"metric": "citation_precision", "numerator": 1.0, "denominator": 2.0, "value": 0.5}
    f1 = {"metric": "citation_f1", "numerator": 0.375, "denominator": 0.875, "value": 0.375 / 0.875}
    day = {r["metric"]: r for r in (recall, precision, f1)}
    assert describe(recall, day) == "37.5% (3 supported / 8 judged sentences)"
    assert describe(f1, day) == "42.9% (recall 37.5% · precision 50.0%)"
    assert "0.875" not in describe(f1, day)
    assert format_value("some_future_metric", 12.345) == "12.3" and format_value("citation_f1", None) == "n/a"


def _collections_of_metric_names(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """Tuple, list, set and dict literals naming two or more metrics."""
    out = []
    for node in ast.walk(tree):
        items = node.keys if isinstance(node, ast.Dict) else node.elts if isinstance(
            node, (ast.Tuple, ast.List, ast.Set)) else None
        if items is None:
            continue
        named = [i.value for i in items if isinstance(i, ast.Constant) and i.value in BY_NAME]
        if len(named) >= 2:
            out.append((node.lineno, named))
    return out


def test_no_module_keeps_its_own_list_of_metrics():
    """Outside the registry, a literal list naming several metrics is a copy (issue 27). One
    exception, checked here: the review's human value of each calibrated metric (the oracle the
    judges are measured against) is keyed by those metrics."""
    from citecheck.review.calibrated import METRICS as CALIBRATED
    from citecheck.review.calibrated import human_values

    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "core/metrics/definitions.py":
            continue
        for line, named in _collections_of_metric_names(ast.parse(path.read_text(encoding="utf-8"))):
            if rel == "review/calibrated.py" and set(named) == set(CALIBRATED):
                continue
            found.append(f"{rel}:{line} {named}")
    assert found == []
    assert set(human_values(True, {}, ["S1"])) == set(CALIBRATED)


def test_f1_is_named_only_by_the_registry():
    found = [f"{p.relative_to(PACKAGE)}" for p in PACKAGE.rglob("*")
             if p.suffix in (".py", ".j2") and "citation_f1" in p.read_text(encoding="utf-8")
             and p.name != "definitions.py"]
    assert found == []


def test_a_new_entry_is_all_a_new_metric_needs():
    """A registry with one more entry passes the registry's checks and every view picks it up
    where its fields say: judged, a tile after the others, monitored, a rate in [0, 1]."""
    extra = Metric("claim_support_rate", "supported", "judged_sentences", JUDGED, ("supported claims", "claims"),
                   tile=99, report=("slices",), watch=definitions.Watch(abs=0.05))
    registry = (*REGISTRY, extra)
    assert definitions.registry_problems(registry) == []
    views = definitions.views(registry)
    assert views["METRICS"]["claim_support_rate"] == ("supported", "judged_sentences", 1.0)
    assert "claim_support_rate" in views["JUDGED_METRICS"] and "claim_support_rate" in views["RATE_METRICS"]
    assert views["REPORT_TILE_METRICS"][-1] == "claim_support_rate"
    assert "claim_support_rate" in views["MONITORED_METRICS"]
    assert "claim_support_rate" not in views["HEADLINE_METRICS"]
    assert definitions.in_report("slices", registry)[-1] == "claim_support_rate"
    assert extra.bounds in definitions.BOUNDS_RULES and extra.bi_format == ".1%"
    assert {k: v for k, v in views.items() if k != "METRICS"} != {k: v for k, v in definitions.views(REGISTRY).items()
                                                                  if k != "METRICS"}
    broken = Metric("claim_typo_rate", "supported_claimz", "judged_sentences", JUDGED, ("a", "b"), tile=1)
    assert definitions.registry_problems((*REGISTRY, broken)) == [
        "claim_typo_rate: its counts are not in COUNT_KEYS", "two metrics share a tile position"]
