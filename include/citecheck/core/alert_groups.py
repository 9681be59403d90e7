"""Alerts a person can read: one template change moves a metric overall and in every slice that
carries traffic, so the step-change alerts of a day come in groups. A slice alert of a metric
that also alerts overall, with the same averaging and in the same direction on the same day,
folds under the overall alert; a slice moving against the overall trend, or alone, leads its own
group. Pure functions over alert dicts (`features.monitor` assigns the groups, the `alerts` table
keeps every row with them; `citecheck alerts`, the e-mail and the report show them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def slice_label(alert: Mapping[str, Any]) -> str:
    """`overall`, or `name=value` for a slice."""
    if alert["slice_name"] == "all":
        return "overall"
    return f"{alert['slice_name']}={alert['slice_value']}"


def alert_id(alert: Mapping[str, Any]) -> str:
    """A readable id of one alert of a day: metric, averaging and slice."""
    return f"{alert['metric']}|{alert.get('averaging') or 'micro'}|{slice_label(alert)}"


def group_alerts(alerts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every alert with its group: a slice alert of a metric that also alerts overall, with the
    same averaging and in the same direction, folds under the overall alert (`group_id` is the
    overall alert's id, `folded` true); any other alert (an overall one, a slice moving against the
    overall trend or alone) leads its own group (`group_id` its own id, `folded` false)."""
    overall = {(a["metric"], a.get("averaging"), a["direction"]): a for a in alerts if a["slice_name"] == "all"}
    out = []
    for a in alerts:
        lead = overall.get((a["metric"], a.get("averaging"), a["direction"])) if a["slice_name"] != "all" else None
        out.append({**a, "group_id": alert_id(lead if lead is not None else a), "folded": lead is not None})
    return out


def alert_groups(alerts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Stored alerts (`published.alerts_between`) as groups, overall leads first: {"lead", "echoes"
    (the folded slice alerts, largest move first), "also_in" (how many)}. Rows stored before alerts
    had groups (no `group_id`) each lead their own."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for a in alerts:
        key = (str(a.get("day")), a.get("group_id") or alert_id(a))
        group = groups.setdefault(key, {"lead": None, "echoes": []})
        if a.get("folded"):
            group["echoes"].append(a)
        else:
            group["lead"] = a
    out = []
    for group in groups.values():
        echoes = sorted(group["echoes"], key=lambda a: (-abs(a.get("size") or 0), slice_label(a)))
        lead = group["lead"] or echoes.pop(0)  # a lead lost from a partial read: the largest echo leads
        out.append({"lead": lead, "echoes": echoes, "also_in": len(echoes)})
    return sorted(out, key=lambda g: (str(g["lead"].get("day")), g["lead"]["slice_name"] != "all",
                                      g["lead"]["metric"], slice_label(g["lead"])))


def echo_summary(group: Mapping[str, Any], top: int = 3) -> str:
    """"also in 43 slices (most: answer_length=1-3 +0.21, …)", or "" for a group of one."""
    echoes = group["echoes"]
    if not echoes:
        return ""
    most = ", ".join(f"{slice_label(a)} {a.get('size') or 0:+.3g}" for a in echoes[:top])
    return f"also in {len(echoes)} slice{'s' if len(echoes) != 1 else ''} (moved most: {most})"
