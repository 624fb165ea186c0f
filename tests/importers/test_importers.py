"""Importers (calsim.importers): crontab, Kubernetes CronJob manifests, iCalendar, detection by content.

Round trips compare ``calsim.expand`` of the imported schedules with that of
the same schedules built in Python; each error test pins that a bad input
raises a CalsimError whose message names the file, the place and the field.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

import calsim
from calsim import presets
from calsim.errors import CalsimError, InputError, PolicyError, RuleError, ScheduleError, UnknownZoneError
from calsim.importers import Imported, from_crontab, from_ical, from_kubernetes, import_any, load_any
from calsim.importers.crontab import DEFAULT_START

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "examples"
RELEASE = "2026f"
# March 2026: New York springs forward on the 8th, Berlin on the 29th.
WINDOW = ("2026-03-01T00:00Z", "2026-04-01T00:00Z")


def expand(schedules):
    return calsim.expand(list(schedules), *WINDOW, release=RELEASE)


def assert_same_expansion(imported, built):
    a, b = expand(imported), expand(built)
    assert a.height > 0
    assert a.equals(b), (a, b)


# -- round trips ---------------------------------------------------------------------------------------


def test_crontab_example_expands_like_the_same_schedules_built_in_python():
    cronie = presets.cronie()

    def job(line, zone, expr):
        return cronie.apply(calsim.Schedule(f"crontab:{line}", zone, DEFAULT_START, expr))

    built = [
        job(6, "UTC", "*/15 * * * *"),
        job(7, "UTC", "0 * * * *"),
        job(11, "America/New_York", "30 2 * * *"),
        job(12, "America/New_York", "0 9 * * MON-FRI"),
        job(17, "Europe/Berlin", "0 3 1 * *"),
        job(18, "Europe/Berlin", "0 0 * * 0"),
    ]
    imported = from_crontab(EXAMPLES / "crontab")
    assert [s.id for s in imported] == [s.id for s in built]
    assert_same_expansion(imported, built)


def test_kubernetes_two_document_manifest_expands_like_the_same_schedules_built_in_python():
    built = [
        presets.kubernetes(concurrency_policy="Forbid", starting_deadline_seconds=300).apply(
            calsim.Schedule("billing/nightly-invoices", "America/New_York", DEFAULT_START, "30 2 * * *")),
        presets.kubernetes(concurrency_policy="Replace").apply(
            calsim.Schedule("ops/db-backup", "UTC", DEFAULT_START, "0 */6 * * *")),
    ]
    imported = from_kubernetes(EXAMPLES / "cronjobs.yaml")
    assert [s.policy for s in imported] == [s.policy for s in built]
    assert_same_expansion(imported, built)


def test_ical_example_expands_like_the_same_schedules_built_in_python():
    built = [
        calsim.Schedule("standup@example.com", "America/New_York", "2026-03-02T09:30", "FREQ=WEEKLY;BYDAY=MO,WE,FR",
                        exdate=("2026-03-04T09:30", "2026-03-06T09:30"), rdate=("2026-03-07T10:00",)),
        calsim.Schedule("sync@example.com", "UTC", "2026-03-01T02:00", "FREQ=DAILY;COUNT=60",
                        exdate=("2026-03-10T02:00",)),
        calsim.Schedule("rent@example.com", "UTC", "2026-03-01T08:00", "FREQ=MONTHLY;BYMONTHDAY=1"),
    ]
    assert_same_expansion(from_ical(EXAMPLES / "calendar.ics"), built)


# -- provenance and the Imported result ---------------------------------------------------------------


def test_imported_behaves_as_a_list_of_schedules():
    imported = from_kubernetes(EXAMPLES / "cronjobs.yaml")
    assert isinstance(imported, Imported)
    assert len(imported) == 2 and imported[0] is list(imported)[0]
    assert imported.by_id("ops/db-backup") is imported[1]


def test_crontab_sources_keep_file_line_and_command():
    imported = from_crontab(EXAMPLES / "crontab")
    src = imported.source("crontab:11")
    assert (src.format, Path(src.file).name, src.line, src.command) == (
        "crontab", "crontab", 11, "/usr/local/bin/backup --full")
    assert src.text == "30 2 * * * /usr/local/bin/backup --full"


def test_kubernetes_sources_keep_document_and_schedule_line():
    imported = from_kubernetes(EXAMPLES / "cronjobs.yaml")
    assert [(s.document, s.line) for s in imported.sources.values()] == [(1, 8), (2, 27)]


def test_ical_sources_keep_uid_and_begin_line():
    imported = from_ical(EXAMPLES / "calendar.ics")
    assert [(s.uid, s.line) for s in imported.sources.values()] == [
        ("standup@example.com", 4), ("sync@example.com", 13), ("rent@example.com", 21)]


# -- crontab behaviour --------------------------------------------------------------------------------


def test_crontab_reboot_is_skipped_with_a_reason():
    imported = from_crontab(EXAMPLES / "crontab")
    assert [(s.what, s.source.line, s.reason) for s in imported.skipped] == [
        ("@reboot", 8, "runs at boot, not at a time")]


def test_crontab_cron_tz_applies_only_to_the_lines_after_it():
    imported = from_crontab("0 1 * * * a\nCRON_TZ=Asia/Tokyo\n0 2 * * * b\n", zone="Europe/Paris")
    assert [(s.id, s.zone) for s in imported] == [("crontab:1", "Europe/Paris"), ("crontab:3", "Asia/Tokyo")]


def test_crontab_empty_cron_tz_returns_to_the_daemon_zone():
    imported = from_crontab("CRON_TZ=Asia/Tokyo\n0 1 * * * a\nCRON_TZ=\n0 2 * * * b\n", zone="Europe/Paris")
    assert [s.zone for s in imported] == ["Asia/Tokyo", "Europe/Paris"]


def test_crontab_quoted_cron_tz_value_is_unquoted():
    imported = from_crontab('CRON_TZ = "America/Chicago"\n0 1 * * * a\n')
    assert imported[0].zone == "America/Chicago"


def test_crontab_tz_line_sets_no_schedule_zone_and_is_noted():
    imported = from_crontab("TZ=Asia/Tokyo\n0 1 * * * a\n")
    assert imported[0].zone == "UTC"
    assert any("TZ=Asia/Tokyo" in n for n in imported.sources["crontab:2"].notes)


def test_crontab_comments_blank_and_env_lines_make_no_schedules():
    imported = from_crontab("# comment\n\n   \nSHELL=/bin/bash\nMAILTO=''\n"
                            "  # indented comment\n0 1 * * * a # not a comment\n")
    assert [s.id for s in imported] == ["crontab:7"]
    assert imported.sources["crontab:7"].command == "a # not a comment"


def test_crontab_macros_expand_like_their_five_fields():
    macros = from_crontab("@yearly a\n@annually b\n@monthly c\n@weekly d\n@daily e\n@hourly f\n")
    fields = ["0 0 1 1 *", "0 0 1 1 *", "0 0 1 * *", "0 0 * * 0", "0 0 * * *", "0 * * * *"]
    built = [presets.cronie().apply(calsim.Schedule(s.id, "UTC", DEFAULT_START, f)) for s, f in zip(macros, fields)]
    assert_same_expansion(macros, built)


def test_crontab_system_format_reads_the_user_field():
    imported = from_crontab("17 * * * * root cd / && run-parts --report /etc/cron.hourly\n", system=True)
    src = imported.sources["crontab:1"]
    assert (src.user, src.command) == ("root", "cd / && run-parts --report /etc/cron.hourly")


def test_crontab_system_format_is_detected_for_a_cron_d_file(tmp_path):
    p = tmp_path / "cron.d" / "backup.cron"
    p.parent.mkdir()
    p.write_text("30 2 * * * backup /usr/bin/backup\n")
    imported = from_crontab(p)
    assert imported.sources["backup:1"].user == "backup"


def test_crontab_user_format_is_the_default_for_other_paths(tmp_path):
    p = tmp_path / "jobs"
    p.write_text("30 2 * * * backup /usr/bin/backup\n")
    assert from_crontab(p).sources["jobs:1"].command == "backup /usr/bin/backup"


def test_crontab_ids_use_the_source_label_and_line():
    assert [s.id for s in from_crontab("\n0 1 * * * a\n", source="web-01.cron")] == ["web-01:2"]


def test_crontab_schedules_carry_the_cronie_preset():
    imported = from_crontab(EXAMPLES / "crontab")
    fixed, wildcard = imported.by_id("crontab:11"), imported.by_id("crontab:6")
    assert (fixed.gap, fixed.fold, wildcard.gap, wildcard.fold) == ("next_valid", "first", "skip", "both")
    assert fixed.policy == presets.cronie().policy
    assert imported.presets["crontab:11"].name == "cronie"


# -- crontab errors -----------------------------------------------------------------------------------


def test_crontab_unknown_cron_tz_names_file_line_and_field(tmp_path):
    p = tmp_path / "jobs"
    p.write_text("0 1 * * * a\nCRON_TZ=Europe/Berln\n0 2 * * * b\n")
    with pytest.raises(UnknownZoneError) as exc:
        from_crontab(p, strict=True)  # default: the line is refused, see tests/importers/test_refusals.py
    msg = str(exc.value)
    assert msg.startswith("crontab: jobs line 2: CRON_TZ: unknown zone 'Europe/Berln'") and "Europe/Berlin" in msg
    assert "\n" not in msg


def test_crontab_malformed_cron_names_file_line_and_field():
    with pytest.raises(RuleError,
                       match=r"^crontab: jobs line 2: schedule '61 1 \* \* \*': .*minute value '61' is out of range"):
        from_crontab("# x\n61 1 * * * a\n", source="jobs")


def test_crontab_line_without_command_is_a_rule_error():
    with pytest.raises(RuleError, match=r"^crontab: <crontab text> line 1: malformed job line '0 1 \* \* \*': "
                                        r".*command is missing"):
        from_crontab("0 1 * * *\n")


def test_crontab_line_with_too_few_fields_is_a_rule_error():
    with pytest.raises(RuleError,
                       match=r"^crontab: <crontab text> line 1: malformed job line .*expected 5 time fields"):
        from_crontab("0 1 * backup\n")


def test_crontab_unknown_macro_is_a_rule_error():
    with pytest.raises(RuleError, match=r"^crontab: <crontab text> line 1: schedule '@fortnightly': unknown macro"):
        from_crontab("@fortnightly a\n")


def test_crontab_unreadable_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"^crontab: cannot read '.*missing-crontab' \(No such file or directory\)"):
        from_crontab(str(tmp_path / "missing-crontab"))


# -- Kubernetes behaviour -----------------------------------------------------------------------------

CRONJOB = """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: {name}
spec:
  schedule: "{schedule}"
{extra}  jobTemplate: {{}}
"""


def cronjob(name="job", schedule="0 3 * * *", **spec):
    extra = "".join(f"  {k}: {v}\n" for k, v in spec.items())
    return CRONJOB.format(name=name, schedule=schedule, extra=extra)


def test_kubernetes_other_kinds_are_listed_and_skipped():
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n---\n" + cronjob()
            + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n")
    imported = from_kubernetes(text)
    assert [s.id for s in imported] == ["default/job"]
    assert [(s.what, s.source.document, s.reason) for s in imported.skipped] == [
        ("ConfigMap cfg", 1, "not a CronJob"), ("Deployment shop/web", 3, "not a CronJob")]


def test_kubernetes_namespace_defaults_to_default():
    assert from_kubernetes(cronjob(name="x"))[0].id == "default/x"


def test_kubernetes_without_time_zone_uses_the_zone_argument():
    assert from_kubernetes(cronjob(), zone="Asia/Kolkata")[0].zone == "Asia/Kolkata"


def test_kubernetes_settings_map_to_the_kubernetes_preset():
    imported = from_kubernetes(cronjob(startingDeadlineSeconds=120, concurrencyPolicy="Replace", suspend="true",
                                       timeZone="Europe/Madrid"))
    s, preset = imported[0], imported.presets["default/job"]
    expected = presets.kubernetes(concurrency_policy="Replace", starting_deadline_seconds=120, suspend=True,
                                  time_zone="Europe/Madrid")
    assert (s.zone, s.gap, s.fold, s.policy) == ("Europe/Madrid", "scheduler", "scheduler", expected.policy)
    assert preset.suspended and any("suspend" in n for n in imported.sources["default/job"].notes)


def test_kubernetes_list_items_are_imported():
    text = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        "- " + cronjob(name=n).replace("\n", "\n  ").rstrip() + "\n" for n in ("a", "b"))
    imported = from_kubernetes(text)
    assert [(s.id, imported.sources[s.id].item) for s in imported] == [("default/a", 1), ("default/b", 2)]


def test_kubernetes_question_mark_means_star():
    imported = from_kubernetes(cronjob(schedule="0 3 ? * MON"))
    star = from_kubernetes(cronjob(schedule="0 3 * * MON"))
    assert imported[0].rule == "robfig:0 3 ? * MON" and imported[0].parsed_rule.bits == star[0].parsed_rule.bits


def test_kubernetes_every_descriptor_becomes_an_elapsed_interval():
    s = from_kubernetes(cronjob(schedule="@every 1h30m"))[0]
    assert s.kind == "every" and s.parsed_rule.period_us == 5400 * 10**6


def test_kubernetes_tz_prefix_is_read_in_legacy_mode():
    imported = from_kubernetes(cronjob(schedule="CRON_TZ=Asia/Tokyo 0 3 * * *"), tz_in_schedule="legacy")
    assert (imported[0].zone, imported[0].rule) == ("Asia/Tokyo", "robfig:0 3 * * *")


# -- Kubernetes errors --------------------------------------------------------------------------------


def test_kubernetes_manifest_without_cronjob_is_an_error():
    with pytest.raises(InputError,
                       match=r"^kubernetes: <kubernetes text>: no CronJob .*\(found: Deployment, Service\)"):
        from_kubernetes("apiVersion: apps/v1\nkind: Deployment\n---\napiVersion: v1\nkind: Service\n")


def test_kubernetes_unknown_time_zone_names_document_and_field():
    text = cronjob(name="a") + "---\n" + cronjob(name="b", timeZone="Mars/Olympus")
    with pytest.raises(UnknownZoneError, match=r"^kubernetes: m.yaml document 2 \(line 9\) CronJob 'default/b': "
                                               r"spec.timeZone: unknown zone 'Mars/Olympus'"):
        from_kubernetes(text, source="m.yaml", strict=True)


def test_kubernetes_time_zone_with_tz_prefix_is_rejected_as_the_api_server_does():
    with pytest.raises(ScheduleError, match="cannot use both timeZone field and TZ or CRON_TZ in schedule"):
        from_kubernetes(cronjob(schedule="TZ=UTC 0 * * * *", timeZone="UTC"), tz_in_schedule="legacy")


def test_kubernetes_tz_prefix_is_rejected_by_default():
    with pytest.raises(ScheduleError, match=r"spec.schedule 'TZ=UTC 0 \* \* \* \*': "
                                            r"cannot use TZ or CRON_TZ in schedule, use timeZone"):
        from_kubernetes(cronjob(schedule="TZ=UTC 0 * * * *"))


def test_kubernetes_malformed_schedule_names_document_and_field():
    with pytest.raises(RuleError, match=r"^kubernetes: <kubernetes text> document 1 \(line 1\) CronJob 'default/job': "
                                        r"spec.schedule '0 25 \* \* \*': hour item '25': "
                                        r"end of range \(25\) above maximum \(23\)"):
        from_kubernetes(cronjob(schedule="0 25 * * *"))


@pytest.mark.parametrize("schedule", ["0 3 L * *", "0 3 15W * *", "0 3 * * 5#2", "0 3 * * 5L"])
def test_kubernetes_rejects_cron_extensions_robfig_lacks(schedule):
    with pytest.raises(RuleError, match=r"robfig/cron v3 has no L, W or #\) \(the API server refuses it"):
        from_kubernetes(cronjob(schedule=schedule))


def test_kubernetes_rejects_day_of_week_seven():
    with pytest.raises(RuleError, match=r"day-of-week item '1-7': end of range \(7\) above maximum \(6\)"):
        from_kubernetes(cronjob(schedule="0 3 * * 1-7"))


def test_kubernetes_cronjob_of_another_api_version_is_an_input_error():
    with pytest.raises(InputError, match=r"document 1 \(line 1\): apiVersion: CronJob with apiVersion 'batch/v1beta1'"):
        from_kubernetes(cronjob().replace("batch/v1", "batch/v1beta1"))


def test_kubernetes_missing_schedule_names_the_field():
    with pytest.raises(ScheduleError, match=r"CronJob 'default/job': spec.schedule: missing"):
        from_kubernetes("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: job}\nspec: {jobTemplate: {}}\n")


def test_kubernetes_bad_concurrency_policy_names_the_field():
    with pytest.raises(PolicyError, match=r"CronJob 'default/job': spec.concurrencyPolicy: unknown value 'Sometimes'"):
        from_kubernetes(cronjob(concurrencyPolicy="Sometimes"))


def test_kubernetes_invalid_yaml_names_the_line():
    with pytest.raises(InputError, match=r"^kubernetes: <kubernetes text> line 3: not valid YAML \(mapping values"):
        from_kubernetes("kind: CronJob\nmetadata: x\n  name: y\n")


def test_kubernetes_document_that_is_not_an_object_is_an_input_error():
    with pytest.raises(InputError, match=r"document 2 \(line 4\): expected a Kubernetes object .* got a list"):
        from_kubernetes("apiVersion: v1\nkind: ConfigMap\n---\n- a\n- b\n")


def test_kubernetes_cronjob_defined_twice_is_an_error():
    with pytest.raises(ScheduleError,
                       match=r"CronJob 'default/job' is defined twice \(first at <kubernetes text> document 1"):
        from_kubernetes(cronjob() + "---\n" + cronjob(), strict=True)


# -- iCalendar behaviour ------------------------------------------------------------------------------


def ics(*event_lines, component="VEVENT"):
    body = "\n".join(event_lines)
    return f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//t//EN\nBEGIN:{component}\n{body}\nEND:{component}\nEND:VCALENDAR\n"


def test_ical_utc_dtstart_recurs_in_utc():
    s = from_ical(ics("UID:u", "DTSTART:20260301T140000Z", "RRULE:FREQ=DAILY"), zone="America/New_York")[0]
    assert (s.zone, s.start) == ("UTC", "2026-03-01T14:00:00")


def test_ical_floating_dtstart_is_read_in_the_zone_argument():
    imported = from_ical(ics("UID:u", "DTSTART:20260301T090000", "RRULE:FREQ=DAILY"), zone="Asia/Tokyo")
    assert (imported[0].zone, imported[0].start) == ("Asia/Tokyo", "2026-03-01T09:00:00")
    assert "floating DTSTART: read as wall time in Asia/Tokyo" in imported.sources["u"].notes


def test_ical_all_day_event_runs_at_midnight_in_the_zone_argument():
    s = from_ical(ics("UID:u", "DTSTART;VALUE=DATE:20260301", "RRULE:FREQ=YEARLY"), zone="Europe/Rome")[0]
    assert (s.zone, s.start) == ("Europe/Rome", "2026-03-01T00:00:00")


def test_ical_windows_tzid_is_mapped_to_iana():
    s = from_ical(ics("UID:u", "DTSTART;TZID=Eastern Standard Time:20260301T090000", "RRULE:FREQ=DAILY"))[0]
    assert s.zone == "America/New_York"


def test_ical_exdate_in_utc_is_converted_to_the_event_zone():
    s = from_ical(ics("UID:u", "DTSTART;TZID=Europe/Berlin:20260301T090000", "RRULE:FREQ=DAILY",
                      "EXDATE:20260302T080000Z,20260401T070000Z"))[0]
    assert s.exdate == ("2026-03-02T09:00:00", "2026-04-01T09:00:00")


def test_ical_rdate_period_contributes_its_start():
    s = from_ical(ics("UID:u", "DTSTART;TZID=Europe/Berlin:20260301T090000", "RRULE:FREQ=WEEKLY",
                      "RDATE;VALUE=PERIOD;TZID=Europe/Berlin:20260303T170000/PT1H"))[0]
    assert s.rdate == ("2026-03-03T17:00:00",)


def test_ical_event_without_rrule_is_a_one_off():
    f = expand(from_ical(ics("UID:u", "DTSTART;TZID=Europe/Berlin:20260310T090000")))
    assert f["nominal_local"].dt.to_string("%Y-%m-%dT%H:%M").to_list() == ["2026-03-10T09:00"]


def test_ical_recurrence_id_override_moves_one_occurrence():
    text = ics("UID:u", "DTSTART;TZID=Europe/Berlin:20260302T090000", "RRULE:FREQ=DAILY;COUNT=3", "END:VEVENT",
               "BEGIN:VEVENT", "UID:u", "RECURRENCE-ID;TZID=Europe/Berlin:20260303T090000",
               "DTSTART;TZID=Europe/Berlin:20260303T150000")
    f = expand(from_ical(text))
    assert f["nominal_local"].dt.to_string("%d %H:%M").to_list() == ["02 09:00", "03 15:00", "04 09:00"]


def test_ical_vtodo_is_listed_and_skipped():
    imported = from_ical(EXAMPLES / "calendar.ics")
    assert [(s.what, s.source.uid, s.source.line) for s in imported.skipped] == [("VTODO", "todo@example.com", 28)]


# -- iCalendar errors ---------------------------------------------------------------------------------


def test_ical_event_without_dtstart_names_file_uid_line_and_field():
    with pytest.raises(ScheduleError, match=r"^ical: cal.ics VEVENT 'u' \(line 4\): DTSTART: missing"):
        from_ical(ics("UID:u", "RRULE:FREQ=DAILY"), source="cal.ics")


def test_ical_event_without_uid_is_an_error():
    with pytest.raises(ScheduleError, match=r"^ical: <ical text> line 4: UID: missing"):
        from_ical(ics("DTSTART:20260301T090000", "RRULE:FREQ=DAILY"))


def test_ical_unknown_tzid_names_the_property():
    with pytest.raises(ScheduleError, match=r"VEVENT 'u' \(line 4\): DTSTART: TZID 'Mars/Olympus' is not an IANA zone"):
        from_ical(ics("UID:u", "DTSTART;TZID=Mars/Olympus:20260301T090000", "RRULE:FREQ=DAILY"))


def test_ical_malformed_rrule_names_the_event_and_property():
    with pytest.raises(CalsimError, match=r"^ical: <ical text> VEVENT 'u' \(line 4\): RRULE"):
        from_ical(ics("UID:u", "DTSTART:20260301T090000", "RRULE:FREQ=FORTNIGHTLY"))


def test_ical_duplicate_uid_is_an_error():
    text = ics("UID:u", "DTSTART:20260301T090000", "END:VEVENT", "BEGIN:VEVENT", "UID:u", "DTSTART:20260302T090000")
    with pytest.raises(ScheduleError, match=r"\(line 8\): UID: 'u' is used by two events \(first at line 4\)"):
        from_ical(text, strict=True)


def test_ical_file_without_vevent_is_an_input_error():
    with pytest.raises(InputError, match=r"^ical: <ical text>: no VEVENT in the calendar"):
        from_ical(ics("UID:t", "SUMMARY:x", component="VTODO"))


def test_ical_text_that_is_not_a_calendar_is_an_input_error():
    with pytest.raises(InputError, match=r"^ical: notes.txt: not an iCalendar file"):
        from_ical("hello\nworld\n", source="notes.txt")


# -- detection by content -----------------------------------------------------------------------------


@pytest.mark.parametrize("example, ids", [
    ("crontab", ["crontab:6", "crontab:7", "crontab:11", "crontab:12", "crontab:17", "crontab:18"]),
    ("cronjobs.yaml", ["billing/nightly-invoices", "ops/db-backup"]),
    ("calendar.ics", ["standup@example.com", "sync@example.com", "rent@example.com"]),
    ("fleet.toml", None),
])
def test_load_any_detects_the_format_by_content_not_by_name(tmp_path, example, ids):
    p = tmp_path / "crontab"  # a misleading name: only the content decides
    shutil.copy(EXAMPLES / example, p)
    loaded = load_any(p)
    assert isinstance(loaded, list) and all(isinstance(s, calsim.Schedule) for s in loaded)
    if ids is None:  # the fleet file: what calsim.load reads
        ids = [s.id for s in calsim.load(EXAMPLES / "fleet.toml")]
    assert [s.id for s in loaded] == ids


def test_import_any_keeps_provenance():
    imported = import_any(EXAMPLES / "cronjobs.yaml")
    assert imported.sources["ops/db-backup"].document == 2


def test_load_any_unreadable_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"^load: cannot read"):
        load_any(tmp_path / "nope")


def test_imported_schedules_stay_plain_frozen_schedules():
    s = from_crontab(EXAMPLES / "crontab")[0]
    assert dataclasses.replace(s, zone="Asia/Tokyo").zone == "Asia/Tokyo"


def test_ical_malformed_dtstart_names_the_property_and_value():
    with pytest.raises(ScheduleError, match=r"VEVENT 'u' \(line 4\): DTSTART: malformed value '20260301T0900'"):
        from_ical(ics("UID:u", "DTSTART:20260301T0900", "RRULE:FREQ=DAILY"))


def test_ical_rrule_without_freq_is_a_rule_error():
    with pytest.raises(RuleError, match=r"VEVENT 'u' \(line 4\): RRULE: FREQ is required"):
        from_ical(ics("UID:u", "DTSTART:20260301T090000", "RRULE:COUNT=3"))


def test_every_loaded_schedule_carries_its_source_file_and_line():
    from calsim.demo import examples_dir

    ex = examples_dir()
    cron = calsim.load(ex / "crontab")
    assert cron[0].source.format == "crontab" and cron[0].source.line == int(cron[0].id.split(":")[1])
    k8s = calsim.load(ex / "cronjobs.yaml")
    assert [s.source.document for s in k8s] == [1, 2]
    fleet = calsim.load(ex / "fleet.toml")
    text = (ex / "fleet.toml").read_text().splitlines()
    assert all(text[s.source.line - 1].strip() == "[[schedule]]" for s in fleet)
    assert calsim.load(ex / "incident.toml") == fleet  # a scenario file gives the fleet it names


def test_example_fleet_file_expands_like_the_same_schedules_built_in_python():
    from calsim.demo import examples_dir

    P = calsim.Policy
    by_hand = [
        calsim.Schedule("billing/nightly", "America/New_York", "2026-01-01T02:30", "FREQ=DAILY", gap="shift",
                        policy=P(account="tenant-a", cost=5.0, duration="40min", overlap="skip")),
        calsim.Schedule("reports/daily-shanghai", "Asia/Shanghai", "2026-01-01T09:00", "0 9 * * *",
                        exclude=("business:CN",)),
        calsim.Schedule("payroll/month-end", "Europe/Berlin", "2026-01-31T08:00", "FREQ=MONTHLY;BYMONTHDAY=31",
                        invalid_day="backward"),
        calsim.presets.kubernetes(concurrency_policy="Forbid", starting_deadline_seconds=86400).apply(
            calsim.Schedule("etl/every-6h", "UTC", "2026-01-01T00:00Z", calsim.Every("6h"))),
        calsim.Schedule("support/business-hours", "Australia/Lord_Howe", "2026-01-01T00:00",
                        calsim.Window("08:00", "20:00", "30min", days="MO,TU,WE,TH,FR")),
        calsim.Schedule("ops/fall-back-check", "America/Santiago", "2026-01-01T23:30", "FREQ=DAILY", fold="both"),
    ]
    loaded = calsim.load(examples_dir() / "fleet.toml")
    assert [s.id for s in loaded] == [s.id for s in by_hand]
    window = ("2026-01-01T00:00Z", "2027-01-01T00:00Z")
    assert calsim.expand(loaded, *window, release="2026f").equals(calsim.expand(by_hand, *window, release="2026f"))
    assert loaded[0].policy == by_hand[0].policy
