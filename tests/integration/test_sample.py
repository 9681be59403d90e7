"""The bundled sample-data generator (`citecheck.demo`): determinism, pinned output, turn shape,
broken lines, failure kinds, the dated step change, and agreement of its recorded judgments with
the real parser, structural checks and pipeline."""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import json
import os
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

from citecheck import demo
from citecheck.cli import EXIT_SKIPPED
from citecheck.cli import main as cli_main
from citecheck.core.config import Config, load_config
from citecheck.core.parsing import parse_answer, parse_plain
from citecheck.core.pipeline import score
from citecheck.core.structural import check_worthiness
from citecheck.core.turns import Skipped, parse_line, read_jsonl, turn_from_dict
from citecheck.judges.recorded import from_spec

REPO = Path(__file__).resolve().parents[2]
START = dt.date(2026, 11, 23)
DAYS = 7
CONFIG = Config(refusals=demo.REFUSAL_SENTENCES)
REQUIRED = ("turn_id", "conversation_id", "turn_index", "answered_at", "question", "answer",
            "answer_format", "attributes")


@pytest.fixture(scope="module")
def week() -> demo.Sample:
    return demo.generate(START, DAYS)


@pytest.fixture(scope="module")
def scored_week(week):
    turns = [turn_from_dict(t) for t in week.turns]
    return score(turns, from_spec(demo.judge_spec(week)), CONFIG)


def _parsed(turn_dict):
    turn = turn_from_dict(turn_dict)
    if turn.answer_format == "anthropic_blocks":
        return parse_plain(turn.answer, [(c.start, c.end, c.label) for c in turn.native_citations], CONFIG)
    return parse_answer(turn.answer, CONFIG)


def _dump(s: demo.Sample) -> str:
    return json.dumps([s.turns, s.malformed_lines, s.judgments, s.malformed_kinds, s.malformed_at])


def test_same_arguments_give_identical_output_and_seeds_differ():
    a = demo.generate(START, 2, turns_per_day=80, seed=3)
    b = demo.generate(START, 2, turns_per_day=80, seed=3)
    c = demo.generate(START, 2, turns_per_day=80, seed=4)
    assert _dump(a) == _dump(b)
    assert a.expected == b.expected
    assert [t["answer"] for t in a.turns] != [t["answer"] for t in c.turns]


def test_each_day_depends_only_on_seed_and_date():
    both = demo.generate(START, 2, turns_per_day=60)
    first = demo.generate(START, 1, turns_per_day=60)
    second = demo.generate(START + dt.timedelta(days=1), 1, turns_per_day=60)
    assert both.turns == first.turns + second.turns
    assert both.malformed_lines == first.malformed_lines + second.malformed_lines


def test_generate_rejects_empty_ranges():
    with pytest.raises(ValueError):
        demo.generate(START, 0)
    with pytest.raises(ValueError):
        demo.generate(START, 1, turns_per_day=0)


def test_a_week_at_300_turns_a_day_generates_the_whole_week():
    # its speed is measured by bench/bench_demo_generate.py, never timed in a test
    data = demo.generate(START + dt.timedelta(days=70), DAYS, turns_per_day=300, seed=9)
    assert len(data.turns) > 2000


def test_every_valid_turn_has_the_json_shape(week):
    ids = [t["turn_id"] for t in week.turns]
    assert len(ids) == len(set(ids))
    formats = Counter(t["answer_format"] for t in week.turns)
    assert formats["markers"] > 0.9 * len(week.turns) and formats["anthropic_blocks"] >= 20
    for t in week.turns:
        for key in REQUIRED:
            assert key in t, (t["turn_id"], key)
        assert isinstance(t["turn_id"], str) and isinstance(t["conversation_id"], str)
        assert isinstance(t["turn_index"], int) and t["turn_index"] >= 1
        assert dt.datetime.fromisoformat(t["answered_at"]).utcoffset() == dt.timedelta(0)
        assert isinstance(t["question"], str) and t["question"]
        assert set(t["attributes"]) == {"model", "prompt_version", "product", "locale"}
        if t["answer_format"] == "markers":
            assert isinstance(t["answer"], str) and t["answer"].strip()
            context = t["context"]
            assert 3 <= len(context) <= 6
            assert [p["label"] for p in context] == [f"S{i + 1}" for i in range(len(context))]
            assert len({p["document_id"] for p in context}) == len(context)
            for p in context:
                assert all(isinstance(p[k], str) and p[k] for k in ("label", "source", "text"))
        else:
            assert t["answer"] == ""
            assert all(isinstance(d["title"], str) and d["text"] for d in t["request_documents"])
            assert all(b["type"] == "text" and isinstance(b["text"], str) for b in t["answer_blocks"])
        turn_from_dict(t)
    native = [t for t in week.turns if t["answer_format"] == "anthropic_blocks"]
    cited = [t for t in native if any(b.get("citations") for b in t["answer_blocks"])]
    assert len(cited) > 0.8 * len(native)


