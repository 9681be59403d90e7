"""The daily job's steps, keyed by one run of one day, and THE sequence they run in.

open_run → structural ×shards (100% of turns) → split_claims (LLM claims mode) → judge_shard ×shards
(the selected share) → escalate (LLM) → fold_shard ×shards → combine → validate → publish → monitor
(step-change alerts) → report → record_run. A shard is the conversations whose shard key
(`citecheck.core.selection.shard_key`) falls in it; the per-shard steps (`SHARD_STEPS`) are keyed
by (run, shard), each staging only its own rows, and `combine` adds the shards' partial states.
Each step reads what the previous one staged in the warehouse and returns only small counts (what
XCom carries). Every step is idempotent: it first deletes what an earlier attempt of the same run
(and shard) staged. The orchestration is here and only here: each step's logic (the scoring of
`citecheck.core.pipeline`, the same functions the CLI's `score` runs; the monitor's assessment; the
report's rendering) returns what it produced, and this module hands it to `citecheck.warehouse`,
which alone reads and writes tables.
"""

from __future__ import annotations

import datetime as dt
import functools
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine

from citecheck.core import pipeline, records
from citecheck.core.coverage import DAILY_MAX_SKIPPED_SHARE, DAY_SKIPPED_CHECK, decision_with, skipped_check
from citecheck.core.criteria import CriteriaEvaluator
from citecheck.core.fold import AnswerFold
from citecheck.core.metrics import SliceCap, full_counts
from citecheck.core.repairs import input_repairs, language_repairs, repair_totals
from citecheck.core.structural import ConversationHistory
from citecheck.core.turns import turns_from_dicts
from citecheck.features.suggestions import build_suggestions
from citecheck.job.settings import JobSettings, build_judge
from citecheck.job.validation import validate_day
from citecheck.warehouse import alerts, locks, read_model, reports, runs, source, staging
from citecheck.warehouse import tables as T
from citecheck.warehouse.publish import publish_day
from citecheck.warehouse.serialize import jsonable

CHUNK = 500
StepCall = Callable[..., Any]
STRUCTURAL_CHUNK = 2000  # turns per extract chunk, prior-label query and staging transaction
ESCALATE_CHUNK = 1000


class ValidationFailed(RuntimeError):
    """The day's output broke an expectation; nothing was published."""


@dataclass(frozen=True)
class DayRun:
    """One run of one metric day: what every step is keyed by."""

    engine: Engine
    day: dt.date
    run_id: str
    settings: JobSettings
    anthropic_api_key: str | None = None  # for the escalate step's LLM judge; never stored
    # the whole run is this process (the CLI): its day's lock is freed at once when the process dies;
    # False for a DAG run, whose tasks renew a lease (`citecheck.warehouse.locks`)
    process_lock: bool = False


def holds_day(step: StepCall) -> StepCall:
    """A step of a run that holds its day: renews the day's lock first (`DayLocked` when another
    run took it) and keeps renewing it while the step works."""

    @functools.wraps(step)
    def held(run: DayRun, *args: Any) -> Any:
        lease = run.settings.lock_lease_s
        generation = runs.lock_generation(run.engine, run.run_id)  # the run's fencing token
        locks.renew(run.engine, run.day, run.run_id, generation, lease_s=lease)
        with locks.renewing(run.engine, run.day, run.run_id, generation, lease_s=lease):
            return step(run, *args)

    return held


def take_day(run: DayRun) -> tuple[int, list[str]]:
    """Take the day's lock (waiting up to `lock_wait_s`, else `DayLocked` naming the holder), then
    close the debris of earlier runs that no longer hold it: their open ledger rows become
    `abandoned` and their staged rows go. Returns the lock's generation (the run's fencing token)
    and the run ids it abandoned."""
    generation = locks.acquire(run.engine, run.day, run.run_id, wait_s=run.settings.lock_wait_s,
                               lease_s=run.settings.lock_lease_s, process=run.process_lock)
    return generation, runs.close_open_runs(
        run.engine, run.day, keep=run.run_id, status="abandoned", generation=generation,
        reason=f"abandoned: stopped without finishing; found by run {run.run_id}")


