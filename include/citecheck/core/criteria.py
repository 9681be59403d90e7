"""Acceptance criteria and their decisions (SPEC §5.1): written before anyone sees the scores.

A criterion names a metric, an optional scope (`where`: attribute values, or a built-in sentence
slice such as `has_number = "yes"`), one bound (`min` or `max`) and how the bound is read
(`on = "value"`: the point estimate must meet it; `on = "interval"`: it fails only when the whole
95% interval lies beyond it). `answers = true` also decides each answer in scope on its own value.
`max_drop` / `max_rise` are non-inferiority bounds that only `citecheck gate --base` checks.

```toml
[[criteria]]
name = "no contradicted claims about pay, leave or termination"
metric = "contradicted_rate"
where = { topic = ["pay", "leave", "termination"] }
max = 0.0
answers = true
```

A criterion is `pass`, `fail` or `no_data` (an empty scope or a null metric: never a pass); a
day's (or a release's) decision is `pass` only when every criterion passes. `CriteriaEvaluator`
streams scored answers (the job's fold_shard step, `score --criteria`) or score-output turns
(`citecheck gate`) into each criterion's totals, its 95% interval (answers as clusters, as every
other interval of the product) and the failing answers.
"""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from citecheck.core.config import ConfigError
from citecheck.core.metrics import (
    BY_NAME,
    COUNT_KEYS,
    METRIC_NAMES,
    METRICS,
    SENTENCE_SLICES,
    AnswerCounts,
    ScoredTurn,
    count_keys,
    ratios,
)
from citecheck.core.metrics.counts import ANSWERS_PER_BLOCK
from citecheck.core.metrics.definitions import COUNT_COLUMN
from citecheck.core.metrics.ratios import MACRO_NAMES, answer_votes
from citecheck.stats.intervals import ClusterTotals, proportion_intervals
from citecheck.stats.ratio import Ratio

PASS, FAIL, NO_DATA = "pass", "fail", "no_data"
DECISIONS = (PASS, FAIL, NO_DATA)
ON_CHOICES = ("value", "interval")
AVERAGING_CHOICES = ("micro", "macro")
ALL_SCOPE = "all"
_KEYS = frozenset({"name", "metric", "where", "min", "max", "on", "answers", "max_drop", "max_rise", "averaging",
                   "description"})


class CriteriaError(ConfigError):
    """Criteria that cannot be used (not TOML, unknown metric, both bounds, no name …): exit 2."""


