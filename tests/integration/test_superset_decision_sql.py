"""The Superset dataset's day-decision metrics (`bi.superset.DECISION_METRICS`) decide on SQLite and
PostgreSQL exactly as `core.criteria.overall_decision` does on the same `criteria_results` rows."""

from __future__ import annotations

import sqlalchemy as sa

from citecheck.bi.superset import DECISION_METRICS
from citecheck.core.criteria import overall_decision

DAYS = {"2026-11-28": ["pass", "pass"], "2026-11-29": ["pass", "no_data"], "2026-11-30": ["no_data", "fail", "pass"]}


def test_the_decision_metric_is_the_overall_decision(engine):
    rows = [{"day": day, "criterion": f"c{i}", "decision": d} for day, ds in DAYS.items() for i, d in enumerate(ds)]
    selects = ", ".join(f"{expr} AS {name}" for name, (expr, _) in DECISION_METRICS.items())
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TEMPORARY TABLE t_criteria (day VARCHAR(10), criterion VARCHAR(20), "
                             "decision VARCHAR(10))")
        conn.execute(sa.text("INSERT INTO t_criteria VALUES (:day, :criterion, :decision)"), rows)
        got = {r.day: r for r in conn.execute(sa.text(f"SELECT day, {selects} FROM t_criteria GROUP BY day"))}
    for day, decisions in DAYS.items():
        assert got[day].decision == overall_decision(decisions)
        assert (got[day].criteria_failing, got[day].criteria_no_data, got[day].criteria_passing) == (
            decisions.count("fail"), decisions.count("no_data"), decisions.count("pass"))
