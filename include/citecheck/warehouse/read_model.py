"""The read model of what is published: the one place that reads the published tables.

Every reader — the CLI (`metrics`, `alerts`, `suggestions`, `run`/`backfill`'s up-to-date test),
the monitor and report steps, the Airflow plugin — goes through these functions. Metric rows have
ONE shape wherever they are read (`METRIC_ROW_COLUMNS`); the other tables get one narrow function
each. Writers live beside their tables: `publish` (the day's rows), `alerts`, `reports`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.core.figures import untraced_figures
from citecheck.core.vocabulary import PARTIALLY_SUPPORTED
from citecheck.warehouse import tables as T

METRIC_ROW_COLUMNS = ("day", "slice_name", "slice_value", "metric", "averaging", "numerator", "denominator", "value",
                      "answers", "sentences", *T.METRIC_INTERVAL_COLUMNS, "run_id", "config_hash")
SUGGESTION_COLUMNS = ("day", "run_id", "turn_id", "sentence_index", "kind", "sentence", "cited_labels",
                      "suggested_labels", "source", "document_id", "version", "judge", "score", "quote",
                      "auto_apply", "caution")
ALERT_COLUMNS = ("day", "metric", "slice_name", "slice_value", "averaging", "baseline", "value", "direction",
                 "size", "rule", "group_id", "folded", "run_id", "created_at")


# --- daily_metrics ----------------------------------------------------------------------------

def metric_rows(engine: Engine, day_from: dt.date, day_to: dt.date | None = None, *,
                metrics: Sequence[str] | None = None, averaging: Sequence[str] | None = None,
                slice_name: str | None = None, exclude_slice: str | None = None,
                days: Sequence[dt.date] | None = None) -> list[dict[str, Any]]:
    """Published `daily_metrics` rows (`METRIC_ROW_COLUMNS`) of the days `day_from`..`day_to`
    (`day_to` defaults to `day_from`; `days` narrows to those days), ordered by day, slice,
    metric and averaging; optionally only some metrics, averagings, one slice name or all but one."""
    c = T.daily_metrics.c
    query = sa.select(*(c[name] for name in METRIC_ROW_COLUMNS)).where(
        c.day >= day_from, c.day <= (day_to or day_from))
    if days is not None:
        query = query.where(c.day.in_(list(days)))
    if metrics is not None:
        query = query.where(c.metric.in_(list(metrics)))
    if averaging is not None:
        query = query.where(c.averaging.in_(list(averaging)))
    if slice_name is not None:
        query = query.where(c.slice_name == slice_name)
    if exclude_slice is not None:
        query = query.where(c.slice_name != exclude_slice)
    query = query.order_by(c.day, c.slice_name, c.slice_value, c.metric, c.averaging)
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def day_metrics(engine: Engine, day: dt.date) -> list[dict[str, Any]]:
    """Every published metric row of one day (`metrics --json`, tests, the DAG's summary)."""
    return metric_rows(engine, day)


def published_days_before(engine: Engine, day: dt.date, limit: int) -> list[dt.date]:
    """The last `limit` published days before `day` (days with metric rows), oldest first."""
    m = T.daily_metrics.c
    with engine.connect() as conn:
        days = conn.execute(sa.select(m.day).where(m.day < day).group_by(m.day).order_by(m.day.desc()).limit(limit)
                            ).scalars().all()
    return sorted(days)


def published_run_id(engine: Engine, day: dt.date) -> str | None:
    """The run whose rows the day is published with (None when it is not published)."""
    with engine.connect() as conn:
        return conn.execute(sa.select(T.daily_metrics.c.run_id).where(T.daily_metrics.c.day == day).limit(1)).scalar()


def published_config_hash(engine: Engine, day: dt.date) -> str | None:
    """The run configuration hash the day is published with (None when it is not published)."""
    with engine.connect() as conn:
        return conn.execute(sa.select(T.daily_metrics.c.config_hash).where(T.daily_metrics.c.day == day).limit(1)
                            ).scalar()


def published_row_counts(conn: Connection, day: dt.date) -> dict[str, int]:
    """Rows of the day per published table (what a publish reports, and the Asset's metadata)."""
    return {t.name: conn.execute(sa.select(sa.func.count()).select_from(t).where(t.c.day == day)).scalar_one()
            for t in T.PUBLISHED_TABLES}


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
                c.judge_versions, c.stats, c.source_load_id]
        row = conn.execute(sa.select(*cols).where(c.run_id == run_id)).mappings().first()
        return dict(row) if row else {col.name: None for col in cols} | {"run_id": run_id, "day": day}


# --- sentence_verdicts, recite_suggestions, alerts, judge_quality, reports ----------------------

