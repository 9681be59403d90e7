"""Input repairs counted: characters replaced at load (NUL, lone surrogates → U+FFFD), timestamps
without a zone (and the zone assumed, `[day] assume_zone`, or refused), markers opened and never
closed: per day in `runs.stats["input_repairs"]` and in the report. The rows of each kind are in
`tests/bad_input/corpus.py` (`Case.repairs`)."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import replace

import pytest
from bad_input.corpus import DAY, JUDGE, bad_cases, good_turns, turn, write_jsonl

from citecheck import job
from citecheck.cli import main
from citecheck.core.config import Config, ConfigError, config_from_mapping
from citecheck.core.parsing import malformed_markers
from citecheck.core.turns import TurnError, parse_timestamp
from citecheck.warehouse import runs

REPAIR_KINDS = ("replaced_characters", "zoneless_timestamps", "malformed_markers")


@pytest.mark.parametrize(("text", "unclosed"), [
    ("The cap [S1 is 220 euros.", 1), ("The cap is 220 euros [S1", 1), ("A [S1, S2 list", 1), ("[S1[S2]]", 1),
    ("The cap [S1] and [S12] and [S1, S2; S3].", 0), ("Code `x[S1` and https://x.org/a[S1 b", 0),
])
def test_unclosed_markers_are_counted_outside_code_and_urls(text, unclosed):
    assert malformed_markers(text, Config()) == unclosed


def test_a_marker_syntax_without_a_closing_bracket_counts_nothing():
    config = config_from_mapping({"markers": {"pattern": r"\^(?P<labels>\d+)"}})
    assert malformed_markers("The cap ^1 and [S1 here.", config) == 0


def test_a_zoneless_timestamp_is_read_in_the_assumed_zone_or_refused():
    assert parse_timestamp("2026-11-30T23:30:00", assume_zone="Europe/Berlin") == dt.datetime(
        2026, 11, 30, 22, 30, tzinfo=dt.UTC)
    assert parse_timestamp("2026-11-30T23:30:00") == dt.datetime(2026, 11, 30, 23, 30, tzinfo=dt.UTC)
    with pytest.raises(TurnError, match="has no time zone"):
        parse_timestamp("2026-11-30T23:30:00", assume_zone="refuse")
    assert parse_timestamp("2026-11-30T23:30:00+01:00", assume_zone="refuse").hour == 22
    with pytest.raises(ConfigError, match="assume_zone"):
        config_from_mapping({"day": {"assume_zone": "Mars/Olympus"}})


def _run_day(tmp_path, monkeypatch, cases, config_text: str = "") -> dict:
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(JUDGE))
    monkeypatch.setenv("CITECHECK_JUDGE", str(judge))
    if config_text:
        config = tmp_path / "config.toml"
        config.write_text(config_text)
        monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    path = tmp_path / "turns.jsonl"
    write_jsonl(cases, path)
    assert main(["load-turns", "--file", str(path)]) in (0, 1)
    # the recorded judge knows the good statement only: the odd sentences are unjudged by design
    settings = replace(job.settings_from_env(), unjudged_limit=1.0, shards=2)
    run_id = job.run_day(_engine(), dt.date.fromisoformat(DAY), settings)["run_id"]
    return runs.run_row(_engine(), run_id)


def _engine():
    from citecheck import warehouse as W

    return W.engine_for()


def test_every_repair_kind_of_the_corpus_is_counted_on_its_day_and_shown_in_the_report(engine, tmp_path,
                                                                                       monkeypatch, capsys):
    cases = [c for c in bad_cases() if c.day == DAY and c.warehouse == "same" and c.preload is None
             and len(c.line) < 100_000] + good_turns(3)
    expected = Counter()
    for case in cases:
        expected.update(case.repairs)
    assert all(expected[kind] for kind in REPAIR_KINDS), expected  # every kind has its corpus row
    row = _run_day(tmp_path, monkeypatch, cases)
    repairs = row["stats"]["input_repairs"]
    assert {k: repairs[k] for k in REPAIR_KINDS} == {k: expected[k] for k in REPAIR_KINDS}, repairs
    assert repairs["assumed_zone:UTC"] == expected["zoneless_timestamps"]

    out = tmp_path / "report.html"
    assert main(["report", "--day", DAY, "--out", str(out)]) == 0
    html = out.read_text()
    assert 'id="input-repairs"' in html
    assert f"{expected['replaced_characters']} character(s) replaced" in html
    assert f"{expected['malformed_markers']} marker(s) opened and never closed" in html


def test_an_assumed_zone_moves_a_late_evening_turn_to_its_local_day_and_refuse_rejects_it(engine, tmp_path,
                                                                                          monkeypatch, capsys):
    late = turn("berlin-late", answered_at=f"{DAY}T23:30:00")  # 23:30 in Berlin is 22:30 UTC, same day
    from bad_input.corpus import Case

    cases = [Case("late", json.dumps(late).encode(), "scored", turn_id="berlin-late"), *good_turns(2)]
    berlin = '[day]\ntimezone = "Europe/Berlin"\nassume_zone = "Europe/Berlin"\n'
    row = _run_day(tmp_path, monkeypatch, cases, berlin)
    assert row["stats"]["input_repairs"]["assumed_zone:Europe/Berlin"] == 1
    assert row["turns_scored"] == 3

    refused = tmp_path / "refuse"
    refused.mkdir()
    (refused / "config.toml").write_text('[day]\nassume_zone = "refuse"\n')
    monkeypatch.setenv("CITECHECK_CONFIG", str(refused / "config.toml"))
    (refused / "t.jsonl").write_text(json.dumps(dict(late, turn_id="refused-late")) + "\n")
    capsys.readouterr()
    assert main(["load-turns", "--file", str(refused / "t.jsonl")]) == 1
    malformed = json.loads(capsys.readouterr().out)["malformed"]
    assert len(malformed) == 1 and "has no time zone" in malformed[0]["reason"]
