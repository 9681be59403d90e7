"""The daily job's validation gate: Great Expectations 1.x on the day's metric rows and run counts.

GE runs in-process with an ephemeral context (no project files, no Airflow provider). Three
batches are validated, each by its own suite:

- `metric_rows`: the long rows (one per day, slice, metric, averaging) — every metric inside its
  range (the registry's `Metric.bounds`: rates in [0, 1], per-1,000 counts >= 0), unique and
  non-null keys, value null exactly when the denominator is 0, and where a 95% interval is given,
  ci_low <= value <= ci_high inside [0, 1] (no interval on a null value);
- `metric_pairs`: the rows pivoted wide per (day, slice, averaging) — the ordered pairs of
  `core.metrics.invariants.ORDERED` (`citation_recall` at most `judged_attachment_rate` and at most
  `faithfulness`, SPEC §5);
- `run_counts`: one row of the run's counts — every turn read is scored or skipped, the metric rows
  cover the scored turns, the unjudged share is within its limit (SPEC §4), and the day has at
  least the minimum of scored turns (`min_turns`, default 1): an empty or missing day fails with
  that reason, so it is never published as a healthy day nor replaces a day that had data.

`RULES` is THE table: each rule's name, what it checks, its batch and its expectations, written
once; the invariants' rules come from `core.metrics.invariants` (the same table `score` checks
with). Every expectation carries `meta.rule`, the name the failures and the summary use.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from citecheck.core.config import ConfigError
from citecheck.core.metrics import BOUNDS_RULES
from citecheck.core.metrics.invariants import ORDERED, bounds_groups
from citecheck.warehouse.serialize import jsonable

METRIC_KEYS = ("slice_name", "slice_value", "metric", "averaging")
PAIR_KEYS = ("slice_name", "slice_value", "averaging")
ROW_COLUMNS = (*METRIC_KEYS, "numerator", "denominator", "value", "answers", "sentences", "ci_low", "ci_high")
COUNT_COLUMNS = ("turns_read", "turns_scored", "turns_skipped")
MAX_EXAMPLES = 5
DEFAULT_MIN_TURNS = 1
MIN_TURNS_ENV = "CITECHECK_MIN_TURNS"
# derived count columns -> the counts they come from, printed beside them in failures
CONTEXT = {
    "turns_scored_plus_skipped": ("turns_scored", "turns_skipped"),
    "unjudged_share": ("unjudged_sentences", "selected_sentences"),
    "turns_scored": ("turns_read", "turns_skipped"),
}

# the ordered pairs' columns in `metric_pairs`: the largest lower value meets the smallest upper one
PAIR_LOWER = tuple(dict.fromkeys(o.lower for o in ORDERED))
PAIR_UPPER = tuple(dict.fromkeys(o.upper for o in ORDERED))


@dataclass(frozen=True)
class Settings:
    """What the expectations depend on beyond the rows: the key columns, the limits."""

    keys: tuple[str, ...]
    unjudged_limit: float
    min_turns: int


@dataclass(frozen=True)
class Rule:
    """One validation rule: its name (failures, summary, `failed_rules`), what it checks in
    words, the batch it checks and its Great Expectations expectations."""

    name: str
    checks: str
    batch: str  # metric_rows | metric_pairs | run_counts
    expectations: Callable[[Any, Settings], list[Any]]  # (great_expectations.expectations, settings)


def _between(column: str, low: float | None, high: float | None, metrics: Sequence[str] | None = None) -> Callable:
    def build(gxe: Any, _: Settings) -> list[Any]:
        from great_expectations.expectations.row_conditions import Column

        cond = {} if metrics is None else {"row_condition": Column("metric").is_in(list(metrics))}
        return [gxe.ExpectColumnValuesToBeBetween(column=column, min_value=low, max_value=high, **cond)]
    return build


def _invariant_rules() -> list[Rule]:
    """The core invariants (`core.metrics.invariants`): each metric in its registry range, the ordered pairs."""
    rules = [Rule(rule, BOUNDS_RULES[bounds][1], "metric_rows", _between("value", *bounds, covered))
             for rule, (bounds, covered) in bounds_groups().items()]
    for o in ORDERED:
        rules.append(Rule(o.rule, o.checks, "metric_pairs", lambda gxe, _, o=o: [
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(column_A=o.upper, column_B=o.lower, or_equal=True,
                                                        ignore_row_if="either_value_is_missing")]))
    return rules


def _null(column: str, condition: Callable[[Any], Any] | None = None, *, null: bool = True) -> Callable:
    def build(gxe: Any, _: Settings) -> list[Any]:
        from great_expectations.expectations.row_conditions import Column

        cond = {} if condition is None else {"row_condition": condition(Column("denominator"))}
        kind = gxe.ExpectColumnValuesToBeNull if null else gxe.ExpectColumnValuesToNotBeNull
        return [kind(column=column, **cond)]
    return build


def _all(*builders: Callable) -> Callable:
    return lambda gxe, settings: [e for build in builders for e in build(gxe, settings)]


def _pair(a: str, b: str, *, greater: bool = False) -> Callable:
    def build(gxe: Any, _: Settings) -> list[Any]:
        if greater:
            return [gxe.ExpectColumnPairValuesAToBeGreaterThanB(column_A=a, column_B=b, or_equal=True,
                                                                ignore_row_if="either_value_is_missing")]
        return [gxe.ExpectColumnPairValuesToBeEqual(column_A=a, column_B=b, ignore_row_if="either_value_is_missing")]
    return build


RULES_TABLE: tuple[Rule, ...] = (
    *_invariant_rules(),
    Rule("unique_metric_key", "one row per (day, slice_name, slice_value, metric, averaging)", "metric_rows",
         lambda gxe, st: [gxe.ExpectCompoundColumnsToBeUnique(column_list=list(st.keys), ignore_row_if="never")]),
    Rule("key_not_null", "key columns are never null", "metric_rows",
         lambda gxe, st: [gxe.ExpectColumnValuesToNotBeNull(column=k) for k in st.keys]),
    Rule("null_iff_zero_denominator", "value is null exactly when the denominator is 0", "metric_rows",
         _all(_null("denominator", null=False), _null("value", lambda d: d == 0),
              _null("value", lambda d: d != 0, null=False))),
    Rule("interval_contains_value", "ci_low <= value <= ci_high where both are given, the interval inside [0, 1]",
         "metric_rows", _all(_pair("value", "ci_low", greater=True), _pair("ci_high", "value", greater=True),
                             _between("ci_low", 0, 1), _between("ci_high", 0, 1))),
    Rule("no_interval_without_value", "ci_low and ci_high are null where the denominator is 0 (value null)",
         "metric_rows", _all(_null("ci_low", lambda d: d == 0), _null("ci_high", lambda d: d == 0))),
    Rule("counts_present", "turns_read, turns_scored and turns_skipped are given", "run_counts",
         _all(*(_null(c, null=False) for c in COUNT_COLUMNS))),
    Rule("turns_reconcile", "turns_read == turns_scored + turns_skipped", "run_counts",
         _pair("turns_read", "turns_scored_plus_skipped")),
    Rule("metrics_cover_scored_turns",
         "answers of the overall slice (refusal_rate micro denominator; 0 when missing) == turns_scored",
         "run_counts", _pair("turns_scored", "answers_in_metrics")),
    Rule("unjudged_share_within_limit", "unjudged_sentences / selected_sentences <= the unjudged limit", "run_counts",
         lambda gxe, st: _between("unjudged_share", 0, st.unjudged_limit)(gxe, st)),
    Rule("enough_turns", "turns_scored >= the minimum of turns (an empty or missing day is not a healthy day)",
         "run_counts", lambda gxe, st: _between("turns_scored", st.min_turns, None)(gxe, st)),
)
# rule -> what it checks, in the words the summary prints
RULES: dict[str, str] = {rule.name: rule.checks for rule in RULES_TABLE}
BATCHES = ("metric_rows", "metric_pairs", "run_counts")


def min_turns_setting(value: Any = None) -> int:
    """The minimum of scored turns a day needs to be published: `value` when given, else
    CITECHECK_MIN_TURNS, else 1. At least 1: an empty day is never published. Anything else is a
    `ConfigError` (a ValueError) naming where the value came from."""
    raw = value if value is not None else os.environ.get(MIN_TURNS_ENV) or DEFAULT_MIN_TURNS
    try:
        number = int(str(raw).strip())
    except ValueError:
        number = 0
    if number < 1 or str(raw).strip() != str(number):
        raise ConfigError(f"the minimum of turns must be a whole number of at least 1, got {raw!r} "
                         f"(from {'the setting' if value is not None else MIN_TURNS_ENV})")
    return number


@dataclass
class ValidationResult:
    """The gate's verdict: `failures` for people, `results` (JSON-safe) for the runs table."""

    success: bool
    failures: list[str] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def failed_rules(self) -> list[str]:
        return list(self.results.get("failed_rules", []))

    def summary(self) -> str:
        """Multi-line text for the task log: the verdict, then one line per expectation."""
        r = self.results
        head = "PASSED" if self.success else "FAILED"
        lines = [
            f"Great Expectations validation {head}: {r.get('failed', 0)} of {r.get('evaluated', 0)} "
            f"expectations failed ({r.get('metric_rows', 0)} metric rows, "
            f"{r.get('pair_rows', 0)} slice x averaging rows, "
            f"unjudged limit {r.get('unjudged_limit')}, minimum of turns {r.get('min_turns')}, "
            f"{r.get('seconds', 0):.2f}s)"
        ]
        for exp in r.get("expectations", []):
            mark = "ok  " if exp["success"] else "FAIL"
            lines.append(f"  {mark} {exp['rule']}: {exp['expectation']}({exp['target']})"
                         + ("" if exp["success"] else f" - {exp['detail']}"))
        return "\n".join(lines)


