"""A metric as a person reads it, from the registry's display information (`Metric.units`,
`scale`, `harmonic_mean_of`): the CLI, the report and the alert texts print through here.

- a rate: "37.5%"; a count per 1,000: "132.7 per 1,000 answers" (`format_value` gives the
  number alone, for tables whose column already names the metric);
- its counts: "43 opens / 324 answers" (a per-1,000 metric's numerator is stored times 1,000:
  the events are shown, not 43000);
- a harmonic mean (F1): next to its parts, "recall 95.1% · precision 97.9%", never its
  internal 2PR / (P + R) numerator and denominator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citecheck.core.metrics.definitions import BY_NAME

NULL = "n/a"


def format_value(name: str, value: float | None) -> str:
    """The value alone: rates in percent with one decimal, counts per 1,000 with one decimal, an
    unknown metric with three significant digits; "n/a" for null."""
    if value is None:
        return NULL
    m = BY_NAME.get(name)
    if m is None:
        return f"{value:.3g}"
    if m.rate:
        return f"{value * 100:.1f}%"
    return f"{value:.1f}"


def with_unit(name: str, value: float | None) -> str:
    """The value with its unit where the number alone does not say it: "132.7 per 1,000 answers"."""
    m = BY_NAME.get(name)
    text = format_value(name, value)
    if m is None or m.rate or value is None:
        return text
    return f"{text} per {m.scale:,.0f} {m.units[1]}"


def count(n: float) -> str:
    """A count as a person writes it: 1,234; a non-whole count (macro sums, weights) with one decimal."""
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.1f}"


def fraction(row: Mapping[str, Any], day_rows: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """What a metric row's value is made of: "43 opens / 324 answers"; for a harmonic mean its
    parts from `day_rows` (metric → row of the same slice and averaging): "recall 95.1% ·
    precision 97.9%". Empty when there is nothing to say (an unknown metric, no parts given)."""
    m = BY_NAME.get(row["metric"])
    if m is None:
        return ""
    if m.harmonic_mean_of is not None:
        if day_rows is None:
            return ""
        return _parts(m.harmonic_mean_of, {p: (day_rows.get(p) or {}).get("value") for p in m.harmonic_mean_of})
    numerator, denominator = row.get("numerator"), row.get("denominator")
    if numerator is None or denominator is None:
        return ""
    return f"{count(numerator / m.scale)} {m.units[0]} / {count(denominator)} {m.units[1]}"


def counts_fraction(name: str, counts: Mapping[str, float], values: Mapping[str, float | None]) -> str:
    """`fraction` of a metric from pooled counts (`score`'s "counts") and its values (for a
    harmonic mean's parts): "3 supported / 8 judged sentences"."""
    m = BY_NAME[name]
    if m.harmonic_mean_of is not None:
        return _parts(m.harmonic_mean_of, values)
    if m.numerator not in counts or m.denominator not in counts:
        return ""
    return f"{count(counts[m.numerator])} {m.units[0]} / {count(counts[m.denominator])} {m.units[1]}"


def _parts(parts: tuple[str, str], values: Mapping[str, float | None]) -> str:
    return " · ".join(f"{_short(p)} {format_value(p, values.get(p))}" for p in parts)


def difference(name: str, value: float | None) -> str:
    """A change of the metric: a rate's in percentage points ("+2.1 pp"), another's in its unit."""
    if value is None:
        return NULL
    m = BY_NAME.get(name)
    if m is not None and m.rate:
        return f"{value * 100:+.1f} pp"
    return f"{value:+.3g}" if m is None else f"{value:+.1f}"


def interval(name: str, low: float | None, high: float | None) -> str:
    """A 95% interval in the metric's own format: "[35.1%, 40.2%]"; empty without one."""
    if low is None or high is None:
        return ""
    return f"[{format_value(name, low)}, {format_value(name, high)}]"


def metric_line(row: Mapping[str, Any], day_rows: Mapping[str, Mapping[str, Any]] | None = None,
                width: int = 34) -> str:
    """One published metric row for a terminal: name, value, what it is made of, its interval."""
    span = interval(row["metric"], row.get("ci_low"), row.get("ci_high"))
    made_of = fraction(row, day_rows)
    return (f"{row['metric']:<{width}}{format_value(row['metric'], row.get('value')):>8}"
            + (f"  ({made_of})" if made_of else "") + (f"  95% {span}" if span else ""))


def _short(name: str) -> str:
    """A part's name inside a harmonic mean's line: `citation_recall` → recall."""
    return name.removeprefix("citation_").removesuffix("_rate").replace("_", " ")


def describe(row: Mapping[str, Any], day_rows: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """One line: the value with its unit and, in parentheses, what it is made of."""
    made_of = fraction(row, day_rows)
    value = with_unit(row["metric"], row.get("value"))
    return f"{value} ({made_of})" if made_of else value
