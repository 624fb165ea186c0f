"""A fleet TOML file is read table by table, as every other reader (issue 30): one bad ``[[schedule]]`` is refused
and the rest imported; ``strict=True`` (``--strict``) refuses the file; a scenario is read whole. And entries that are
not schedules (``@reboot``, a Deployment) are never dropped without a word in the CLI."""

from __future__ import annotations

import warnings

import pytest

import calsim
from calsim.cli import main
from calsim.errors import RuleError, ScheduleError
from calsim.importers.fleet import load, read

GOOD = '[[schedule]]\nid = "a"\nzone = "UTC"\nstart = "2026-01-01T09:00"\ncron = "0 9 * * *"\n'
BAD = '\n[[schedule]]\nid = "b"\nzone = "UTC"\nstart = "2026-01-01T09:00"\ncron = "0 25 * * *"\n'
TYPO = '\n[[schedule]]\nid = "c"\nzone = "UTC"\nstart = "2026-01-01T09:00"\ncorn = "0 9 * * *"\n'


def run_cli(capsys, *argv):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the CLI prints refusals and skipped entries itself, never as warnings
        code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_one_bad_table_is_refused_and_the_others_imported(tmp_path):
    p = tmp_path / "fleet.toml"
    p.write_text(GOOD + BAD + TYPO)
    fleet = read(p)
    assert [s.id for s in fleet] == ["a"]
    assert [(r.source.format, r.source.line, r.source.item, r.what) for r in fleet.refused] == [
        ("fleet", 7, 2, "schedule #2 'b'"), ("fleet", 13, 3, "schedule #3 'c'")]
    first, second = fleet.refused
    assert isinstance(first.error, RuleError) and first.reason.startswith("fleet.toml:7 schedule #2 ('b'): ")
    assert "hour" in first.reason  # the field
    assert second.reason.startswith("fleet.toml:13 schedule #3: unknown key 'corn' (did you mean 'cron'?; allowed: ")
    assert fleet.sources["a"].line == 1 and fleet[0].source.item == 1


def test_strict_raises_the_first_bad_table_and_load_reads_whole(tmp_path):
    p = tmp_path / "fleet.toml"
    p.write_text(GOOD + BAD)
    with pytest.raises(RuleError, match=r"^fleet.toml:7 schedule #2 \('b'\): "):
        read(p, strict=True)
    with pytest.raises(RuleError, match=r"^fleet.toml:7 schedule #2 \('b'\): "):
        load(p)  # what a scenario's schedules are read with


def test_every_table_refused_raises_the_first_naming_the_count(tmp_path):
    p = tmp_path / "fleet.toml"
    p.write_text(BAD.lstrip() + TYPO)
    with pytest.raises(RuleError) as err:
        read(p)
    assert str(err.value).startswith("fleet.toml:1 schedule #1 ('b'): ")
    assert str(err.value).endswith("(and 1 more item(s) refused; nothing imported)")
    assert [r.source.item for r in err.value.refused] == [1, 2]


def test_an_entry_that_is_not_a_table_is_refused_not_a_crash(tmp_path):
    p = tmp_path / "fleet.toml"
    p.write_text('schedule = ["a", {id = "b", zone = "UTC", start = "2026-01-01T09:00", cron = "0 9 * * *"}]\n')
    fleet = read(p)
    assert [s.id for s in fleet] == ["b"]
    assert fleet.refused[0].reason == "fleet.toml schedule #1: expected a table (id = ..., zone = ..., a rule), got 'a'"


def test_a_scenario_naming_a_scenario_as_its_fleet_is_an_error_not_a_recursion(tmp_path):
    p = tmp_path / "sc.toml"
    p.write_text('[scenario]\nname = "x"\nfleet = "sc.toml"\nstart = "2026-01-01T00:00Z"\nend = "2026-01-02T00:00Z"\n')
    with pytest.raises(ScheduleError, match="is a scenario file naming another fleet file"):
        read(p)


def test_cli_warns_once_per_refused_table_and_goes_on(tmp_path, capsys):
    p = tmp_path / "fleet.toml"
    p.write_text(GOOD + BAD)
    code, out, err = run_cli(capsys, "preview", p, "-n", "1", "--after", "2026-03-01T00:00Z", "--release", "2026f")
    assert code == 0 and "a " in out and "\nb " not in out
    [line] = err.splitlines()
    assert line.startswith("calsim: warning: refused: fleet.toml:7 schedule #2 ('b'): ") and "hour" in line
    code, _, err = run_cli(capsys, "preview", p, "--strict", "-n", "1", "--after", "2026-03-01T00:00Z")
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("calsim: error: fleet.toml:7 schedule #2")


def test_cli_reads_a_scenario_whole(tmp_path, capsys):
    """A scenario is what is simulated and compared: a schedule dropped from it would change every number it gives
    under the scenario's own name, so its schedules are read whole (fleet.py's docstring), as its outages are."""
    p = tmp_path / "sc.toml"
    p.write_text('[scenario]\nname = "x"\nstart = "2026-03-01T00:00Z"\nend = "2026-03-02T00:00Z"\n\n' + GOOD + BAD)
    code, _, err = run_cli(capsys, "simulate", p, "--quiet")
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("calsim: error: sc.toml:12 schedule #2 ('b'): ")
    # Its schedules read as a fleet (preview, calsim.load) are refused table by table, as any fleet's.
    code, out, err = run_cli(capsys, "preview", p, "-n", "1", "--after", "2026-03-01T00:00Z", "--release", "2026f")
    assert code == 0 and err.startswith("calsim: warning: refused: sc.toml:12 schedule #2 ('b')")
    assert [s.id for s in read(p)] == ["a"]