def import_great_expectations_quietly() -> None:
    """Import GE with its loggers at WARNING: at INFO it logs a line for each public function it
    registers on import and one per ephemeral context (200+ lines of a task log); its warnings and
    errors still show. No usage statistics are sent (GX_ANALYTICS_ENABLED)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    import great_expectations  # noqa: F401  (some modules set their own logger to INFO on import)

    for name, logger in list(logging.root.manager.loggerDict.items()):
        if name.startswith("great_expectations.") and isinstance(logger, logging.Logger) and logger.level:
            logger.setLevel(max(logger.level, logging.WARNING))


def validate_day(rows: Sequence[Mapping[str, Any]], run_counts: Mapping[str, Any], *,
                 unjudged_limit: float = 0.2, day: dt.date | str | None = None,
                 min_turns: int = DEFAULT_MIN_TURNS) -> ValidationResult:
    """Validate one day's metric rows and run counts; `day` fills rows that carry none
    (pipeline rows do not; warehouse rows do); a day with fewer than `min_turns` scored turns
    fails (`enough_turns`)."""
    started = time.perf_counter()
    min_turns = min_turns_setting(min_turns)
    import_great_expectations_quietly()
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    frames = _frames(rows, run_counts, day)
    has_day = "day" in frames["metric_rows"].columns
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    source = context.data_sources.add_pandas("citecheck")
    suites = _suites(has_day, unjudged_limit, min_turns)

    expectations: list[dict[str, Any]] = []
    failures: list[str] = []
    for name, frame in frames.items():
        suite = context.suites.add(gx.ExpectationSuite(name=f"citecheck_{name}", expectations=suites[name]))
        batch = source.add_dataframe_asset(name).add_batch_definition_whole_dataframe("day").get_batch(
            batch_parameters={"dataframe": frame})
        outcome = batch.validate(suite, result_format={"result_format": "COMPLETE"})
        for res in outcome.results:
            entry = _entry(res, frame)
            expectations.append(entry)
            if not entry["success"]:
                failures.append(
                    f"{entry['rule']}: {entry['expectation']}({entry['target']}) - {entry['detail']}")

    failed_rules = sorted({e["rule"] for e in expectations if not e["success"]})
    results = {
        "success": not failures,
        "engine": f"great_expectations {gx.__version__}",
        "evaluated": len(expectations),
        "failed": sum(not e["success"] for e in expectations),
        "failed_rules": failed_rules,
        "unjudged_limit": unjudged_limit,
        "min_turns": min_turns,
        "metric_rows": len(frames["metric_rows"]),
        "pair_rows": len(frames["metric_pairs"]),
        "counts": {k: int(v) if isinstance(v, float) and v.is_integer() and k != "unjudged_share" else v
                   for k, v in jsonable(frames["run_counts"].iloc[0].to_dict()).items()},
        "expectations": expectations,
        "seconds": round(time.perf_counter() - started, 3),
    }
    return ValidationResult(success=not failures, failures=failures, results=results)


# --- the data GE sees ----------------------------------------------------------------------

def _frames(rows: Sequence[Mapping[str, Any]], run_counts: Mapping[str, Any],
            day: dt.date | str | None) -> dict[str, Any]:
    import pandas as pd

    long = pd.DataFrame([dict(r) for r in rows])
    for col in ROW_COLUMNS:
        if col not in long.columns:
            long[col] = None
    if day is not None:
        long["day"] = long["day"].where(long["day"].notna(), day) if "day" in long.columns else day
    for col in ("numerator", "denominator", "value", "answers", "sentences", "ci_low", "ci_high"):
        long[col] = pd.to_numeric(long[col], errors="coerce").astype(float)
    long = long.reset_index(drop=True)
    return {"metric_rows": long, "metric_pairs": _pairs(long), "run_counts": _counts(long, run_counts)}


def _pairs(long: Any) -> Any:
    """The ordered pairs' metrics side by side per (day, slice, averaging); on duplicate rows the
    largest lower value meets the smallest upper one, so a duplicate cannot hide a violation."""
    import pandas as pd

    keys = [k for k in ("day", *PAIR_KEYS) if k in long.columns]
    wanted = (*PAIR_LOWER, *PAIR_UPPER)
    sub = long[long["metric"].isin(wanted)]
    if sub.empty:
        return pd.DataFrame({c: pd.Series(dtype=object if c in keys else float) for c in (*keys, *wanted)})
    grouped = sub.groupby([*keys, "metric"], dropna=True)["value"]
    high = grouped.max().unstack("metric").reindex(columns=list(wanted))
    low = grouped.min().unstack("metric").reindex(columns=list(wanted))
    wide = pd.concat([high[list(PAIR_LOWER)], low[list(PAIR_UPPER)]], axis=1).reset_index()
    wide.columns.name = None
    for col in wanted:
        wide[col] = wide[col].astype(float)
    return wide


def _counts(long: Any, run_counts: Mapping[str, Any]) -> Any:
    """One row: the run's turn counts, the answers the overall slice covers, the unjudged share.
    The sentence counts fall back to the overall `unjudged_rate` row when the caller has none."""
    import pandas as pd

    def number(value: Any) -> float | None:
        try:
            out = float(value)
        except (TypeError, ValueError):
            return None
        return None if math.isnan(out) else out

    def overall(metric: str, column: str) -> float | None:
        hit = long[(long["slice_name"] == "all") & (long["metric"] == metric)
                   & (long["averaging"] == "micro")]
        return number(hit[column].iloc[0]) if len(hit) else None

    row = {c: number(run_counts.get(c)) for c in COUNT_COLUMNS}
    scored, skipped = row["turns_scored"], row["turns_skipped"]
    row["turns_scored_plus_skipped"] = None if scored is None or skipped is None else scored + skipped
    # a scored day always has the overall slice; its absence counts as no answers covered
    row["answers_in_metrics"] = overall("refusal_rate", "denominator") or 0.0
    selected = number(run_counts.get("selected_sentences"))
    unjudged = number(run_counts.get("unjudged_sentences"))
    if selected is None or unjudged is None:
        selected, unjudged = overall("unjudged_rate", "denominator"), overall("unjudged_rate", "numerator")
    row["selected_sentences"], row["unjudged_sentences"] = selected, unjudged
    row["unjudged_share"] = unjudged / selected if selected and unjudged is not None else None
    return pd.DataFrame([row]).astype(float)


# --- the expectations -----------------------------------------------------------------------

def _suites(has_day: bool, unjudged_limit: float, min_turns: int) -> dict[str, list[Any]]:
    """Every rule's expectations by batch, each tagged with its rule's name (`meta.rule`)."""
    import great_expectations.expectations as gxe

    settings = Settings(("day", *METRIC_KEYS) if has_day else METRIC_KEYS, unjudged_limit, min_turns)
    suites: dict[str, list[Any]] = {batch: [] for batch in BATCHES}
    for rule in RULES_TABLE:
        for expectation in rule.expectations(gxe, settings):
            expectation.meta = {"rule": rule.name}
            suites[rule.batch].append(expectation)
    return suites


# --- reading GE's results -------------------------------------------------------------------

def _entry(res: Any, frame: Any) -> dict[str, Any]:
    """One expectation's outcome as plain JSON, with the offending rows spelled out."""
    config = res.expectation_config
    kwargs = config.kwargs
    rule = (config.meta or {}).get("rule", config.type)
    target = _target(kwargs)
    result = res.result or {}
    index = list(result.get("unexpected_index_list") or [])
    entry: dict[str, Any] = {
        "rule": rule,
        "checks": RULES.get(rule, ""),
        "expectation": config.type,
        "target": target,
        "success": bool(res.success),
        "element_count": jsonable(result.get("element_count")),
        "unexpected_count": jsonable(result.get("unexpected_count", 0)),
        "examples": [_describe(frame, i, kwargs) for i in index[:MAX_EXAMPLES]],
    }
    info = res.exception_info or {}
    if info.get("raised_exception"):
        entry["detail"] = f"GE raised: {info.get('exception_message')}"
    elif not res.success:
        n = entry["unexpected_count"]
        more = f" (+{len(index) - MAX_EXAMPLES} more)" if len(index) > MAX_EXAMPLES else ""
        entry["detail"] = f"{n} of {entry['element_count']} rows: " + "; ".join(entry["examples"]) + more
    else:
        entry["detail"] = ""
    return entry


