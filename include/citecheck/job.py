"""The daily job's steps, keyed by (day, run id), shared by the DAG and the CLI.

extract → structural (100% of turns) → judge shards (the selected share) → escalate →
aggregate → validate → publish → finish. Each step reads what the previous one staged in the
warehouse and returns only small counts (what XCom carries). Every step is idempotent: it
first deletes what an earlier attempt of the same run staged.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from citecheck import warehouse as W
from citecheck.config import Config, load_config
from citecheck.judges import judge_from_spec, read_judge_file
from citecheck.metrics import MetricAccumulator, ScoredTurn, full_counts
from citecheck.pipeline import judge_items
from citecheck.sampling import sample_fraction
from citecheck.serialize import judgment_from_dict, judgment_to_dict, structured_from_dict, structured_to_dict
from citecheck.structural import ConversationHistory, structure_turn
from citecheck.turns import Skipped, TurnError, turn_from_dict
from citecheck.verdicts import SentenceVerdict, decide, evidence_windows
from citecheck.warehouse import tables as T

DEFAULT_JUDGE_SPEC: dict[str, Any] = {"kind": "nli", "model": "cross-encoder/nli-deberta-v3-base"}
CHUNK = 500
STRUCTURAL_CHUNK = 2000  # turns per extract chunk, prior-label query and staging transaction


class ValidationFailed(RuntimeError):
    """The day's output broke an expectation; nothing was published."""


