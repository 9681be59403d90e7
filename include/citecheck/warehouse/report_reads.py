"""Warehouse reads behind the daily report: metric history and slices, the published run, the
flagged sentences with their passages, and the judge quality of the latest human review. Alerts
and re-cite suggestions come from `citecheck.features.monitor` and `citecheck.features.suggestions`.

Interval columns (`ci_low`, `ci_high`) are read when `daily_metrics` has them, so the report shows
intervals as soon as the warehouse stores them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck.warehouse import tables as T


def metric_rows(engine: Engine, day_from: dt.date, day_to: dt.date, *, metrics: Sequence[str] | None = None,
                slice_name: str | None = None, exclude_slice: str | None = None,
                averaging: str = "micro") -> list[dict[str, Any]]:
    """Published `daily_metrics` rows of days `day_from`..`day_to` for one averaging, ordered by
    day, slice and metric; optionally only some metrics, one slice name, or all but one."""
    c = T.daily_metrics.c
    cols = [c.day, c.slice_name, c.slice_value, c.metric, c.averaging, c.numerator, c.denominator, c.value,
            c.answers, c.sentences, c.run_id, *(c[name] for name in T.METRIC_INTERVAL_COLUMNS)]
    query = sa.select(*cols).where(c.day >= day_from, c.day <= day_to, c.averaging == averaging)
    if metrics is not None:
        query = query.where(c.metric.in_(list(metrics)))
    if slice_name is not None:
        query = query.where(c.slice_name == slice_name)
    if exclude_slice is not None:
        query = query.where(c.slice_name != exclude_slice)
    query = query.order_by(c.day, c.slice_name, c.slice_value, c.metric)
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def published_run(engine: Engine, day: dt.date) -> dict[str, Any] | None:
    """The `runs` row of the run whose rows are published for the day (the run id of its metric
    rows; only the run id and day when its runs row is gone), or None when nothing is published."""
    with engine.connect() as conn:
        run_id = conn.execute(sa.select(T.daily_metrics.c.run_id).where(T.daily_metrics.c.day == day).limit(1)
                              ).scalar()
        if run_id is None:
            return None
        c = T.runs.c
        cols = [c.run_id, c.day, c.status, c.started_at, c.finished_at, c.turns_read, c.turns_scored,
                c.turns_skipped, c.turns_judged, c.share_nli, c.share_llm, c.llm_cost_usd, c.config_hash, c.judge,
                c.judge_versions]
        row = conn.execute(sa.select(*cols).where(c.run_id == run_id)).mappings().first()
        return dict(row) if row else {col.name: None for col in cols} | {"run_id": run_id, "day": day}


def flagged_sentences(engine: Engine, day: dt.date, verdicts: Sequence[str], limit: int) -> list[dict[str, Any]]:
    """Check-worthy sentences of the day with one of `verdicts`, worst first: in the order of
    `verdicts`, then highest contradiction, then lowest support score; at most `limit` rows."""
    c = T.sentence_verdicts.c
    rank = sa.case({v: i for i, v in enumerate(verdicts)}, value=c.verdict)
    query = (sa.select(c.turn_id, c.sentence_index, c.conversation_id, c.text, c.labels, c.unknown_labels,
                       c.verdict, c.score, c.contradiction, c.supported_elsewhere_by, c.judge, c.judge_version,
                       c.reason, c.llm, c.best_windows)
             .where(c.day == day, c.verdict.in_(list(verdicts)), c.check_worthy.is_(True))
             .order_by(rank, c.contradiction.desc().nulls_last(), c.score.asc().nulls_last(), c.turn_id,
                       c.sentence_index)
             .limit(limit))
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def passages_by_label(engine: Engine, turn_ids: Iterable[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """turn id → label → its `source_passages` row (label, text, source, document_id, version);
    the first passage wins when a label repeats."""
    ids = sorted(set(turn_ids))
    found: dict[str, dict[str, dict[str, Any]]] = {i: {} for i in ids}
    if not ids:
        return found
    c = T.source_passages.c
    with engine.connect() as conn:
        for start in range(0, len(ids), 500):
            query = (sa.select(c.turn_id, c.label, c.text, c.source, c.document_id, c.version)
                     .where(c.turn_id.in_(ids[start:start + 500])).order_by(c.turn_id, c.position))
            for row in conn.execute(query).mappings():
                if row["label"] is not None:
                    found[row["turn_id"]].setdefault(row["label"], dict(row))
    return found


def judge_quality_for(engine: Engine, day: dt.date) -> dict[str, Any] | None:
    """The published `judge_quality` of the latest review period that started on or before `day`
    (the one covering it, else the last before it), overall rows (slice `all`) only:
    `{"from_day", "to_day", "rows"}`, or None when no period was published."""
    q = T.judge_quality.c
    with engine.connect() as conn:
        period = conn.execute(sa.select(q.from_day, q.to_day).where(q.from_day <= day, q.slice_name == "all")
                              .order_by(q.to_day.desc(), q.from_day.desc()).limit(1)).first()
        if period is None:
            return None
        query = (sa.select(q.judge, q.measure, q.weighting, q.numerator, q.denominator, q.value, q.ci_low, q.ci_high,
                           q.labelled_items, q.method)
                 .where(q.from_day == period.from_day, q.to_day == period.to_day, q.slice_name == "all")
                 .order_by(q.judge, q.measure, q.weighting))
        return {"from_day": period.from_day, "to_day": period.to_day,
                "rows": [dict(r) for r in conn.execute(query).mappings()]}