@dataclass(frozen=True, slots=True)
class Criterion:
    """One acceptance criterion (see the module doc). `where`: (key, allowed values) pairs, all
    of which a turn (or a sentence, for a built-in slice) must meet."""

    name: str
    metric: str
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()
    min: float | None = None
    max: float | None = None
    on: str = "value"
    answers: bool = False
    max_drop: float | None = None
    max_rise: float | None = None
    averaging: str = "micro"
    description: str = ""

    @property
    def bound(self) -> float | None:
        return self.min if self.min is not None else self.max

    @property
    def bound_kind(self) -> str | None:
        return "min" if self.min is not None else "max" if self.max is not None else None

    @property
    def scope(self) -> str:
        """The scope as stored: `all`, or `key=value|value; key=value` in the order written."""
        if not self.where:
            return ALL_SCOPE
        return "; ".join(f"{key}={'|'.join(values)}" for key, values in self.where)

    @property
    def sentence_scope(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return tuple((k, v) for k, v in self.where if k in SENTENCE_SLICES)

    @property
    def attribute_scope(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return tuple((k, v) for k, v in self.where if k not in SENTENCE_SLICES)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "metric": self.metric}
        if self.where:
            out["where"] = {k: list(v) for k, v in self.where}
        for key in ("min", "max", "max_drop", "max_rise"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out.update(on=self.on, answers=self.answers, averaging=self.averaging)
        return out

    def breaks(self, value: Any) -> Any:
        """Does a value break the bound? Element by element for an array of values."""
        if self.min is not None:
            return value < self.min
        return self.max is not None and value > self.max


GATE_SECTION = "gate"  # the criteria file's (and the config's) table of coverage limits
COVERAGE_LIMIT_KEYS = ("max_skipped_share", "max_unpaired_share")


@dataclass(frozen=True, slots=True)
class CoverageLimits:
    """How much a decision may not see, as stated in `[gate]` (None: not stated, the decider's
    default applies; `core.coverage`): the share of the turns it was asked to judge that were
    skipped, and (`gate --base`) the share of either side's turns without a partner."""

    max_skipped_share: float | None = None
    max_unpaired_share: float | None = None

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in COVERAGE_LIMIT_KEYS if getattr(self, k) is not None}


def parse_coverage_limits(table: Any, source: str) -> CoverageLimits:
    """`[gate]`'s `max_skipped_share` / `max_unpaired_share`, each a share from 0 to 1; CriteriaError."""
    if table is None:
        return CoverageLimits()
    if not isinstance(table, dict):
        raise CriteriaError(f"{source}: [{GATE_SECTION}] must be a table")
    unknown = sorted(set(table) - set(COVERAGE_LIMIT_KEYS))
    if unknown:
        raise CriteriaError(f"{source}: [{GATE_SECTION}] unknown key(s) {', '.join(unknown)} "
                            f"(allowed: {', '.join(COVERAGE_LIMIT_KEYS)})")
    values = {k: _number(table, k, f"{source}: [{GATE_SECTION}]") for k in COVERAGE_LIMIT_KEYS}
    for key, value in values.items():
        if value is not None and not 0.0 <= value <= 1.0:
            raise CriteriaError(f"{source}: [{GATE_SECTION}] {key} must be a share from 0 to 1, not {value:g}")
    return CoverageLimits(**values)


@dataclass(frozen=True, slots=True)
class Criteria:
    """A validated set of criteria, its coverage limits (`[gate]`) and its hash (stored with every
    decision)."""

    items: tuple[Criterion, ...] = ()
    source: str = ""
    limits: CoverageLimits = field(default_factory=CoverageLimits)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self) -> Iterator[Criterion]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def hash(self) -> str:
        """A short stable hash of the criteria as validated (names, metrics, scopes, bounds)."""
        stated: list[Any] = [c.as_dict() for c in self.items]
        if self.limits.as_dict():  # criteria without [gate] keep the hash they had
            stated.append({GATE_SECTION: self.limits.as_dict()})
        blob = json.dumps(stated, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


# --- reading and validating -----------------------------------------------------------------------


def known_metrics() -> frozenset[str]:
    """Every metric a criterion may name: the registry's (sentence level and, where registered,
    claim level)."""
    return frozenset(METRIC_NAMES)


def parse_criteria(entries: Any, source: str = "config", gate: Any = None) -> Criteria:
    """Validate `[[criteria]]` entries (a list of tables) and the `[gate]` table into `Criteria`;
    raises CriteriaError."""
    limits = parse_coverage_limits(gate, source)
    if entries is None:
        return Criteria(source=source, limits=limits)
    if not isinstance(entries, list):
        raise CriteriaError(f"{source}: criteria must be an array of tables ([[criteria]])")
    items: list[Criterion] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries, start=1):
        criterion = _criterion(entry, f"{source}: criterion {i}")
        if criterion.name in seen:
            raise CriteriaError(f"{source}: criterion {i}: the name {criterion.name!r} is used twice")
        seen.add(criterion.name)
        items.append(criterion)
    return Criteria(tuple(items), source, limits)