@dataclass(frozen=True)
class JobSettings:
    """Everything a run depends on; its hash is stored with every output row."""

    judge_spec: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_JUDGE_SPEC))
    config: Config = field(default_factory=Config)
    nli_share: float = 1.0
    shards: int = 4
    salt: str = "citecheck-v1"
    unjudged_limit: float = 0.2
    llm_sample_rate: float | None = None
    llm_budget_usd: float | None = None

    def effective_judge_spec(self) -> dict[str, Any]:
        spec = json.loads(json.dumps(self.judge_spec))
        if spec.get("kind") == "cascade":
            escalate = spec.setdefault("escalate", {})
            if self.llm_sample_rate is not None:
                escalate["sample_rate"] = self.llm_sample_rate
            if self.llm_budget_usd is not None:
                escalate["budget_usd"] = self.llm_budget_usd
        return spec

    @property
    def config_hash(self) -> str:
        import hashlib

        blob = json.dumps({
            "config": self.config.hash, "judge": self.effective_judge_spec(), "nli_share": self.nli_share,
            "salt": self.salt, "unjudged_limit": self.unjudged_limit,
        }, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def settings_from_env(params: Mapping[str, Any] | None = None) -> JobSettings:
    """Settings from `CITECHECK_JUDGE` (a judge file), `CITECHECK_CONFIG` (TOML) and DAG params."""
    params = dict(params or {})
    judge_path = params.pop("judge_file", None) or os.environ.get("CITECHECK_JUDGE")
    spec = read_judge_file(judge_path) if judge_path else dict(DEFAULT_JUDGE_SPEC)
    config = load_config(params.pop("config_file", None) or os.environ.get("CITECHECK_CONFIG") or None)
    known = {"nli_share", "shards", "salt", "unjudged_limit", "llm_sample_rate", "llm_budget_usd"}
    values = {k: v for k, v in params.items() if k in known and v is not None}
    return replace(JobSettings(judge_spec=spec, config=config), **values)


def build_judge(engine: Engine, settings: JobSettings, run_id: str, *, stage: str = "first") -> Any:
    """The judge of a stage: the first stage of a cascade for shards, the whole judge otherwise."""
    spec = settings.effective_judge_spec()
    if stage == "first" and spec.get("kind") == "cascade":
        spec = spec["first"]
    options: dict[str, Any] = {"run_id": run_id}
    if spec.get("kind") in ("nli", "cascade"):
        from citecheck.cache import SQLCache

        options["cache"] = SQLCache(engine, create=False)
    if spec.get("kind") in ("anthropic", "cascade"):
        options["batch_state"] = RunStateBatchStore(engine)
    return judge_from_spec(spec, **options)


class RunStateBatchStore:
    """LLM batch ids persisted in `runs.state`, so a retried run reattaches to its batch."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get(self, run_id: str) -> str | None:
        with self.engine.connect() as conn:
            state = conn.execute(sa.select(T.runs.c.state).where(T.runs.c.run_id == run_id)).scalar()
        return (state or {}).get("llm_batch_id")

    def put(self, run_id: str, batch_id: str) -> None:
        with self.engine.begin() as conn:
            state = conn.execute(sa.select(T.runs.c.state).where(T.runs.c.run_id == run_id)).scalar() or {}
            conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(
                state={**state, "llm_batch_id": batch_id}))


def _shard_of(conversation_id: str, shards: int) -> int:
    return int(sample_fraction(conversation_id, salt="shard") * shards)


def _selected(turn_id: str, settings: JobSettings) -> bool:
    return sample_fraction(turn_id, salt=settings.salt) < settings.nli_share


# --- steps -----------------------------------------------------------------------------------

def extract(engine: Engine, day: dt.date, run_id: str, settings: JobSettings) -> dict[str, Any]:
    """Open the run (status running) and count the day's source turns."""
    W.clean_staging(engine, run_id)
    start, end = W.day_bounds(day, settings.config.timezone)
    with engine.begin() as conn:
        conn.execute(T.runs.delete().where(T.runs.c.run_id == run_id))
        conn.execute(T.runs.insert().values(
            run_id=run_id, day=day, status="running", started_at=dt.datetime.now(dt.UTC),
            config_hash=settings.config_hash, judge=settings.judge_spec.get("kind"), timings={}, stats={}, state={}))
        n = conn.execute(sa.text("SELECT count(*) FROM (" + W.read_sql("extract_turns.sql") + ") AS day_turns"),
                         W._bounds(conn, start, end)).scalar_one()
    return {"run_id": run_id, "day": day.isoformat(), "turns_in_source": int(n)}


def structural(engine: Engine, day: dt.date, run_id: str, settings: JobSettings) -> dict[str, Any]:
    """Parse and check every turn of the day; stage structured turns and skips.

    Streams in chunks with flat memory: the extract is ordered by conversation, so the history
    holds the conversations of the current chunk only (plus their labels from before the day,
    fetched per chunk), and staged rows and skips are written chunk by chunk.
    """
    cfg = settings.config
    started = time.perf_counter()
    with engine.begin() as conn:
        conn.execute(T.stage_turns.delete().where(T.stage_turns.c.run_id == run_id))
        conn.execute(T.stage_skipped.delete().where(T.stage_skipped.c.run_id == run_id))
    history = ConversationHistory()
    counts: Counter[str] = Counter(turns_read=0, turns_selected=0)
    shards_used: set[int] = set()
    n_skipped = 0
    open_conversation: str | None = None  # a chunk of skipped turns only keeps the one before
    with engine.connect() as read:
        for batch in W.extract_day_chunks(read, day, cfg.timezone, chunk=STRUCTURAL_CHUNK):
            _load_prior_labels(read, day, cfg.timezone, batch, history)
            rows: list[dict[str, Any]] = []
            skipped: list[Skipped] = []
            for data in batch:
                try:
                    turn = turn_from_dict(data, cfg.max_answer_chars)
                except TurnError as exc:
                    skipped.append(Skipped(None, data.get("turn_id"), str(exc)))
                    continue
                st = structure_turn(turn, cfg, history)
                open_conversation = turn.conversation_id  # the extract is in conversation order
                selected = _selected(turn.turn_id, settings)
                shard = _shard_of(turn.conversation_id, settings.shards)
                if selected:
                    shards_used.add(shard)
                    counts["turns_selected"] += 1
                rows.append({"run_id": run_id, "turn_id": turn.turn_id, "shard": shard, "selected": selected,
                             "structured": structured_to_dict(st)})
            counts["turns_read"] += len(batch)
            n_skipped += len(skipped)
            with engine.begin() as conn:
                if rows:
                    conn.execute(T.stage_turns.insert(), rows)
                W.record_skips(conn, run_id, skipped)
            _forget_finished(history, open_conversation)
    counts["turns_skipped"] = n_skipped
    counts["turns_scored"] = counts["turns_read"] - n_skipped
    _timing(engine, run_id, "structural", time.perf_counter() - started)
    return {**counts, "shards": sorted(shards_used)}


def _load_prior_labels(conn: sa.Connection, day: dt.date, timezone: str, batch: list[dict[str, Any]],
                       history: ConversationHistory) -> None:
    """Record the labels from before the day of the chunk's conversations not already held."""
    new = {c for c in (d.get("conversation_id") for d in batch) if isinstance(c, str) and c not in history}
    for conversation, turn_index, label in W.prior_context_labels(conn, day, timezone, conversations=new):
        history.record(conversation, turn_index, (label,))


def _forget_finished(history: ConversationHistory, keep: str | None) -> None:
    """After a chunk, keep only the conversation that may go on in the next chunk."""
    for conversation in history.conversation_ids():
        if conversation != keep:
            history.forget(conversation)


def judge_shard(engine: Engine, run_id: str, shard: int, settings: JobSettings) -> dict[str, Any]:
    """First-stage judging (NLI, or the recorded judge) of one shard's selected turns."""
    started = time.perf_counter()
    judge = build_judge(engine, settings, run_id, stage="first")
    with engine.begin() as conn:
        ids = sa.select(T.stage_turns.c.turn_id).where(T.stage_turns.c.run_id == run_id,
                                                      T.stage_turns.c.shard == shard)
        conn.execute(T.stage_judgments.delete().where(T.stage_judgments.c.run_id == run_id,
                                                      T.stage_judgments.c.turn_id.in_(ids)))
    judged = 0
    for batch in _staged_turns(engine, run_id, shard=shard, selected_only=True, chunk=256):
        items = [item for st in batch for item in judge_items(st)]
        results = judge.judge(items) if items else []
        rows = [{"run_id": run_id, "turn_id": i.turn_id, "sentence_index": i.sentence_index, "stage": "first",
                 "judgment": judgment_to_dict(j)} for i, j in zip(items, results, strict=True)]
        _insert(engine, T.stage_judgments, rows)
        judged += len(rows)
    _timing(engine, run_id, f"judge_shard_{shard}", time.perf_counter() - started)
    return {"shard": shard, "sentences_judged": judged, "stats": _jsonable(judge.stats()),
            "judge": judge.name, "judge_version": judge.version}


def escalate(engine: Engine, run_id: str, settings: JobSettings) -> dict[str, Any]:
    """For a cascade judge: send first-stage rejections plus the random sample to the LLM judge."""
    spec = settings.effective_judge_spec()
    if spec.get("kind") != "cascade":
        return {"escalated": 0, "status": "no_escalation_configured"}
    started = time.perf_counter()
    cascade = build_judge(engine, settings, run_id, stage="all")
    with engine.begin() as conn:
        conn.execute(T.stage_judgments.delete().where(T.stage_judgments.c.run_id == run_id,
                                                      T.stage_judgments.c.stage == "final"))
    items, firsts = [], []
    for batch in _staged_turns(engine, run_id, selected_only=True, chunk=1000):
        first = _staged_judgments(engine, run_id, "first", (batch[0].turn_id, batch[-1].turn_id))
        for item in (i for st in batch for i in judge_items(st)):
            if item.key in first:
                items.append(item)
                firsts.append(first[item.key])
    finals = cascade.escalate(items, firsts) if items else []
    rows = [{"run_id": run_id, "turn_id": i.turn_id, "sentence_index": i.sentence_index, "stage": "final",
             "judgment": judgment_to_dict(j)} for i, j in zip(items, finals, strict=True)]
    _insert(engine, T.stage_judgments, rows)
    _timing(engine, run_id, "escalate", time.perf_counter() - started)
    stats = _jsonable(cascade.stats())
    return {"escalated": sum(1 for j in finals if j.detail.get("escalation")), "stats": stats}


def aggregate(engine: Engine, day: dt.date, run_id: str, settings: JobSettings,
              judge_stats: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Decide every verdict, stage sentence and citation rows, compute the day's metric rows."""
    started = time.perf_counter()
    with engine.begin() as conn:
        for table in (T.stage_sentence_verdicts, T.stage_citation_verdicts, T.stage_daily_metrics):
            conn.execute(table.delete().where(table.c.run_id == run_id))
    acc = MetricAccumulator(settings.config)
    judge_versions: set[str] = set()
    sentence_rows: list[dict[str, Any]] = []
    citation_rows: list[dict[str, Any]] = []
    for batch in _staged_turns(engine, run_id, chunk=CHUNK, with_selection=True):
        # judgments joined per chunk (only selected turns have any): memory holds one chunk's
        selected_ids = [st.turn_id for st, selected in batch if selected]
        judgments = _chunk_judgments(engine, run_id, selected_ids)
        for st, selected in batch:
            verdicts = tuple(decide(s, judgments.get((st.turn_id, s.index)), selected=selected)
                             for s in st.sentences)
            scored = ScoredTurn(st, verdicts, selected=selected)
            acc.add(scored)
            for v in verdicts:
                if v.judgment is not None and v.judgment.judge_version:
                    judge_versions.add(f"{v.judgment.judge}:{v.judgment.judge_version}")
                sentence_rows.append(_sentence_row(run_id, day, st.turn.conversation_id, st.turn_id, v))
                citation_rows.extend(_citation_rows(run_id, day, st.turn_id, v))
        if sentence_rows:
            with engine.begin() as conn:
                conn.execute(T.stage_sentence_verdicts.insert(), sentence_rows)
                if citation_rows:
                    conn.execute(T.stage_citation_verdicts.insert(), citation_rows)
        sentence_rows, citation_rows = [], []
    now = dt.datetime.now(dt.UTC)
    metric_rows = [{"run_id": run_id, "day": day, **row, "computed_at": now} for row in acc.rows()]
    _insert(engine, T.stage_daily_metrics, metric_rows)
    counts = full_counts(acc.counts())
    versions = ",".join(sorted(judge_versions))[:400]
    stats = _jsonable(judge_stats or {})
    llm = stats.get("llm", {}) if isinstance(stats.get("llm"), dict) else {}
    with engine.begin() as conn:
        run = conn.execute(sa.select(T.runs.c.stats).where(T.runs.c.run_id == run_id)).scalar() or {}
        turns_total = counts["answers"]
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(
            judge_versions=versions, stats={**run, "judge": stats, "counts": counts},
            turns_judged=counts["judged_answers"],
            share_nli=counts["judged_answers"] / turns_total if turns_total else None,
            share_llm=(llm.get("answers_escalated", 0) / turns_total) if turns_total and llm else None,
            llm_input_tokens=llm.get("input_tokens"), llm_output_tokens=llm.get("output_tokens"),
            llm_cost_usd=llm.get("cost_usd")))
    _timing(engine, run_id, "aggregate", time.perf_counter() - started)
    return {"metric_rows": len(metric_rows), "judge_versions": versions, **{k: counts[k] for k in (
        "answers", "check_worthy_sentences", "judged_sentences", "unjudged_sentences", "selected_sentences")}}


def validate(engine: Engine, day: dt.date, run_id: str, settings: JobSettings) -> dict[str, Any]:
    """Great Expectations on the staged day; a failure is stored with the run and raised."""
    from citecheck.validation import validate_day

    started = time.perf_counter()
    with engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(sa.select(T.stage_daily_metrics).where(
            T.stage_daily_metrics.c.run_id == run_id)).mappings()]
        run = conn.execute(sa.select(T.runs).where(T.runs.c.run_id == run_id)).mappings().one()
        skipped = conn.execute(sa.select(sa.func.count()).select_from(T.stage_skipped).where(
            T.stage_skipped.c.run_id == run_id)).scalar_one()
        staged = conn.execute(sa.select(sa.func.count()).select_from(T.stage_turns).where(
            T.stage_turns.c.run_id == run_id)).scalar_one()
    counts = dict((run["stats"] or {}).get("counts", {}))
    run_counts = {"turns_read": staged + skipped, "turns_scored": staged, "turns_skipped": skipped, **counts}
    for row in rows:
        row["day"] = row["day"].isoformat() if isinstance(row["day"], dt.date) else row["day"]
        row.pop("computed_at", None)
    result = validate_day(rows, run_counts, unjudged_limit=settings.unjudged_limit)
    status = "validated" if result.success else "failed_validation"
    with engine.begin() as conn:
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(
            status=status, validation=_jsonable(result.results), turns_read=run_counts["turns_read"],
            turns_scored=staged, turns_skipped=skipped,
            error=None if result.success else result.summary()[:4000]))
    _timing(engine, run_id, "validate", time.perf_counter() - started)
    if not result.success:  # the verdict stays in `runs`; the staged rows would only pile up
        W.clean_staging(engine, run_id)
        raise ValidationFailed(f"validation failed for {day} (run {run_id}); nothing published:\n{result.summary()}")
    return {"success": True, "expectations": len(result.results.get("expectations", []))
            if isinstance(result.results, dict) else None}


