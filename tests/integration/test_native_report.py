"""The daily report shows native citations' pointer problems by kind and the no_source_text share."""

from __future__ import annotations

import datetime as dt
import re

from test_native_warehouse import DAY, _turns

from citecheck import job
from citecheck import warehouse as W
from citecheck.report import build_report
from helpers import score_dicts


def test_the_report_lists_pointer_problems_by_kind_and_the_share_without_source_text(engine):
    turns, judge = _turns()
    W.load_turns(engine, turns)
    job.run_day(engine, dt.date.fromisoformat(DAY), job.JobSettings(judge_spec=judge, unjudged_limit=1.0))
    html = build_report(engine, dt.date.fromisoformat(DAY))
    counts = score_dicts(turns, judge)["counts"]
    section = html[html.index('<section id="native">'):html.index('<section id="trends">')]
    shown = dict(re.findall(r'<td data-kind="([a-z_]+)">[a-z_]+</td><td class="num">(\d+)</td>', section))
    expected = {k.removeprefix("pointer_problem_citations_"): str(v) for k, v in counts.items()
                if k.startswith("pointer_problem_citations_") and v}
    assert shown == expected and len(shown) >= 6
    assert 'data-metric="no_source_text_rate"' in section and 'data-metric="cited_char_share"' in section
    row = re.search(r'data-metric="no_source_text_rate">[^<]*</td>\s*<td class="fraction">(\d+) without source text / '
                    r'(\d+) selected sentences</td>', section)
    assert row and int(row.group(1)) == counts["no_source_text_sentences"] == 5
    assert int(row.group(2)) == counts["selected_sentences"]


def test_a_markers_only_day_has_no_native_section(engine):
    from helpers import publish_orbit_days

    day = dt.date(2026, 11, 30)
    publish_orbit_days(engine, [day])
    assert '<section id="native">' not in build_report(engine, day)
