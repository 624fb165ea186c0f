"""systemd ``.timer`` units: OnCalendar= lines to schedules with the systemd preset, detection by calsim.load."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.errors import CalsimError, InputError, RuleError
from calsim.importers import detect_format, from_systemd
from calsim.importers.systemd import timespan_us

EXAMPLE = Path(__file__).parents[2] / "data" / "examples" / "backup.timer"


def test_example_timer_gives_one_schedule_per_oncalendar_with_the_preset():
    t = from_systemd(EXAMPLE, zone="America/New_York")
    assert [(s.id, s.zone, s.kind) for s in t] == [("backup:1", "America/New_York", "oncalendar"),
                                                   ("backup:2", "Europe/Berlin", "oncalendar")]
    p = t.presets["backup:1"]
    assert (p.name, p.tick, p.policy.catchup, p.policy.jitter) == ("systemd", "1min", "latest",
                                                                    dt.timedelta(minutes=15))
    assert t.sources["backup:1"].command == "db-backup.service" and t.sources["backup:1"].line == 10


def test_load_detects_a_timer_file_by_its_timer_section():
    assert detect_format(EXAMPLE) == "systemd"
    assert [s.id for s in calsim.load(EXAMPLE)] == ["backup:1", "backup:2"]


def test_example_skips_0230_on_new_york_spring_forward():
    t = from_systemd(EXAMPLE, zone="America/New_York")
    f = calsim.expand([t[0]], "2026-03-08T00:00Z", "2026-03-09T00:00Z", release="2026f")
    assert f["notes"].to_list() == [["dst_gap_skipped"]]


def test_single_oncalendar_takes_the_unit_name_as_id():
    t = from_systemd("[Timer]\nOnCalendar=daily\n", source="/etc/systemd/system/logrotate.timer")
    assert [s.id for s in t] == ["logrotate"] and t.sources["logrotate"].command == "logrotate.service"


def test_empty_assignment_resets_the_oncalendar_list():
    t = from_systemd("[Timer]\nOnCalendar=hourly\nOnCalendar=\nOnCalendar=Mon 03:00\n", source="x.timer")
    assert [(s.id, s.rule) for s in t] == [("x", "OnCalendar=Mon 03:00")]


def test_defaults_are_systemds_no_persistent_and_one_minute_accuracy():
    t = from_systemd("[Timer]\nOnCalendar=daily\n")
    assert t[0].policy.catchup == "skip" and t.presets[t[0].id].tick == "1min"


def test_monotonic_timers_are_skipped_with_the_reason():
    t = from_systemd("[Timer]\nOnBootSec=15min\nOnCalendar=weekly\n", source="a.timer")
    assert [s.id for s in t] == ["a"]
    assert t.skipped[0].what == "OnBootSec=15min" and "monotonic" in t.skipped[0].reason


def test_continuation_lines_and_comments_are_read_as_systemd_syntax():
    t = from_systemd("; note\n[Timer]\n# c\nOnCalendar=Mon..Fri \\\n  09:00\nAccuracySec=1h 30min\n")
    # conf-parser.c turns the backslash into a space and appends the stripped next line
    assert t[0].rule == "OnCalendar=Mon..Fri  09:00" and t.presets[t[0].id].tick == "90min"


@pytest.mark.parametrize(("span", "us"), [("90", 90_000_000), ("2min 30s", 150_000_000), ("1.5h", 5_400_000_000),
                                          ("1d", 86_400_000_000), ("500ms", 500_000), ("1h30min", 5_400_000_000)])
def test_time_spans_follow_systemd_time(span, us):
    assert timespan_us(span) == us


def test_bad_oncalendar_names_file_line_and_expression():
    with pytest.raises(RuleError) as err:
        from_systemd("[Timer]\nOnCalendar=*-*-* 25:00\n", source="b.timer")
    assert str(err.value) == ("systemd: b.timer line 2: OnCalendar='*-*-* 25:00': OnCalendar: hour '25' is out "
                              "of range (allowed 0..23) in '*-*-* 25:00'")


def test_bad_boolean_names_the_line_and_the_allowed_values():
    with pytest.raises(InputError) as err:
        from_systemd("[Timer]\nPersistent=maybe\nOnCalendar=daily\n", source="b.timer")
    assert str(err.value) == ("systemd: b.timer line 2: Persistent='maybe' is not a boolean "
                              "(allowed yes/no, true/false, on/off, 1/0)")


def test_a_file_without_timer_section_is_refused():
    with pytest.raises(InputError, match=r"^systemd: <systemd text>: no \[Timer\] section"):
        from_systemd("[Service]\nExecStart=/bin/true\n")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, 700), junk=st.binary(max_size=40))
def test_fuzzed_timer_files_only_raise_calsim_errors(cut, junk):
    data = EXAMPLE.read_bytes()
    try:
        from_systemd(data[:cut] + junk + data[cut:], zone="America/New_York")
    except CalsimError:
        pass