def publish(engine: Engine, day: dt.date, run_id: str) -> dict[str, int]:
    """Replace the day in one transaction, then clean this run's staging.

    A retry after the staging was cleaned (the task died after its commit) changes nothing:
    republishing the emptied staging would wipe the day.
    """
    with engine.connect() as conn:
        status = conn.execute(sa.select(T.runs.c.status).where(T.runs.c.run_id == run_id)).scalar()
        if status == "published" and not _has_staging(conn, run_id):
            return W.published_row_counts(conn, day)
    if status not in ("validated", "published"):
        raise ValidationFailed(f"run {run_id} has status {status!r}; only a validated run is published")
    counts = W.publish_day(engine, day, run_id)
    W.clean_staging(engine, run_id)
    return counts


def _has_staging(conn: sa.Connection, run_id: str) -> bool:
    """Whether any staged row of the run is left (publish reads them; clean_staging removes them)."""
    return any(conn.execute(sa.select(t.c.run_id).where(t.c.run_id == run_id).limit(1)).first()
               for t in T.STAGING_TABLES)


def finish(engine: Engine, run_id: str, published: Mapping[str, int] | None = None) -> dict[str, Any]:
    with engine.begin() as conn:
        run = conn.execute(sa.select(T.runs.c.stats, T.runs.c.started_at).where(T.runs.c.run_id == run_id)).one()
        now = dt.datetime.now(dt.UTC)
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(
            finished_at=now, stats={**(run.stats or {}), "published_rows": dict(published or {})}))
    return {"run_id": run_id, "published_rows": dict(published or {})}


