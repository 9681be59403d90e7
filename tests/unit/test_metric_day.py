"""The metric day of a DAG run: the `day` param, else the data interval; the --logical-date trap refused."""

from __future__ import annotations

import datetime as dt

import pytest

from citecheck.job.metric_day import AmbiguousDay, metric_day

UTC = dt.UTC


def at(*args: int, tz: dt.tzinfo = UTC) -> dt.datetime:
    return dt.datetime(*args, tzinfo=tz)


def test_scheduled_and_backfill_runs_score_their_data_interval():
    assert metric_day(None, at(2026, 11, 25)) == dt.date(2026, 11, 25)
    assert metric_day(None, at(2026, 11, 25), logical_date=at(2026, 11, 25)) == dt.date(2026, 11, 25)


def test_the_day_param_wins_for_any_run_and_any_logical_date():
    inferred_from_now = at(2026, 11, 30)
    assert metric_day("2026-11-25", inferred_from_now, manual=True) == dt.date(2026, 11, 25)
    assert metric_day(" 2026-11-25 ", inferred_from_now, manual=True, logical_date=at(2026, 12, 1, 14, 3, 7)) == \
        dt.date(2026, 11, 25)
    assert metric_day(dt.date(2026, 11, 24), inferred_from_now, manual=True, logical_date=at(2026, 11, 25)) == \
        dt.date(2026, 11, 24)


def test_a_plain_manual_run_scores_yesterday_even_with_the_ui_default_logical_date():
    """The UI fills the logical date with the time the form opened: never a midnight."""
    assert metric_day(None, at(2026, 11, 30), manual=True) == dt.date(2026, 11, 30)
    assert metric_day(None, at(2026, 11, 30), manual=True, logical_date=at(2026, 12, 1, 9, 41, 12)) == \
        dt.date(2026, 11, 30)
    assert metric_day("", at(2026, 11, 30), manual=True) == dt.date(2026, 11, 30)


def test_a_manual_run_naming_another_midnight_is_refused_with_the_command_that_works():
    with pytest.raises(AmbiguousDay) as err:
        metric_day(None, at(2026, 11, 30), manual=True, logical_date=at(2026, 11, 25))
    message = str(err.value)
    assert "2026-11-25" in message and "2026-11-30" in message and "nothing was scored" in message
    assert """--conf '{"day": "2026-11-25"}'""" in message
    # the midnight that is the inferred day itself is not a contradiction
    assert metric_day(None, at(2026, 11, 30), manual=True, logical_date=at(2026, 11, 30)) == dt.date(2026, 11, 30)


def test_days_are_read_in_the_config_timezone():
    berlin = "Europe/Berlin"
    start = at(2026, 11, 24, 23)  # midnight in Berlin, as a UTC timestamp
    assert metric_day(None, start, timezone=berlin) == dt.date(2026, 11, 25)
    with pytest.raises(AmbiguousDay, match="2026-11-20"):
        metric_day(None, start, timezone=berlin, manual=True, logical_date=at(2026, 11, 19, 23))


@pytest.mark.parametrize("bad", ["2026-11-31", "yesterday", "25/11/2026", 20261125, at(2026, 11, 25)])
def test_a_day_param_that_is_not_a_date_is_a_readable_error(bad):
    with pytest.raises(AmbiguousDay, match="must be a date"):
        metric_day(bad, at(2026, 11, 30))


def test_no_day_and_no_interval_is_an_error():
    with pytest.raises(AmbiguousDay, match="no day to score"):
        metric_day(None, None)