def _timed(run: DayRun, step: str, started: float) -> None:
    runs.record_timing(run.engine, run.run_id, step, time.perf_counter() - started)


def open_run(run: DayRun) -> dict[str, Any]:
    """Take the day (`take_day`: one run per day at a time), open the run (status running), count
    the day's source turns and stage the day's slice cap (`stage_slice_cap`); returns the shards
    every per-shard step runs over (`[job] shards`, the DAG's `shards` param)."""
    generation, abandoned = take_day(run)
    runs.open_run(run.engine, run.run_id, run.day, config_hash=run.settings.run_config_hash,
                  judge=run.settings.judge_spec.get("kind"), lock_generation=generation)
    staging.clean_staging(run.engine, run.run_id)  # fenced with the token `open_run` recorded
    with run.engine.connect() as conn:
        n = source.count_day_turns(conn, run.day, run.settings.config.timezone)
    stage_slice_cap(run)
    return {"run_id": run.run_id, "day": run.day.isoformat(), "turns_in_source": n, "abandoned": abandoned,
            "shards": list(range(run.settings.selection.shards))}


@holds_day
def structural(run: DayRun, shard: int) -> dict[str, Any]:
    """Parse and check every turn of one shard (its conversations: `extract_turns.sql` filters the
    shard key); write its structured turns and skips to staging, its input repairs as its partial
    state.

    Streams in chunks with flat memory: the extract is ordered by conversation, so the history
    holds the conversations of the current chunk only (plus their labels from before the day,
    fetched per chunk), and staged rows and skips are written chunk by chunk.
    """
    cfg, selection = run.settings.config, run.settings.selection
    started = time.perf_counter()
    staging.reset_shard(run.engine, run.run_id, shard, (T.stage_turns, T.stage_skipped))
    history = ConversationHistory()
    counts: Counter[str] = Counter(turns_read=0, turns_selected=0, turns_skipped=0)
    repairs: Counter[str] = Counter()
    open_conversation: str | None = None  # a chunk of skipped turns only keeps the one before
    # every shard reads the source as the run opened on it: batches committed since make the day stale
    mark = (runs.run_row(run.engine, run.run_id) or {}).get("source_load_id")
    with run.engine.connect() as read:
        for batch in source.extract_day_chunks(read, run.day, cfg.timezone, chunk=STRUCTURAL_CHUNK,
                                               shard=shard, shards=selection.shards, through_load=mark):
            new = {c for c in (d.get("conversation_id") for d in batch) if isinstance(c, str) and c not in history}
            for conversation, turn_index, label in source.prior_context_labels(
                    read, run.day, cfg.timezone, conversations=new):
                history.record(conversation, turn_index, (label,))
            turns, skipped = turns_from_dicts(batch, cfg.max_answer_chars)
            repairs.update(input_repairs(batch, turns, cfg))
            built = list(pipeline.structure_turns(turns, cfg, history, skipped))
            repairs.update(language_repairs(built))
            staged = [(st, shard, selection.selected(st.turn_id)) for st in built]
            counts["turns_selected"] += sum(1 for _, _, selected in staged if selected)
            staging.stage_structured(run.engine, run.run_id, staged, skipped, shard)
            counts["turns_read"] += len(batch)
            counts["turns_skipped"] += len(skipped)
            if turns:  # the extract is in conversation order: only the last one can go on
                open_conversation = turns[-1].conversation_id
            history.keep_only(open_conversation)
    counts["turns_scored"] = counts["turns_read"] - counts["turns_skipped"]
    staging.stage_partial(run.engine, run.run_id, "structural", shard, {"repairs": dict(repairs)})
    _timed(run, f"structural_{shard}", started)
    return {"shard": shard, **counts, "input_repairs": repair_totals(repairs)}