def test_native_pointers_are_valid_except_the_pointer_problems(week):
    seen = Counter()
    for t in week.turns:
        if t["answer_format"] != "anthropic_blocks":
            continue
        turn = turn_from_dict(t)
        for parsed, e in zip(_parsed(t), week.expected[t["turn_id"]], strict=True):
            spans = [c for c in turn.native_citations if c.start < parsed.end and c.end > parsed.start]
            assert len(spans) == len(e.labels), t["turn_id"]
            if e.kind == "pointer_problem":
                assert spans and not any(c.valid for c in spans), (t["turn_id"], e.text)
            else:
                assert all(c.valid for c in spans), (t["turn_id"], e.text)
            seen[e.kind] += 1
    assert seen["pointer_problem"] >= 5 and seen["supported"] > 50


def test_malformed_lines_are_really_malformed(week):
    assert len(week.malformed_lines) == len(week.malformed_kinds) == len(week.malformed_at)
    share = len(week.malformed_lines) / (len(week.malformed_lines) + len(week.turns))
    assert 0.005 <= share <= 0.02
    assert set(week.malformed_kinds) == set(demo.MALFORMED_KINDS)
    for line, kind in zip(week.malformed_lines, week.malformed_kinds, strict=True):
        assert "\n" not in line
        assert isinstance(parse_line(line), Skipped), kind
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            assert kind in ("truncated_json", "python_repr")
            continue
        if not isinstance(data, dict):
            assert kind == "not_an_object"
        elif not isinstance(data.get("turn_id"), str) or not data["turn_id"]:
            assert kind in ("missing_turn_id", "empty_turn_id")
        elif data.get("answer_format") == "anthropic_blocks":
            assert "request_documents" not in data and kind == "native_without_documents"
        elif data.get("answer_format") != "markers":
            assert kind == "unknown_answer_format"
        elif not isinstance(data.get("context"), list):
            assert kind == "context_not_list"
        elif not isinstance(data.get("answer"), str):
            assert kind == "answer_not_string"
        else:
            assert kind == "passage_without_label"
            assert any("label" not in p for p in data["context"])


def test_every_failure_kind_occurs_at_a_realistic_rate(week):
    kinds = Counter(e.kind for sentences in week.expected.values() for e in sentences)
    assert set(kinds) == set(demo.KINDS)
    claims = sum(n for k, n in kinds.items() if k not in ("offer", "question", "refusal"))
    assert kinds["supported"] / claims > 0.55
    for kind in ("padded", "miscited", "uncited", "unsupported", "joint", "unknown_label", "stale_label"):
        assert 0.002 < kinds[kind] / claims < 0.15, kind
    refusals = sum(any(e.kind == "refusal" for e in s) for s in week.expected.values())
    assert 0.01 < refusals / len(week.turns) < 0.06


def test_answers_show_the_habits_the_parser_must_handle(week):
    answers = [t["answer"] for t in week.turns if t["answer_format"] == "markers"]
    assert sum(a.startswith("- ") for a in answers) > 50
    assert any("\n\n" in a for a in answers)
    assert any(", S" in a for a in answers)  # [S1, S3]
    assert any(". [S" in a for a in answers)  # marker after the full stop
    assert any("e.g. " in a for a in answers) and any("approx. " in a for a in answers)
    assert any(a.count("[S") >= 3 for a in answers)
    repeated = Counter(answers)
    assert sum(n for n in repeated.values() if n > 1) > 50  # FAQ traffic: identical answers
    for t in week.turns:
        styles = {demo.marker_style(t["attributes"])}
        if "comma" in styles:
            assert "][" not in t["answer"], t["turn_id"]


