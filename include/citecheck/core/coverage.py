"""What a decision could not see (SPEC §5.1, issue 37): the turns it was asked to judge that were
skipped (never scored: malformed, over a size limit, an error) and, against a base, the turns of
either side without a partner. A decision is never `pass` while their share is above what the
criteria allow explicitly (`[gate]` in a criteria file, or in the config for the daily job):

```toml
[gate]
max_skipped_share = 0.01   # at most 1% of the candidate's (or the day's) turns skipped
max_unpaired_share = 0.0   # gate --base: every turn of both sides paired
```

Unstated, `gate` and `score --criteria` allow none (`GATE_MAX_SHARE`); the daily job allows
`DAILY_MAX_SKIPPED_SHARE` of a day's turns skipped (the bundled sample's worst day skips 0.75%:
three broken rows of about 400). A check's share is turns / the side's turns read; its decision is
`fail` above the limit, else `pass`; it joins the criteria's decisions in the overall one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from citecheck.core.criteria import FAIL, PASS, CoverageLimits, overall_decision

GATE_MAX_SHARE = 0.0  # `gate`, `score --criteria`: no turn skipped or unpaired unless [gate] allows it
DAILY_MAX_SKIPPED_SHARE = 0.01  # the daily job: a day may skip 1% of its turns unless [gate] says otherwise
DAY_SKIPPED_CHECK = "turns skipped"  # the daily job's check, published among the day's criteria_results
SKIPPED_SHARE, UNPAIRED_SHARE = "skipped_share", "unpaired_share"  # what a check measures


@dataclass(frozen=True, slots=True)
class CoverageCheck:
    """`turns` of `of` not seen (skipped, or unpaired), against `max_share` of them allowed."""

    name: str
    measure: str
    turns: int
    of: int
    max_share: float

    @property
    def share(self) -> float:
        return self.turns / self.of if self.of else 0.0

    @property
    def decision(self) -> str:
        return FAIL if self.share > self.max_share else PASS

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.name, "measure": self.measure, "turns": self.turns, "of": self.of,
                "share": self.share, "max_share": self.max_share, "decision": self.decision}

    def criteria_row(self) -> dict[str, Any]:
        """The check as a `criteria_results` row (the daily job publishes it with the criteria)."""
        return {"criterion": self.name, "scope": "all", "metric": self.measure, "bound_kind": "max",
                "bound": self.max_share, "on_rule": "value", "averaging": "micro", "value": self.share,
                "ci_low": None, "ci_high": None, "numerator": float(self.turns), "denominator": float(self.of),
                "answers": self.of, "failing_answers": 0, "decision": self.decision}


def skipped_check(skipped: int, read: int, limits: CoverageLimits, default: float = GATE_MAX_SHARE,
                  name: str = "candidate turns skipped") -> CoverageCheck:
    """The skipped turns of the `read` ones, against `[gate] max_skipped_share` (else `default`)."""
    limit = limits.max_skipped_share if limits.max_skipped_share is not None else default
    return CoverageCheck(name, SKIPPED_SHARE, skipped, read, limit)


def unpaired_checks(unpaired_base: int, base: int, unpaired_candidate: int, candidate: int,
                    limits: CoverageLimits) -> list[CoverageCheck]:
    """Both sides' turns without a partner, against `[gate] max_unpaired_share` (else none allowed)."""
    limit = limits.max_unpaired_share if limits.max_unpaired_share is not None else GATE_MAX_SHARE
    return [CoverageCheck("base turns unpaired", UNPAIRED_SHARE, unpaired_base, base, limit),
            CoverageCheck("candidate turns unpaired", UNPAIRED_SHARE, unpaired_candidate, candidate, limit)]


def format_check(check: Mapping[str, Any]) -> str:
    """A coverage check (`CoverageCheck.as_dict`) as one line of a CI log."""
    return (f"{check['decision'].upper():<8}{check['check']}: {check['turns']} of {check['of']} "
            f"({check['share']:.1%}), allowed {check['max_share']:.1%} ([gate] max_{check['measure']})")


def decision_with(decisions: Iterable[str], checks: Iterable[CoverageCheck]) -> str:
    """The overall decision of the criteria's decisions and the coverage checks: never `pass`
    while a check fails."""
    return overall_decision([*decisions, *(c.decision for c in checks)])
