"""Shared test helpers (imported as `helpers`): fixtures, warehouses, scoring shortcuts."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    """A worked fixture carried in `tests/fixtures` (copies of the project's worked cases)."""
    path = FIXTURES / name
    if not path.exists():
        raise FileNotFoundError(f"fixture {path} is missing from the repository")
    return json.loads(path.read_text(encoding="utf-8"))


def score_dicts(turns: list[dict[str, Any]], judge_spec: dict[str, Any], config: Any = None) -> dict[str, Any]:
    """Score turn dicts with a judge spec; the CLI's JSON output as a dict."""
    from citecheck.core.config import Config
    from citecheck.core.pipeline import score
    from citecheck.core.turns import turn_from_dict
    from citecheck.judges import judge_from_spec

    report = score([turn_from_dict(t) for t in turns], judge_from_spec(judge_spec), config or Config())
    return report.to_json()


def write_turns_file(path: Path, turn_id: str, answer: str, passages: Any) -> Path:
    """A one-turn TURNS.jsonl (SPEC §1, markers) over `passages` (objects with `label` and `text`),
    for tests that run `citecheck score` on it."""
    turn = {
        "turn_id": turn_id,
        "conversation_id": "c1",
        "turn_index": 0,
        "answered_at": "2026-11-23T10:00:00+00:00",
        "question": "How do expenses work?",
        "answer": answer,
        "answer_format": "markers",
        "context": [{"label": p.label, "source": "policy", "text": p.text} for p in passages],
    }
    path.write_text(json.dumps(turn) + "\n", encoding="utf-8")
    return path


def orbit_warehouse_turns(day: str = "2026-11-30") -> list[dict[str, Any]]:
    """The Orbit Labs turns dated on `day`, plus one malformed row (answer missing)."""
    data = load_fixture("orbit_labs.json")
    turns = [dict(t, answered_at=f"{day}T10:00:00Z", turn_id=f"{t['turn_id']}@{day}",
                  conversation_id=f"{t['conversation_id']}@{day}") for t in data["turns"]]
    turns.append({"turn_id": f"bad@{day}", "answer": None, "answered_at": f"{day}T11:00:00Z", "context": []})
    return turns


def orbit_settings(**overrides: Any):
    """Job settings of the Orbit Labs fixture (its recorded judge and refusal), with overrides."""
    from dataclasses import replace

    from citecheck.core.config import config_from_mapping
    from citecheck.job import JobSettings

    data = load_fixture("orbit_labs.json")
    settings = JobSettings(judge_spec=data["judge"],
                           config=config_from_mapping({"check_worthiness": {"refusals": [data["refusal_text"]]}}))
    return replace(settings, **overrides)


def publish_orbit_days(engine: Any, days: Any) -> None:
    """Load the Orbit turns dated on each day into the warehouse and publish each day (the job)."""
    from citecheck import job
    from citecheck import warehouse as W

    for day in days:
        W.load_turns(engine, orbit_warehouse_turns(day.isoformat()))
        job.run_day(engine, day, orbit_settings())


class _StepsStopped(Exception):
    pass


def run_steps_until(run: Any, last: str) -> dict[str, Any]:
    """The job's steps of `run` in THE sequence (`job.run_steps`, every shard of a per-shard step),
    up to and including `last`; what they returned."""
    from citecheck import job

    stop = job.STEP_NAMES.index(last)
    done: dict[str, Any] = {}

    def call(name: str, step: Any, *args: Any) -> Any:
        if job.STEP_NAMES.index(name) > stop:
            raise _StepsStopped(name)
        result = step(*args)
        done.setdefault(name, []).append(result) if name in job.SHARD_STEPS else done.__setitem__(name, result)
        return result

    with contextlib.suppress(_StepsStopped):
        job.run_steps(run, call)
    return done
