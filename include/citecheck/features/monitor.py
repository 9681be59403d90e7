"""Step-change alerts: the day's published metrics against their own history (issue 13 §1).

For every monitored metric, averaging and slice, the day's value is compared with the same series
over the previous `history_days` published days. An alert needs both

- a change that matters: |value - baseline| at least the metric's absolute size (`abs`) and at
  least its relative size (`rel`, a share of the baseline), each where configured; the baseline
  is the history's median; and
- evidence that it is not noise, both from day to day and within the day: a level-shift test at
  the newest point (the day against the Student-t prediction interval of the history, scipy),
  p below `alpha`; and the baseline outside the day's own interval (`ci_low`, `ci_high`) where
  the metric row has one, else, for a micro row counting events, a sampling test (the day's
  count against the history's pooled rate: exact binomial for a rate, Poisson for a count per
  answer), p below `alpha`, so a few events in a small slice are not a step.

A step alerts once, on its first day: a series where one of the previous `ONGOING_DAYS`
published days already stood at the new level (its change against today's baseline matters, in
the same direction) is `ongoing`.
Too little history (fewer than `min_history` points) means no alert, counted in the stats;
so are slices whose day has fewer than `min_denominator` units in the metric's denominator.

Configuration, the `[monitor]` section of the TOML config (every key optional):

```toml
[monitor]
metrics = ["unknown_labels_per_1000_answers", "attachment_rate"]   # default: DEFAULT_METRICS
averaging = ["micro"]
history_days = 28
min_history = 14
min_denominator = 50
alpha = 0.001
notify_to = ["quality-team@example.com"]            # e-mail recipients of the notifier
report_url = "http://localhost:8080/citecheck/report/{day}"

[monitor.thresholds.attachment_rate]
abs = 0.05      # and/or rel = 0.25
```
"""

from __future__ import annotations

import datetime as dt
import html
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from citecheck.core.alert_groups import alert_groups, echo_summary, group_alerts, slice_label
from citecheck.core.config import Config, ConfigError, check_keys, layer_section, register_section
from citecheck.core.metrics import BY_NAME, METRIC_NAMES, MONITORED_METRICS, REGISTRY
from citecheck.core.metrics.display import format_value
from citecheck.stats.change_detection import level_shift_p, sampling_p

# The monitored metrics and their step sizes by default: the registry's `watch` field.
DEFAULT_METRICS = MONITORED_METRICS


@dataclass(frozen=True)
class Threshold:
    """The size of a change that matters: absolute and/or relative to the baseline."""

    abs: float | None = None
    rel: float | None = None

    def matters(self, baseline: float, size: float) -> bool:
        if size == 0:
            return False
        if self.abs is not None and abs(size) < self.abs:
            return False
        return self.rel is None or baseline == 0 or abs(size) >= self.rel * abs(baseline)

    def describe(self) -> str:
        parts = ([f"abs {self.abs:g}"] if self.abs is not None else []) + (
            [f"rel {self.rel:.0%}"] if self.rel is not None else [])
        return " and ".join(parts) or "any change"


DEFAULT_THRESHOLDS: dict[str, Threshold] = {m.name: Threshold(abs=m.watch.abs, rel=m.watch.rel)
                                             for m in REGISTRY if m.watch is not None}
FALLBACK_THRESHOLD = Threshold(rel=0.25)  # a configured metric without its own threshold
ONGOING_DAYS = 3  # a change already seen on one of these last days is not a new step


@dataclass(frozen=True)
class MonitorSettings:
    metrics: tuple[str, ...] = DEFAULT_METRICS
    averaging: tuple[str, ...] = ("micro",)
    history_days: int = 28
    min_history: int = 14
    min_denominator: float = 50.0
    alpha: float = 0.001
    thresholds: Mapping[str, Threshold] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    notify_to: tuple[str, ...] = ()
    report_url: str = "http://localhost:8080/citecheck/report/{day}"

    def threshold(self, metric: str) -> Threshold:
        return self.thresholds.get(metric, FALLBACK_THRESHOLD)

    def report_link(self, day: dt.date) -> str:
        return self.report_url.replace("{day}", day.isoformat())

MONITOR_KEYS = register_section("monitor", ("metrics", "averaging", "history_days", "min_history", "min_denominator",
                                            "alpha", "thresholds", "notify_to", "report_url"))


