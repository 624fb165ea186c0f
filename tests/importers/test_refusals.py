"""Importer robustness (issue 14, item 4): one bad item is refused, the rest of the file imported.

Every importer reads item by item through ``calsim.importers._result.Items``;
``strict=True`` raises the first item's error as before; a file where every
item is refused raises the first refusal's error; the CLI prints one warning
line per refusal on stderr and exits 0 when something was imported, 2 when
nothing was.
"""

from __future__ import annotations

import json
import warnings

import pytest

import calsim
from calsim.cli import main
from calsim.errors import CalsimError, RuleError, ScheduleError, UnknownZoneError
from calsim.importers import (from_crontab, from_eventbridge, from_github_actions, from_ical, from_kubernetes,
                              from_systemd, import_any, load_any)

CRONJOB = """apiVersion: batch/v1
kind: CronJob
metadata:
  name: {name}
{meta}spec:
  schedule: "{schedule}"
{extra}  jobTemplate: {{}}
"""


def cronjob(name="job", schedule="0 3 * * *", meta="", **spec):
    extra = "".join(f"  {k}: {v}\n" for k, v in spec.items())
    return CRONJOB.format(name=name, schedule=schedule, meta=meta, extra=extra)


EXPORTED = "  uid: 5f3c2a9e-0000-4000-8000-000000000001\n  creationTimestamp: '2022-05-01T10:00:00Z'\n"


def ics(*events):
    body = "".join(f"BEGIN:VEVENT\n{e}\nEND:VEVENT\n" for e in events)
    return f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//t//EN\n{body}END:VCALENDAR\n"


# -- crontab ------------------------------------------------------------------------------------------


def test_crontab_bad_line_is_refused_and_the_other_lines_imported():
    tab = from_crontab("0 3 * * * /bin/backup\n61 * * * * /bin/bad\n5 4 * * * /bin/report\n", source="t")
    assert [s.id for s in tab] == ["t:1", "t:3"]
    [r] = tab.refused
    assert (r.source.line, r.what) == (2, "61 * * * * /bin/bad")
    assert r.reason == ("crontab: t line 2: schedule '61 * * * *': cron: minute value '61' is out of range "
                        "(allowed 0..59) in '61 * * * *'")
    assert isinstance(r.error, RuleError)


def test_crontab_unknown_cron_tz_refuses_its_line_and_the_jobs_under_it_until_the_next_cron_tz():
    tab = from_crontab("CRON_TZ=Europe/Berln\n0 1 * * * a\nCRON_TZ=Asia/Tokyo\n0 2 * * * b\n", source="t")
    assert [(s.id, s.zone) for s in tab] == [("t:4", "Asia/Tokyo")]
    assert [r.source.line for r in tab.refused] == [1, 2]
    assert tab.refused[1].reason == "crontab: t line 2: CRON_TZ on line 1 names no zone, so this line's zone is unknown"


def test_crontab_strict_raises_the_first_bad_line():
    with pytest.raises(RuleError, match=r"^crontab: t line 2: schedule '61 \* \* \* \*'"):
        from_crontab("0 3 * * * /bin/a\n61 * * * * /bin/b\n", source="t", strict=True)


def test_crontab_where_every_line_is_refused_raises_the_first_error_naming_the_others():
    with pytest.raises(RuleError) as exc:
        from_crontab("61 * * * * /bin/a\n0 25 * * * /bin/b\n", source="t")
    assert str(exc.value).startswith("crontab: t line 1: schedule '61 * * * *'")
    assert str(exc.value).endswith("(and 1 more item(s) refused; nothing imported)")
    assert [r.source.line for r in exc.value.refused] == [1, 2]


# -- Kubernetes ---------------------------------------------------------------------------------------


def test_kubernetes_bad_cronjob_is_refused_with_its_document_and_the_others_imported():
    text = cronjob(name="a") + "---\n" + cronjob(name="b", timeZone="Mars/Olympus") + "---\n" + cronjob(name="c")
    m = from_kubernetes(text, source="m.yaml")
    assert [s.id for s in m] == ["default/a", "default/c"]
    [r] = m.refused
    assert (r.source.document, r.what) == (2, "CronJob b")
    assert r.reason.startswith("kubernetes: m.yaml document 2 (line 9) CronJob 'default/b': spec.timeZone: "
                               "unknown zone 'Mars/Olympus'")
    assert isinstance(r.error, UnknownZoneError)


def test_kubernetes_second_definition_of_a_cronjob_is_refused():
    m = from_kubernetes(cronjob() + "---\n" + cronjob(schedule="0 4 * * *"))
    assert [s.rule for s in m] == ["robfig:0 3 * * *"]
    assert "CronJob 'default/job' is defined twice" in m.refused[0].reason


def test_kubernetes_exported_cronjob_with_tz_prefix_is_read_as_the_controller_runs_it_with_a_note():
    m = from_kubernetes(cronjob(schedule="TZ=Asia/Tokyo 0 3 * * *", meta=EXPORTED))
    s = m[0]
    assert (s.zone, s.rule, m.refused) == ("Asia/Tokyo", "robfig:0 3 * * *", ())
    assert m.sources[s.id].notes[0].startswith("TZ/CRON_TZ in schedule: read in Asia/Tokyo as the controller runs it")


