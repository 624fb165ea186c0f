"""Two bugs found by running peer test suites against calsim (issue 14, item 5), pinned.

(a) python-dateutil's ``test_rrule.py::testDTStartWithMicroseconds``:
``rrule(DAILY, count=3, dtstart=datetime(1997, 9, 2, 9, 0, 0, 500000))`` is
09:00 on Sep 2, 3 and 4. dateutil's ``rrule.__init__`` drops the microseconds
(``dtstart.replace(microsecond=0)``); calsim used the untruncated start as the
lower bound of the instances, so 09:00:00 on Sep 2 fell below it and the
series began on the 3rd. The fraction is now dropped once, when the Schedule
is built (``RRule.anchor``). Cron, Every and Window keep the fraction: for
them the start is not a DTSTART (see the last tests of the section).

(b) python-recurring-ical-events' calendars: a RECURRENCE-ID whose value type
or zone differs from DTSTART's (Exchange writes
``RECURRENCE-ID;TZID=...:20200416T000000`` on an all-day series) named no
occurrence, so the original stayed *and* the moved one was added. Its
``issue-36-recurrence-ID-format.ics`` (date-time RECURRENCE-IDs on DATE and
zoned series) is the reference for the matches below.
"""

from __future__ import annotations

import datetime as dt

import pytest
from dateutil.rrule import DAILY, rrule

import calsim
from calsim.errors import ScheduleError
from calsim.importers import from_ical
from messages import assert_clear

RELEASE = "2026f"


def nominal(schedules, start: str, end: str) -> list[str]:
    f = calsim.expand(list(schedules), start, end, release=RELEASE)
    return f["nominal_local"].dt.to_string("%Y-%m-%dT%H:%M:%S%.f").to_list()


# -- (a) DTSTART with a fraction of a second --------------------------------------------------------

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


# -- (b) RECURRENCE-ID of another value type or zone -----------------------------------------------


def ics(*events: list[str]) -> str:
    body = "\n".join("BEGIN:VEVENT\n" + "\n".join(lines) + "\nEND:VEVENT" for lines in events)
    return f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//t//EN\n{body}\nEND:VCALENDAR\n"


def days(imported, start="2020-04-01T00:00Z", end="2020-10-01T00:00Z") -> list[str]:
    return [t[5:10] + " " + t[11:16] for t in nominal(imported, start, end)]


def notes(imported) -> str:
    return imported.sources[imported[0].id].notes[-1]


ALL_DAY_APRIL = ["UID:x", "DTSTART;VALUE=DATE:20200413", "RRULE:FREQ=DAILY;COUNT=5"]


def test_exchange_all_day_override_with_a_tzid_midnight_replaces_the_day_it_names():
    imported = from_ical(ics(ALL_DAY_APRIL, ["UID:x", "RECURRENCE-ID;TZID=Pacific Standard Time:20200416T000000",
                                             "DTSTART;VALUE=DATE:20200418"]), zone="Europe/Berlin")
    assert days(imported) == ["04-13 00:00", "04-14 00:00", "04-15 00:00", "04-17 00:00", "04-18 00:00"]
    assert notes(imported) == (
        "RECURRENCE-ID 2020-04-16T00:00:00 (line 9) moves or cancels one occurrence "
        "(a DATE-TIME 2020-04-16T00:00:00-07:00 on an all-day series: matched by its date)")


def test_exchange_cancelled_all_day_occurrence_with_a_tzid_removes_that_day():
    imported = from_ical(ics(ALL_DAY_APRIL, ["UID:x", "STATUS:CANCELLED",
                                             "RECURRENCE-ID;TZID=W. Europe Standard Time:20200416T000000"]))
    assert days(imported) == ["04-13 00:00", "04-14 00:00", "04-15 00:00", "04-17 00:00"]


def test_utc_datetime_recurrence_id_on_an_all_day_series_matches_its_date():
    # issue-36-recurrence-ID-format.ics, "Modified event 2": RECURRENCE-ID:20200921T000000Z,
    # here on a series read in New York, where that instant is still the 20th.
    imported = from_ical(ics(["UID:x", "DTSTART;VALUE=DATE:20200907", "RRULE:FREQ=WEEKLY;COUNT=3"],
                             ["UID:x", "DTSTART;VALUE=DATE:20200922", "RECURRENCE-ID:20200921T000000Z"]),
                         zone="America/New_York")
    assert days(imported) == ["09-07 00:00", "09-14 00:00", "09-22 00:00"]