def _criterion(entry: Any, where_: str) -> Criterion:
    if not isinstance(entry, dict):
        raise CriteriaError(f"{where_}: must be a table")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise CriteriaError(f"{where_}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_KEYS))})")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise CriteriaError(f"{where_}: needs a non-empty name")
    where_ = f"{where_} ({name.strip()!r})"
    metric = entry.get("metric")
    if not isinstance(metric, str) or not metric:
        raise CriteriaError(f"{where_}: needs a metric")
    if metric not in known_metrics():
        raise CriteriaError(f"{where_}: unknown metric {metric!r} (see docs/metrics.md for the metric names)")
    bounds = {k: _number(entry, k, where_) for k in ("min", "max", "max_drop", "max_rise")}
    if bounds["min"] is not None and bounds["max"] is not None:
        raise CriteriaError(f"{where_}: give min or max, not both (write two criteria for a range)")
    if all(v is None for v in bounds.values()):
        raise CriteriaError(f"{where_}: needs a bound: min or max (or max_drop / max_rise for `gate --base`)")
    for key in ("max_drop", "max_rise"):
        if bounds[key] is not None and bounds[key] < 0:
            raise CriteriaError(f"{where_}: {key} must be zero or more")
    on = entry.get("on", "value")
    if on not in ON_CHOICES:
        raise CriteriaError(f"{where_}: on must be \"value\" or \"interval\", not {on!r}")
    averaging = entry.get("averaging", "micro")
    if averaging not in AVERAGING_CHOICES:
        raise CriteriaError(f"{where_}: averaging must be \"micro\" or \"macro\", not {averaging!r}")
    answers = entry.get("answers", False)
    if not isinstance(answers, bool):
        raise CriteriaError(f"{where_}: answers must be true or false")
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise CriteriaError(f"{where_}: description must be a string")
    return Criterion(name=name.strip(), metric=metric, where=_where(entry.get("where"), where_),
                     min=bounds["min"], max=bounds["max"], on=on, answers=answers, max_drop=bounds["max_drop"],
                     max_rise=bounds["max_rise"], averaging=averaging, description=description)