def run_day(engine: Engine, day: dt.date, settings: JobSettings, run_id: str | None = None) -> dict[str, Any]:
    """Every step for one day, in order (the CLI's `run` and `backfill`)."""
    run_id = run_id or new_run_id(day)
    out: dict[str, Any] = {"run_id": run_id, "day": day.isoformat()}
    out["extract"] = extract(engine, day, run_id, settings)
    out["structural"] = s = structural(engine, day, run_id, settings)
    stats: dict[str, Any] = {}
    for shard in s["shards"]:
        result = judge_shard(engine, run_id, shard, settings)
        stats = _merge_stats(stats, result["stats"])
    out["escalate"] = esc = escalate(engine, run_id, settings)
    all_stats = {"first": stats, **({"llm": esc["stats"].get("llm", {})} if "stats" in esc else {})}
    out["aggregate"] = aggregate(engine, day, run_id, settings, all_stats)
    out["validate"] = validate(engine, day, run_id, settings)
    out["publish"] = publish(engine, day, run_id)
    finish(engine, run_id, out["publish"])
    return out


def new_run_id(day: dt.date) -> str:
    import uuid

    return f"{day.isoformat()}-{uuid.uuid4().hex[:12]}"


def published_config_hash(engine: Engine, day: dt.date) -> str | None:
    with engine.connect() as conn:
        return conn.execute(sa.select(T.daily_metrics.c.config_hash).where(T.daily_metrics.c.day == day).limit(1)
                            ).scalar()


