"""Bad input never crashes a day: every bad turn of tests/bad_input/corpus.py is scored or skipped
with its specific reason, the good turns around them are scored as usual, and the counts
reconcile (turns read = scored + skipped), through `citecheck score` reading the corpus as one
JSONL file and through `citecheck load-turns` + the daily job on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from bad_input.corpus import DAY, JUDGE, NEXT, PREV, Case, bad_cases, corpus, hot_cases, native, turn, write_jsonl

from citecheck import job
from citecheck import warehouse as W
from citecheck.cli import main
from citecheck.warehouse import tables as T

CORPUS = corpus()
KINDS = {c.kind for c in bad_cases()}


def test_the_corpus_has_at_least_50_distinct_kinds_of_bad_input():
    assert len(KINDS) >= 50
    outcomes = {c.outcome for c in CORPUS} | {c.warehouse for c in CORPUS}
    assert outcomes == {"scored", "skipped", "same", "rejected", "superseded", "late"}
    assert all(c.check for c in CORPUS if c.outcome == "scored"), "every scored case says what it must look like"
    assert all(c.reason for c in CORPUS if c.outcome == "skipped")
    assert all(c.expected_warehouse_reason for c in CORPUS if c.warehouse == "rejected")


def _check(case: Case, view: dict[str, Any], *, cli: bool) -> list[str]:
    problems = []
    for check in (case.check, case.cli_check if cli else None):
        if check is not None:
            try:
                check(view)
            except AssertionError as exc:
                problems.append(f"{case.kind}: {exc}"[:400])
    return problems


# --- the CLI -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cli_run(tmp_path_factory) -> dict[str, Any]:
    """`citecheck score` on the whole corpus, once: exit code, report, line numbers (its time is
    `bench/bench_bad_input.py`'s)."""
    folder = tmp_path_factory.mktemp("cli")
    numbers = write_jsonl(CORPUS, folder / "turns.jsonl")
    (folder / "judge.json").write_text(json.dumps(JUDGE))
    code = main(["score", "--turns", str(folder / "turns.jsonl"), "--judge", str(folder / "judge.json"),
                 "--out", str(folder / "report.json")])
    return {"code": code, "report": json.loads((folder / "report.json").read_text(encoding="utf-8")),
            "numbers": numbers}


def test_cli_counts_reconcile_and_the_exit_code_says_lines_were_skipped(cli_run):
    run, numbers = cli_run["report"]["run"], cli_run["numbers"]
    assert cli_run["code"] == 1  # the run finished; some lines were skipped
    assert run["turns_read"] == run["turns_scored"] + run["turns_skipped"] == len(numbers) == len(CORPUS)
    assert run["turns_skipped"] == len(cli_run["report"]["skipped"]) == sum(c.outcome == "skipped" for c in CORPUS)
    assert run["turns_scored"] == len(cli_run["report"]["turns"]) == sum(c.outcome == "scored" for c in CORPUS)
    assert {s["line"] for s in cli_run["report"]["skipped"]} <= set(numbers), "blank lines are not turns"


def test_cli_scores_or_skips_every_case_with_its_reason(cli_run):
    report, numbers = cli_run["report"], cli_run["numbers"]
    skipped = {s["line"]: s for s in report["skipped"]}
    scored = {t["turn_id"]: t for t in report["turns"]}
    failures: list[str] = []
    for number, case in numbers.items():
        if case.outcome == "skipped":
            reason = skipped.get(number, {}).get("reason")
            if reason is None or case.reason not in reason:
                failures.append(f"{case.kind} (line {number}): expected skip {case.reason!r}, got {reason!r}")
        elif number in skipped or case.turn_id not in scored:
            failures.append(f"{case.kind} (line {number}): expected scored, got {skipped.get(number)}")
        else:
            failures += _check(case, scored[case.turn_id], cli=True)
    assert not failures, "\n".join(failures)


def test_cli_good_turns_around_the_bad_ones_are_all_supported(cli_run):
    turns = {t["turn_id"]: t for t in cli_run["report"]["turns"]}
    goods = [c for c in CORPUS if c.kind == "good"]
    assert len(goods) > 30
    assert all([s["verdict"] for s in turns[c.turn_id]["sentences"]] == ["supported"] for c in goods)
    assert not cli_run["report"]["invariant_violations"]


# --- the warehouse: load-turns, then the daily job --------------------------------------------------

def _load_file(cases: list[Case], path: Path, capsys) -> tuple[int, dict[str, Any], dict[int, Case]]:
    numbers = write_jsonl(cases, path)
    capsys.readouterr()
    code = main(["load-turns", "--file", str(path)])
    return code, json.loads(capsys.readouterr().out), numbers


def _day_state(engine, day: str) -> dict[str, Any]:
    """What the day published: its run row, skipped reasons and sentence rows per turn."""
    date = dt.date.fromisoformat(day)
    with engine.connect() as conn:
        run = conn.execute(sa.select(T.runs).where(T.runs.c.day == date, T.runs.c.status == "published")
                           .order_by(T.runs.c.started_at.desc())).mappings().first()
        skipped = dict(conn.execute(sa.select(T.skipped_turns.c.turn_id, T.skipped_turns.c.reason)
                                    .where(T.skipped_turns.c.day == date)).all())
        rows = conn.execute(sa.select(T.sentence_verdicts).where(T.sentence_verdicts.c.day == date)
                            .order_by(T.sentence_verdicts.c.turn_id, T.sentence_verdicts.c.sentence_index)
                            ).mappings().all()
    views: dict[str, dict[str, Any]] = defaultdict(lambda: {"sentences": []})
    for r in rows:
        views[r["turn_id"]]["sentences"].append({k: r[k] for k in (
            "text", "labels", "unknown_labels", "stale_labels", "check_worthy", "verdict")})
    return {"run": run, "skipped": skipped, "views": views}


def _expect_day(state: dict[str, Any], cases: list[Case]) -> list[str]:
    """Every case of the day scored or skipped as expected; the run's counts reconcile."""
    run, skipped, views = state["run"], state["skipped"], state["views"]
    failures = []
    if run is None:
        return ["the day was not published"]
    if not run["turns_read"] == run["turns_scored"] + run["turns_skipped"] == len(cases):
        failures.append(f"runs row: read {run['turns_read']} scored {run['turns_scored']} skipped "
                        f"{run['turns_skipped']}, expected {len(cases)} turns")
    if run["turns_skipped"] != sum(c.outcome == "skipped" for c in cases) or len(skipped) != run["turns_skipped"]:
        failures.append(f"skipped: runs {run['turns_skipped']}, table {len(skipped)}")
    for case in cases:
        if case.outcome == "skipped":
            reason = skipped.get(case.turn_id)
            if reason is None or case.expected_warehouse_reason not in reason:
                failures.append(f"{case.kind}: expected skip {case.expected_warehouse_reason!r}, got {reason!r}")
        elif case.turn_id in skipped:
            failures.append(f"{case.kind}: expected scored, skipped with {skipped[case.turn_id]!r}")
        else:
            failures += _check(case, views[case.turn_id], cli=False)
    return failures


def _settings() -> job.JobSettings:
    # the recorded judge knows the good statement only: the odd sentences are unjudged by design
    return job.JobSettings(judge_spec=JUDGE, unjudged_limit=1.0, shards=2)


def test_load_turns_then_the_day_job_scores_or_skips_every_case(engine, tmp_path, capsys):
    W.load_turns(engine, [c.preload for c in CORPUS if c.preload])
    first = [c for c in CORPUS if c.warehouse != "late"]
    code, loaded, numbers = _load_file(first, tmp_path / "turns.jsonl", capsys)

    # load-turns: unstorable lines refused with the reason, earlier duplicates reported, the rest stored
    malformed = {m["line"]: m["reason"] for m in loaded["malformed"]}
    duplicates = {d["line"]: d for d in loaded["duplicates"]}
    failures = []
    for number, case in numbers.items():
        if case.warehouse == "rejected":
            if case.expected_warehouse_reason not in malformed.get(number, ""):
                failures.append(f"{case.kind}: expected load refusal {case.expected_warehouse_reason!r}, "
                                f"got {malformed.get(number)!r}")
        elif case.warehouse == "superseded":
            if duplicates.get(number, {}).get("turn_id") != case.turn_id:
                failures.append(f"{case.kind}: expected a duplicate replaced by a later line, got {duplicates}")
        elif number in malformed or number in duplicates:
            failures.append(f"{case.kind}: refused at load: {malformed.get(number) or duplicates[number]}")
    assert not failures, "\n".join(failures)
    assert code == 1
    assert len(numbers) == loaded["loaded"] + len(malformed) + len(duplicates)
    assert [(r["turn_id"], r["previous_answered_at"][:10], r["answered_at"][:10]) for r in loaded["replaced"]] == [
        ("reload-days", PREV, DAY)]

    # the day's job: every stored case of the day scored or skipped with its reason, counts reconcile
    stored = [c for c in first if c.warehouse == "same"]
    job.run_day(engine, dt.date.fromisoformat(DAY), _settings())
    failures = _expect_day(_day_state(engine, DAY), [c for c in stored if c.day == DAY])
    assert not failures, "\n".join(failures)

    # the zone cases land on their UTC day; the reloaded and duplicated turns left the previous day
    for day in (NEXT, PREV):
        job.run_day(engine, dt.date.fromisoformat(day), _settings())
        failures = _expect_day(_day_state(engine, day), [c for c in stored if c.day == day])
        assert not failures, "\n".join(failures)
    assert set(_day_state(engine, PREV)["views"]) == {"good-prev"}

    # late data: a turn of a published day loaded afterwards is picked up by the rerun
    late = [c for c in CORPUS if c.warehouse == "late"]
    code, late_load, _ = _load_file(late, tmp_path / "late.jsonl", capsys)
    assert code == 0 and late_load["loaded"] == 1 and late_load["replaced"] == []
    job.run_day(engine, dt.date.fromisoformat(NEXT), _settings())
    failures = _expect_day(_day_state(engine, NEXT), [c for c in stored + late if c.day == NEXT])
    assert not failures, "\n".join(failures)


def test_one_load_with_the_same_turn_id_twice_keeps_the_later_and_says_so(engine):
    report = W.load_turns_report(engine, [turn("twice", answer="First [S1]."), turn("other"),
                                             turn("twice", answer="Second [S2].")], batch_size=2)
    assert report.loaded == 2 and report.duplicates == ["twice"] and report.replaced == []
    with engine.connect() as conn:
        kept = conn.execute(sa.select(T.source_turns.c.answer).where(T.source_turns.c.turn_id == "twice")).scalar()
    assert kept == "Second [S2]."
    again = W.load_turns_report(engine, [turn("twice", answered_at=f"{NEXT}T01:00:00Z")])
    assert again.loaded == 1 and again.duplicates == []
    assert [(r["turn_id"], r["previous_answered_at"][:10], r["answered_at"][:10]) for r in again.replaced] == [
        ("twice", DAY, NEXT)]
    with engine.connect() as conn:
        rows = conn.execute(sa.select(T.source_turns.c.turn_id, T.source_turns.c.answer)).all()
        passages = conn.execute(sa.select(sa.func.count()).select_from(T.source_passages)).scalar_one()
    assert sorted(rows) == [("other", "The nightly hotel cap is 220 euros [S1]."), ("twice", "The nightly hotel cap "
                                                                                             "is 220 euros [S1].")]
    assert passages == 6, "each turn keeps exactly its own context set"


def test_unstorable_characters_are_replaced_not_fatal(engine):
    """NUL and lone surrogates cannot be written to PostgreSQL text; NaN not to its json type."""
    bad = turn("nul", answer="Cap\u0000 is 220 [S1].", attributes={"score": float("nan"), "\ud800k": "\udfff"},
               context=[{"label": "S1", "text": "a\u0000b", "source": "\ud83d"}])
    nat = native("nat-nul")
    nat["answer_blocks"][0]["text"] = nat["answer_blocks"][0]["text"].replace("hotel", "hot\u0000l")
    assert W.load_turns(engine, [bad, nat]) == 2
    with engine.connect() as conn:
        answer, attributes = conn.execute(sa.select(T.source_turns.c.answer, T.source_turns.c.attributes)
                                          .where(T.source_turns.c.turn_id == "nul")).one()
    assert answer == "Cap\ufffd is 220 [S1]." and attributes == {"score": "nan", "\ufffdk": "\ufffd"}


# --- the former hot spots (their times: bench/bench_hot_spots.py) ---------------------------------

def test_big_answers_structure_whole():
    """With the size limits lifted (the sentence cap raised to 1,000,000), the parser and structural
    checks take a 10 MB answer, 100,000 distinct markers, nested markers and 20,000 native blocks,
    and lose nothing of them (these were quadratic once; `bench/bench_hot_spots.py` shows they are
    linear now)."""
    from citecheck.core.config import Config
    from citecheck.core.structural import structure_turn
    from citecheck.core.turns import turn_from_dict

    cfg = Config(max_answer_chars=0, max_citations_per_turn=0, max_citations_per_sentence=0,
                 max_sentences_per_turn=1_000_000)
    built = {name: structure_turn(turn_from_dict(build(1.0), cfg.max_answer_chars), cfg)
             for name, build in hot_cases().items()}
    big = built["10 MB, 170k sentences"].sentences
    assert len(big) == 10_000_000 // len("The nightly hotel cap is 220 euros [S1]. ")
    assert all(s.labels == ("S1",) for s in big)
    [many] = built["100k distinct markers in one sentence"].sentences
    assert len(many.labels) == 100_000 and len(set(many.labels)) == 100_000
    nested = built["20k nested markers"].sentences
    assert len(nested) == 1 and nested[0].markers == 20_000
    blocks = built["20k native blocks"].sentences
    assert len(blocks) == 20_000 and all(s.labels for s in blocks)


def test_the_answer_size_limit_is_configurable():
    from citecheck.core.config import ConfigError, config_from_mapping
    from citecheck.core.turns import TurnError, turn_from_dict

    data = turn("limit", answer="The cap is 220 euros [S1]. " * 100)
    limited = config_from_mapping({"segmentation": {"max_answer_chars": 1000}})
    with pytest.raises(TurnError, match=r"answer is 2,700 characters, over the limit of 1,000"):
        turn_from_dict(data, limited.max_answer_chars)
    assert turn_from_dict(data, 0).answer == data["answer"]
    assert limited.rules_hash != config_from_mapping({}).rules_hash, "the limit changes results, so the config hash"
    with pytest.raises(ConfigError, match="non-negative integer"):
        config_from_mapping({"segmentation": {"max_answer_chars": -1}})