def shard_totals(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The day's counts from its shards' results (`structural`, `fold_shard`): the whole numbers
    added up, nested counts (`input_repairs`) too."""
    out: dict[str, Any] = {}
    for result in results:
        for key, value in result.items():
            if key == "shard":
                continue
            if isinstance(value, Mapping):
                inner = out.setdefault(key, {})
                for k, v in value.items():
                    inner[k] = inner.get(k, 0) + v
            elif _is_number(value):
                out[key] = out.get(key, 0) + value
    return out


@holds_day
def split_claims(run: DayRun) -> dict[str, Any]:
    """`[claims] mode = "llm"`: split the day's selected turns' sentences with the LLM claim splitter
    (`split_claims_with_llm`: one Message Batch for the day) and restage them; nothing in other
    modes."""
    if run.settings.config.claims_mode != "llm":
        return {"status": "not_configured"}
    started = time.perf_counter()
    result = {"claim_split": split_claims_with_llm(run, llm_claim_splitter(run))}
    _timed(run, "split_claims", started)
    return result


def llm_claim_splitter(run: DayRun) -> Any:
    """`[claims] mode = "llm"`: the claim splitter of the run's LLM judge, on the warehouse's split
    cache; its spend recorded so far is cleared (a retried step books again what it spends). A
    `ClaimsError` when no Anthropic key is configured: the day would be split by nobody."""
    from citecheck.core.claims import ClaimsError
    from citecheck.warehouse.split_cache import SQLSplitCache

    runs.record_stats(run.engine, run.run_id, {"claim_split": {}})
    judge = build_judge(run.engine, run.settings, run.run_id, stage="claims",
                        anthropic_api_key=run.anthropic_api_key)
    splitter = judge.claim_splitter(cache=SQLSplitCache(run.engine), max_claims=run.settings.config.claims_max)
    if not splitter.has_api_key():
        raise ClaimsError('claims.mode = "llm": no Anthropic API key (set the Airflow connection '
                          'citecheck_anthropic\'s password, or ANTHROPIC_API_KEY)')
    return splitter


def split_claims_with_llm(run: DayRun, splitter: Any) -> dict[str, Any]:
    """Split the day's staged selected turns with the LLM claim splitter, as one request set: splits
    cached in the warehouse first, then one request per answer for the rest in ONE Message Batch
    (key `<run id>/claims`, kept in the run ledger: a retried task reattaches instead of submitting
    again), under the daily budget the judging steps share. Every split is verified; a rejected,
    failed or unaffordable one leaves its sentence one claim, counted. The turns are restaged with
    their claims; the counts and the spend go to `runs.stats["claim_split"]`."""
    for batch in staging.staged_turns(run.engine, run.run_id, selected_only=True, chunk=ESCALATE_CHUNK):
        splitter.plan([st for st, _ in batch])
    splitter.send()
    rejected = 0
    for batch in staging.staged_turns(run.engine, run.run_id, selected_only=True, chunk=ESCALATE_CHUNK):
        split = [splitter.apply(st) for st, _ in batch]
        rejected += sum(after.claim_splits_rejected - before.claim_splits_rejected
                        for (before, _), after in zip(batch, split, strict=True))
        staging.restage_turns(run.engine, run.run_id, split)
    counts = splitter.stats()
    failures = {k.split(":", 1)[1]: v for k, v in counts.items() if k.startswith("claim_split_failures:")}
    result = {
        "answers_asked": counts.get("answers_asked", 0),
        "sentences_cached": counts.get("sentences_cached", 0),
        "sentences_split_by_model": counts.get("sentences_split_by_model", 0),
        "claim_splits_rejected": rejected,
        "claim_splits_skipped_budget": failures.pop("budget_reached", 0),
        "claim_splits_failed": sum(failures.values()),
        "failures": failures,
        "spend": splitter.spend(),
        "llm": jsonable(splitter.judge.stats()),
    }
    runs.record_stats(run.engine, run.run_id, {"claim_split": result})
    return {k: v for k, v in result.items() if k != "llm"}


@holds_day
def judge_shard(run: DayRun, shard: int) -> dict[str, Any]:
    """First-stage judging (NLI, or the recorded judge) of one shard's selected turns."""
    started = time.perf_counter()
    staging.drop_judgments(run.engine, run.run_id, shard=shard)
    judge = None  # built for the first batch: a shard with nothing to judge loads no model
    judged = 0
    for batch in staging.staged_turns(run.engine, run.run_id, shard=shard, selected_only=True,
                                       chunk=pipeline.JUDGE_BATCH_TURNS):
        judge = judge or build_judge(run.engine, run.settings, run.run_id, stage="first", shard=shard)
        judgments = pipeline.judge_turns([st for st, _ in batch], judge)
        judged += staging.stage_judgments(run.engine, run.run_id, staging.FIRST, judgments.items())
    _timed(run, f"judge_shard_{shard}", started)
    if judge is None:
        return {"shard": shard, "sentences_judged": 0, "stats": {}, "judge": None, "judge_version": None}
    return {"shard": shard, "sentences_judged": judged, "stats": jsonable(judge.stats()),
            "judge": judge.name, "judge_version": judge.version}


@holds_day
def escalate(run: DayRun) -> dict[str, Any]:
    """For a cascade judge: send first-stage rejections plus the random sample to the LLM judge."""
    if run.settings.effective_judge_spec().get("kind") != "cascade":
        return {"escalated": 0, "status": "no_escalation_configured"}
    started = time.perf_counter()
    cascade = build_judge(run.engine, run.settings, run.run_id, stage="all",
                          anthropic_api_key=run.anthropic_api_key)
    staging.drop_judgments(run.engine, run.run_id, judge_stage=staging.FINAL)
    items, firsts = [], []
    for batch in staging.staged_turns(run.engine, run.run_id, selected_only=True, chunk=ESCALATE_CHUNK):
        span = (batch[0][0].turn_id, batch[-1][0].turn_id)
        first = staging.staged_judgments(run.engine, run.run_id, staging.FIRST, span)
        for item in (i for st, _ in batch for i in pipeline.judge_items(st)):
            if item.key in first and not pipeline.without_source_text(item):
                items.append(item)
                firsts.append(first[item.key])
    finals = cascade.escalate(items, firsts) if items else []
    staging.stage_judgments(run.engine, run.run_id, staging.FINAL,
                            zip((i.key for i in items), finals, strict=True))
    _timed(run, "escalate", started)
    return {"escalated": sum(1 for j in finals if j.detail.get("escalation")),
            "stats": jsonable(cascade.stats())}


def merge_judge_stats(shard_results: Iterable[Mapping[str, Any]], escalation: Mapping[str, Any]
                      ) -> dict[str, Any]:
    """The day's judge statistics from the shards' results and the escalation's: numeric stats
    of the shards add up under `first`; the LLM's are under `llm` when it ran."""
    first: dict[str, Any] = {}
    for result in shard_results:
        for key, value in (result.get("stats") or {}).items():
            if _is_number(value) and _is_number(first.get(key)):
                first[key] += value
            else:
                first[key] = value
    llm = (escalation.get("stats") or {}).get("llm")
    return {"first": first, **({"llm": llm} if llm is not None else {})}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


SHARD_ROW_TABLES = (T.stage_sentence_verdicts, T.stage_citation_verdicts, T.stage_recite_suggestions,
                    T.stage_claim_verdicts, T.stage_claim_citation_verdicts)  # what `fold_shard` stages per turn


@holds_day
def fold_shard(run: DayRun, shard: int) -> dict[str, Any]:
    """Decide every verdict of one shard's turns, stage their sentence, citation, claim and
    suggestion rows, and fold the answers (`core.fold.AnswerFold`, with the day's slice cap) into
    the shard's partial state of the day's metrics and criteria, staged for `combine`."""
    started = time.perf_counter()
    staging.reset_shard(run.engine, run.run_id, shard, SHARD_ROW_TABLES)
    fold = AnswerFold(run.settings.config, run.settings.criteria, cap=staged_slice_cap(run))
    with run.engine.connect() as conn:  # no reader event for the day at all: its reader metrics are null
        reader_logged = source.day_has_reader_events(conn, run.day, run.settings.config.timezone)
    answers = 0
    for batch in staging.staged_turns(run.engine, run.run_id, shard=shard, chunk=CHUNK):
        # judgments joined per chunk (only selected turns have any): memory holds one chunk's
        judgments = staging.deciding_judgments(run.engine, run.run_id, [st.turn_id for st, sel in batch if sel])
        events: dict[str, list[Any]] = {}
        if reader_logged:
            with run.engine.connect() as conn:
                events = source.reader_events_of(conn, [st.turn_id for st, _ in batch])
        sentence_rows: list[dict[str, Any]] = []
        citation_rows: list[dict[str, Any]] = []
        suggestion_rows: list[dict[str, Any]] = []
        claim_rows: list[dict[str, Any]] = []
        link_rows: list[dict[str, Any]] = []
        for st, selected in batch:
            scored = pipeline.decide_turn(st, judgments, selected=selected, reader_events=tuple(
                events.get(st.turn_id, ())) if reader_logged else None)
            fold.add(scored)
            for v in scored.verdicts:
                sentence_rows.append(records.sentence_row(v, st.turn_id, st.turn.conversation_id, st.language,
                                                          st.language_source))
                citation_rows.extend(records.citation_rows(v, st.turn_id))
                suggestion_rows.extend(build_suggestions(st.turn_id, v, st.turn.context))
            claims, links = records.claim_rows(scored)  # a claims mode's claims and links (none otherwise)
            claim_rows.extend(claims)
            link_rows.extend(links)
        answers += len(batch)
        staging.stage_verdict_rows(run.engine, run.run_id, run.day, sentence_rows, citation_rows, claim_rows,
                                   link_rows)
        staging.stage_rows(run.engine, T.stage_recite_suggestions, suggestion_rows, run.run_id, run.day)
    staging.stage_partial(run.engine, run.run_id, "fold", shard, fold.state())
    _timed(run, f"fold_shard_{shard}", started)
    return {"shard": shard, "answers": answers}


@holds_day
def combine(run: DayRun, shard_results: Sequence[Mapping[str, Any]], escalation: Mapping[str, Any]
            ) -> dict[str, Any]:
    """Add the shards' partial states (every shard's, else an error naming the missing ones) into
    the day's fold, then compute the intervals and decisions and stage the day's metric rows,
    criteria results and failing answers; the day's counts, input repairs, judge versions and
    judge statistics (`shard_results`: the judge shards', `escalation`: the LLM's) go to the ledger."""
    started = time.perf_counter()
    staging.reset(run.engine, run.run_id, (T.stage_daily_metrics, T.stage_criteria_results, T.stage_answer_decisions))
    folded, structured = shard_partials(run, "fold"), shard_partials(run, "structural")
    fold = AnswerFold.combined(run.settings.config, folded, run.settings.criteria, cap=staged_slice_cap(run))
    repairs: Counter[str] = Counter()
    for state in structured:
        repairs.update(state["repairs"])
    runs.record_stats(run.engine, run.run_id, {"input_repairs": repair_totals(repairs)})
    now = dt.datetime.now(dt.UTC)
    metric_rows = [{**row, "computed_at": now} for row in fold.metrics.rows()]
    staging.stage_rows(run.engine, T.stage_daily_metrics, metric_rows, run.run_id, run.day)
    decision = stage_decisions(run, fold.criteria) if fold.criteria is not None else None
    counts = full_counts(fold.metrics.counts())
    versions = ",".join(sorted(fold.judge_versions))[:T.JUDGE_VERSIONS_CHARS]
    runs.record_judged(run.engine, run.run_id, judge_stats=jsonable(merge_judge_stats(shard_results, escalation)),
                       counts=counts, judge_versions=versions)
    _timed(run, "combine", started)
    return {"metric_rows": len(metric_rows), "judge_versions": versions, "decision": decision,
            **{k: counts[k] for k in (
        "answers", "check_worthy_sentences", "judged_sentences", "unjudged_sentences", "selected_sentences")}}


def shard_partials(run: DayRun, step: str) -> list[Any]:
    """The partial states `step` staged, one per shard in shard order; a `RuntimeError` naming the
    shards that staged none (a shard's task did not run: its answers would be missing)."""
    states = staging.staged_partials(run.engine, run.run_id, step)
    missing = [s for s in range(run.settings.selection.shards) if s not in states]
    if missing or len(states) != run.settings.selection.shards:
        raise RuntimeError(f"run {run.run_id}: step {step} staged no state for shard(s) {missing} of "
                           f"{run.settings.selection.shards} (found {sorted(states)}); rerun those shards")
    return [states[s] for s in range(run.settings.selection.shards)]


def stage_decisions(run: DayRun, criteria: CriteriaEvaluator) -> str | None:
    """Stage the day's criteria results, its skipped-turns check (`core.coverage`: `[gate]
    max_skipped_share`, else `DAILY_MAX_SKIPPED_SHARE`) and failing answers (published with the
    day, SPEC 5.1); returns the day's decision (None: no criteria configured)."""
    if not criteria.criteria:
        return None
    key = {"criteria_hash": criteria.criteria.hash}
    results = criteria.results()
    turns = staging.staged_turn_counts(run.engine, run.run_id)
    check = skipped_check(turns["turns_skipped"], turns["turns_read"], criteria.criteria.limits,
                          DAILY_MAX_SKIPPED_SHARE, name=DAY_SKIPPED_CHECK)
    staging.stage_rows(run.engine, T.stage_criteria_results, [
        *({**key, **{("on_rule" if k == "on" else k): v for k, v in r.as_dict().items() if k != "criterion"},
           "criterion": r.criterion.name} for r in results),
        {**key, **check.criteria_row()}], run.run_id, run.day)
    staging.stage_rows(run.engine, T.stage_answer_decisions, [
        {**key, "turn_id": turn_id, "criteria_failed": names} for turn_id, names in criteria.failing_answers().items()],
        run.run_id, run.day)
    return decision_with((r.decision for r in results), [check])


def stage_slice_cap(run: DayRun) -> SliceCap:
    """The day's bounded attribute slices (`[slices] max_values_per_key`), from the database's count
    of each attribute value's answers over the whole day, staged once for every shard's fold; the
    cut goes to `runs.stats["slices_cut"]` and the log."""
    config = run.settings.config
    with run.engine.connect() as conn:
        cap = SliceCap.from_counts(source.attribute_value_counts(conn, run.day, config.timezone),
                                   config.slice_max_values, config.slice_attributes)
    cap.log_cuts()
    runs.record_stats(run.engine, run.run_id, {"slices_cut": {k: dict(v) for k, v in cap.cut.items()}})
    staging.stage_partial(run.engine, run.run_id, "slice_cap", T.DAY_STATE, cap.state())
    return cap


def staged_slice_cap(run: DayRun) -> SliceCap:
    """The slice cap `open_run` staged for the day."""
    return SliceCap.from_state(staging.staged_partials(run.engine, run.run_id, "slice_cap")[T.DAY_STATE])


@holds_day
def validate(run: DayRun) -> dict[str, Any]:
    """Great Expectations on the staged day; a failure is stored with the run and raised."""
    started = time.perf_counter()
    rows = staging.staged_metric_rows(run.engine, run.run_id)
    turn_counts = staging.staged_turn_counts(run.engine, run.run_id)
    ledger = runs.run_row(run.engine, run.run_id) or {}
    run_counts = {**turn_counts, **dict((ledger.get("stats") or {}).get("counts", {}))}
    for row in rows:
        row["day"] = row["day"].isoformat() if isinstance(row["day"], dt.date) else row["day"]
        row.pop("computed_at", None)
    result = validate_day(rows, run_counts, unjudged_limit=run.settings.unjudged_limit,
                          min_turns=run.settings.min_turns)
    if not runs.record_validation(run.engine, run.run_id, success=result.success, results=result.results,
                                  turn_counts=turn_counts, error=None if result.success else result.summary()):
        raise locks.DayLocked(run.day, run.run_id, None, reason=(
            f"is {runs.run_status(run.engine, run.run_id)}, no longer running (another run closed it)"))
    _timed(run, "validate", started)
    if not result.success:  # the verdict stays in `runs`; the staged rows would only pile up
        staging.clean_staging(run.engine, run.run_id)
        locks.release(run.engine, run.day, run.run_id)
        raise ValidationFailed(
            f"validation failed for {run.day} (run {run.run_id}); nothing published:\n{result.summary()}")
    return {"success": True, "expectations": len(result.results.get("expectations", []))
            if isinstance(result.results, dict) else None}


def publish(run: DayRun) -> dict[str, int]:
    """Replace the day in one transaction, then clean this run's staging.

    A retry after the staging was cleaned (the task died after its commit) changes nothing and
    needs no lock: republishing the emptied staging would wipe the day.
    """
    status = runs.run_status(run.engine, run.run_id)
    with run.engine.connect() as conn:
        if status == "published" and not staging.has_staging(conn, run.run_id):
            return read_model.published_row_counts(conn, run.day)
    return _publish_staged(run, status)


@holds_day
def _publish_staged(run: DayRun, status: str | None) -> dict[str, int]:
    if status not in ("validated", "published"):
        raise ValidationFailed(f"run {run.run_id} has status {status!r}; only a validated run is published")
    counts = publish_day(run.engine, run.day, run.run_id, runs.lock_generation(run.engine, run.run_id))
    staging.clean_staging(run.engine, run.run_id)
    return counts


@holds_day
def monitor(run: DayRun) -> dict[str, Any]:
    """After publish: the day's step-change alerts against its history (`citecheck.features.monitor`);
    the counts, and why no alert when the history is too short."""
    result = monitor_day(run.engine, run.day, run.run_id, run.settings)
    runs.mark_completed(run.engine, run.run_id, "monitor")
    return result


def monitor_day(engine: Engine, day: dt.date, run_id: str, settings: Any) -> dict[str, Any]:
    """The monitor step on a warehouse: read the published day and its history, assess it, replace
    the day's alerts and record the counts in the run ledger. `settings`: a `JobSettings`, a
    `Config` or `MonitorSettings`."""
    from citecheck.features.monitor import as_monitor_settings, assess_day

    ms = as_monitor_settings(settings)
    history = read_model.published_days_before(engine, day, ms.history_days)
    rows = read_model.metric_rows(engine, history[0] if history else day, day, days=[*history, day],
                                 metrics=ms.metrics, averaging=ms.averaging)
    decision = read_model.day_decision(engine, day)
    day_alerts, stats = assess_day(day, run_id, rows, history, ms, decision["criteria"] if decision else ())
    alerts.replace_alerts(engine, day, run_id, day_alerts)
    runs.record_monitor(engine, run_id, stats)
    return stats


@holds_day
def report(run: DayRun) -> dict[str, Any]:
    """After monitor: render the day's HTML report (its alerts included) and store it in the
    warehouse, where the Airflow plugin serves it; a rerun replaces it (`citecheck.report`)."""
    from citecheck.report import configured_trend_days

    result = publish_report(run.engine, run.day, run.run_id, configured_trend_days(run.settings.config))
    runs.mark_completed(run.engine, run.run_id, "report")
    return result


def publish_report(engine: Engine, day: dt.date, run_id: str | None = None, trend_days: int | None = None
                   ) -> dict[str, Any]:
    """Render the day's report and store it in `reports`, replacing an earlier one: what the
    report step does and the Airflow plugin serves (`trend_days` default: the report's 28)."""
    from citecheck.report import DEFAULT_TREND_DAYS, build_report

    trend_days = trend_days or DEFAULT_TREND_DAYS
    html = build_report(engine, day, trend_days)
    reports.store_report(engine, day, html, trend_days=trend_days, run_id=run_id)
    return {"day": day.isoformat(), "run_id": run_id, "trend_days": trend_days, "bytes": len(html.encode("utf-8"))}


@holds_day
def record_run(run: DayRun, published_rows: Mapping[str, int]) -> dict[str, Any]:
    """Close the run: `finished_at` and the published row counts in the ledger; free the day."""
    runs.mark_completed(run.engine, run.run_id, "record_run")
    runs.finish_run(run.engine, run.run_id, published_rows)
    locks.release(run.engine, run.day, run.run_id)
    return {"run_id": run.run_id, "published_rows": dict(published_rows)}


STEP_NAMES = ("open_run", "structural", "split_claims", "judge_shard", "escalate", "fold_shard", "combine",
              "validate", "publish", "monitor", "report", "record_run")
SHARD_STEPS = ("structural", "judge_shard", "fold_shard")  # one task per shard, keyed by (run, shard)
AFTER_PUBLISH = STEP_NAMES[STEP_NAMES.index("publish") + 1:]  # marked in `runs.completed_steps`


def _call_directly(_name: str, step: StepCall, *args: Any) -> Any:
    return step(*args)


def _each_shard(run: DayRun, call: Callable[..., Any], name: str, step: StepCall, shards: Sequence[int]
                ) -> list[Any]:
    return [call(name, step, run, shard) for shard in shards]


ShardRunner = Callable[[DayRun, Callable[..., Any], str, StepCall, Sequence[int]], list[Any]]


def run_steps(run: DayRun, call: Callable[..., Any] = _call_directly, each_shard: ShardRunner = _each_shard
              ) -> dict[str, Any]:
    """THE step sequence of a day (the DAG wires the same steps in the same order; a test checks
    it). `call(name, step, run, *args)` runs each step: a bench times it, a fault test swaps the
    engine or kills the connection; by default it just calls the step. `each_shard(run, call, name,
    step, shards)` runs a per-shard step (`SHARD_STEPS`) over the shards, their results in shard
    order: one after another by default, in processes for `--workers`."""
    out: dict[str, Any] = {"run_id": run.run_id, "day": run.day.isoformat()}
    out["open_run"] = call("open_run", open_run, run)
    shards = out["open_run"]["shards"]
    out["structural"] = shard_totals(each_shard(run, call, "structural", structural, shards))
    out["split_claims"] = call("split_claims", split_claims, run)
    shard_results = each_shard(run, call, "judge_shard", judge_shard, shards)
    out["escalate"] = call("escalate", escalate, run)
    out["fold_shard"] = shard_totals(each_shard(run, call, "fold_shard", fold_shard, shards))
    out["combine"] = call("combine", combine, run, shard_results, out["escalate"])
    out["validate"] = call("validate", validate, run)
    out["publish"] = call("publish", publish, run)
    out["monitor"] = call("monitor", monitor, run)
    out["report"] = call("report", report, run)
    out["record_run"] = call("record_run", record_run, run, out["publish"])
    return out


def complete_published(run: DayRun) -> dict[str, Any]:
    """Finish a published run that was cut off after its publish commit (`run.run_id` is the run the
    day is published with): take the day, remove leftover staging, and run the steps after the
    commit it has not completed (`runs.missing_after_publish`), so the report and alerts match the
    rows. Returns the steps it completed (none when the run had finished)."""
    missing = runs.missing_after_publish(run.engine, run.run_id, AFTER_PUBLISH)
    if not missing:
        return {"run_id": run.run_id, "completed": []}
    generation, _ = take_day(run)
    runs.record_lock_generation(run.engine, run.run_id, run.day, generation)
    staging.clean_staging(run.engine, run.run_id)
    out: dict[str, Any] = {"run_id": run.run_id, "completed": missing}
    for name in missing:
        if name == "record_run":
            with run.engine.connect() as conn:
                out[name] = record_run(run, read_model.published_row_counts(conn, run.day))
        else:
            out[name] = {"monitor": monitor, "report": report}[name](run)
    return out
