"""Alerts a person can read: slice alerts that echo an overall alert (same metric, averaging and
direction, same day) fold under it; a slice moving against the overall trend or alone stays its
own alert. The `alerts` table keeps every row with its group; `citecheck alerts`, the e-mail and
the report show the groups."""

from __future__ import annotations

import datetime as dt
import json

from citecheck.cli import main
from citecheck.core.alert_groups import alert_groups, echo_summary, group_alerts
from citecheck.features.monitor import alert_message
from citecheck.warehouse.alerts import replace_alerts
from citecheck.warehouse.read_model import alerts_between

DAY = dt.date(2026, 11, 30)


def _alert(metric, slice_name="all", slice_value="all", direction="up", size=0.1, averaging="micro"):
    return {"metric": metric, "slice_name": slice_name, "slice_value": slice_value, "averaging": averaging,
            "baseline": 0.2, "value": 0.2 + size, "direction": direction, "size": size, "rule": "step"}


ALERTS = [
    _alert("unknown_label_rate"),
    *[_alert("unknown_label_rate", "attribute:model", f"m{i}", size=0.05 + i / 100) for i in range(5)],
    _alert("unknown_label_rate", "attribute:locale", "de", direction="down", size=-0.04),  # against the trend
    _alert("unknown_label_rate", "attribute:locale", "fr", averaging="macro", size=0.2),  # macro: no overall macro
    _alert("citation_recall", "has_number", "yes", direction="down", size=-0.1),  # alone: recall does not alert overall
]


def test_slices_echoing_the_overall_alert_fold_under_it_and_the_others_stand_alone():
    grouped = {(a["metric"], a["slice_name"], a["slice_value"], a["averaging"]): a for a in group_alerts(ALERTS)}
    lead = grouped[("unknown_label_rate", "all", "all", "micro")]
    assert (lead["group_id"], lead["folded"]) == ("unknown_label_rate|micro|overall", False)
    for i in range(5):
        echo = grouped[("unknown_label_rate", "attribute:model", f"m{i}", "micro")]
        assert (echo["group_id"], echo["folded"]) == (lead["group_id"], True)
    for key in (("unknown_label_rate", "attribute:locale", "de", "micro"),
                ("unknown_label_rate", "attribute:locale", "fr", "macro"),
                ("citation_recall", "has_number", "yes", "micro")):
        assert grouped[key]["folded"] is False and grouped[key]["group_id"].endswith(f"{key[1]}={key[2]}")
    groups = alert_groups(group_alerts(ALERTS))
    assert (groups[0]["lead"]["slice_name"], groups[0]["also_in"]) == ("all", 5)  # overall leads come first
    assert len(groups) == 4 and sum(1 + g["also_in"] for g in groups) == len(ALERTS)
    assert echo_summary(groups[0]) == ("also in 5 slices (moved most: attribute:model=m4 +0.09, "
                                       "attribute:model=m3 +0.08, attribute:model=m2 +0.07)")
    assert echo_summary(groups[1]) == ""


def test_the_table_keeps_every_row_and_the_cli_and_email_show_the_groups(engine, capsys):
    replace_alerts(engine, DAY, "run-1", group_alerts(ALERTS))
    stored = alerts_between(engine, DAY, DAY)
    assert len(stored) == len(ALERTS)
    assert sum(bool(a["folded"]) for a in stored) == 5
    capsys.readouterr()
    assert main(["alerts", "--from", str(DAY), "--to", str(DAY)]) == 0
    text = capsys.readouterr().out
    assert text.count(f"{DAY}  ") == 4  # one line per group
    assert "└ also in 5 slices (moved most: attribute:model=m4" in text
    assert "9 alert(s) in 4 group(s) (--unfold lists the folded ones)" in text
    assert main(["alerts", "--from", str(DAY), "--to", str(DAY), "--unfold"]) == 0
    assert capsys.readouterr().out.count(f"{DAY}  ") == 9
    assert main(["alerts", "--from", str(DAY), "--to", str(DAY), "--json"]) == 0
    assert {a["group_id"] for a in json.loads(capsys.readouterr().out)} == {a["group_id"] for a in stored}
    subject, body = alert_message(stored, DAY, "http://127.0.0.1:8080/citecheck/report/2026-11-30")
    assert subject == "citecheck: 9 metric alert(s) in 4 group(s) for 2026-11-30"
    assert body.count("<tr><td>") == 4 and "also in 5 slices" in body