def day_metrics(engine: Engine, day: dt.date) -> list[dict[str, Any]]:
    cols = [T.daily_metrics.c[c] for c in ("metric", "averaging", "slice_name", "slice_value", "numerator",
                                           "denominator", "value", "answers", "sentences", "run_id", "config_hash")]
    with engine.connect() as conn:
        rows = conn.execute(sa.select(*cols).where(T.daily_metrics.c.day == day).order_by(
            T.daily_metrics.c.slice_name, T.daily_metrics.c.slice_value, T.daily_metrics.c.metric,
            T.daily_metrics.c.averaging)).mappings()
        return [dict(r) for r in rows]


# --- helpers ---------------------------------------------------------------------------------

def _staged_turns(engine: Engine, run_id: str, *, shard: int | None = None, selected_only: bool = False,
                  chunk: int = CHUNK, with_selection: bool = False) -> Iterator[list[Any]]:
    q = sa.select(T.stage_turns.c.structured, T.stage_turns.c.selected).where(T.stage_turns.c.run_id == run_id)
    if shard is not None:
        q = q.where(T.stage_turns.c.shard == shard)
    if selected_only:
        q = q.where(T.stage_turns.c.selected.is_(True))
    q = q.order_by(T.stage_turns.c.turn_id)
    with engine.connect() as conn:
        result = conn.execution_options(yield_per=chunk).execute(q)
        while rows := result.fetchmany(chunk):
            if with_selection:
                yield [(structured_from_dict(r[0]), bool(r[1])) for r in rows]
            else:
                yield [structured_from_dict(r[0]) for r in rows]


