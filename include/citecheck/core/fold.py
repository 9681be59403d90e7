"""THE per-answer fold of a day: each scored answer counted once (a block of answers at a time,
`AnswerCounts`), pooled into its slices (micro, macro, interval sums: `MetricAccumulator`) and
into the acceptance criteria's tallies (`CriteriaEvaluator`), with the judge versions that
decided it.

One fold, three callers: the CLI's `score` (one fold over the file), the job's `fold_shard` step
(one fold per shard, its `state()` staged) and the job's `combine` step (`AnswerFold.combined`: the
shards' states added, then the day's rows, intervals and decisions). The state is compact: per
slice its counts, cluster sums and macro sums, per criterion its tallies; its size grows with the
slices, not with the answers (the macro criteria's per-answer values and the failing answers
excepted). Counts and the sums of counts add exactly; float sums (macro values) agree with a
single pass to about 1e-15 relative, whatever the partition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from citecheck.core.config import Config
from citecheck.core.criteria import Criteria, CriteriaEvaluator
from citecheck.core.metrics import AnswerCounts, MetricAccumulator, ScoredTurn, SliceCap, counts


class AnswerFold:
    """Scored answers folded into the day's metric totals and criteria tallies, a block at a time."""

    def __init__(self, config: Config, criteria: Criteria | None = None, *, cap: SliceCap | None = None,
                 intervals: bool = True) -> None:
        """`criteria`: the acceptance criteria to tally (None: none); `cap`: the day's bounded
        attribute slices; `intervals=False`: no interval sums (the bench's baseline)."""
        self._metrics = MetricAccumulator(config, intervals=intervals, cap=cap)
        self._criteria = CriteriaEvaluator(criteria) if criteria is not None else None
        self._held: list[ScoredTurn] = []
        self.judge_versions: set[str] = set()

    def add(self, scored: ScoredTurn) -> None:
        """Fold one scored answer in (held, then counted with its block)."""
        self._held.append(scored)
        for v in scored.verdicts:
            if v.judgment is not None and v.judgment.judge_version:
                self.judge_versions.add(f"{v.judgment.judge}:{v.judgment.judge_version}")
        if len(self._held) >= counts.ANSWERS_PER_BLOCK:
            self._count_held()

    def _count_held(self) -> None:
        """Count the held answers once (`AnswerCounts`) and pool them into the metrics and the criteria."""
        if not self._held:
            return
        counted = AnswerCounts.of(self._held)
        self._held = []
        self._metrics.add_counted(counted)
        if self._criteria is not None:
            self._criteria.add_counted(counted)

    @property
    def metrics(self) -> MetricAccumulator:
        """The metric totals of every answer folded in so far."""
        self._count_held()
        return self._metrics

    @property
    def criteria(self) -> CriteriaEvaluator | None:
        """The criteria tallies of every answer folded in so far (None: no criteria)."""
        self._count_held()
        return self._criteria

    def state(self) -> dict[str, Any]:
        """The partial state (plain JSON) that `merge` adds into another fold of the same day."""
        criteria = self.criteria
        return {"metrics": self.metrics.state(), "criteria": None if criteria is None else criteria.state(),
                "judge_versions": sorted(self.judge_versions)}

    def merge(self, state: Mapping[str, Any]) -> None:
        """Add a partial state (`state()` of another fold with the same config and criteria)."""
        criteria = self.criteria
        if (criteria is None) != (state["criteria"] is None):
            raise ValueError("cannot merge a fold with criteria tallies into one without, or back")
        self.metrics.merge(state["metrics"])
        if criteria is not None:
            criteria.merge(state["criteria"])
        self.judge_versions.update(state["judge_versions"])

    @classmethod
    def combined(cls, config: Config, states: Iterable[Mapping[str, Any]], criteria: Criteria | None = None, *,
                 cap: SliceCap | None = None) -> AnswerFold:
        """The day's fold from its shards' partial states, added in the order given."""
        fold = cls(config, criteria, cap=cap)
        for state in states:
            fold.merge(state)
        return fold