def _target(kwargs: Mapping[str, Any]) -> str:
    """The expectation's columns and bounds in a short readable form."""
    if "column_A" in kwargs:
        op = "==" if "or_equal" not in kwargs else (">=" if kwargs.get("or_equal") else ">")
        text = f"{kwargs['column_A']} {op} {kwargs['column_B']}"
    elif "column_list" in kwargs:
        text = "unique " + ", ".join(kwargs["column_list"])
    else:
        text = str(kwargs.get("column"))
        if kwargs.get("min_value") is not None or kwargs.get("max_value") is not None:
            text += f" in [{kwargs.get('min_value')}, {kwargs.get('max_value')}]"
    cond = kwargs.get("row_condition")
    if cond:
        text += f" where {_condition(cond)}"
    return text


def _condition(cond: Any) -> str:
    if isinstance(cond, Mapping) and "operator" in cond:
        param = cond.get("parameter")
        if isinstance(param, list) and len(param) > 4:
            param = f"[{len(param)} values]"
        return f"{cond['column']['name']} {cond['operator']} {param}"
    return str(cond)


def _describe(frame: Any, index: Any, kwargs: Mapping[str, Any]) -> str:
    """A row GE flagged, by its keys and the values the expectation looked at."""
    if index not in frame.index:
        return f"row {index}"
    row = frame.loc[index]
    keys = [k for k in ("day", "slice_name", "slice_value", "metric", "averaging") if k in frame.columns]
    label = " ".join(f"{k}={_fmt(row[k])}" for k in keys)
    if "column_B" in kwargs:
        pair = (kwargs["column_B"], kwargs["column_A"]) if "or_equal" in kwargs else (
            kwargs["column_A"], kwargs["column_B"])
        looked: tuple[str, ...] = (*pair, *CONTEXT.get(pair[1], ()))
    elif "column_list" in kwargs:
        looked = ()
    else:
        column = kwargs["column"]
        looked = (column, "numerator", "denominator") if keys else (column, *CONTEXT.get(column, ()))
    looked = tuple(c for c in dict.fromkeys(looked) if c in frame.columns and c not in keys)
    values = " ".join(f"{c}={_fmt(row[c])}" for c in looked)
    return " ".join(p for p in (f"[{label}]" if label else "", values) if p) or f"row {index}"


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "null"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


__all__ = ["DEFAULT_MIN_TURNS", "MIN_TURNS_ENV", "RULES", "ValidationResult", "import_great_expectations_quietly",
           "min_turns_setting", "validate_day"]