def test_utc_late_evening_recurrence_id_on_an_all_day_series_matches_the_day_in_the_series_zone():
    # 22:00Z on Sep 13 is Berlin midnight of Sep 14, the series' day (a writer in UTC).
    imported = from_ical(ics(["UID:x", "DTSTART;VALUE=DATE:20200907", "RRULE:FREQ=WEEKLY;COUNT=3"],
                             ["UID:x", "DTSTART;VALUE=DATE:20200915", "RECURRENCE-ID:20200913T220000Z"]),
                         zone="Europe/Berlin")
    assert days(imported) == ["09-07 00:00", "09-15 00:00", "09-21 00:00"]


def test_utc_recurrence_id_on_a_zoned_series_matches_the_same_instant():
    # issue-36-recurrence-ID-format.ics, "Modified event": 12:00Z is 14:00 in Berlin.
    imported = from_ical(ics(["UID:x", "DTSTART;TZID=Europe/Berlin:20200910T140000", "RRULE:FREQ=WEEKLY;COUNT=3"],
                             ["UID:x", "DTSTART;TZID=Europe/Berlin:20200917T160000",
                              "RECURRENCE-ID:20200917T120000Z"]))
    assert days(imported) == ["09-10 14:00", "09-17 16:00", "09-24 14:00"]


def test_recurrence_id_in_another_zone_matches_its_wall_time_as_written_when_only_that_is_an_occurrence():
    # 14:00 New York is 20:00 Berlin, no occurrence; 14:00 as written is one.
    imported = from_ical(ics(["UID:x", "DTSTART;TZID=Europe/Berlin:20200910T140000", "RRULE:FREQ=WEEKLY;COUNT=3"],
                             ["UID:x", "DTSTART;TZID=Europe/Berlin:20200917T160000",
                              "RECURRENCE-ID;TZID=America/New_York:20200917T140000"]))
    assert days(imported) == ["09-10 14:00", "09-17 16:00", "09-24 14:00"]
    assert notes(imported).endswith("(in another zone: matched by its wall time as written)")


def test_date_recurrence_id_on_a_timed_series_replaces_that_days_occurrence():
    imported = from_ical(ics(["UID:x", "DTSTART;TZID=Europe/Berlin:20200910T140000", "RRULE:FREQ=WEEKLY;COUNT=3"],
                             ["UID:x", "DTSTART;TZID=Europe/Berlin:20200918T090000",
                              "RECURRENCE-ID;VALUE=DATE:20200917"]))
    assert days(imported) == ["09-10 14:00", "09-18 09:00", "09-24 14:00"]


def test_date_recurrence_id_naming_two_occurrences_of_a_timed_series_is_refused():
    text = ics(["UID:x", "DTSTART;TZID=Europe/Berlin:20200910T090000", "RRULE:FREQ=DAILY;BYHOUR=9,17;COUNT=6"],
               ["UID:x", "DTSTART;TZID=Europe/Berlin:20200911T100000", "RECURRENCE-ID;VALUE=DATE:20200911"])
    message = ("ical: team.ics VEVENT 'x' (line 9): RECURRENCE-ID: the DATE 2020-09-11 names 2 occurrences of a "
               "timed series (09:00, 17:00); give the DATE-TIME of the one it replaces")
    with pytest.raises(ScheduleError) as info:
        from_ical(text, source="team.ics", strict=True)
    assert str(info.value) == message
    assert_clear(info.value)
    # Not strict: the override alone is refused, with the same reason; the series keeps both occurrences.
    imported = from_ical(text, source="team.ics")
    assert [r.reason for r in imported.refused] == [message]
    assert len(days(imported)) == 6


def test_override_naming_no_occurrence_removes_nothing_and_says_so():
    imported = from_ical(ics(["UID:x", "DTSTART;TZID=Europe/Berlin:20200910T140000", "RRULE:FREQ=WEEKLY;COUNT=3"],
                             ["UID:x", "DTSTART;TZID=Europe/Berlin:20200918T160000",
                              "RECURRENCE-ID;TZID=Europe/Berlin:20200918T140000"]))
    assert days(imported) == ["09-10 14:00", "09-17 14:00", "09-18 16:00", "09-24 14:00"]
    assert notes(imported).endswith("(it names no occurrence of the series)")
