"""RECURRENCE-IDs of another value type or zone than DTSTART's, as python-recurring-ical-events' calendars write them
(a bug their suite found, pinned).

python-recurring-ical-events' calendars: a RECURRENCE-ID whose value type
or zone differs from DTSTART's (Exchange writes
``RECURRENCE-ID;TZID=...:20200416T000000`` on an all-day series) named no
occurrence, so the original stayed *and* the moved one was added. Its
``issue-36-recurrence-ID-format.ics`` (date-time RECURRENCE-IDs on DATE and
zoned series) is the reference for the matches below.
"""

from __future__ import annotations

import pytest

import calsim
from calsim.errors import ScheduleError
from calsim.importers import from_ical
from messages import assert_clear

RELEASE = "2026f"


def nominal(schedules, start: str, end: str) -> list[str]:
    f = calsim.expand(list(schedules), start, end, release=RELEASE)
    return f["nominal_local"].dt.to_string("%Y-%m-%dT%H:%M:%S%.f").to_list()


# -- RECURRENCE-ID of another value type or zone -----------------------------------------------


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
