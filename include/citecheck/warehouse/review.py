"""Storage of the human review loop (issue 12): the judged population of a period, the texts a
reviewer reads, review samples, human labels, and the one-transaction publish of a period's
`judge_quality` and `calibrated_metrics` rows. The statistics live in `citecheck.review`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from citecheck.core.reader_events import SOURCE_REPORTED, ReaderEvent, citations_of_sentences, resolve_event
from citecheck.core.vocabulary import JUDGED_VERDICTS, is_judged
from citecheck.warehouse import tables as T

_IN_CHUNK = 1000


def _judged(verdict: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
    """`core.vocabulary.is_judged` in SQL: the verdict is one of `JUDGED_VERDICTS`."""
    return verdict.in_(JUDGED_VERDICTS)


def reported_sentences(conn: Connection, from_day: dt.date, to_day: dt.date) -> set[tuple[str, int]]:
    """(turn, sentence index) of the judged sentences of the published days in [from_day, to_day]
    that a reader reported a wrong source on. The SQL only fetches: the `source_reported` events of
    those days' turns and the published sentences (index, labels, verdict) of the reported turns;
    each event is resolved against its answer's citations by THE rule the reader metrics use
    (`core.reader_events.resolve_event`: with an index, that sentence's citation of the label;
    without, every citation of the label), and a citation counts when its sentence is judged."""
    s, e = T.sentence_verdicts.c, T.reader_events.c
    in_period = sa.and_(s.day >= from_day, s.day <= to_day)
    events: dict[str, list[ReaderEvent]] = {}
    q = (sa.select(e.event_id, e.turn_id, e.event, e.occurred_at, e.label, e.sentence_index)
         .where(e.event == SOURCE_REPORTED, e.turn_id.in_(sa.select(s.turn_id).where(in_period)))
         .order_by(e.turn_id, e.event_id))
    for row in conn.execute(q):
        events.setdefault(row.turn_id, []).append(ReaderEvent(*row))
    labels: dict[str, dict[int, list[str]]] = {}
    judged: set[tuple[str, int]] = set()
    turns = sorted(events)
    for start in range(0, len(turns), _IN_CHUNK):
        q = sa.select(s.turn_id, s.sentence_index, s.labels, s.verdict).where(
            in_period, s.turn_id.in_(turns[start:start + _IN_CHUNK]))
        for turn_id, index, cited, verdict in conn.execute(q):
            labels.setdefault(turn_id, {})[index] = list(cited or [])
            if is_judged(verdict):
                judged.add((turn_id, index))
    out: set[tuple[str, int]] = set()
    for turn_id, turn_events in events.items():
        answer = citations_of_sentences(labels.get(turn_id, {}))
        for event in turn_events:
            out.update((turn_id, index) for index, _ in resolve_event(event, answer).citations
                       if (turn_id, index) in judged)
    return out


def judged_sentences(conn: Connection, from_day: dt.date, to_day: dt.date) -> Iterator[dict[str, Any]]:
    """The judged sentences (`_judged`) of the published days in [from_day, to_day] (the
    population of the judged metrics), each with its citation count and credited citations,
    ordered by (day, turn, sentence); without their text (`sentence_texts`), so a week of
    sentences stays small in memory."""
    s, c = T.sentence_verdicts.c, T.citation_verdicts.c
    credited = (
        sa.select(c.day, c.turn_id, c.sentence_index,
                  sa.func.sum(sa.case((c.credited.is_(True), 1), else_=0)).label("credited"))
        .where(c.day >= from_day, c.day <= to_day)
        .group_by(c.day, c.turn_id, c.sentence_index)
        .subquery()
    )
    q = (
        sa.select(s.day, s.turn_id, s.sentence_index, s.labels, s.unknown_labels, s.stale_labels,
                  s.attached, s.verdict, s.score, s.judge, s.llm, s.first_stage, credited.c.credited)
        .outerjoin(credited, sa.and_(credited.c.day == s.day, credited.c.turn_id == s.turn_id,
                                     credited.c.sentence_index == s.sentence_index))
        .where(s.day >= from_day, s.day <= to_day, _judged(s.verdict))
        .order_by(s.day, s.turn_id, s.sentence_index)
    )
    for row in conn.execute(q).mappings():
        out = dict(row)
        out["labels"] = list(out["labels"] or [])
        out["citations"] = len(out["labels"])
        out["credited"] = int(out["credited"] or 0)
        yield out


def sentence_texts(conn: Connection, day_keys: Iterable[tuple[dt.date, str, int]]
                   ) -> dict[tuple[str, int], dict[str, Any]]:
    """(turn, sentence index) → the published sentence's `text` and `figures` (SPEC 3.5), for the
    given (day, turn, index)."""
    s = T.sentence_verdicts.c
    keys = sorted(set(day_keys))
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for start in range(0, len(keys), _IN_CHUNK):
        chunk = keys[start:start + _IN_CHUNK]
        wanted = {(t, i) for _, t, i in chunk}
        q = sa.select(s.turn_id, s.sentence_index, s.text, s.figures).where(
            s.day.in_(sorted({d for d, _, _ in chunk})), s.turn_id.in_(sorted({t for _, t, _ in chunk})))
        for turn_id, index, text, figures in conn.execute(q):
            if (turn_id, index) in wanted:
                out[(turn_id, index)] = {"text": text or "", "figures": figures or []}
    return out


def sentence_claims(conn: Connection, day_keys: Iterable[tuple[dt.date, str, int]]
                    ) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """(turn, sentence index) → the published claims of the given (day, turn, index) in claim order,
    each with `claim_index`, `text`, `labels` and the judges' `verdict` (a claims mode; a sentence-mode
    day has none, so it is absent here)."""
    c = T.claim_verdicts.c
    keys = sorted(set(day_keys))
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for start in range(0, len(keys), _IN_CHUNK):
        chunk = keys[start:start + _IN_CHUNK]
        wanted = {(d, t, i) for d, t, i in chunk}
        q = (sa.select(c.day, c.turn_id, c.sentence_index, c.claim_index, c.text, c.labels, c.verdict)
             .where(c.day.in_(sorted({d for d, _, _ in chunk})), c.turn_id.in_(sorted({t for _, t, _ in chunk})))
             .order_by(c.turn_id, c.sentence_index, c.claim_index))
        for r in conn.execute(q).mappings():
            if (r["day"], r["turn_id"], r["sentence_index"]) in wanted:
                out.setdefault((r["turn_id"], r["sentence_index"]), []).append(
                    {"claim_index": r["claim_index"], "text": r["text"] or "", "labels": list(r["labels"] or []),
                     "verdict": r["verdict"]})
    return out


def item_claims(conn: Connection, item_ids: Iterable[str]) -> dict[str, list[int]]:
    """item id → the claim indexes of its sentence (a claims-mode day; [] otherwise), for the ids
    some stored sample holds: what a reviewer's `claim_labels` must cover."""
    ids = sorted(set(item_ids))
    r, c = T.review_items.c, T.claim_verdicts.c
    out: dict[str, list[int]] = {}
    for start in range(0, len(ids), _IN_CHUNK):
        q = (sa.select(r.item_id, c.claim_index)
             .select_from(T.review_items.outerjoin(T.claim_verdicts, sa.and_(
                 c.day == r.day, c.turn_id == r.turn_id, c.sentence_index == r.sentence_index)))
             .where(r.item_id.in_(ids[start:start + _IN_CHUNK])))
        for item_id, claim_index in conn.execute(q):
            claims = out.setdefault(item_id, [])
            if claim_index is not None and claim_index not in claims:
                claims.append(claim_index)
    return {k: sorted(v) for k, v in out.items()}