def test_answered_at_spreads_over_each_day_and_conversations_cross_midnight(week, scored_week):
    days = Counter(t["answered_at"][:10] for t in week.turns)
    assert sorted(days) == [(START + dt.timedelta(days=i)).isoformat() for i in range(DAYS)]
    assert all(250 <= n <= 350 for n in days.values())
    for day in days:
        hours = {int(t["answered_at"][11:13]) for t in week.turns if t["answered_at"].startswith(day)}
        assert len(hours) >= 18
    by_conv = defaultdict(list)
    for t in week.turns:
        by_conv[t["conversation_id"]].append(t)
    spanning = [c for c, ts in by_conv.items() if len({t["answered_at"][:10] for t in ts}) > 1]
    assert len(spanning) >= DAYS - 1
    stale_after_midnight = 0
    for scored in scored_week.scored:
        turn = scored.structured.turn
        earlier = [t for t in by_conv[turn.conversation_id] if t["turn_index"] < turn.turn_index]
        crosses = earlier and earlier[-1]["answered_at"][:10] < turn.answered_at[:10]
        if crosses and any(v.sentence.stale_labels for v in scored.verdicts):
            stale_after_midnight += 1
    assert stale_after_midnight >= DAYS - 1


def test_parser_sees_exactly_the_generated_sentences_and_labels(week):
    statements = {row["statement"] for row in week.judgments}
    for t in week.turns:
        parsed = _parsed(t)
        expected = week.expected[t["turn_id"]]
        assert [(p.text, p.labels) for p in parsed] == [(e.text, e.labels) for e in expected], t["answer"]
        for p in parsed:
            assert p.text in statements