def test_kubernetes_manifest_cronjob_with_tz_prefix_is_refused_as_on_create_naming_legacy_tz():
    m = from_kubernetes(cronjob(name="a") + "---\n" + cronjob(name="b", schedule="TZ=Asia/Tokyo 0 3 * * *"))
    assert [s.id for s in m] == ["default/a"]
    assert "cannot use TZ or CRON_TZ in schedule, use timeZone field instead" in m.refused[0].reason
    assert "--legacy-tz" in m.refused[0].reason


def test_kubernetes_reject_mode_refuses_an_exported_tz_prefix_too():
    with pytest.raises(ScheduleError, match="cannot use TZ or CRON_TZ in schedule"):
        from_kubernetes(cronjob(schedule="TZ=Asia/Tokyo 0 3 * * *", meta=EXPORTED), tz_in_schedule="reject")


def test_kubernetes_document_that_is_not_an_object_is_refused():
    m = from_kubernetes(cronjob() + "---\n- just\n- a list\n")
    assert [s.id for s in m] == ["default/job"]
    assert m.refused[0].reason.endswith("document 2 (line 9): expected a Kubernetes object (a mapping with "
                                        "apiVersion and kind), got a list")


# -- iCalendar ----------------------------------------------------------------------------------------


def test_ical_series_whose_until_precedes_dtstart_is_a_cancelled_series_not_a_refusal():
    cal = from_ical(ics("UID:ok\nDTSTART;TZID=Europe/Paris:20260302T093000\nRRULE:FREQ=DAILY;COUNT=2",
                        "UID:gone\nDTSTART;TZID=Europe/Paris:20260302T093000\nRRULE:FREQ=DAILY;UNTIL=20260101T000000"))
    assert [s.id for s in cal] == ["ok"] and cal.refused == ()
    [skip] = cal.skipped
    assert (skip.source.uid, skip.reason) == ("gone", "a cancelled series: UNTIL 2026-01-01T00:00:00 is before "
                                                      "DTSTART 2026-03-02T09:30:00, so it has no occurrence")


def test_ical_utc_until_compares_with_dtstarts_instant():
    # 08:00Z is 09:00 in Paris, before the 09:30 start: cancelled; 08:30Z is the start itself: one occurrence.
    cal = from_ical(ics("UID:gone\nDTSTART;TZID=Europe/Paris:20260302T093000\nRRULE:FREQ=DAILY;UNTIL=20260302T080000Z",
                        "UID:one\nDTSTART;TZID=Europe/Paris:20260302T093000\nRRULE:FREQ=DAILY;UNTIL=20260302T083000Z"))
    assert [s.id for s in cal] == ["one"] and [s.source.uid for s in cal.skipped] == ["gone"]
    frame = calsim.expand(cal, "2026-03-01T00:00Z", "2026-03-10T00:00Z", release="2026f")
    assert frame.height == 1


def test_ical_file_of_only_a_cancelled_series_imports_nothing_without_error():
    cal = from_ical(ics("UID:gone\nDTSTART:20260302T093000\nRRULE:FREQ=DAILY;UNTIL=20260301T000000"))
    assert (len(cal), len(cal.skipped), cal.refused) == (0, 1, ())


def test_ical_bad_event_is_refused_and_the_others_imported():
    cal = from_ical(ics("UID:a\nDTSTART;TZID=Mars/Olympus:20260302T093000\nRRULE:FREQ=DAILY",
                        "UID:b\nDTSTART:20260302T093000\nRRULE:FREQ=DAILY",
                        "DTSTART:20260302T093000\nRRULE:FREQ=DAILY"), source="c.ics")
    assert [s.id for s in cal] == ["b"]
    assert [(r.source.line, r.what) for r in cal.refused] == [(4, "VEVENT a"), (14, "VEVENT")]
    assert "TZID 'Mars/Olympus' is not an IANA zone" in cal.refused[0].reason
    assert cal.refused[1].reason == ("ical: c.ics line 14: UID: missing (every VEVENT needs a UID; it is the "
                                     "schedule id)")


# -- the other importers ------------------------------------------------------------------------------


def test_systemd_bad_oncalendar_line_is_refused_and_the_others_imported():
    timer = "[Timer]\nOnCalendar=*-*-* 03:00\nOnCalendar=Mon..Fry 04:00\nOnCalendar=daily\n"
    t = from_systemd(timer, source="backup.timer")
    assert [(s.id, t.sources[s.id].line) for s in t] == [("backup:1", 2), ("backup:3", 4)]
    assert t.refused[0].source.line == 3 and t.refused[0].reason.startswith("systemd: backup.timer line 3: OnCalendar=")


