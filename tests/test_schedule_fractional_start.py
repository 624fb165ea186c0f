"""A start with a fraction of a second, as python-dateutil's own suite reads it (a bug its suite found, pinned).

python-dateutil's ``test_rrule.py::testDTStartWithMicroseconds``:
``rrule(DAILY, count=3, dtstart=datetime(1997, 9, 2, 9, 0, 0, 500000))`` is
09:00 on Sep 2, 3 and 4. dateutil's ``rrule.__init__`` drops the microseconds
(``dtstart.replace(microsecond=0)``); calsim used the untruncated start as the
lower bound of the instances, so 09:00:00 on Sep 2 fell below it and the
series began on the 3rd. The fraction is now dropped once, when the Schedule
is built (``RRule.anchor``). Cron, Every and Window keep the fraction: for
them the start is not a DTSTART (see the last tests of the section).
"""

from __future__ import annotations

import datetime as dt

from dateutil.rrule import DAILY, rrule

import calsim

RELEASE = "2026f"


def nominal(schedules, start: str, end: str) -> list[str]:
    f = calsim.expand(list(schedules), start, end, release=RELEASE)
    return f["nominal_local"].dt.to_string("%Y-%m-%dT%H:%M:%S%.f").to_list()


# -- DTSTART with a fraction of a second --------------------------------------------------------

SEP_1997 = ("1997-09-01T00:00Z", "1997-09-10T00:00Z")
THREE_DAYS = ["1997-09-02T09:00:00", "1997-09-03T09:00:00", "1997-09-04T09:00:00"]


def test_daily_count_3_from_0900_and_a_half_second_is_0900_on_three_days_like_dateutil():
    start = dt.datetime(1997, 9, 2, 9, 0, 0, 500000)  # the dateutil test's DTSTART
    oracle = [t.isoformat() for t in rrule(DAILY, count=3, dtstart=start)]
    s = calsim.Schedule("dtstart-us", "UTC", start, "FREQ=DAILY;COUNT=3")
    assert nominal([s], *SEP_1997) == oracle == THREE_DAYS


def test_fractional_start_as_iso_text_anchors_the_same_rule():
    s = calsim.Schedule("dtstart-us", "UTC", "1997-09-02T09:00:00.5", "FREQ=DAILY;COUNT=3")
    assert nominal([s], *SEP_1997) == THREE_DAYS


def test_fractional_start_given_as_an_instant_anchors_its_whole_second_in_the_zone():
    # 13:00:00.5Z is 09:00:00.5 EDT: the rule runs at 09:00 New York, the 2nd included.
    s = calsim.Schedule("dtstart-us", "America/New_York", "1997-09-02T13:00:00.5Z", "FREQ=DAILY;COUNT=3")
    assert nominal([s], *SEP_1997) == THREE_DAYS


def test_preview_of_a_fractional_start_begins_at_the_first_instance():
    s = calsim.Schedule("dtstart-us", "America/New_York", "1997-09-02T13:00:00.5Z", "FREQ=DAILY;COUNT=3")
    f = calsim.preview(s, n=3, release=RELEASE)
    assert f["nominal_local"].dt.to_string("%Y-%m-%dT%H:%M:%S").to_list() == THREE_DAYS


def test_until_equal_to_the_whole_second_of_a_fractional_start_keeps_that_one_instance_like_dateutil():
    start = dt.datetime(1997, 9, 2, 9, 0, 0, 500000)
    oracle = [t.isoformat() for t in rrule(DAILY, dtstart=start, until=dt.datetime(1997, 9, 2, 9, 0))]
    s = calsim.Schedule("dtstart-us", "UTC", start, "FREQ=DAILY;UNTIL=19970902T090000")
    assert nominal([s], *SEP_1997) == oracle == ["1997-09-02T09:00:00"]


def test_cron_start_with_a_fraction_is_a_lower_bound_so_0900_that_day_is_not_a_run():
    # A cron start is when the schedule begins to exist, not an instance: cron fires on
    # whole minutes, and 09:00:00 is half a second before a 09:00:00.5 start.
    s = calsim.Schedule("cron-us", "UTC", "1997-09-02T09:00:00.5", "0 9 * * *")
    assert nominal([s], "1997-09-01T00:00Z", "1997-09-05T00:00Z") == ["1997-09-03T09:00:00", "1997-09-04T09:00:00"]


def test_every_keeps_the_fraction_of_its_start_as_the_phase_of_the_interval():
    # Elapsed time from the start instant: nothing calendar-like to truncate.
    s = calsim.Schedule("every-us", "UTC", "1997-09-02T09:00:00.5", calsim.Every("24h"))
    assert nominal([s], "1997-09-01T00:00Z", "1997-09-04T00:00Z") == [
        "1997-09-02T09:00:00.500", "1997-09-03T09:00:00.500"]


def test_window_start_with_a_fraction_is_a_lower_bound_like_cron():
    # Window's slots are counted from the window's own start (09:00 each day), not
    # from the schedule's; the schedule start only bounds them, as for cron.
    s = calsim.Schedule("window-us", "UTC", "1997-09-02T09:00:00.5", calsim.Window("09:00", "09:02", "1min"))
    assert nominal([s], "1997-09-01T00:00Z", "1997-09-04T00:00Z") == [
        "1997-09-02T09:01:00", "1997-09-03T09:00:00", "1997-09-03T09:01:00"]