def test_check_worthiness_rules_agree_with_the_generator(week, tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(demo.config_toml(), encoding="utf-8")
    config = load_config(path)
    assert config.refusals == demo.REFUSAL_SENTENCES
    for sentences in week.expected.values():
        for e in sentences:
            worthy, reason = check_worthiness(e.text, config)
            assert worthy == e.check_worthy, e.text
            if e.kind == "refusal":
                assert reason == "refusal"


def test_recorded_judgments_give_every_sentence_its_intended_verdict(week, scored_week):
    assert not scored_week.to_json()["invariant_violations"]
    for scored in scored_week.scored:
        expected = week.expected[scored.turn_id]
        assert [v.verdict for v in scored.verdicts] == [e.verdict for e in expected], scored.turn_id
    verdicts = Counter(v.verdict for s in scored_week.scored for v in s.verdicts)
    assert verdicts["unjudged"] == 0
    for kind in ("supported", "miscited", "uncited_supported", "unsupported", "not_check_worthy"):
        assert verdicts[kind] > 0


def test_padded_and_joint_citations_get_alce_credit(scored_week, week):
    checked = Counter()
    for scored in scored_week.scored:
        for e, v in zip(week.expected[scored.turn_id], scored.verdicts, strict=True):
            if e.kind == "padded":
                assert sum(v.credited.values()) == 1, e
                checked["padded"] += 1
            elif e.kind == "joint":
                assert all(v.credited.values()) and len(v.credited) == 2, e
                checked["joint"] += 1
    assert checked["padded"] > 10 and checked["joint"] > 10


def test_full_judge_file_covers_any_dates_and_seeds_without_contradiction():
    spec = demo.full_judge_spec()
    rows = {}
    for row in spec["judgments"]:
        assert rows.setdefault(row["statement"], row) == row
    assert len(rows) == len(spec["judgments"])
    other = demo.generate(dt.date(2027, 3, 1), 2, turns_per_day=150, seed=42)
    for row in other.judgments:
        assert rows[row["statement"]] == row
    report = score([turn_from_dict(t) for t in other.turns], from_spec(spec), CONFIG)
    for scored in report.scored:
        assert [v.verdict for v in scored.verdicts] == [e.verdict for e in other.expected[scored.turn_id]]


def test_written_files_round_trip(tmp_path):
    data = demo.generate(START, 2, turns_per_day=120)
    turns_path, judge_path = tmp_path / "turns.jsonl", tmp_path / "judge.json"
    written = demo.write_turns_jsonl(data, turns_path)
    assert written == len(data.turns) + len(data.malformed_lines)
    read = [item for _, item in read_jsonl(str(turns_path))]
    assert [t.turn_id for t in read if not isinstance(t, Skipped)] == [t["turn_id"] for t in data.turns]
    bad_positions = [i for i, item in enumerate(read) if isinstance(item, Skipped)]
    assert len(bad_positions) == len(data.malformed_lines)
    assert bad_positions[-1] < len(read) - 1 or bad_positions[0] > 0  # interleaved, not appended
    clean = tmp_path / "clean.jsonl"
    assert demo.write_turns_jsonl(data, clean, include_malformed=False) == len(data.turns)
    demo.write_judge(data, judge_path)
    spec = json.loads(judge_path.read_text(encoding="utf-8"))
    assert spec["kind"] == "recorded" and spec["judgments"] == data.judgments
    assert from_spec(spec).stats()["statements"] == len(data.judgments)


def test_cli_sample_then_score_runs_offline_end_to_end(tmp_path):
    out = tmp_path / "sample"
    assert cli_main(["sample", "--start", "2026-11-23", "--days", "1", "--turns-per-day", "100",
                     "--out", str(out)]) == 0
    result = tmp_path / "score.json"
    code = cli_main(["score", "--turns", str(out / "turns.jsonl"), "--judge", str(out / "judge.json"),
                     "--config", str(out / "config.toml"), "--out", str(result)])
    assert code == EXIT_SKIPPED  # the broken lines are reported, everything else is scored
    payload = json.loads(result.read_text(encoding="utf-8"))
    assert payload["run"]["turns_scored"] == 100
    assert payload["run"]["turns_skipped"] == len(payload["skipped"]) >= 1
    assert payload["stats"]["missing_statements"] == 0
    assert not payload["invariant_violations"]
    recall = payload["metrics"]["micro"]["citation_recall"]
    assert 0.5 < recall < 0.95


# --- pinned output: digests computed with the generator as it was before it moved to citecheck.demo ---

# `citecheck sample --start 2026-11-23 --days 3` (turns per day 300, seed 0): the files' SHA-256
PINNED_CLI_FILES = {
    "turns.jsonl": "3a8e15d90b5686c49e55967a621b6722016298716d3feaf357a4952e20d71dc6",
    "judge.json": "152df897c22f7172bd269e4cf6d32b1a023c7357fd0a648d053e36658c128277",
    # config.toml: since the demo ships its acceptance criteria (issue 30, demo.files.DEMO_CRITERIA)
    "config.toml": "9cf086239733ac5ebd880d8a63e84bb579d3c2974b4220962a9d32d462325c49",
}
# SHA-256 of write_turns_jsonl + write_judge bytes of generate(day, days, turns_per_day, seed)
PINNED_DAYS = {
    ("2026-11-23", 1, 300, 0): "8812b30e3e48b07f118e54dd0c6eb0da8335dbdddf62b1edd94322448b6475b3",
    ("2026-11-29", 1, 300, 0): "2b0ace9ac0204aa180abb04230a103cbd4f6faad66aaad56195b6ab990946f76",
}
# the same for days on and after the bundled step change, generated without any change
PINNED_WITHOUT_CHANGES = {
    ("2026-11-30", 1, 300, 0): "67920915c81775733172f57bdc737610fa0d134c2ef4c818dbcf141021f0038e",
    ("2026-12-05", 2, 120, 5): "9233c275c52592f263d1afe8f8d1ee5db42bf6797b64beb3cdab5705d553d1c1",
}
CHANGE_DAY = dt.date(2026, 11, 30)


def _digest(data: demo.Sample, folder) -> str:
    demo.write_turns_jsonl(data, folder / "turns.jsonl")
    demo.write_judge(data, folder / "judge.json")
    return hashlib.sha256((folder / "turns.jsonl").read_bytes() + (folder / "judge.json").read_bytes()).hexdigest()


def test_cli_sample_files_are_byte_identical_to_the_pinned_output(tmp_path):
    assert cli_main(["sample", "--start", "2026-11-23", "--days", "3", "--out", str(tmp_path)]) == 0
    for name, digest in PINNED_CLI_FILES.items():
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest, name
    assert demo.sample_files(tmp_path).config.read_text(encoding="utf-8") == demo.config_toml()


@pytest.mark.parametrize(("start", "days", "per_day", "seed"), sorted(PINNED_DAYS))
def test_days_before_the_step_change_are_byte_identical(tmp_path, start, days, per_day, seed):
    day = dt.date.fromisoformat(start)
    assert day + dt.timedelta(days=days) <= CHANGE_DAY
    data = demo.generate(day, days, per_day, seed=seed)
    assert _digest(data, tmp_path) == PINNED_DAYS[(start, days, per_day, seed)]


@pytest.mark.parametrize(("start", "days", "per_day", "seed"), sorted(PINNED_WITHOUT_CHANGES))
def test_without_changes_later_days_are_byte_identical_too(tmp_path, start, days, per_day, seed):
    data = demo.generate(dt.date.fromisoformat(start), days, per_day, seed=seed, changes=())
    assert _digest(data, tmp_path) == PINNED_WITHOUT_CHANGES[(start, days, per_day, seed)]


# --- the bundled step change (issue 13): a template change on a documented date ---

def _marker_counts(data: demo.Sample, day: str) -> Counter:
    """From the generated turns of one day, through the real parser: citations of markers answers,
    those naming no passage of the context, check-worthy sentences with a label that resolves,
    and those with three or more markers."""
    c = Counter()
    for t in data.turns:
        if t["answer_format"] != "markers" or not t["answered_at"].startswith(day):
            continue
        known = {p["label"] for p in t["context"]}
        for parsed, e in zip(_parsed(t), data.expected[t["turn_id"]], strict=True):
            c["citations"] += len(parsed.labels)
            c["unknown"] += sum(lab not in known for lab in parsed.labels)
            if e.check_worthy and any(lab in known for lab in parsed.labels):
                c["attached"] += 1
                c["three_plus"] += len(parsed.labels) >= 3
    return c


@pytest.fixture(scope="module")
def around_the_change():
    return demo.generate(CHANGE_DAY - dt.timedelta(days=4), 8)


def test_bundled_change_is_on_its_documented_date():
    (change,) = demo.BUNDLED_CHANGES
    assert change.start == CHANGE_DAY
    assert demo.change_on(CHANGE_DAY - dt.timedelta(days=1), demo.BUNDLED_CHANGES) is None
    assert demo.change_on(CHANGE_DAY + dt.timedelta(days=40), demo.BUNDLED_CHANGES) is change


def test_unknown_labels_and_three_marker_sentences_step_up_on_the_change_day(around_the_change):
    days = [(CHANGE_DAY + dt.timedelta(days=i)).isoformat() for i in range(-4, 4)]
    counts = {d: _marker_counts(around_the_change, d) for d in days}
    unknown = {d: c["unknown"] / c["citations"] for d, c in counts.items()}
    three = {d: c["three_plus"] / c["attached"] for d, c in counts.items()}
    before, after = days[:4], days[4:]

    def mean(values, ds):
        return sum(values[d] for d in ds) / len(ds)

    assert 0.01 < mean(unknown, before) < 0.04 and 0.05 < mean(unknown, after) < 0.10
    assert mean(unknown, after) > 2 * mean(unknown, before)
    assert max(unknown[d] for d in before) < min(unknown[d] for d in after)
    assert mean(three, before) < 0.04 and 0.07 < mean(three, after) < 0.15
    assert max(three[d] for d in before) < min(three[d] for d in after)
    # the metrics the job publishes (and the monitor reads) show the same step
    judge = from_spec(demo.judge_spec(around_the_change))
    micro = {}
    for d in (before[-1], after[0]):
        turns = [turn_from_dict(t) for t in around_the_change.turns if t["answered_at"].startswith(d)]
        micro[d] = score(turns, judge, CONFIG).to_json()["metrics"]["micro"]
    assert micro[after[0]]["unknown_label_rate"] > micro[before[-1]]["unknown_label_rate"] + 0.03
    assert micro[after[0]]["multi_citation_share"] > micro[before[-1]]["multi_citation_share"] + 0.05


def test_after_the_change_recorded_judges_still_cover_every_sentence_with_its_verdict(around_the_change):
    later = [t for t in around_the_change.turns if t["answered_at"] >= CHANGE_DAY.isoformat()]
    full = {row["statement"]: row for row in demo.full_judge_spec()["judgments"]}
    for row in around_the_change.judgments:
        assert full[row["statement"]] == row
    for spec in (demo.judge_spec(around_the_change), demo.full_judge_spec()):
        report = score([turn_from_dict(t) for t in later], from_spec(spec), CONFIG)
        assert report.to_json()["stats"]["missing_statements"] == 0
        assert not report.to_json()["invariant_violations"]
        for scored in report.scored:
            expected = around_the_change.expected[scored.turn_id]
            assert [v.verdict for v in scored.verdicts] == [e.verdict for e in expected], scored.turn_id


def test_parser_sees_the_padded_and_ghost_labels_the_generator_wrote(around_the_change):
    later = [t for t in around_the_change.turns if t["answered_at"] >= CHANGE_DAY.isoformat()]
    for t in later:
        assert [(p.text, p.labels) for p in _parsed(t)] == [(e.text, e.labels)
                                                          for e in around_the_change.expected[t["turn_id"]]]


def test_changes_are_a_parameter_of_the_generator():
    start = dt.date(2027, 1, 10)
    plain = demo.generate(start, 2, 120, seed=1, changes=())
    stepped = demo.generate(start, 2, 120, seed=1,
                            changes=[demo.StepChange(start + dt.timedelta(days=1), 0.5, 0.5)])
    first_day = start.isoformat()
    assert [t for t in plain.turns if t["answered_at"].startswith(first_day)] == \
        [t for t in stepped.turns if t["answered_at"].startswith(first_day)]
    second = (start + dt.timedelta(days=1)).isoformat()
    assert _marker_counts(stepped, second)["unknown"] > 3 * max(1, _marker_counts(plain, second)["unknown"])


@pytest.mark.parametrize("entry", [
    {"extra_unknown_label_rate": 0.1},
    {"from": "2026-11-30", "unknown_label_rate": 0.1},
    {"from": "2026-11-30", "three_marker_share": 1.5},
    {"from": "2026-11-30", "extra_unknown_label_rate": "high"},
    {"from": "not a date"},
])
def test_bad_change_entries_are_refused_clearly(entry):
    with pytest.raises(ValueError, match="change"):
        demo.StepChange.from_mapping(entry)


def test_every_data_file_ships_as_package_data():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["citecheck.demo"]
    package = REPO / "include" / "citecheck" / "demo"
    data = [p.relative_to(package).as_posix() for p in (package / "data").iterdir()]
    assert data and all(any(fnmatch.fnmatch(name, pat) for pat in patterns) for name in data)


@pytest.fixture(params=["sqlite", "postgresql"])
def warehouse_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/warehouse.sqlite"
    return request.getfixturevalue("pg_warehouse_url")


def test_demo_history_publishes_the_step_through_the_cli(warehouse_url, tmp_path, monkeypatch, capsys):
    """bin/demo's path without Airflow: write the sample, load it, backfill; the published
    metrics of the change day show the step against the day before."""
    files = demo.sample_files(tmp_path / "sample")
    before, after = (CHANGE_DAY - dt.timedelta(days=1)).isoformat(), CHANGE_DAY.isoformat()
    common = ["--start", before, "--days", "2", "--turns-per-day", "150"]
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", warehouse_url)
    monkeypatch.setenv("CITECHECK_JUDGE", str(files.judge))
    monkeypatch.setenv("CITECHECK_CONFIG", str(files.config))
    assert cli_main(["sample", *common, "--out", str(files.turns.parent)]) == 0
    assert cli_main(["load-sample", *common]) == 0
    assert cli_main(["backfill", "--from", before, "--to", after]) == 0
    assert "2 published" in capsys.readouterr().out
    micro = {}
    for day in (before, after):
        assert cli_main(["metrics", "--day", day, "--json"]) == 0
        micro[day] = {r["metric"]: r["value"] for r in json.loads(capsys.readouterr().out)
                      if r["slice_name"] == "all" and r["averaging"] == "micro"}
    assert micro[after]["unknown_label_rate"] > micro[before]["unknown_label_rate"] + 0.03
    assert micro[after]["multi_citation_share"] > micro[before]["multi_citation_share"] + 0.05
    assert micro[before]["unjudged_rate"] == micro[after]["unjudged_rate"] == 0


def test_job_reads_a_written_sample_through_its_files(tmp_path):
    data = demo.generate(START, 1, turns_per_day=40)
    files = demo.write_sample(data, tmp_path / "written")
    assert files == demo.sample_files(tmp_path / "written") and files.turns.is_file()
    settings = demo.sample_settings(tmp_path / "written")
    assert settings.judge_spec == demo.judge_spec(data)
    assert settings.config == demo.sample_config() and settings.config.refusals == demo.REFUSAL_SENTENCES
