"""The sample on disk: turns as JSON Lines, its recorded judge and its run configuration."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citecheck.demo.dialogue import REFUSAL_SENTENCES
from citecheck.demo.judgments import judge_spec, with_claim_rows

if TYPE_CHECKING:
    from citecheck.core.config import Config
    from citecheck.demo.days import Sample
    from citecheck.job import JobSettings


@dataclass(frozen=True)
class SampleFiles:
    """Where `write_sample` puts the turns, the recorded judge, the config and the reader events
    (on time, and the batch that arrives a day late) in a folder."""

    turns: Path
    judge: Path
    config: Path
    events: Path
    late_events: Path


def sample_files(folder: str | Path) -> SampleFiles:
    """The paths of a written sample in `folder` (`turns.jsonl`, `judge.json`, `config.toml`,
    `events.jsonl`, `events_late.jsonl`)."""
    folder = Path(folder)
    return SampleFiles(folder / "turns.jsonl", folder / "judge.json", folder / "config.toml",
                       folder / "events.jsonl", folder / "events_late.jsonl")


def write_turns_jsonl(sample: Sample, path: str | Path, include_malformed: bool = True) -> int:
    """Write turns as JSON Lines, broken lines interleaved at their time. Returns lines written."""
    lines = [(t["answered_at"], 0, json.dumps(t, ensure_ascii=False)) for t in sample.turns]
    if include_malformed:
        broken = zip(sample.malformed_at, sample.malformed_lines, strict=True)
        lines += [(at, 1, line) for at, line in broken]
    lines.sort(key=lambda x: (x[0], x[1]))
    with open(path, "w", encoding="utf-8") as handle:
        for _, _, line in lines:
            handle.write(line + "\n")
    return len(lines)


def loadable_malformed(sample: Sample) -> list[dict]:
    """The sample's malformed lines that the source tables can still hold (a JSON object with a
    new turn id): loaded so the job has bad rows to skip with a reason (`load-sample`)."""
    from citecheck.warehouse import source_rows

    known = {t["turn_id"] for t in sample.turns}
    rows = []
    for line in sample.malformed_lines:
        try:
            turn = json.loads(line)
            if isinstance(turn, dict) and turn.get("turn_id") not in known:
                source_rows(turn)
                rows.append(turn)
        except (ValueError, TypeError):
            continue
    return rows


def write_judge(sample: Sample, path: str | Path, *, claims: bool = False) -> None:
    """Write the recorded judge file for the sample; `claims`: with a row for each claim the rule
    splitter makes of its sentences (`demo.judgments.with_claim_rows`), for `[claims] mode = "rules"`."""
    spec = judge_spec(sample)
    if claims:
        spec = {**spec, "judgments": with_claim_rows(spec["judgments"])}
    text = json.dumps(spec, ensure_ascii=False, indent=1)
    Path(path).write_text(text + "\n", encoding="utf-8")


# The lesson's four HR-style acceptance criteria (SPEC 5.1), written before the scores: every day
# the job publishes is decided on them (`bin/demo` prints the decision; the report opens with it).
# The topic scope needs the sample's `topic` attribute (`citecheck sample --topics`); without it
# that criterion is no_data. The sample's assistants state wrong or unsourced figures on purpose
# (about one attached sentence with figures in six), so the figure bounds start from that
# baseline; the template change of 2026-11-30 pads citations with passages that support nothing.
DEMO_CRITERIA = """
[[criteria]]
name = "no contradicted claims about pay, leave or termination"
metric = "contradicted_rate"
where = { topic = ["pay", "leave", "termination"] }
max = 0.0
answers = true

[[criteria]]
name = "numbers and dates traceable to a cited passage"
metric = "untraced_figure_rate"
max = 0.25

[[criteria]]
name = "citations fully support their claims"
metric = "citation_precision"
min = 0.7
on = "interval"

[[criteria]]
name = "figures never uncited"
metric = "uncited_figure_rate"
max = 0.25
"""


def config_toml(*, claims: bool = False) -> str:
    """A run configuration for the sample: its refusal sentences as check-worthiness rules, the
    demo's acceptance criteria; `claims`: the rule claim splitter on (`[claims] mode = "rules"`)."""
    quoted = ", ".join(json.dumps(r, ensure_ascii=False) for r in REFUSAL_SENTENCES)
    text = f"# Configuration for the bundled sample data.\n[check_worthiness]\nrefusals = [{quoted}]\n"
    return text + ('\n[claims]\nmode = "rules"\n' if claims else "") + DEMO_CRITERIA


def sample_config() -> Config:
    """The sample's run configuration as a `Config` (what `config_toml` says)."""
    from citecheck.core.config import config_from_mapping

    return config_from_mapping(tomllib.loads(config_toml()))


def write_sample(sample: Sample, folder: str | Path, *, claims: bool = False) -> SampleFiles:
    """Write the turns (broken lines included), the recorded judge, the config and the reader
    events into `folder`; `claims`: in the rule claims mode (config and judge)."""
    files = sample_files(folder)
    files.turns.parent.mkdir(parents=True, exist_ok=True)
    write_turns_jsonl(sample, files.turns)
    for path, events in ((files.events, sample.reader_events), (files.late_events, sample.late_reader_events)):
        path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    write_judge(sample, files.judge, claims=claims)
    files.config.write_text(config_toml(claims=claims), encoding="utf-8")
    return files


def sample_settings(folder: str | Path) -> JobSettings:
    """Job settings for a sample written by `write_sample`: its recorded judge and its config."""
    from citecheck.core.config import load_config
    from citecheck.job import JobSettings
    from citecheck.judges import read_judge_file

    files = sample_files(folder)
    return JobSettings(judge_spec=read_judge_file(files.judge), config=load_config(files.config))


def nli_pairs(limit: int) -> list[tuple[str, str]]:
    """(two-sentence window of a cited passage, answer sentence) pairs of real length from the
    sample traffic: the bundled `citecheck/judges/data/nli_pairs.json` (OpenVINO int8
    calibration, `citecheck plan --judge` timing) is `nli_pairs(128)`, checked by a test."""
    import datetime as dt
    from itertools import pairwise

    from citecheck.core.parsing import split_sentences
    from citecheck.core.turns import turn_from_dict
    from citecheck.demo.days import generate

    pairs: list[tuple[str, str]] = []
    for raw in generate(dt.date(2026, 1, 5), 1, turns_per_day=60).turns:
        turn = turn_from_dict(raw)
        sentences = [s for s in split_sentences(turn.answer) if len(s.split()) > 3]
        for passage, sentence in zip(turn.context, sentences, strict=False):
            parts = split_sentences(passage.text)
            windows = [f"{a} {b}" for a, b in pairwise(parts)] or parts
            pairs.append((windows[len(pairs) % len(windows)], sentence))
        if len(pairs) >= limit:
            break
    return pairs[:limit]


def plan_traffic(turns_per_day: int = 300, seed: int = 0) -> list[tuple[list[dict], dict]]:
    """Two consecutive days of sample traffic with their recorded judges, as
    `citecheck.features.capacity.traffic_profile` takes them (`citecheck plan`)."""
    import datetime as dt

    from citecheck.demo.days import generate

    start = dt.date(2026, 1, 5)
    days = [generate(start + dt.timedelta(days=offset), 1, turns_per_day=turns_per_day, seed=seed)
            for offset in range(2)]
    return [(list(sample.turns), judge_spec(sample)) for sample in days]
