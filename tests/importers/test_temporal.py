"""Temporal ScheduleSpec JSON (``temporal schedule describe -o json``) to schedules with the temporal preset."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.errors import CalsimError, InputError, RuleError
from calsim.importers.temporal import from_temporal

EXAMPLE = Path(__file__).parents[2] / "data" / "examples" / "schedule.temporal.json"
UTC = dt.timezone.utc


def _spec(**spec):
    return json.dumps({"scheduleId": "s", "spec": spec})


def _due(imported, start, end, sid=None):
    f = calsim.expand(imported, start, end, release="2026f")
    if sid is not None:
        f = f.filter(f["schedule_id"] == sid)
    return [t.strftime("%Y-%m-%dT%H:%M:%S") if t else None for t in f["due_utc"].to_list()]


def _rng(a, b=None, step=None):
    r = {"start": a}
    if b is not None:
        r["end"] = b
    if step is not None:
        r["step"] = step
    return [r]


# -- the example file


def test_example_gives_one_schedule_per_calendar_and_interval_with_the_preset():
    t = from_temporal(EXAMPLE)
    assert [(s.id, s.zone, s.kind) for s in t] == [("schedule.temporal:1", "America/New_York", "cron"),
                                                   ("schedule.temporal:2", "America/New_York", "rrule"),
                                                   ("schedule.temporal:3", "America/New_York", "every")]
    p = t.presets["schedule.temporal:1"]
    assert (p.name, p.policy.overlap, p.policy.max_lateness, p.policy.jitter) == (
        "temporal", "buffer_one", dt.timedelta(hours=1), dt.timedelta(minutes=2))
    assert (t[0].gap, t[0].fold) == ("skip", "both")


def test_example_weekday_calendar_reads_back_as_the_cron_it_was_compiled_from():
    assert from_temporal(EXAMPLE)[0].rule == "30 2 * * 1-5"


def test_example_excludes_christmas_day_with_a_versioned_note():
    t = from_temporal(EXAMPLE)
    f = calsim.expand([t[0]], "2026-12-25T00:00Z", "2026-12-26T00:00Z", release="2026f")
    assert f["due_utc"].to_list() == [None]
    assert f["notes"].to_list()[0][0].startswith("excluded:temporal-exclude1@")


def test_example_end_time_bounds_every_rule():
    t = from_temporal(EXAMPLE)
    assert {s.effective_to for s in t} == {"2028-01-01T00:00:00Z"}  # endTime 23:59:59 is inclusive


def test_the_json_text_itself_is_read_with_source_naming_the_ids():
    text = EXAMPLE.read_text()
    assert [s.id for s in from_temporal(text, source="billing.json")] == ["billing:1", "billing:2", "billing:3"]


# -- calendars


def test_day_of_month_and_day_of_week_are_anded_as_temporal_does():
    # message.proto: "the special case ... treating day_of_month and day_of_week as 'or' ... is not implemented"
    cal = {"second": _rng(0), "minute": _rng(0), "hour": _rng(9), "dayOfMonth": _rng(1, 7), "month": _rng(1, 12),
           "year": _rng(2000, 2100), "dayOfWeek": _rng(1)}
    t = from_temporal(_spec(structuredCalendar=[cal]))
    assert t[0].kind == "rrule"
    assert _due(t, "2026-01-01T00:00Z", "2026-04-01T00:00Z") == [
        "2026-01-05T09:00:00", "2026-02-02T09:00:00", "2026-03-02T09:00:00"]


def test_an_omitted_zero_range_is_proto3s_zero():
    # describe's protojson drops zero fields: "second": [{"step": 1}] is second 0.
    cal = {"second": [{"step": 1}], "minute": [{"start": 5, "end": 5, "step": 1}], "hour": [{"step": 1}],
           "dayOfMonth": _rng(1, 31), "month": _rng(1, 12), "year": _rng(2000, 2100), "dayOfWeek": [{"end": 6}]}
    assert from_temporal(_spec(structuredCalendar=[cal]))[0].rule == "5 0 * * *"


def test_seconds_make_an_rrule_with_bysecond():
    t = from_temporal(_spec(cronString=["15,45 0 12 * * * *"]))
    assert t[0].rule == "FREQ=DAILY;BYHOUR=12;BYMINUTE=0;BYSECOND=15,45"
    assert _due(t, "2026-05-01T00:00Z", "2026-05-02T00:00Z") == ["2026-05-01T12:00:15", "2026-05-01T12:00:45"]


def test_a_year_range_becomes_the_start_and_until():
    t = from_temporal(_spec(cronString=["30 2 1 1 * 2027-2028"]))
    assert _due(t, "2026-01-01T00:00Z", "2030-01-01T00:00Z") == ["2027-01-01T02:30:00", "2028-01-01T02:30:00"]


def test_years_that_are_not_one_range_are_refused_with_the_field():
    with pytest.raises(RuleError, match=r"spec.cronString\[1\]: year 2026,2028: calsim imports one contiguous"):
        from_temporal(_spec(cronString=["0 0 1 1 * 2026,2028"]))


@pytest.mark.parametrize("cal", [
    {"second": _rng(0), "minute": _rng(0, 59, 15), "hour": _rng(8, 17), "dayOfMonth": _rng(1, 31),
     "month": _rng(1, 12), "year": _rng(2000, 2100), "dayOfWeek": _rng(1, 5)},
    {"second": _rng(30), "minute": _rng(10), "hour": _rng(0, 23, 6), "dayOfMonth": _rng(10, 20, 5),
     "month": _rng(3), "year": _rng(2000, 2100), "dayOfWeek": _rng(0, 6)},
    {"second": _rng(0), "minute": _rng(0), "hour": _rng(0), "dayOfMonth": _rng(13), "month": _rng(1, 12),
     "year": _rng(2026), "dayOfWeek": _rng(5)},
])
def test_calendar_round_trips_through_a_calsim_rule_instant_for_instant(cal):
    # The reference is Temporal's compiledCalendar.matches (calendar.go): every field ANDed, in UTC.
    def values(field):
        out = set()
        for r in cal[field]:
            a = r.get("start", 0)
            out.update(range(a, max(a, r.get("end", 0)) + 1, r.get("step", 0) or 1))
        return out
    v = {f: values(f) for f in cal}
    t0 = dt.datetime(2026, 3, 1, tzinfo=UTC)
    expected = []
    for k in range(int(92 * 86400 / 5)):
        ts = t0 + dt.timedelta(seconds=5 * k)
        if (ts.year in v["year"] and ts.month in v["month"] and ts.day in v["dayOfMonth"]
                and ts.isoweekday() % 7 in v["dayOfWeek"] and ts.hour in v["hour"] and ts.minute in v["minute"]
                and ts.second in v["second"]):
            expected.append(ts.strftime("%Y-%m-%dT%H:%M:%S"))
    t = from_temporal(_spec(structuredCalendar=[cal]))
    assert _due(t, "2026-03-01T00:00Z", t0 + dt.timedelta(days=92)) == expected


def test_calendar_spec_strings_take_temporals_defaults_of_midnight():
    t = from_temporal(_spec(calendar=[{"dayOfWeek": "MON"}]))
    assert t[0].rule == "0 0 * * 1"


def test_names_follow_temporals_prefixes_of_three_and_two_letters():
    t = from_temporal(_spec(calendar=[{"hour": "6", "month": "dec", "dayOfWeek": "fr"}]))
    assert t[0].rule == "0 6 * 12 5"


def test_a_calendar_with_an_empty_field_is_skipped_with_the_reason():
    cal = {"second": _rng(0), "minute": _rng(0), "hour": _rng(3), "dayOfMonth": _rng(1, 31), "month": _rng(1, 12),
           "year": [], "dayOfWeek": _rng(0, 6)}
    t = from_temporal(_spec(structuredCalendar=[cal], cronString=["0 4 * * *"]))
    assert [s.rule for s in t] == ["0 4 * * *"]
    assert "matches no time" in t.skipped[0].reason


# -- intervals


def test_interval_phase_matches_the_protos_own_example():
    # message.proto IntervalSpec: 28 days + 3d5h23m matches 2022-02-20T05:23:00Z.
    t = from_temporal(_spec(interval=[{"interval": "2419200s", "phase": "278580s"}]))
    assert "2022-02-20T05:23:00" in _due(t, "2022-02-01T00:00Z", "2022-03-01T00:00Z")


def test_interval_ignores_the_zone_and_never_meets_a_gap():
    t = from_temporal(_spec(interval=[{"interval": "3600s", "phase": "1140s"}], timezoneName="America/New_York"))
    assert _due(t, "2026-03-08T05:00Z", "2026-03-08T08:00Z") == [
        "2026-03-08T05:19:00", "2026-03-08T06:19:00", "2026-03-08T07:19:00"]


def test_every_cron_string_with_phase_becomes_an_interval():
    t = from_temporal(_spec(cronString=["@every 6h/15m"]))
    assert _due(t, "2026-01-01T00:00Z", "2026-01-01T13:00Z") == ["2026-01-01T00:15:00", "2026-01-01T06:15:00",
                                                                  "2026-01-01T12:15:00"]


def test_a_phase_not_below_the_interval_is_refused():
    with pytest.raises(RuleError, match=r"spec.interval\[1\]: phase 3600s must be less than the interval 3600s"):
        from_temporal(_spec(interval=[{"interval": "1h", "phase": "1h"}]))


# -- DST: calendar fields match the wall clock literally (message.proto timezone_name)


def test_0230_does_not_fire_on_new_york_spring_forward():
    t = from_temporal(_spec(cronString=["30 2 * * *"], timezoneName="America/New_York"))
    assert _due(t, "2026-03-08T00:00Z", "2026-03-09T00:00Z") == [None]


def test_0130_fires_twice_on_new_york_fall_back():
    t = from_temporal(_spec(cronString=["30 1 * * *"], timezoneName="America/New_York"))
    assert _due(t, "2026-11-01T00:00Z", "2026-11-02T00:00Z") == ["2026-11-01T05:30:00", "2026-11-01T06:30:00"]


def test_cron_tz_prefix_sets_the_zone_and_a_conflict_is_refused():
    assert from_temporal(_spec(cronString=["TZ=Asia/Tokyo 0 9 * * *"]))[0].zone == "Asia/Tokyo"
    with pytest.raises(RuleError, match="TZ=Asia/Tokyo conflicts with timezoneName 'UTC'"):
        from_temporal(_spec(cronString=["TZ=Asia/Tokyo 0 9 * * *"], timezoneName="UTC"))


# -- start, end, excludes


def test_start_and_end_time_are_inclusive():
    t = from_temporal(_spec(cronString=["0 9 * * *"], startTime="2026-05-02T09:00:00Z",
                            endTime="2026-05-04T09:00:00Z"))
    assert _due(t, "2026-05-01T00:00Z", "2026-05-06T00:00Z") == [
        "2026-05-02T09:00:00", "2026-05-03T09:00:00", "2026-05-04T09:00:00"]


def test_a_date_only_calendar_spec_exclude_removes_only_midnight_so_nothing_at_0900():
    t = from_temporal(_spec(cronString=["0 9 * * *"], excludeCalendar=[{"month": "12", "dayOfMonth": "25"}]))
    assert t[0].exclude == ()
    assert "matches none of this rule's times of day" in t.sources["s"].notes[0]


def test_a_date_only_exclude_does_remove_a_midnight_rule():
    t = from_temporal(_spec(cronString=["0 0 * * *"], excludeCalendar=[{"month": "12", "dayOfMonth": "25"}]))
    assert _due(t, "2026-12-25T00:00Z", "2026-12-26T00:00Z") == [None]


def test_an_exclude_covering_part_of_the_rules_times_is_refused():
    with pytest.raises(RuleError, match="calsim excludes whole local days, but this exclude covers only some"):
        from_temporal(_spec(cronString=["0 0,9 * * *"], excludeCalendar=[{"dayOfMonth": "25"}]))


# -- policies and state


@pytest.mark.parametrize("value,overlap", [("SCHEDULE_OVERLAP_POLICY_ALLOW_ALL", "allow"), ("AllowAll", "allow"),
                                           ("BUFFER_ALL", "buffer_all"), (5, "cancel_other"), (None, "skip"),
                                           ("SCHEDULE_OVERLAP_POLICY_UNSPECIFIED", "skip")])
def test_overlap_policy_is_read_in_every_spelling(value, overlap):
    doc = {"spec": {"cronString": ["0 * * * *"]}, "policies": {"overlapPolicy": value}}
    assert from_temporal(json.dumps(doc), source="x.json")[0].policy.overlap == overlap


def test_paused_schedule_is_imported_suspended_with_a_note():
    doc = {"schedule": {"spec": {"cronString": ["0 * * * *"]}, "state": {"paused": True}}}
    t = from_temporal(json.dumps(doc), source="p.json")
    assert t.presets["p"].suspended and "state.paused" in t.sources["p"].notes[0]


def test_snake_case_proto_names_are_read_too():
    t = from_temporal(json.dumps({"spec": {"cron_string": ["0 3 * * *"], "timezone_name": "Europe/Paris"}}),
                      source="x.json")
    assert (t[0].rule, t[0].zone) == ("0 3 * * *", "Europe/Paris")


# -- errors name the field and the value


@pytest.mark.parametrize("doc,error,message", [
    ("{not json", InputError, r"temporal: <temporal text>: not valid JSON \(Expecting property name"),
    ('{"info": {}}', InputError, "no schedule spec"),
    (_spec(structuredCalendar=[{"hour": [{"start": 24}]}]), RuleError,
     r"spec.structuredCalendar\[1\].hour\[1\]: start 24 is out of range \(allowed 0..23\)"),
    (_spec(cronString=["0 9 * *"]), RuleError, r"has 4 fields \(allowed 5, 6 or 7"),
    (_spec(cronString=["0 9 * * *"], jitter="soon"), InputError, r"spec.jitter: str 'soon' is not a duration"),
    (_spec(cronString=["0 9 * * *"], startTime="2026-01-01"), InputError, "spec.startTime: str '2026-01-01' is not"),
    (_spec(cronString=["0 9 * * *"], timezoneName="Mars/Base"), CalsimError, "Mars/Base"),
    (json.dumps({"spec": {"cronString": ["0 9 * * *"]}, "policies": {"overlapPolicy": "SOMETIMES"}}), InputError,
     "policies.overlapPolicy: unknown overlap policy str 'SOMETIMES'"),
])
def test_bad_input_raises_one_calsim_error_naming_the_field(doc, error, message):
    with pytest.raises(error, match=message):
        from_temporal(doc)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 3000) | st.text(max_size=8),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                     max_leaves=8)


def _paths(obj, path=()):
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, path + (i,))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzzed_describe_output_only_ever_raises_calsim_errors(data):
    doc = json.loads(EXAMPLE.read_text())
    paths = [p for p in _paths(doc) if p]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        node = doc
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = data.draw(_JSON)
        except (KeyError, IndexError, TypeError):
            pass
    try:
        t = from_temporal(json.dumps(doc), source="fuzz.json")
        calsim.expand(t, "2026-06-01T00:00Z", "2026-06-03T00:00Z", release="2026f")
    except CalsimError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_fuzzed_cron_strings_only_ever_raise_calsim_errors(text):
    try:
        from_temporal(_spec(cronString=[text]))
    except CalsimError as exc:
        assert "\n" not in str(exc)


# -- refusals: each calendar, cron string and interval is an item (issue 14 item 4)

_GOOD = {"structuredCalendar": {"second": _rng(0), "minute": _rng(0), "hour": _rng(7), "dayOfMonth": _rng(1, 31),
                                "month": _rng(1, 12), "year": _rng(2000, 2100), "dayOfWeek": _rng(0, 6)},
         "calendar": {"hour": "8"}, "cronString": "0 9 * * *", "@every": "@every 2h/5m",
         "interval": {"interval": "3h"}}
_BAD = {  # kind: (value, the refusal's what, its reason)
    "structuredCalendar": ({"hour": [{"start": 24}]}, "spec.structuredCalendar[1]",
                           r"spec.structuredCalendar\[1\].hour\[1\]: start 24 is out of range \(allowed 0..23\)"),
    "calendar": ({"dayOfWeek": "FUNDAY"}, "spec.calendar[1]",
                 r"spec.calendar\[1\].dayOfWeek: 'FUNDAY': 'FUNDAY' is out of range or not a value"),
    "cronString": ("0 9 * *", "spec.cronString[1]", r"spec.cronString\[1\]: '0 9 \* \*' has 4 fields"),
    "@every": ("@every 1h/2h", "spec.cronString[2]",
               r"spec.cronString\[2\]: phase 7200s must be less than the interval 3600s"),
    "interval": ({"interval": "1h", "phase": "90m"}, "spec.interval[1]",
                 r"spec.interval\[1\]: phase 5400s must be less than the interval 3600s"),
}


def _items(bad=()):
    """A spec with one item of each kind (two cron strings: a calendar, then an @every); ``bad`` kinds replaced."""
    pick = {k: _BAD[k][0] if k in bad else v for k, v in _GOOD.items()}
    return _spec(structuredCalendar=[pick["structuredCalendar"]], calendar=[pick["calendar"]],
                 cronString=[pick["cronString"], pick["@every"]], interval=[pick["interval"]])


@pytest.mark.parametrize("kind", list(_BAD))
def test_one_bad_item_is_refused_and_the_others_keep_the_ids_they_have_when_it_is_fixed(kind):
    fixed = from_temporal(_items())
    t = from_temporal(_items(bad={kind}))
    [r] = t.refused
    refused_id = fixed[r.source.item - 1].id
    assert [(s.id, s.rule) for s in t] == [(s.id, s.rule) for s in fixed if s.id != refused_id]
    assert refused_id == f"s:{r.source.item}" and len(t) == 4
    assert r.what == _BAD[kind][1]
    assert re.search(_BAD[kind][2], r.reason)


def test_a_refused_cron_string_keeps_its_text_in_the_source():
    t = from_temporal(_items(bad={"cronString"}))
    assert (t.refused[0].source.text, t.refused[0].source.item) == ("0 9 * *", 3)


def test_strict_raises_the_first_bad_item_in_id_order():
    with pytest.raises(RuleError, match=r"^temporal: <temporal text>: spec.calendar\[1\]\.dayOfWeek"):
        from_temporal(_items(bad={"interval", "calendar"}), strict=True)


def test_every_item_refused_raises_the_first_naming_the_others_as_every_importer_does():
    with pytest.raises(RuleError) as exc:
        from_temporal(_items(bad=set(_BAD)))
    assert re.search(_BAD["structuredCalendar"][2], str(exc.value))
    assert str(exc.value).endswith("(and 4 more item(s) refused; nothing imported)")
    assert [r.what for r in exc.value.refused] == ["spec.structuredCalendar[1]", "spec.calendar[1]",
                                                   "spec.cronString[1]", "spec.cronString[2]", "spec.interval[1]"]


def test_a_calendar_matching_no_time_still_takes_no_number_beside_a_refused_item():
    empty = dict(_GOOD["structuredCalendar"], year=[])
    t = from_temporal(_spec(structuredCalendar=[empty], cronString=["0 9 * *", "0 4 * * *"]))
    assert [s.id for s in t] == ["s:2"] and t.refused[0].source.item == 1 and len(t.skipped) == 1


def test_a_refused_cron_strings_tz_prefix_still_sets_the_zone_of_the_others():
    # Fixing the refused string must not move the others to another zone.
    t = from_temporal(_spec(cronString=["TZ=Asia/Tokyo 0 9 * *", "TZ=Asia/Tokyo 0 4 * * *"]))
    assert [(s.id, s.zone) for s in t] == [("s:2", "Asia/Tokyo")]


def test_a_tz_prefix_beside_a_string_without_one_refuses_the_file():
    # spec.go canonicalizeSpec compares every string's zone, "" for none (errConflictingTimezoneNames).
    with pytest.raises(RuleError, match=r"spec.cronString\[2\]: no TZ= conflicts with TZ=Asia/Tokyo"):
        from_temporal(_spec(cronString=["TZ=Asia/Tokyo 0 9 * * *", "0 4 * * *"]))


def test_cron_strings_with_different_tz_prefixes_refuse_the_file():
    with pytest.raises(RuleError, match=r"spec.cronString\[2\]: TZ=Europe/Paris conflicts with TZ=Asia/Tokyo"):
        from_temporal(_spec(cronString=["TZ=Asia/Tokyo 0 9 * * *", "TZ=Europe/Paris 0 4 * * *", "0 1 * * *"]))


@pytest.mark.parametrize("strict", [False, True])
def test_a_bad_shared_field_refuses_the_file_before_any_bad_item(strict):
    with pytest.raises(InputError, match=r"spec.jitter: str 'soon' is not a duration"):
        from_temporal(_spec(cronString=["0 9 * *", "0 4 * * *"], jitter="soon"), strict=strict)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(list(_BAD)), unique=True, max_size=4))
def test_fuzzed_bad_items_never_move_the_ids_of_the_good_ones(bad):
    fixed = {s.id: s.rule for s in from_temporal(_items())}
    t = from_temporal(_items(bad=set(bad)))
    assert {s.id: s.rule for s in t} == {k: v for k, v in fixed.items()
                                         if int(k.split(":")[1]) not in {r.source.item for r in t.refused}}
    assert len(t.refused) == len(bad)