def _untraced_keys(conn: Connection, where: Sequence[Any], order: Sequence[Any], limit: int) -> list[tuple[str, int]]:
    """(turn, sentence index) of the first `limit` sentences in `order` among those `where` selects
    whose figures hold an untraced one: THE decision, `core.figures.untraced_figures`, made here in
    Python over the streamed `figures` (never a pattern on the JSON text), the scan stopping at
    `limit`."""
    c = T.sentence_verdicts.c
    if limit <= 0:
        return []
    query = sa.select(c.turn_id, c.sentence_index, c.figures).where(*where).order_by(*order)
    keys: list[tuple[str, int]] = []
    result = conn.execute(query, execution_options={"yield_per": 5000})
    for turn_id, index, figures in result:
        if untraced_figures(figures):
            keys.append((turn_id, index))
            if len(keys) == limit:
                break
    result.close()
    return keys


def _sentences_by_key(conn: Connection, day: dt.date, columns: Sequence[Any], keys: Sequence[tuple[str, int]]
                      ) -> list[dict[str, Any]]:
    """The day's `sentence_verdicts` rows of `keys`, in their order."""
    c = T.sentence_verdicts.c
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        query = sa.select(*columns).where(c.day == day, c.turn_id.in_(sorted({t for t, _ in chunk})))
        wanted = set(chunk)
        for row in conn.execute(query).mappings():
            if (row["turn_id"], row["sentence_index"]) in wanted:
                found[(row["turn_id"], row["sentence_index"])] = dict(row)
    return [found[k] for k in keys if k in found]


def flagged_sentences(engine: Engine, day: dt.date, verdicts: Sequence[str], limit: int) -> list[dict[str, Any]]:
    """Check-worthy sentences of the day with one of `verdicts` or with an untraced figure (SPEC
    3.5, `core.figures.untraced_figures`), worst first: in the order of `verdicts` (untraced figures
    alone after them), then highest contradiction, then lowest support score; at most `limit` rows."""
    c = T.sentence_verdicts.c
    columns = (c.turn_id, c.sentence_index, c.conversation_id, c.text, c.labels, c.unknown_labels, c.verdict, c.score,
               c.contradiction, c.supported_elsewhere_by, c.judge, c.judge_version, c.reason, c.llm, c.best_windows,
               c.figures)
    worst = (c.contradiction.desc().nulls_last(), c.score.asc().nulls_last(), c.turn_id, c.sentence_index)
    rank = sa.case({v: i for i, v in enumerate(verdicts)}, value=c.verdict, else_=len(verdicts))
    query = (sa.select(*columns).where(c.day == day, c.check_worthy.is_(True), c.verdict.in_(list(verdicts)))
             .order_by(rank, *worst).limit(limit))
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
        others = (c.day == day, c.check_worthy.is_(True), c.verdict.not_in(list(verdicts)))
        keys = _untraced_keys(conn, others, worst, limit - len(rows))
        return rows + _sentences_by_key(conn, day, columns, keys)


def untraced_figure_sentences(engine: Engine, day: dt.date, limit: int) -> list[dict[str, Any]]:
    """Check-worthy sentences of the day with an untraced figure (SPEC 3.5,
    `core.figures.untraced_figures`), whatever their verdict, by turn and sentence; at most
    `limit` rows."""
    c = T.sentence_verdicts.c
    columns = (c.turn_id, c.sentence_index, c.conversation_id, c.text, c.labels, c.verdict, c.figures)
    with engine.connect() as conn:
        keys = _untraced_keys(conn, (c.day == day, c.check_worthy.is_(True)), (c.turn_id, c.sentence_index), limit)
        return _sentences_by_key(conn, day, columns, keys)


def day_decision(engine: Engine, day: dt.date) -> dict[str, Any] | None:
    """The day's acceptance decision (SPEC 5.1): `decision` (pass only when every criterion
    passes), each criterion's row, the criteria hash, and the failing answers with their
    check-worthy sentences; None when the day was published without criteria."""
    from citecheck.core.criteria import overall_decision

    r, a, sv = T.criteria_results.c, T.answer_decisions.c, T.sentence_verdicts.c
    with engine.connect() as conn:
        rows = [dict(x) for x in conn.execute(sa.select(T.criteria_results).where(r.day == day)).mappings()]
        if not rows:
            return None
        answers = [dict(x) for x in conn.execute(
            sa.select(a.turn_id, a.criteria_failed).where(a.day == day).order_by(a.turn_id)).mappings()]
        sentences: dict[str, list[dict[str, Any]]] = {}
        turn_ids = [x["turn_id"] for x in answers]
        for start in range(0, len(turn_ids), 500):
            query = (sa.select(sv.turn_id, sv.sentence_index, sv.text, sv.verdict, sv.figures)
                     .where(sv.day == day, sv.turn_id.in_(turn_ids[start:start + 500]), sv.check_worthy.is_(True))
                     .order_by(sv.turn_id, sv.sentence_index))
            for x in conn.execute(query).mappings():
                sentences.setdefault(x["turn_id"], []).append(dict(x))
    order = {name: i for i, name in enumerate(_criteria_order(rows))}
    rows.sort(key=lambda x: order[x["criterion"]])
    for x in answers:
        x["sentences"] = sentences.get(x["turn_id"], [])
    return {"day": day.isoformat(), "decision": overall_decision(x["decision"] for x in rows), "criteria": rows,
            "criteria_hash": rows[0]["criteria_hash"], "answers_failing": answers}


