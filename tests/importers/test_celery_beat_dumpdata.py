"""django-celery-beat ``dumpdata`` JSON to schedules with the celery_beat preset.

``celery-dumpdata.json`` is hand-written from django-celery-beat 2.9.0's ``models.py``;
``celery-5.7.0-crontabs.json`` is what Celery 5.7.0's own ``crontab`` makes of each of its crontab schedules
(``tools/capture_readers.py``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.errors import CalsimError, InputError, RuleError, ScheduleError
from calsim.importers import detect_format, detect_text, import_any
from calsim.importers.celery_beat import _expand, from_celery_beat
from calsim.presets import celery_beat
from messages import assert_clear
from test_fuzz_parsers import field_paths, only_calsim_errors, replaced

FIXTURES = Path(__file__).parents[1] / "fixtures" / "readers"
DUMP = FIXTURES / "celery-dumpdata.json"
CELERY = json.loads((FIXTURES / "celery-5.7.0-crontabs.json").read_text())
FIELDS = (("minute", 60, 0), ("hour", 24, 0), ("day_of_week", 7, 0), ("day_of_month", 31, 1),
          ("month_of_year", 12, 1))


def _dump() -> list[dict]:
    return json.loads(DUMP.read_text())


def _crontab(pk: int) -> dict:
    return next(o["fields"] for o in _dump() if o["model"] == "django_celery_beat.crontabschedule" and o["pk"] == pk)


def _task(name: str = "t", **fields) -> dict:
    return {"model": "django_celery_beat.periodictask", "pk": 1,
            "fields": {"name": name, "task": "x.y", "crontab": None, "interval": None, "solar": None, "clocked": None,
                       "enabled": True, "one_off": False, "start_time": None, "expires": None, "last_run_at": None,
                       "date_changed": None} | fields}


def _tab(pk: int = 1, **fields) -> dict:
    return {"model": "django_celery_beat.crontabschedule", "pk": pk,
            "fields": {"minute": "0", "hour": "*", "day_of_month": "*", "month_of_year": "*", "day_of_week": "*",
                       "timezone": "UTC"} | fields}


def _every(pk: int = 1, every: object = 10, period: object = "minutes") -> dict:
    return {"model": "django_celery_beat.intervalschedule", "pk": pk, "fields": {"every": every, "period": period}}


def _read(*objects: dict, **kw):
    return from_celery_beat(json.dumps(list(objects)), **kw)


# -- detection


def test_a_dumpdata_file_is_detected_by_content_not_as_temporals_interval(tmp_path):
    misleading = tmp_path / "schedule.temporal.json"
    misleading.write_text(DUMP.read_text())
    assert detect_format(misleading) == "celery_beat"
    assert "nightly-report" in [s.id for s in import_any(misleading)]


def test_a_dumpdata_of_other_apps_is_not_celery_beat():
    assert detect_text('[{"model": "auth.user", "pk": 1, "fields": {"username": "x"}}]') != "celery_beat"


# -- the fixture


def test_the_fixture_imports_crontab_and_interval_tasks_and_refuses_the_rest_per_task():
    got = from_celery_beat(DUMP)
    assert [s.id for s in got] == ["nightly-report", "office-hours-sync", "first-monday-invoices",
                                   "weekend-wraparound", "queue-depth", "daily-cleanup"]
    assert [r.what for r in got.refused] == ["periodic task sunday-digest", "periodic task sunrise-lights",
                                             "periodic task launch-mail", "periodic task celery.backend_cleanup"]
    assert [k.what for k in got.skipped] == ["django_celery_beat.periodictasks"]
    assert all(got.presets[s.id].name == "celery_beat" for s in got)
    for r in got.refused:
        assert_clear(r.error)


@pytest.mark.parametrize("pk", [pk for pk in CELERY if "error" not in CELERY[pk]])
def test_each_crontab_field_expands_as_celerys_own_crontab_does(pk):
    fields = _crontab(int(pk))
    for name, max_, min_ in FIELDS:
        assert sorted(_expand(fields[name], max_, min_)) == CELERY[pk][name], name


@pytest.mark.parametrize("pk", [pk for pk in CELERY if "error" in CELERY[pk]])
def test_a_crontab_celery_refuses_refuses_its_task_with_celerys_reason(pk):
    got = _read(_tab(pk=int(pk), **_crontab(int(pk))), _task(crontab=int(pk)), _tab(pk=100),
                _task("ok", crontab=100) | {"pk": 100})
    (r,) = got.refused
    celery = CELERY[pk]["error"]
    assert celery in r.reason or ("never occurs" in celery and "never occurs" in r.reason)


@pytest.mark.parametrize("name, pk", [("nightly-report", 1), ("office-hours-sync", 2), ("first-monday-invoices", 3),
                                      ("weekend-wraparound", 5)])
def test_a_crontab_task_runs_on_every_local_minute_celerys_fields_all_match(name, pk):
    s = from_celery_beat(DUMP).by_id(name)
    sets = CELERY[str(pk)]
    f = calsim.expand([s], "2026-01-01T00:00Z", "2026-03-01T00:00Z", release="2026f")
    got = sorted(t for t in f["nominal_local"].to_list())
    tz = ZoneInfo(s.zone)
    lo = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc).astimezone(tz).replace(tzinfo=None)
    hi = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc).astimezone(tz).replace(tzinfo=None)
    want = []
    day = lo.date()
    while day <= hi.date():
        if day.month in sets["month_of_year"] and day.day in sets["day_of_month"] and \
                (day.isoweekday() % 7) in sets["day_of_week"]:
            want += [dt.datetime.combine(day, dt.time(h, m)) for h in sets["hour"] for m in sets["minute"]]
        day += dt.timedelta(days=1)
    start = max(lo, dt.datetime.fromisoformat(s.effective_from.replace("Z", "+00:00")).astimezone(tz).replace(
        tzinfo=None)) if s.effective_from else lo
    assert got == sorted(w for w in want if start <= w < hi)


def test_day_of_month_and_day_of_week_both_restricted_must_both_match():
    s = from_celery_beat(DUMP).by_id("first-monday-invoices")
    assert s.rule == "FREQ=DAILY;BYMONTHDAY=1,2,3,4,5,6,7;BYDAY=MO;BYHOUR=6;BYMINUTE=0;BYSECOND=0"
    first = calsim.expand([s], "2026-01-01T00:00Z", "2026-04-01T00:00Z", release="2026f")["nominal_local"].to_list()
    assert [t.date().isoformat() for t in first] == ["2026-01-05", "2026-02-02", "2026-03-02"]


def test_day_of_week_7_is_refused_with_celerys_reason_though_django_celery_beat_saves_it():
    r = next(r for r in from_celery_beat(DUMP).refused if r.what == "periodic task sunday-digest")
    assert isinstance(r.error, RuleError)
    assert "day_of_week: str '7': Celery refuses it (Invalid end range: 7 > 6.)" in r.reason
    assert "beat drops the task silently" in r.reason
    assert CELERY["4"] == {"error": "Invalid end range: 7 > 6."}


# -- fields onto the preset and the schedule


def test_the_crontabs_zone_is_the_schedules_and_a_missing_one_is_zone():
    got = from_celery_beat(DUMP)
    assert (got.by_id("nightly-report").zone, got.by_id("office-hours-sync").zone) == ("America/New_York",
                                                                                       "Europe/Berlin")
    assert _read(_tab(timezone=None), _task(crontab=1), zone="Asia/Tokyo")[0].zone == "Asia/Tokyo"


def test_the_preset_is_celery_beat_with_the_version_given():
    assert (from_celery_beat(DUMP).by_id("nightly-report").gap, from_celery_beat(DUMP, version="5.4").by_id(
        "nightly-report").gap) == (celery_beat().gap, celery_beat(version="5.4").gap)
    assert from_celery_beat(DUMP, version="5.4").presets["nightly-report"] == celery_beat(version="5.4")
    with pytest.raises(CalsimError, match=r"version"):
        from_celery_beat(DUMP, version="6.0")


def test_an_interval_task_is_an_elapsed_every_from_its_last_run():
    s = from_celery_beat(DUMP).by_id("queue-depth")
    assert (s.kind, s.rule.period_us, s.rule.anchor) == ("every", 600 * 10**6, "2026-03-05T23:55:00Z")
    assert "interval anchored at last_run_at" in " ".join(s.source.notes)
    assert "expire_seconds" in " ".join(s.source.notes)


def test_an_interval_anchor_is_start_time_then_last_run_then_date_changed():
    def anchor(**fields):
        return _read(_every(), _task(interval=1, **fields))[0].rule.anchor

    assert anchor(start_time="2026-05-01T00:00:00Z", last_run_at="2026-03-01T00:00:00Z") == "2026-05-01T00:00:00Z"
    assert anchor(start_time="2026-01-01T00:00:00Z", last_run_at="2026-03-01T00:00:00Z") == "2026-03-01T00:00:00Z"
    assert anchor(date_changed="2026-02-01T00:00:00Z") == "2026-02-01T00:00:00Z"


@pytest.mark.parametrize("period, us", [("days", 86400 * 10**6), ("hours", 3600 * 10**6), ("minutes", 60 * 10**6),
                                        ("seconds", 10**6), ("microseconds", 1)])
def test_every_interval_period_is_read(period, us):
    assert _read(_every(every=1, period=period), _task(interval=1))[0].rule.period_us == us


def test_start_time_and_expires_bound_the_runs():
    s = from_celery_beat(DUMP).by_id("office-hours-sync")
    assert (s.effective_from, s.effective_to) == ("2026-03-01T00:00:00Z", "2026-12-31T23:00:00Z")


def test_a_disabled_task_is_imported_suspended_with_a_note():
    got = from_celery_beat(DUMP)
    assert got.presets["daily-cleanup"].suspended and not got.presets["queue-depth"].suspended
    assert any(n.startswith("enabled: false") for n in got.by_id("daily-cleanup").source.notes)


def test_the_task_name_is_the_sources_command():
    assert from_celery_beat(DUMP).by_id("nightly-report").source.command == "reports.tasks.nightly"


# -- refusals


@pytest.mark.parametrize("objects, says", [
    ([_task(solar=1)], "solar: a solar schedule"),
    ([_task(clocked=1, one_off=True)], "clocked: a clocked schedule runs once"),
    ([_tab(), _task(crontab=1, one_off=True)], "one_off: true: beat runs the task once and then disables it"),
    ([_task()], "no schedule: one of crontab, interval, solar or clocked must be set"),
    ([_tab(), _every(), _task(crontab=1, interval=1)], "crontab and interval are all set"),
    ([_task(crontab=9)], "crontab: crontabschedule 9 is not in the file"),
    ([_tab(minute="5/10"), _task(crontab=1)], "minute: str '5/10': Celery refuses it (Invalid weekday literal"),
    ([_tab(hour="*/0"), _task(crontab=1)], "hour: str '*/0': Celery refuses it (slice step cannot be zero)"),
    ([_tab(day_of_month="31", month_of_year="2"), _task(crontab=1)], "day_of_month str '31' never occurs"),
    ([_tab(timezone="Mars/Base"), _task(crontab=1)], "timezone: unknown zone 'Mars/Base'"),
    ([_every(period="weeks"), _task(interval=1)], "period: str 'weeks' is not one of days, hours, minutes"),
    ([_every(every=0), _task(interval=1)], "every: expected a whole number 1..1000000000000, got int 0"),
    ([_tab(), _task(crontab=1, enabled="yes")], "enabled: expected true or false"),
    ([_tab(), _task(crontab=1, start_time="soon")], "start_time: str 'soon' is not an ISO 8601"),
    ([_tab(), _task(crontab={"pk": 1})], "crontab: expected the primary key"),
])
def test_a_task_that_cannot_be_read_is_refused_alone_naming_field_and_value(objects, says):
    got = _read(_tab(pk=100), _task("ok", crontab=100) | {"pk": 100}, *objects)
    assert [s.id for s in got] == ["ok"]
    (r,) = got.refused
    assert says in r.reason and r.reason.startswith("celery_beat: <celery_beat text> object ")
    assert_clear(r.error)


def test_a_task_name_given_twice_is_refused_the_second_time():
    got = _read(_tab(), _task(crontab=1), _task(crontab=1))
    assert len(got) == 1 and "name: 't' is given twice (first object 2)" in got.refused[0].reason


def test_strict_raises_the_first_refused_task():
    with pytest.raises(RuleError, match=r"object 15 'sunday-digest': crontabschedule 4: day_of_week"):
        from_celery_beat(DUMP, strict=True)


def test_every_task_refused_raises_the_first_naming_how_many_more():
    with pytest.raises(ScheduleError, match=r"solar.*\(and 1 more item\(s\) refused; nothing imported\)"):
        _read(_task(solar=1), _task("u", clocked=1))


@pytest.mark.parametrize("doc, says", [
    ('{"model": "django_celery_beat.periodictask"}', "expected the JSON list `manage.py dumpdata` prints"),
    ('[{"model": "auth.user", "pk": 1, "fields": {}}]', "no django_celery_beat.periodictask object (found: auth.user)"),
    ("[", "not valid JSON"),
])
def test_a_file_that_is_not_a_dumpdata_of_periodic_tasks_is_an_input_error(doc, says):
    with pytest.raises(InputError, match=re.escape(says)) as err:
        from_celery_beat(doc + "\n")
    assert_clear(err.value)


def test_an_object_without_a_model_is_refused_alone():
    got = _read(_tab(), _task(crontab=1), {"pk": 3})
    assert len(got) == 1 and "object 3: expected a dumpdata object with 'model'" in got.refused[0].reason


# -- hostile input


@pytest.mark.hostile
@pytest.mark.parametrize("doc", [
    "[" * 100_000 + "]" * 100_000,
    json.dumps([_tab(minute="1," * 500_000 + "1"), _task(crontab=1)]),
    json.dumps([_tab(hour="1-" + "9" * 4000), _task(crontab=1)]),
    json.dumps([_tab(hour="*/" + "9" * 4000), _task(crontab=1)]),
    json.dumps([_every(every=10**30), _task(interval=1)]),
    json.dumps([_every(every=10**12, period="days"), _task(interval=1)]),
    json.dumps([_tab(), _task("x" * 1_000_000, crontab=1)]),
    json.dumps([_every(), _task(interval=1, last_run_at="9" * 100_000)]),
])
def test_hostile_dumpdata_gives_a_one_line_calsim_error(doc):
    with pytest.raises(CalsimError) as err:
        from_celery_beat(doc + "\n", strict=True)
    assert_clear(err.value)
    assert len(str(err.value)) < 600


DATA = _dump()
PATHS = list(field_paths(DATA, items=None))
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True)
                      | st.text(max_size=20) | st.sampled_from(["*/15", "mon-fri", "7", "50-10", "days", "UTC",
                                                               "2026-03-08T02:30:00Z", "django_celery_beat.solar"]),
                      lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
                      max_leaves=6)


@pytest.mark.parametrize("period", [[], {}, 3, None])
def test_an_interval_period_that_is_not_a_name_is_refused_naming_it(period):
    with pytest.raises(InputError, match=r"intervalschedule 1: period: .* is not one of days, hours, minutes"):
        _read(_task(interval=1), _every(period=period))


@pytest.mark.fuzz
@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(where=st.sampled_from(PATHS), value=VALUES)
def test_any_value_in_any_field_gives_only_calsim_errors(where, value):
    only_calsim_errors(from_celery_beat, json.dumps(replaced(DATA, where, value)) + "\n")