CRONTAB = "0 3 * * * /usr/bin/backup --all\n@reboot /usr/bin/warmup\n"
MANIFEST = """apiVersion: batch/v1
kind: CronJob
metadata: {name: report}
spec:
  schedule: "0 3 * * *"
  jobTemplate: {}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
"""


def test_cli_says_which_entries_it_skipped_after_its_work(tmp_path, capsys):
    tab = tmp_path / "tab"
    tab.write_text(CRONTAB)
    code, out, err = run_cli(capsys, "preview", tab, "-n", "1", "--after", "2026-03-01T00:00Z", "--release", "2026f")
    assert code == 0 and "tab:1" in out
    assert err.splitlines() == ["calsim: warning: skipped: tab line 2: @reboot: runs at boot, not at a time"]
    manifest = tmp_path / "jobs.yaml"
    manifest.write_text(MANIFEST)
    code, out, err = run_cli(capsys, "expand", manifest, "--from", "2026-03-01T00:00Z", "--to", "2026-03-02T00:00Z",
                             "--release", "2026f")
    assert code == 0 and err.splitlines() == [
        "calsim: warning: skipped: jobs.yaml document 2 (line 8): Deployment shop/web: not a CronJob"]


def test_a_failing_command_prints_only_its_error_line(tmp_path, capsys):
    tab = tmp_path / "tab"
    tab.write_text(CRONTAB)
    code, _, err = run_cli(capsys, "preview", tab, "-n", "99999999999")
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("calsim: error: preview: n=")


def test_many_skipped_entries_are_counted_after_the_first_ones(tmp_path, capsys):
    manifest = tmp_path / "all.yaml"
    others = "".join(f"---\napiVersion: v1\nkind: {'Service' if i % 3 else 'ConfigMap'}\nmetadata: {{name: s{i}}}\n"
                     for i in range(30))
    manifest.write_text(MANIFEST.split("---")[0] + others)
    code, _, err = run_cli(capsys, "preview", manifest, "-n", "1", "--after", "2026-03-01T00:00Z", "--release", "2026f")
    lines = err.splitlines()
    assert code == 0 and len(lines) == 10
    assert all(line.startswith("calsim: warning: skipped: all.yaml document ") for line in lines[:9])
    assert lines[9] == "calsim: warning: skipped 21 more entries that are not schedules (Service 14, ConfigMap 7)"


def test_preview_of_a_crontab_shows_each_job_command(tmp_path, capsys):
    tab = tmp_path / "tab"
    tab.write_text("0 3 * * * /usr/local/bin/backup --all --target s3://bucket/a/very/long/path/of/backups\n")
    code, out, _ = run_cli(capsys, "preview", tab, "-n", "1", "--after", "2026-03-01T00:00Z", "--release", "2026f")
    header, row = out.splitlines()
    assert code == 0 and header.split()[:3] == ["schedule_id", "command", "nominal_local"]
    assert "/usr/local/bin/backup --all --target ..." in row  # cut to 40 characters in a table
    code, out, _ = run_cli(capsys, "preview", tab, "-n", "1", "--after", "2026-03-01T00:00Z", "--release", "2026f",
                           "--format", "csv")
    assert out.splitlines()[0].endswith(",explain,command") and out.rstrip().endswith("/of/backups")  # whole in data


def test_preview_of_an_inline_rule_or_a_fleet_file_has_no_command_column(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "preview", "0 3 * * *", "-n", "1", "--after", "2026-03-01T00:00Z", "--release",
                           "2026f")
    assert code == 0 and out.splitlines()[0].split() == ["schedule_id", "nominal_local", "fold", "due_utc",
                                                         "from_now", "utc_offset_s", "explain"]
    p = tmp_path / "fleet.toml"
    p.write_text(GOOD)
    code, out, _ = run_cli(capsys, "preview", p, "-n", "1", "--after", "2026-03-01T00:00Z", "--release", "2026f")
    assert code == 0 and "command" not in out.splitlines()[0]


def test_calsim_load_of_a_fleet_reads_it_as_before(tmp_path):
    p = tmp_path / "fleet.toml"
    p.write_text(GOOD)
    assert [s.id for s in calsim.load(p)] == ["a"]


def test_calsim_load_of_a_fleet_refuses_the_bad_table_with_a_warning_and_returns_the_rest(tmp_path):
    p = tmp_path / "fleet.toml"
    p.write_text(GOOD + BAD + TYPO)
    with pytest.warns(UserWarning, match=r"refused: fleet\.toml:7 schedule #2 \('b'\)"):
        assert [s.id for s in calsim.load(p)] == ["a"]
    with pytest.raises(RuleError):
        calsim.importers.import_any(p, strict=True)