def monitor_settings(config: Config | Mapping[str, Any] | None) -> MonitorSettings:
    """The `[monitor]` section of a config (or that section as a mapping), validated."""
    if isinstance(config, Config):
        section = layer_section(config, "monitor")
    else:
        section = dict(config or {})
        check_keys("monitor", section, MONITOR_KEYS)
    values: dict[str, Any] = {}
    for key in ("metrics", "averaging", "notify_to"):
        if key in section:
            value = section[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"config: monitor.{key} must be a list of strings")
            values[key] = tuple(value)
    bad = sorted(set(values.get("metrics", ())) - set(METRIC_NAMES))
    if bad:
        raise ConfigError(f"config: monitor.metrics has unknown metric(s) {bad}")
    bad = sorted(set(values.get("averaging", ())) - {"micro", "macro"})
    if bad:
        raise ConfigError(f"config: monitor.averaging must be micro and/or macro, not {bad}")
    for key, kind, low in (("history_days", int, 1), ("min_history", int, 2), ("min_denominator", float, 0),
                           ("alpha", float, 0)):
        if key in section:
            value = section[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and
                                                                                 not isinstance(value, int)):
                raise ConfigError(f"config: monitor.{key} must be a number")
            if value < low or (key == "alpha" and not 0 < value < 1):
                raise ConfigError(f"config: monitor.{key} = {value} is out of range")
            values[key] = kind(value)
    if "report_url" in section:
        if not isinstance(section["report_url"], str):
            raise ConfigError("config: monitor.report_url must be a string")
        values["report_url"] = section["report_url"]
    thresholds = dict(DEFAULT_THRESHOLDS)
    for metric, spec in (section.get("thresholds") or {}).items():
        if metric not in METRIC_NAMES:
            raise ConfigError(f"config: monitor.thresholds names an unknown metric {metric!r}")
        if not isinstance(spec, dict) or not spec or set(spec) - {"abs", "rel"} or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in spec.values()):
            raise ConfigError(f"config: monitor.thresholds.{metric} must set abs and/or rel (non-negative numbers)")
        thresholds[metric] = Threshold(abs=spec.get("abs"), rel=spec.get("rel"))
    return MonitorSettings(**values, thresholds=thresholds)


# --- the rule, on one series ----------------------------------------------------------------

def check_series(history: Sequence[float], row: Mapping[str, Any], threshold: Threshold,
                 settings: MonitorSettings, pooled: Mapping[str, Any] | None = None
                 ) -> tuple[str, dict[str, Any] | None]:
    """(outcome, alert or None) for one series: `history` are its previous values (oldest first),
    `row` the day's metric row (value, denominator, optional ci_low/ci_high). `pooled`, for a
    series of event counts: {"count", "trials", "rate", "per_unit"} of the day against the
    history's pooled rate (the sampling test). Outcomes: alert, null_value, small_denominator,
    short_history, small_change, ongoing, no_evidence."""
    value = row.get("value")
    if value is None:
        return "null_value", None
    if (row.get("denominator") or 0) < settings.min_denominator:
        return "small_denominator", None
    if len(history) < settings.min_history:
        return "short_history", None
    baseline = statistics.median(history)
    size = value - baseline
    if not threshold.matters(baseline, size):
        return "small_change", None
    direction = "up" if size > 0 else "down"
    for earlier in history[-ONGOING_DAYS:]:
        if threshold.matters(baseline, earlier - baseline) and (earlier > baseline) == (size > 0):
            return "ongoing", None
    p = level_shift_p(history, value)
    if p >= settings.alpha:
        return "no_evidence", None
    evidence = (f"level-shift test against {len(history)} history days "
                f"(Student-t prediction interval) p={p:.2g} < {settings.alpha:g}")
    low, high = row.get("ci_low"), row.get("ci_high")
    if low is not None and high is not None:
        if low <= baseline <= high:
            return "no_evidence", None
        evidence += f"; baseline outside the day's interval [{low:.4g}, {high:.4g}]"
    elif pooled is not None:
        q = sampling_p(pooled["count"], pooled["trials"], pooled["rate"], per_unit=pooled["per_unit"])
        if q >= settings.alpha:
            return "no_evidence", None
        test = "Poisson" if pooled["per_unit"] else "binomial"
        evidence += f"; sampling test ({test}, {pooled['count']:g} of {pooled['trials']:g}) p={q:.2g}"
    rule = (f"step {direction}: {value:.4g} vs baseline {baseline:.4g} (median of {len(history)} days), "
            f"change {size:+.4g} meets {threshold.describe()}; {evidence}")
    return "alert", {"baseline": baseline, "value": value, "direction": direction, "size": size, "rule": rule}


# --- the day ---------------------------------------------------------------------------------

def as_monitor_settings(settings: Any) -> MonitorSettings:
    """`MonitorSettings` from itself, a `Config` (its `[monitor]` section) or a `JobSettings`."""
    if isinstance(settings, MonitorSettings):
        return settings
    return monitor_settings(settings if isinstance(settings, Config) else settings.config)


CRITERION_SLICE = "criterion"  # the slice name of a failed acceptance criterion's alert