def _number(entry: Mapping[str, Any], key: str, where_: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CriteriaError(f"{where_}: {key} must be a number")
    return float(value)


def _where(value: Any, where_: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise CriteriaError(f"{where_}: where must be a table, e.g. where = {{ topic = \"pay\" }}")
    out = []
    for key, allowed in value.items():
        if not isinstance(key, str) or not key:
            raise CriteriaError(f"{where_}: where needs attribute names")
        values = allowed if isinstance(allowed, list) else [allowed]
        if not values or not all(isinstance(v, str | int | bool) and not isinstance(v, float) for v in values):
            raise CriteriaError(f"{where_}: where.{key} must be a value or a non-empty list of values")
        text = tuple(("true" if v else "false") if isinstance(v, bool) else str(v) for v in values)
        if key in SENTENCE_SLICES and not set(text) <= {"yes", "no"}:
            raise CriteriaError(f"{where_}: where.{key} is a built-in slice: \"yes\" or \"no\"")
        out.append((key, text))
    return tuple(out)


def load_criteria_file(path: str | Path) -> Criteria:
    """A criteria file: TOML with `[[criteria]]` tables. Raises CriteriaError (missing, not TOML, invalid)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CriteriaError(f"criteria file not found: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CriteriaError(f"criteria file {path} cannot be read: {exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CriteriaError(f"criteria file {path} is not valid TOML: {exc}") from exc
    unknown = sorted(set(data) - {"criteria", GATE_SECTION})
    if unknown:
        raise CriteriaError(f"criteria file {path}: unknown section(s) {', '.join(unknown)} "
                            f"(only [[criteria]] and [{GATE_SECTION}])")
    if not data.get("criteria"):
        raise CriteriaError(f"criteria file {path} has no [[criteria]]")
    return parse_criteria(data["criteria"], str(path), data.get(GATE_SECTION))


# --- evaluating -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CriterionResult:
    """One criterion decided on one population (a day, a scored file)."""

    criterion: Criterion
    value: float | None
    ci_low: float | None
    ci_high: float | None
    numerator: float | None
    denominator: float | None
    answers: int
    decision: str
    failing_answers: int = 0

    def as_dict(self) -> dict[str, Any]:
        c = self.criterion
        return {"criterion": c.name, "metric": c.metric, "scope": c.scope, "bound_kind": c.bound_kind,
                "bound": c.bound, "on": c.on, "averaging": c.averaging, "value": self.value, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "numerator": self.numerator, "denominator": self.denominator,
                "answers": self.answers, "failing_answers": self.failing_answers, "decision": self.decision}


def decide(criterion: Criterion, value: float | None, ci_low: float | None, ci_high: float | None) -> str:
    """pass / fail / no_data for one value (and its interval, for `on = "interval"`). A metric
    without an interval (one counted on all traffic, not estimated) is read on its value."""
    if value is None:
        return NO_DATA
    if criterion.bound_kind is None:
        return NO_DATA
    if criterion.on == "interval" and ci_low is not None and ci_high is not None:
        beyond = ci_high < criterion.min if criterion.min is not None else ci_low > criterion.max  # type: ignore[operator]
        return FAIL if beyond else PASS
    return FAIL if criterion.breaks(value) else PASS


def overall_decision(decisions: Iterable[str]) -> str:
    """`pass` only when every criterion passes; any fail is `fail`; otherwise `no_data`."""
    decisions = list(decisions)
    if not decisions:
        return NO_DATA
    if all(d == PASS for d in decisions):
        return PASS
    return FAIL if FAIL in decisions else NO_DATA


def _metric_keys(metric: str) -> tuple[str, ...]:
    """The count keys behind a metric (a derived metric: those of the metrics it is made of)."""
    if metric not in BY_NAME:
        raise CriteriaError(f"unknown metric {metric!r}")
    return count_keys(metric)


def metric_ratio(counts: Mapping[str, float], metric: str) -> Ratio:
    """One metric of a set of counts (a claim metric outside a claims mode has no counts: null)."""
    if metric in METRICS:
        num, den, scale = METRICS[metric]
        return Ratio(counts.get(num, 0) * scale, counts.get(den, 0))
    return ratios(counts).get(metric) or Ratio(0, 0)


def attribute_in_scope(criterion: Criterion, attributes: Mapping[str, Any]) -> bool:
    """Does an answer's attributes meet every attribute condition of the criterion? An
    attribute the answer does not have is out of scope (a scope no answer has is no_data)."""
    for key, allowed in criterion.attribute_scope:
        value = attributes.get(key)
        if value is None or str(value) not in allowed:
            return False
    return True


def sentence_mask(criterion: Criterion, tests: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """The sentences a criterion's built-in slice conditions keep, from each sentence's
    `SENTENCE_SLICES` tests (`AnswerCounts.slice_tests`); None: the whole answer."""
    keep: np.ndarray | None = None
    for key, allowed in criterion.sentence_scope:
        test = tests[key]
        wanted = (test & ("yes" in allowed)) | (~test & ("no" in allowed))
        keep = wanted if keep is None else keep & wanted
    return keep


@dataclass
class _Totals:
    """One criterion's running totals: pooled counts, per-answer values (macro) and clusters."""

    criterion: Criterion
    keys: tuple[str, ...]
    counts: Counter[str] = field(default_factory=Counter)
    spread: ClusterTotals | None = None
    macro: list[float] = field(default_factory=list)
    answers: int = 0
    failing: list[str] = field(default_factory=list)


class CriteriaEvaluator:
    """Streams answers into every criterion's totals; `results()` decides each, `failing_answers()`
    lists the answers of `answers = true` criteria that break their bound."""

    def __init__(self, criteria: Criteria) -> None:
        self.criteria = criteria
        self._totals = []
        for c in criteria:
            keys = tuple(dict.fromkeys(_metric_keys(c.metric)))
            self._totals.append(_Totals(c, keys, spread=ClusterTotals(keys)))

    def add(self, scored: ScoredTurn) -> None:
        """One scored answer (a day adds a block at a time: `add_counted`)."""
        self.add_counted(AnswerCounts.of([scored]))

    def add_counted(self, counted: AnswerCounts) -> None:
        """A block of counted answers (the fold's): each criterion takes the answers in its scope,
        with their counts on its built-in sentence slice where it has one."""
        scored = counted.scored
        for totals in self._totals:
            c = totals.criterion
            in_scope = np.ones(len(scored), dtype=bool)
            if c.attribute_scope:
                in_scope[:] = [attribute_in_scope(c, s.structured.turn.attributes) for s in scored]
            keep = sentence_mask(c, counted.slice_tests)
            if keep is None:
                rows, votes = counted.whole, counted.whole_votes
            else:  # only the answers with a sentence in the slice, counted on those
                rows, kept = counted.of_sentences(keep)
                votes = answer_votes(rows)
                in_scope &= kept > 0
            taken = np.flatnonzero(in_scope)
            self._add_rows(totals, [scored[i].turn_id for i in taken], rows[taken],
                           (votes[0][taken], votes[1][taken]))

    def add_record(self, turn_id: str, attributes: Mapping[str, Any], counts: Mapping[str, float]) -> None:
        """One answer as a `score` output records it (turn id, attributes, whole-answer counts):
        `citecheck gate`. A criterion on a built-in sentence slice needs the sentences: CriteriaError."""
        row = np.array([[counts.get(key, 0) for key in COUNT_KEYS]])
        for totals in self._totals:
            c = totals.criterion
            if c.sentence_scope:
                raise CriteriaError(f"criterion {c.name!r}: a built-in sentence slice ({c.scope}) needs the "
                                    "scored sentences; decide it with `score --criteria` or the daily job")
            if attribute_in_scope(c, attributes):
                self._add_rows(totals, [turn_id], row, answer_votes(row))

    def _add_rows(self, totals: _Totals, turn_ids: Sequence[str], rows: np.ndarray,
                  metric_votes: tuple[np.ndarray, np.ndarray]) -> None:
        """Answers' counts (rows over `COUNT_KEYS`) and their metric values (`answer_votes`) into a
        criterion's totals: pooled counts, cluster sums, and each answer's own value (macro; an
        `answers = true` criterion lists the answers whose value breaks its bound)."""
        if not turn_ids:
            return
        c = totals.criterion
        totals.answers += len(turn_ids)
        columns = rows[:, [COUNT_COLUMN[key] for key in totals.keys]]
        for key, n in zip(totals.keys, columns.sum(axis=0).tolist(), strict=True):
            totals.counts[key] += n
        if totals.spread is not None:
            totals.spread.add_rows(columns)
        values, votes = metric_votes
        at = MACRO_NAMES.index(c.metric)
        voted = votes[:, at].astype(bool)
        totals.macro.extend(values[voted, at].tolist())
        if c.answers and c.bound_kind is not None:
            breaks = voted & c.breaks(values[:, at])
            totals.failing.extend(turn_ids[i] for i in np.flatnonzero(breaks))

    def state(self) -> list[dict[str, Any]]:
        """Every criterion's tallies as plain lists (JSON), for `merge` into another evaluator of the
        same criteria: counts, cluster sums, the macro values and the failing answers."""
        return [{"criterion": t.criterion.name, "answers": t.answers, "counts": dict(t.counts),
                 "spread": None if t.spread is None else t.spread.state(), "macro": list(t.macro),
                 "failing": list(t.failing)} for t in self._totals]

    def merge(self, state: Sequence[Mapping[str, Any]]) -> None:
        """Add another evaluator's `state` (a shard's answers). The macro values are kept one per
        answer and summed with `math.fsum`, correctly rounded: the same in any order."""
        if [s["criterion"] for s in state] != [t.criterion.name for t in self._totals]:
            raise CriteriaError("cannot merge the tallies of other criteria")
        for totals, theirs in zip(self._totals, state, strict=True):
            totals.answers += int(theirs["answers"])
            totals.counts.update(theirs["counts"])
            if totals.spread is not None and theirs["spread"] is not None:
                totals.spread.merge(theirs["spread"])
            totals.macro.extend(theirs["macro"])
            totals.failing.extend(theirs["failing"])

    def results(self) -> list[CriterionResult]:
        out = []
        for totals in self._totals:
            c = totals.criterion
            if not totals.answers:
                out.append(CriterionResult(c, None, None, None, None, None, 0, NO_DATA))
                continue
            value, low, high, num, den = self._estimate(totals)
            decision = decide(c, value, low, high)
            out.append(CriterionResult(c, value, low, high, num, den, totals.answers, decision, len(totals.failing)))
        return out

    def _estimate(self, totals: _Totals) -> tuple[float | None, float | None, float | None, float | None,
                                                  float | None]:
        """(value, ci_low, ci_high, numerator, denominator) of the criterion's metric on its scope."""
        c = totals.criterion
        if c.averaging == "macro":
            n = len(totals.macro)
            if not n:
                return None, None, None, None, None
            mean = math.fsum(totals.macro) / n
            variance = (math.fsum((x - mean) ** 2 for x in totals.macro) / (n - 1) / n) if n >= 2 else None
            interval = _interval(mean, variance, n, c.metric)
            return mean, *interval, math.fsum(totals.macro), float(n)
        ratio = metric_ratio(totals.counts, c.metric)
        if ratio.value is None:
            return None, None, None, ratio.numerator, ratio.denominator
        variance, clusters = None, 0
        if c.metric in METRICS and totals.spread is not None:
            num, den, _ = METRICS[c.metric]
            variance, clusters = totals.spread.ratio_variance(num, den), totals.spread.clusters_with(den)
        return ratio.value, *_interval(ratio.value, variance, clusters, c.metric), ratio.numerator, ratio.denominator

    def failing_answers(self) -> dict[str, list[str]]:
        """turn id → the names of the `answers = true` criteria it fails, in criteria order."""
        out: dict[str, list[str]] = {}
        for totals in self._totals:
            for turn_id in totals.failing:
                out.setdefault(turn_id, []).append(totals.criterion.name)
        return out


def _interval(value: float, variance: float | None, clusters: int, metric: str) -> tuple[float | None, float | None]:
    """The 95% interval of a rate (answers as clusters); none for a count per 1,000 answers."""
    if metric in BY_NAME and not BY_NAME[metric].rate:
        return None, None
    if variance is None or clusters < 2:
        return None, None
    (interval,) = proportion_intervals([value], [variance], [clusters])
    return (None, None) if interval is None else (interval.low, interval.high)


def evaluate(scored: Iterable[ScoredTurn], criteria: Criteria) -> tuple[list[CriterionResult], dict[str, list[str]]]:
    """Every criterion on the scored answers: (results, failing answers)."""
    evaluator = CriteriaEvaluator(criteria)
    scored = list(scored)
    for start in range(0, len(scored), ANSWERS_PER_BLOCK):
        evaluator.add_counted(AnswerCounts.of(scored[start:start + ANSWERS_PER_BLOCK]))
    return evaluator.results(), evaluator.failing_answers()


def decision_json(results: Sequence[CriterionResult], failing: Mapping[str, Sequence[str]],
                  criteria: Criteria) -> dict[str, Any]:
    """The `criteria` list, `decision`, failing answers and criteria hash: `score --criteria`'s
    output and the gate's `--json`."""
    return {"decision": overall_decision(r.decision for r in results),
            "criteria": [r.as_dict() for r in results],
            "answers_failing": {turn: list(names) for turn, names in failing.items()},
            "criteria_hash": criteria.hash}
