"""The dbt project in `dbt/`: its generated files are up to date, `dbt build` passes against a Postgres
warehouse that `citecheck backfill` filled, and MetricFlow's weekly `citation_recall` is the week's
sum of numerators over its sum of denominators, as SQL computes it from `daily_metrics`.

dbt and MetricFlow run from their own venv (`bin/tool-venv dbt`, `.venvs/dbt`, reused while
`dbt/requirements.txt` is unchanged); the profile is written into a temp dir, no credential in the repo."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import sqlalchemy as sa

from citecheck.bi.dbt import dbt_files, ratio_metrics, write_profile
from citecheck.warehouse.grants import BI_READABLE
from helpers.backfilled import backfill_sample
from helpers.tool_venv import tool_venv

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "dbt"
METRICS_DOC = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")


def test_generated_dbt_files_are_up_to_date() -> None:
    for rel, text in dbt_files(METRICS_DOC):
        current = (PROJECT / rel).read_text(encoding="utf-8")
        assert current == text, f"dbt/{rel} is stale: run `python -m citecheck bi dbt --out dbt`"


def test_every_headline_rate_has_a_ratio_metric_and_every_published_table_a_source() -> None:
    import yaml


    files = dict(dbt_files(METRICS_DOC))
    semantic = yaml.safe_load(files["models/semantic/daily_metric_counts.yml"])
    ratios = {m["name"]: m for m in semantic["metrics"] if m["type"] == "ratio"}
    assert set(ratios) == set(ratio_metrics()) and "citation_recall" in ratios
    assert {"claim_recall", "claim_precision", "partially_supported_rate"} <= set(ratios)  # a claims mode's rates
    assert ratios["citation_recall"]["type_params"] == {"numerator": "citation_recall_numerator",
                                                        "denominator": "citation_recall_denominator"}
    sources = yaml.safe_load(files["models/sources.yml"])["sources"][0]["tables"]
    assert [t["name"] for t in sources] == list(BI_READABLE)
    assert all(t["description"] for t in sources), "every source has its docs/metrics.md description"


@pytest.mark.slow
def test_dbt_build_and_metricflow_weekly_recall_match_the_warehouse(pg_warehouse_url: str, tmp_path: Path) -> None:
    venv = tool_venv("dbt")
    days = backfill_sample(pg_warehouse_url, tmp_path / "job", "2026-11-05", 12, claims_days=3)
    project = tmp_path / "dbt"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("target", "logs"))
    profiles = write_profile(pg_warehouse_url, tmp_path / "profiles", schema="citecheck_dbt").parent
    env = {**os.environ, "DBT_PROFILES_DIR": str(profiles), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
           "CITECHECK_DBT_SOURCE_SCHEMA": "public"}
    env.pop("PYTHONPATH", None)

    build = subprocess.run([str(venv / "bin" / "dbt"), "build"], cwd=project, env=env, capture_output=True, text=True)
    print(build.stdout[-1500:])
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
    assert "ERROR=0" in build.stdout and "Completed successfully" in build.stdout

    metricflow = {m: _weekly(venv, project, env, m, tmp_path) for m in ("citation_recall", "claim_recall")}
    engine = sa.create_engine(pg_warehouse_url)
    with engine.connect() as conn:
        sql = {metric: conn.execute(sa.text(
            "SELECT CAST(date_trunc('week', day) AS date) AS week, SUM(numerator) / SUM(denominator) AS recall, "
            "AVG(value) AS mean_of_days FROM daily_metrics WHERE metric = :metric "
            "AND slice_name = 'all' AND averaging = 'micro' GROUP BY 1 ORDER BY 1"), {"metric": metric}).all()
            for metric in metricflow}
    engine.dispose()
    rows = sql["citation_recall"]
    roll_up = {row.week.isoformat(): float(row.recall) for row in rows}
    print("week        MetricFlow  SQL sum/sum  mean of daily ratios")
    for row in rows:
        print(f"{row.week}  {metricflow['citation_recall'].get(row.week.isoformat(), float('nan')):.6f}    "
              f"{row.recall:.6f}     {row.mean_of_days:.6f}")
    assert len(days) == 12 and len(roll_up) == 3  # 2026-11-05..16: parts of three ISO weeks
    assert metricflow["citation_recall"].keys() == roll_up.keys()
    for week, value in roll_up.items():
        assert metricflow["citation_recall"][week] == pytest.approx(value, rel=1e-9)
    # the claims mode's last three days (2026-11-14..16, one ISO week and a day of the next)
    claims = {row.week.isoformat(): float(row.recall) for row in sql["claim_recall"] if row.recall is not None}
    print("claim_recall by week: MetricFlow", metricflow["claim_recall"], "SQL", claims)
    assert len(claims) == 2
    assert {w: v for w, v in metricflow["claim_recall"].items() if v is not None} == pytest.approx(claims, rel=1e-9)


def _weekly(venv: Path, project: Path, env: dict[str, str], metric: str, tmp_path: Path) -> dict[str, float | None]:
    """MetricFlow's `metric` by ISO week (None where the weeks' counts are null)."""
    out = tmp_path / f"weekly_{metric}.csv"
    query = subprocess.run([str(venv / "bin" / "mf"), "query", "--metrics", metric,
                            "--group-by", "metric_time__week", "--csv", str(out)],
                           cwd=project, env=env, capture_output=True, text=True)
    assert query.returncode == 0, query.stdout[-3000:] + query.stderr[-3000:]
    with out.open(encoding="utf-8") as f:
        return {row["metric_time__week"][:10]: float(row[metric]) if row[metric] not in ("", "None") else None
                for row in csv.DictReader(f)}
