"""Question sets for `citecheck gate`: one sentence per question, scored with a recorded judge.

Each question i has two passages: S1 states the fact, S2 is an unrelated note. How the answer
cites decides the sentence's verdict and credit: `single` ("… [S1]", supported, 1 of 1 credited),
`padded` ("… [S1][S2]", supported, 1 of 2 credited: S2 is irrelevant), `miscited` ("… [S2]", 0
of 1) and `uncited` (no marker: uncited_supported, no citation).

`ONE_SOURCE_RULE` is the lesson's challenge: a prompt change ("cite one source per sentence")
that lifts citation precision from 0.62 to 0.68 and drops citation recall from 0.81 to 0.66 on
the same 100 questions (docs/gate.md; the files in docs/examples/one_source_rule/ are written by
`write_example`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

MARKERS = {"single": " [S1]", "padded": " [S1][S2]", "miscited": " [S2]", "uncited": ""}

# (kind, how many questions), in question order
ONE_SOURCE_RULE = {
    "base": (("single", 50), ("padded", 31), ("miscited", 19)),
    "candidate": (("single", 66), ("miscited", 31), ("uncited", 3)),
}
CRITERIA_TOML = """\
# Written before the candidate was scored: what a release of the expense assistant must keep.

[[criteria]]
name = "precision at least 0.6"
metric = "citation_precision"
min = 0.6

[[criteria]]
name = "recall may not drop by more than 5 points"
metric = "citation_recall"
min = 0.6
max_drop = 0.05
"""


def statement(i: int) -> str:
    return f"Expense type {i:03d} is reimbursed after approval"


def plan(kinds: Sequence[tuple[str, int]]) -> list[str]:
    return [kind for kind, n in kinds for _ in range(n)]


def turns(kinds: Sequence[str], version: str) -> list[dict]:
    """One turn per question, answered as `kinds[i]` says."""
    return [{
        "turn_id": f"q{i:03d}",
        "conversation_id": f"q{i:03d}",
        "turn_index": 1,
        "answered_at": "2026-11-30T10:00:00Z",
        "question": f"Is expense type {i:03d} reimbursed?",
        "answer": f"{statement(i)}{MARKERS[kind]}.",
        "answer_format": "markers",
        "context": [
            {"label": "S1", "source": "Expense policy", "text": f"{statement(i)}."},
            {"label": "S2", "source": "Office notes", "text": f"The office on floor {i % 7 + 2} has a new printer."},
        ],
        "attributes": {"prompt_version": version},
    } for i, kind in enumerate(kinds)]


def judge(n: int) -> dict:
    return {"kind": "recorded", "judgments": [{"statement": f"{statement(i)}.", "supported_by": ["S1"]}
                                              for i in range(n)]}


def write_case(directory: Path, name: str, kinds: Sequence[str], version: str | None = None) -> Path:
    """TURNS.jsonl of a question set; returns its path."""
    path = directory / f"{name}.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in turns(kinds, version or name)), encoding="utf-8")
    return path


def write_example(directory: Path) -> None:
    """The one-source-rule example's files: base.jsonl, candidate.jsonl, judge.json, criteria.toml."""
    directory.mkdir(parents=True, exist_ok=True)
    for side, kinds in ONE_SOURCE_RULE.items():
        write_case(directory, side, plan(kinds))
    n = len(plan(ONE_SOURCE_RULE["base"]))
    (directory / "judge.json").write_text(json.dumps(judge(n), indent=1) + "\n", encoding="utf-8")
    (directory / "criteria.toml").write_text(CRITERIA_TOML, encoding="utf-8")