def criteria_alerts(criteria_rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One alert per acceptance criterion the day failed (SPEC 5.1; `criteria_results` rows): the
    metric, the criterion as its slice, the bound as the baseline, the day's value."""
    out = []
    for c in criteria_rows:
        if c["decision"] != "fail" or c["value"] is None or c["bound"] is None:
            continue
        on = "its whole 95% interval" if c["on_rule"] == "interval" else "its value"
        out.append({"metric": c["metric"], "slice_name": CRITERION_SLICE, "slice_value": c["criterion"],
                    "averaging": c["averaging"], "baseline": c["bound"], "value": c["value"],
                    "direction": "down" if c["bound_kind"] == "min" else "up", "size": c["value"] - c["bound"],
                    "rule": f"acceptance criterion {c['criterion']!r} failed: {on} is beyond "
                            f"{c['bound_kind']} {c['bound']:g} (scope {c['scope']})"})
    return out


def assess_day(day: dt.date, run_id: str, rows: Sequence[Mapping[str, Any]], history_days: Sequence[dt.date],
               ms: MonitorSettings, criteria_rows: Sequence[Mapping[str, Any]] = ()
               ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(alerts, stats) of the published `day` against its history: `rows` are the published metric
    rows (`citecheck.warehouse.read_model.metric_rows`) of `history_days` and of the day, for the
    monitored metrics and averagings; `criteria_rows`: the day's `criteria_results` (a failed
    criterion alerts, whatever the history). Pure: the job's monitor step reads and stores."""
    by_day: dict[dt.date, dict[tuple[str, str, str, str], Mapping[str, Any]]] = {d: {} for d in (*history_days, day)}
    for row in rows:
        if row["day"] in by_day:
            by_day[row["day"]][(row["metric"], row["slice_name"], row["slice_value"], row["averaging"])] = row
    today = by_day.pop(day)
    outcomes: Counter[str] = Counter()
    alerts = []
    for key, row in sorted(today.items()):
        metric, slice_name, slice_value, averaging = key
        past = [r for d in history_days if (r := by_day[d].get(key)) is not None and r.get("value") is not None]
        outcome, alert = check_series([r["value"] for r in past], row, ms.threshold(metric), ms,
                                      pooled_counts(metric, averaging, row, past))
        outcomes[outcome] += 1
        if alert is not None:
            alerts.append({"metric": metric, "slice_name": slice_name, "slice_value": slice_value,
                           "averaging": averaging, **alert})
    reason = None
    if not today:
        reason = f"no published metrics for {day}"
    elif len(history_days) < ms.min_history:
        reason = (f"too little history: {len(history_days)} published day(s) before {day}, the monitor needs "
                  f"{ms.min_history}; no alerts")
    failed = criteria_alerts(criteria_rows)
    alerts = group_alerts([*alerts, *failed])
    stats = {"day": day.isoformat(), "run_id": run_id, "history_days": len(history_days),
             "criteria_failed": len(failed),
             "history_from": history_days[0].isoformat() if history_days else None, "series_checked": len(today),
             "alerts": len(alerts), "alert_groups": len({a["group_id"] for a in alerts}),
             "outcomes": dict(sorted(outcomes.items())), "reason": reason}
    return alerts, stats


def pooled_counts(metric: str, averaging: str, row: Mapping[str, Any], past: Sequence[Mapping[str, Any]]
                  ) -> dict[str, Any] | None:
    """The sampling test's inputs for a micro row of a counted metric (None otherwise): the day's
    event count and trials, the history's pooled rate, and whether it is a count per unit."""
    entry = BY_NAME.get(metric)
    if averaging != "micro" or entry is None or entry.derived or row.get("numerator") is None:
        return None
    scale = entry.scale
    events = sum(r["numerator"] or 0 for r in past) / scale
    trials = sum(r["denominator"] or 0 for r in past)
    if not trials:
        return None
    return {"count": row["numerator"] / scale, "trials": row["denominator"] or 0, "rate": events / trials,
            "per_unit": not entry.rate}


def alert_message(alerts: Sequence[Mapping[str, Any]], day: dt.date, report_link: str) -> tuple[str, str]:
    """(subject, HTML body) of the alert e-mail: one row per alert group (metric, slice, baseline,
    value, direction, and the slices that only echo an overall move, folded under it) and the
    report link; only metric names, slice names and numbers, never answer or passage text."""
    groups = alert_groups(alerts)
    subject = f"citecheck: {len(alerts)} metric alert(s) in {len(groups)} group(s) for {day.isoformat()}"
    rows = "".join(
        f"<tr><td>{html.escape(g['lead']['metric'])}</td><td>{html.escape(slice_label(g['lead']))}</td>"
        f"<td>{format_value(g['lead']['metric'], g['lead']['baseline'])}</td>"
        f"<td>{format_value(g['lead']['metric'], g['lead']['value'])}</td>"
        f"<td>{html.escape(g['lead']['direction'])}</td><td>{html.escape(echo_summary(g))}</td></tr>"
        for g in groups)
    body = (f"<p>Step changes in the citation metrics of {day.isoformat()}: {len(alerts)} alert(s); slices that "
            "move with an overall alert are folded under it.</p>"
            "<table><tr><th>metric</th><th>slice</th><th>baseline</th><th>value</th><th>direction</th>"
            "<th>also in</th></tr>"
            f"{rows}</table><p>Report: <a href=\"{html.escape(report_link)}\">{html.escape(report_link)}</a></p>")
    return subject, body
