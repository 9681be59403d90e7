"""What the user sees of a metric (`core.metrics.display`, issue 27): `score --summary` and
`citecheck metrics` print rates in percent, per-1,000 counts as the events they count, and F1
beside its recall and precision, never a ratio's internal numerator and denominator."""

from __future__ import annotations

import json

from citecheck.cli import main
from citecheck.core.metrics import BY_NAME
from citecheck.core.metrics.display import counts_fraction, metric_line
from helpers import load_fixture


def test_a_published_row_is_one_readable_line():
    rows = {
        "citation_recall": {"metric": "citation_recall", "numerator": 3.0, "denominator": 8.0, "value": 0.375,
                            "ci_low": 0.2, "ci_high": 0.55},
        "citation_precision": {"metric": "citation_precision", "numerator": 1.0, "denominator": 2.0, "value": 0.5},
        "citation_f1": {"metric": "citation_f1", "numerator": 0.375, "denominator": 0.875, "value": 0.375 / 0.875},
        "source_reports_per_1000_answers": {"metric": "source_reports_per_1000_answers", "numerator": 43000.0,
                                            "denominator": 324.0, "value": 43000 / 324},
    }
    assert metric_line(rows["citation_recall"], rows).split() == [
        "citation_recall", "37.5%", "(3", "supported", "/", "8", "judged", "sentences)", "95%", "[20.0%,", "55.0%]"]
    assert metric_line(rows["citation_f1"], rows).endswith("42.9%  (recall 37.5% · precision 50.0%)")
    assert "(43 reports / 324 answers)" in metric_line(rows["source_reports_per_1000_answers"], rows)
    assert "43000" not in metric_line(rows["source_reports_per_1000_answers"], rows)


def test_counts_fraction_reads_the_raw_counts():
    counts = {"citation_opens": 43, "reader_answers": 324, "supported": 3, "judged_sentences": 8}
    assert counts_fraction("citation_opens_per_1000_answers", counts, {}) == "43 opens / 324 answers"
    assert counts_fraction("citation_recall", counts, {}) == "3 supported / 8 judged sentences"
    assert counts_fraction("citation_f1", counts, {"citation_recall": 0.375, "citation_precision": None}) == \
        "recall 37.5% · precision n/a"


def test_score_summary_prints_values_as_a_person_reads_them(tmp_path, capsys):
    data = load_fixture("gemini.json")
    turns = tmp_path / "turns.jsonl"
    turns.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in data["turns"]), encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(data["judge"]))
    out = tmp_path / "out.json"
    assert main(["score", "--turns", str(turns), "--judge", str(judge), "--summary", "--out", str(out)]) == 0
    lines = capsys.readouterr().err.splitlines()
    scored = json.loads(out.read_text())
    counts, micro = scored["counts"], scored["metrics"]["micro"]
    recall = next(x for x in lines if x.startswith("citation_recall "))
    assert f"{micro['citation_recall'] * 100:.1f}%" in recall
    assert recall.endswith(f"{counts['supported']} supported / {counts['judged_sentences']} judged sentences")
    f1 = next(x for x in lines if x.startswith("citation_f1 "))
    assert "recall " in f1 and "precision " in f1
    attachment = next(x for x in lines if x.startswith("attachment_rate "))
    unit = BY_NAME["attachment_rate"].units[1]
    assert attachment.endswith(f"{counts['attached']} attached / {counts['check_worthy_sentences']} {unit}")


def test_compare_prints_rates_in_percent_and_their_changes_in_points():
    from citecheck.features.compare import format_comparison

    none = {"base": None, "candidate": None, "difference": None, "ci_low": None, "ci_high": None, "p_value": None,
            "items": 0}
    result = {"paired": 40, "key": "turn_id", "dropped": 0, "dropped_keys": {"base": [], "candidate": []},
              "metrics": {"citation_recall": {"micro": {"base": 0.5, "candidate": 0.521, "difference": 0.021,
                                                        "ci_low": -0.01, "ci_high": 0.052, "p_value": 0.2,
                                                        "items": 40}, "macro": none}}}
    micro = next(x for x in format_comparison(result).splitlines() if x.startswith("citation_recall") and "micro" in x)
    assert micro.split()[2:8] == ["50.0%", "52.1%", "+2.1", "pp", "[-1.0", "pp,"]