def turn_texts(conn: Connection, turn_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Question, answer, attributes and the context passages (label, text) of each turn."""
    ids = sorted(set(turn_ids))
    out: dict[str, dict[str, Any]] = {}
    st, sp = T.source_turns.c, T.source_passages.c
    for start in range(0, len(ids), _IN_CHUNK):
        chunk = ids[start:start + _IN_CHUNK]
        for r in conn.execute(sa.select(st.turn_id, st.question, st.answer, st.attributes).where(
                st.turn_id.in_(chunk))).mappings():
            out[r["turn_id"]] = {"question": r["question"], "answer": r["answer"],
                                 "attributes": r["attributes"] if isinstance(r["attributes"], dict) else {},
                                 "passages": []}
        for r in conn.execute(sa.select(sp.turn_id, sp.label, sp.text).where(sp.turn_id.in_(chunk)).order_by(
                sp.turn_id, sp.position)).mappings():
            if r["turn_id"] in out:
                out[r["turn_id"]]["passages"].append((r["label"], r["text"]))
    return out


def replace_sample(engine: Engine, sample_id: str, rows: Sequence[Mapping[str, Any]]) -> int:
    """Store a review sample, replacing an earlier export with the same id (labels stay: they
    are keyed by item, and an item keeps its id)."""
    with engine.begin() as conn:
        conn.execute(T.review_items.delete().where(T.review_items.c.sample_id == sample_id))
        if rows:
            conn.execute(T.review_items.insert(), [dict(r, sample_id=sample_id) for r in rows])
    return len(rows)


def sample_items(conn: Connection, sample_id: str) -> list[dict[str, Any]]:
    """The items of a stored sample, in item id order."""
    c = T.review_items.c
    rows = conn.execute(sa.select(T.review_items).where(c.sample_id == sample_id).order_by(c.item_id)).mappings()
    return [dict(r) for r in rows]


def known_items(conn: Connection, item_ids: Iterable[str]) -> dict[str, list[str]]:
    """item id → the labels its reviewer grades, for the ids that some stored sample holds."""
    ids = sorted(set(item_ids))
    out: dict[str, list[str]] = {}
    c = T.review_items.c
    for start in range(0, len(ids), _IN_CHUNK):
        for item_id, cited in conn.execute(sa.select(c.item_id, c.cited_labels).where(
                c.item_id.in_(ids[start:start + _IN_CHUNK]))):
            out[item_id] = list(cited or [])
    return out


def replace_labels(engine: Engine, reviewer: str, rows: Sequence[Mapping[str, Any]]) -> int:
    """Store one reviewer's labels; a label they gave an item before is replaced."""
    now = dt.datetime.now(dt.UTC)
    ids = [r["item_id"] for r in rows]
    c = T.human_labels.c
    with engine.begin() as conn:
        for start in range(0, len(ids), _IN_CHUNK):
            conn.execute(T.human_labels.delete().where(c.reviewer == reviewer,
                                                       c.item_id.in_(ids[start:start + _IN_CHUNK])))
        if rows:
            conn.execute(T.human_labels.insert(), [
                {"item_id": r["item_id"], "reviewer": reviewer, "label": r["label"],
                 "citation_labels": dict(r["citation_labels"]),
                 "claim_labels": dict(r["claim_labels"]) if r.get("claim_labels") else None,
                 "source": r.get("source"), "imported_at": now}
                for r in rows])
    return len(rows)


def labels_of(conn: Connection, item_ids: Iterable[str]) -> list[dict[str, Any]]:
    """Every reviewer's label of the given items."""
    ids = sorted(set(item_ids))
    c = T.human_labels.c
    out: list[dict[str, Any]] = []
    for start in range(0, len(ids), _IN_CHUNK):
        q = sa.select(c.item_id, c.reviewer, c.label, c.citation_labels, c.claim_labels).where(
            c.item_id.in_(ids[start:start + _IN_CHUNK])).order_by(c.item_id, c.reviewer)
        out.extend(dict(r) for r in conn.execute(q).mappings())
    return out


def publish_review(engine: Engine, from_day: dt.date, to_day: dt.date, quality: Sequence[Mapping[str, Any]],
                   calibrated: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Replace the period's `judge_quality` and `calibrated_metrics` rows in ONE transaction, so
    a rerun (after more labels came in) is idempotent and readers never see a mix."""
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as conn:
        for table, rows in ((T.judge_quality, quality), (T.calibrated_metrics, calibrated)):
            conn.execute(table.delete().where(table.c.from_day == from_day, table.c.to_day == to_day))
            if rows:
                conn.execute(table.insert(), [dict(r, from_day=from_day, to_day=to_day, computed_at=now)
                                              for r in rows])
    return {"judge_quality": len(quality), "calibrated_metrics": len(calibrated)}
