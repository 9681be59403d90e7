"""The recorded judge: fixed judgments for fixed texts (fixtures, demos, tests; SPEC §4).

A statement (markers removed, whitespace normalised) maps to `supported_by` (labels that support
it alone) and `jointly_supported_by` (label sets that support it together). A set supports the
statement if any member is in `supported_by` or it contains a listed joint set. A statement not
in the table is never guessed: the sentence is unjudged with that reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citecheck.core.model import JudgeItem, Judgment, unjudged
from citecheck.core.text import normalise_statement
from citecheck.judges.base import JudgeSpecError
from citecheck.judges.derive import derive_judgment


@dataclass(frozen=True, slots=True)
class RecordedJudgment:
    supported_by: frozenset[str]
    jointly_supported_by: tuple[frozenset[str], ...]
    contradicted_by: frozenset[str]

    def supports(self, labels: frozenset[str]) -> bool:
        if labels & self.supported_by:
            return True
        return any(joint <= labels for joint in self.jointly_supported_by)


class RecordedJudge:
    """Looks statements up in a table; `joint=False` ignores joint sets (a best-single judge)."""

    name = "recorded"

    def __init__(self, table: Mapping[str, RecordedJudgment], *, joint: bool = True, version: str = "1"):
        self._table = dict(table)
        self._joint = joint
        self.version = version if joint else f"{version}-single"
        self._missing = 0

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        return [self._judge_one(item) for item in items]

    def _judge_one(self, item: JudgeItem) -> Judgment:
        record = self._table.get(normalise_statement(item.sentence))
        if record is None:
            self._missing += 1
            return unjudged("statement not in the recorded judgments", self.name, self.version)
        if not self._joint:
            record = RecordedJudgment(record.supported_by, (), record.contradicted_by)
        context = {p.label for p in item.context}

        def best_joint() -> tuple[str, ...]:
            for joint in record.jointly_supported_by:
                if joint <= context:
                    return tuple(lab for lab in (p.label for p in item.context) if lab in joint)
            return ()

        contradicted = bool(record.contradicted_by & frozenset(item.cited))
        return derive_judgment(
            item.cited,
            lambda labels: record.supports(labels & context),
            judge=self.name,
            judge_version=self.version,
            prefer=[p.label for p in item.context],
            joint_elsewhere=best_joint,
            contradiction=1.0 if contradicted else 0.0,
        )

    def stats(self) -> dict[str, Any]:
        return {"statements": len(self._table), "missing_statements": self._missing}


def parse_table(judgments: Any) -> dict[str, RecordedJudgment]:
    """Validate the `judgments` list of a recorded judge file."""
    if not isinstance(judgments, list):
        raise JudgeSpecError("recorded judge: 'judgments' must be a list")
    table: dict[str, RecordedJudgment] = {}
    for i, row in enumerate(judgments):
        if not isinstance(row, dict) or not isinstance(row.get("statement"), str):
            raise JudgeSpecError(f"recorded judge: judgment {i} needs a 'statement' string")
        supported = _labels(row.get("supported_by", []), i, "supported_by")
        contradicted = _labels(row.get("contradicted_by", []), i, "contradicted_by")
        joint_rows = row.get("jointly_supported_by", [])
        if not isinstance(joint_rows, list):
            raise JudgeSpecError(f"recorded judge: judgment {i} 'jointly_supported_by' must be a list")
        joint = tuple(frozenset(_labels(js, i, "jointly_supported_by")) for js in joint_rows)
        table[normalise_statement(row["statement"])] = RecordedJudgment(
            frozenset(supported), joint, frozenset(contradicted)
        )
    return table


def _labels(value: Any, i: int, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise JudgeSpecError(f"recorded judge: judgment {i} '{name}' must be a list of labels")
    return value


def from_spec(spec: Mapping[str, Any], **_: Any) -> RecordedJudge:
    unknown = set(spec) - {"kind", "judgments", "joint", "version", "about"}
    if unknown:
        raise JudgeSpecError(f"recorded judge: unknown fields {sorted(unknown)}")
    joint = spec.get("joint", True)
    if not isinstance(joint, bool):
        raise JudgeSpecError("recorded judge: 'joint' must be true or false")
    return RecordedJudge(parse_table(spec.get("judgments")), joint=joint, version=str(spec.get("version", "1")))