def _staged_judgments(engine: Engine, run_id: str, stage: str, turn_range: tuple[str, str] | None = None
                      ) -> dict[tuple[str, int], Any]:
    """Staged judgments of one stage, keyed (turn, sentence): of the run, or of the turns from
    `turn_range[0]` to `turn_range[1]` (a chunk of `_staged_turns`, which is ordered by turn id,
    so the range holds exactly the chunk's turns, compared in the database's own collation)."""
    c = T.stage_judgments.c
    q = sa.select(c.turn_id, c.sentence_index, c.judgment).where(c.run_id == run_id, c.stage == stage)
    if turn_range is not None:
        q = q.where(c.turn_id >= turn_range[0], c.turn_id <= turn_range[1])
    with engine.connect() as conn:
        return {(r[0], r[1]): judgment_from_dict(r[2]) for r in conn.execute(q)}


def _chunk_judgments(engine: Engine, run_id: str, turn_ids: list[str]) -> dict[tuple[str, int], Any]:
    """The deciding judgment of each sentence of a chunk's turns (in turn id order): the final
    stage (LLM) over the first."""
    if not turn_ids:
        return {}
    span = (turn_ids[0], turn_ids[-1])
    judgments = _staged_judgments(engine, run_id, "first", span)
    judgments.update(_staged_judgments(engine, run_id, "final", span))
    return judgments


def _insert(engine: Engine, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    if rows:
        with engine.begin() as conn:
            conn.execute(table.insert(), rows)


def _sentence_row(run_id: str, day: dt.date, conversation_id: str, turn_id: str, v: SentenceVerdict
                  ) -> dict[str, Any]:
    s, j = v.sentence, v.judgment
    return {
        "run_id": run_id, "day": day, "turn_id": turn_id, "sentence_index": s.index,
        "conversation_id": conversation_id, "text": s.text, "labels": list(s.labels),
        "unknown_labels": list(s.unknown_labels), "stale_labels": list(s.stale_labels),
        "check_worthy": s.check_worthy, "non_claim_reason": s.non_claim_reason, "attached": s.attached,
        "verdict": v.verdict, "score": j.score if j else None, "contradiction": j.contradiction if j else None,
        "supported_elsewhere_by": "+".join(v.supported_elsewhere_by) or None,
        "judge": j.judge if j else None, "judge_version": (j.judge_version if j else None),
        "reason": (j.unjudged_reason if j else None) or s.non_claim_reason,
        "llm": _jsonable(j.detail.get("llm")) if j and j.detail.get("llm") else None,
        "best_windows": evidence_windows(v),
    }


def _citation_rows(run_id: str, day: dt.date, turn_id: str, v: SentenceVerdict) -> list[dict[str, Any]]:
    s, j = v.sentence, v.judgment
    stale, unknown = set(s.stale_labels), set(s.unknown_labels)
    rows = []
    for label in s.labels:
        status = "stale" if label in stale else "unknown" if label in unknown else "resolved"
        rows.append({
            "run_id": run_id, "day": day, "turn_id": turn_id, "sentence_index": s.index, "label": label,
            "status": status, "check_worthy": s.check_worthy,
            "alone": j.alone.get(label) if j else None, "rest": j.rest.get(label) if j else None,
            "credited": v.credited.get(label, False),
        })
    return rows


def _timing(engine: Engine, run_id: str, step: str, seconds: float) -> None:
    with engine.begin() as conn:
        timings = conn.execute(sa.select(T.runs.c.timings).where(T.runs.c.run_id == run_id)).scalar() or {}
        conn.execute(T.runs.update().where(T.runs.c.run_id == run_id).values(
            timings={**timings, step: round(seconds, 3)}))


def _merge_stats(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Add numeric stats of two shards; keep the latest value of everything else."""
    out = dict(a)
    for key, value in b.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(out.get(key), (int, float)):
            out[key] = out[key] + value
        else:
            out[key] = value
    return out


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def sample_settings(sample_dir: Path) -> JobSettings:
    """Settings for the bundled sample: its recorded judge and config."""
    return JobSettings(judge_spec=read_judge_file(sample_dir / "judge.json"),
                       config=load_config(sample_dir / "config.toml"))