def test_github_bad_cron_entry_is_refused_and_the_others_imported():
    wf = "name: nightly\non:\n  schedule:\n    - cron: '0 3 * * *'\n    - cron: '0 0 L * *'\njobs: {}\n"
    g = from_github_actions(wf, source="n.yml")
    assert [s.id for s in g] == ["nightly:1"]
    assert g.refused[0].source.line == 5 and "L, W, # and ? are not POSIX cron" in g.refused[0].reason


def test_eventbridge_repeated_id_is_refused_and_the_first_kept():
    item = {"Name": "a", "ScheduleExpression": "rate(1 hour)"}
    e = from_eventbridge(json.dumps([item, dict(item, ScheduleExpression="rate(2 hours)")]))
    assert len(e) == 1 and e.refused[0].source.item == 2 and "id 'default/a' repeats" in e.refused[0].reason


def test_strict_must_be_a_boolean():
    with pytest.raises(CalsimError, match=r"^strict: expected True or False, got 'yes'"):
        from_crontab("0 3 * * * a\n", strict="yes")


# -- load_any / import_any ----------------------------------------------------------------------------


def test_load_any_warns_once_per_refused_item(tmp_path):
    p = tmp_path / "jobs"
    p.write_text("0 3 * * * /bin/a\n61 * * * * /bin/b\n0 25 * * * /bin/c\n")
    with pytest.warns(UserWarning) as record:
        schedules = load_any(p)
    assert [s.id for s in schedules] == ["jobs:1"]
    assert [str(w.message).split(": schedule")[0] for w in record] == ["refused: crontab: jobs line 2",
                                                                       "refused: crontab: jobs line 3"]


def test_import_any_strict_raises_the_first_bad_item(tmp_path):
    p = tmp_path / "jobs"
    p.write_text("0 3 * * * /bin/a\n61 * * * * /bin/b\n")
    with pytest.raises(RuleError, match="jobs line 2"):
        import_any(p, strict=True)


def test_import_any_passes_tz_in_schedule_to_the_kubernetes_reader(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text(cronjob(schedule="TZ=Asia/Tokyo 0 3 * * *"))
    assert import_any(p, tz_in_schedule="legacy")[0].zone == "Asia/Tokyo"


# -- CLI ----------------------------------------------------------------------------------------------


def run_cli(capsys, *argv):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the CLI prints refusals itself, never through warnings
        code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_prints_one_warning_line_per_refusal_and_exits_0_when_something_was_imported(tmp_path, capsys):
    p = tmp_path / "jobs"
    p.write_text("0 3 * * * /bin/a\n61 * * * * /bin/b\n0 25 * * * /bin/c\n")
    code, out, err = run_cli(capsys, "preview", p, "-n", "1", "--after", "2026-03-01T00:00Z", "--release", "2026f")
    assert code == 0 and "jobs:1" in out
    lines = err.strip().splitlines()
    assert [line.split(": schedule")[0] for line in lines] == ["calsim: warning: refused: crontab: jobs line 2",
                                                               "calsim: warning: refused: crontab: jobs line 3"]


def test_cli_exits_2_when_every_item_is_refused(tmp_path, capsys):
    p = tmp_path / "jobs"
    p.write_text("61 * * * * /bin/b\n0 25 * * * /bin/c\n")
    code, _, err = run_cli(capsys, "preview", p, "-n", "1", "--after", "2026-03-01T00:00Z")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 2
    assert lines[0].startswith("calsim: warning: refused: crontab: jobs line 2")
    assert lines[1].startswith("calsim: error: crontab: jobs line 1") and "nothing imported" in lines[1]


def test_cli_strict_makes_the_first_bad_item_an_error(tmp_path, capsys):
    p = tmp_path / "jobs"
    p.write_text("0 3 * * * /bin/a\n61 * * * * /bin/b\n")
    code, _, err = run_cli(capsys, "preview", p, "--strict", "-n", "1", "--after", "2026-03-01T00:00Z")
    assert code == 2 and err.startswith("calsim: error: crontab: jobs line 2") and len(err.strip().splitlines()) == 1


def test_cli_legacy_tz_reads_a_manifests_tz_prefix(tmp_path, capsys):
    p = tmp_path / "m.yaml"
    p.write_text(cronjob(schedule="TZ=Asia/Tokyo 0 3 * * *"))
    code, _, err = run_cli(capsys, "preview", p, "-n", "1", "--after", "2026-03-01T00:00Z")
    assert code == 2 and "cannot use TZ or CRON_TZ in schedule" in err
    code, out, err = run_cli(capsys, "preview", p, "--legacy-tz", "-n", "1", "--after", "2026-03-01T00:00Z",
                             "--release", "2026f")
    assert (code, err) == (0, "") and "default/job" in out


def test_cli_file_with_nothing_to_import_exits_2(tmp_path, capsys):
    p = tmp_path / "c.ics"
    p.write_text(ics("UID:gone\nDTSTART:20260302T093000\nRRULE:FREQ=DAILY;UNTIL=20260301T000000"))
    code, _, err = run_cli(capsys, "preview", p, "-n", "1", "--after", "2026-03-01T00:00Z")
    assert code == 2 and err.startswith("calsim: error: fleet: nothing imported from") and "cancelled series" in err