def _criteria_order(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Failing criteria first, then no_data, then passing ones; by name within each."""
    rank = {"fail": 0, "no_data": 1, "pass": 2}
    return [x["criterion"] for x in sorted(rows, key=lambda x: (rank.get(x["decision"], 3), x["criterion"]))]


def partially_supported_sentences(engine: Engine, day: dt.date, limit: int) -> list[dict[str, Any]]:
    """A claims mode: the day's `partially_supported` sentences (some claims supported, some not)
    with their claims (`claims`: index, text, verdict, supported_elsewhere_by, figures: the claim's
    own, SPEC 3.5), at most `limit`."""
    c, k = T.sentence_verdicts.c, T.claim_verdicts.c
    query = (sa.select(c.turn_id, c.sentence_index, c.text, c.labels)
             .where(c.day == day, c.verdict == PARTIALLY_SUPPORTED)
             .order_by(c.turn_id, c.sentence_index).limit(limit))
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
        if not rows:
            return []
        claims = conn.execute(
            sa.select(k.turn_id, k.sentence_index, k.claim_index, k.text, k.verdict, k.supported_elsewhere_by,
                      k.figures)
            .where(k.day == day, k.turn_id.in_({r["turn_id"] for r in rows}))
            .order_by(k.turn_id, k.sentence_index, k.claim_index)).mappings().all()
    by_sentence: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for claim in claims:
        by_sentence.setdefault((claim["turn_id"], claim["sentence_index"]), []).append(
            {"index": claim["claim_index"], "text": claim["text"], "verdict": claim["verdict"],
             "supported_elsewhere_by": claim["supported_elsewhere_by"], "figures": claim["figures"] or []})
    for row in rows:
        row["claims"] = by_sentence.get((row["turn_id"], row["sentence_index"]), [])
    return rows


def skipped_reasons(engine: Engine, day: dt.date, limit: int = 10) -> list[dict[str, Any]]:
    """The day's skipped turns by reason, most frequent first: `reason`, `turns`, an `example`
    turn id (the report's "what could not be checked")."""
    s = T.skipped_turns.c
    turns = sa.func.count().label("turns")
    query = (sa.select(s.reason, turns, sa.func.min(s.turn_id).label("example")).where(s.day == day)
             .group_by(s.reason).order_by(turns.desc(), s.reason).limit(limit))
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def day_suggestions(engine: Engine, day: dt.date, limit: int | None = None) -> list[dict[str, Any]]:
    """The day's published re-cite suggestions, by turn and sentence (the first `limit` of them;
    None: all); `day` as an ISO date."""
    s = T.recite_suggestions.c
    query = sa.select(*[s[c] for c in SUGGESTION_COLUMNS]).where(s.day == day).order_by(
        s.turn_id, s.sentence_index).limit(limit)
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
    for row in rows:
        row["day"] = row["day"].isoformat()
        row["auto_apply"] = bool(row["auto_apply"])
    return rows


def suggestion_counts(engine: Engine, day: dt.date) -> dict[str, dict[str, int]]:
    """The day's published re-cite suggestions counted by kind: {kind: {"suggestions", "automatic"}}
    (`automatic`: those safe to apply without review), kinds in name order."""
    s = T.recite_suggestions.c
    automatic = sa.func.sum(sa.case((s.auto_apply.is_(True), 1), else_=0))
    query = sa.select(s.kind, sa.func.count(), automatic).where(s.day == day).group_by(s.kind).order_by(s.kind)
    with engine.connect() as conn:
        return {kind: {"suggestions": int(n), "automatic": int(auto or 0)} for kind, n, auto in conn.execute(query)}


def alerts_between(engine: Engine, day_from: dt.date, day_to: dt.date) -> list[dict[str, Any]]:
    """Alerts of the days from `day_from` to `day_to` (inclusive), by day, metric and slice;
    `day` as an ISO date, `created_at` as an ISO timestamp (JSON-ready)."""
    a = T.alerts.c
    query = sa.select(*[a[c] for c in ALERT_COLUMNS]).where(a.day >= day_from, a.day <= day_to).order_by(
        a.day, a.metric, a.slice_name, a.slice_value, a.averaging)
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
    for row in rows:
        row["day"] = row["day"].isoformat()
        row["created_at"] = row["created_at"].isoformat()
    return rows


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


def report_html(engine: Engine, day: dt.date) -> str | None:
    """The stored report of a day, or None when none was rendered (or the warehouse has no
    `reports` table yet: the plugin reads a warehouse the job may not have initialised)."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(T.reports.name):
            return None
        return conn.execute(sa.select(T.reports.c.html).where(T.reports.c.day == day)).scalar()


def report_index(engine: Engine, limit: int = 366) -> list[dict[str, Any]]:
    """The stored reports, newest day first: day, run id, trend days and when each was rendered
    (none when the warehouse has no `reports` table yet)."""
    c = T.reports.c
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(T.reports.name):
            return []
        rows = conn.execute(sa.select(c.day, c.run_id, c.trend_days, c.rendered_at).order_by(c.day.desc())
                            .limit(limit)).mappings()
        return [dict(r) for r in rows]
