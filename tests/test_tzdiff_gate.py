"""``calsim tzdiff`` as a CI gate that says what to do (issue 30, item 2).

Deterministic and offline: shipped releases only, and ``CALSIM_NOW`` (the
CLI's "now") or ``now=`` fixed. The three situations a gate must tell apart:

* **in effect only** -- tzdata 2026a -> 2026f: America/Vancouver stays on
  UTC-7 from 2026-11-01 (no return to PST), so with now = 2026-12-01 a 09:00
  job has run an hour early in UTC on servers still on 2026a for a month;
* **future only** -- 2026f -> 2026f with Europe/Berlin frozen on CET from
  2027-01-01 (``--override``): its first affected run is at the March 2027
  DST change, after now;
* **both** -- 2026a -> 2026f with that override.
"""

from __future__ import annotations

import datetime as dt
import json

import polars as pl
import pytest

import calsim
from calsim.cli import main
from calsim.tzchanges import describe_shifts, shift_words
from calsim.tzgate import upgrade_check

NOW = "2026-12-01T12:00Z"
WINDOW = ["--from", "2026-11-01T00:00Z", "--to", "2027-06-01T00:00Z"]
BERLIN_FROZEN = ["--override", "Europe/Berlin@2027-01-01T00:00Z=CET-1"]
FLEET = """\
[[schedule]]
id = "vancouver/payroll"
zone = "America/Vancouver"
start = "2026-01-01T09:00"
rule = "FREQ=DAILY"

[[schedule]]
id = "berlin/report"
zone = "Europe/Berlin"
start = "2026-01-01T06:00"
rule = "FREQ=DAILY"

[[schedule]]
id = "tokyo/quiet"
zone = "Asia/Tokyo"
start = "2026-01-01T06:00"
rule = "FREQ=DAILY"
"""
SITUATIONS = {
    "nothing": ["--old", "2026f", "--new", "2026f"],
    "in_effect": ["--old", "2026a", "--new", "2026f"],
    "future": ["--old", "2026f", "--new", "2026f", *BERLIN_FROZEN],
    "both": ["--old", "2026a", "--new", "2026f", *BERLIN_FROZEN],
}
# The documented exit-code table (README "Before a tzdata upgrade").
EXIT = {
    "future": {"nothing": 0, "in_effect": 0, "future": 1, "both": 1},
    "any": {"nothing": 0, "in_effect": 1, "future": 1, "both": 1},
    "in-effect": {"nothing": 0, "in_effect": 1, "future": 0, "both": 1},
    "never": {"nothing": 0, "in_effect": 0, "future": 0, "both": 0},
}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    p = tmp_path_factory.mktemp("gate") / "fleet.toml"
    p.write_text(FLEET)
    return str(p)


@pytest.fixture
def tzdiff(fleet, monkeypatch, capsys):
    """Run ``calsim tzdiff FLEET ...`` in process with CALSIM_NOW fixed: (exit code, stdout, stderr)."""
    monkeypatch.setenv("CALSIM_NOW", NOW)

    def run(*args: str, now: str = NOW) -> tuple[int, str, str]:
        monkeypatch.setenv("CALSIM_NOW", now)
        code = main(["tzdiff", fleet, *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


# -- the gate's exit codes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("situation", list(SITUATIONS))
@pytest.mark.parametrize("fail_on", list(EXIT))
def test_exit_code_for_each_situation_and_fail_on(tzdiff, situation, fail_on):
    code, out, err = tzdiff(*SITUATIONS[situation], *WINDOW, "--fail-on", fail_on)
    assert code == EXIT[fail_on][situation], out.splitlines()[0] + err
    verdict = f"gate --fail-on {fail_on}: " + ("FAIL (exit 1)" if code else "pass (exit 0)")
    assert verdict in out.splitlines()[0]


@pytest.mark.parametrize("situation", list(SITUATIONS))
def test_the_default_is_future_so_a_fix_for_a_change_in_effect_is_not_blocked(tzdiff, situation):
    code, out, _ = tzdiff(*SITUATIONS[situation], *WINDOW)
    assert code == EXIT["future"][situation]
    assert "gate --fail-on future:" in out.splitlines()[0]


@pytest.mark.parametrize("situation", list(SITUATIONS))
def test_fail_on_change_is_an_alias_of_fail_on_any(tzdiff, situation):
    code, out, _ = tzdiff(*SITUATIONS[situation], *WINDOW, "--fail-on-change")
    assert code == EXIT["any"][situation]
    assert "gate --fail-on any:" in out.splitlines()[0]
    assert tzdiff(*SITUATIONS[situation], *WINDOW, "--fail-on-change", "--fail-on", "any")[0] == code


# Berlin's first affected run is on 2027-03-28: 117 days after now.
@pytest.mark.parametrize(("fail_on", "within", "expected"), [
    ("future", "30d", {"nothing": 0, "in_effect": 0, "future": 0, "both": 0}),
    ("future", "150d", {"nothing": 0, "in_effect": 0, "future": 1, "both": 1}),
    ("any", "30d", {"nothing": 0, "in_effect": 1, "future": 0, "both": 1}),
    ("any", "P150D", {"nothing": 0, "in_effect": 1, "future": 1, "both": 1}),
])
def test_within_counts_a_future_change_only_inside_the_horizon_from_now(tzdiff, fail_on, within, expected):
    for situation, code in expected.items():
        got, out, _ = tzdiff(*SITUATIONS[situation], *WINDOW, "--fail-on", fail_on, "--within", within)
        assert got == code, (situation, out.splitlines()[0])


def test_within_horizon_starts_at_now_not_at_the_window_start(tzdiff):
    # The same future change seen from a later "now": 2027-03-01 + 30 days covers 2027-03-28.
    args = [*SITUATIONS["future"], *WINDOW, "--within", "30d"]
    assert tzdiff(*args)[0] == 0
    code, out, _ = tzdiff(*args, now="2027-03-01T00:00Z")
    assert code == 1
    assert "1 schedule changes from 2027-03-28 in Europe/Berlin, within 30d of now" in out.splitlines()[0]


def test_verdict_says_why_the_gate_passed(tzdiff):
    line = tzdiff(*SITUATIONS["future"], *WINDOW, "--within", "30d")[1].splitlines()[0]
    assert line.endswith("gate --fail-on future --within 30d: pass (exit 0), the next change, on 2027-03-28 in "
                         "Europe/Berlin, is more than 30d away")
    line = tzdiff(*SITUATIONS["in_effect"], *WINDOW)[1].splitlines()[0]
    assert line.endswith("gate --fail-on future: pass (exit 0), no change still to come")


def test_a_change_in_effect_counts_per_zone_not_per_schedule():
    # A monthly job whose first affected run (15 November) comes after now (10 November): its zone's change took
    # effect on 1 November, so the upgrade fixes it and the default gate does not fail on it.
    monthly = calsim.Schedule("van/monthly", "America/Vancouver", "2026-01-15T09:00", "FREQ=MONTHLY")
    check = upgrade_check([monthly], "2026a", "2026f", "2026-11-01T00:00Z", "2027-03-01T00:00Z",
                          now="2026-11-10T00:00Z")
    row = check.schedules.row(0, named=True)
    assert row["first_affected"] == dt.datetime(2026, 11, 15, 9) and row["status"] == "in_effect"
    assert row["in_effect_since_local"].date() == dt.date(2026, 11, 1)
    assert check.exit_code == 0 and not check.failed
    assert "already in effect since 2026-11-01 in America/Vancouver" in check.line


def test_a_change_that_began_before_an_explicit_window_is_still_in_effect(tzdiff):
    code, out, _ = tzdiff(*SITUATIONS["in_effect"], "--from", "2027-01-01T00:00Z", "--to", "2027-02-01T00:00Z")
    first = out.splitlines()[0]
    assert code == 0
    assert "already in effect since 2026-11-01 in America/Vancouver (moved, -3600 s)" in first


# -- what to do ---------------------------------------------------------------------------------------------------


def test_advice_is_correct_in_time(tzdiff):
    assert "; to do: upgrade to 2026f now, it fixes the runs already at the wrong instant;" in tzdiff(
        *SITUATIONS["in_effect"], *WINDOW)[1]
    future = tzdiff(*SITUATIONS["future"], *WINDOW)[1].splitlines()[0]
    assert "; to do: upgrade to 2026f+override before 2027-03-28 in Europe/Berlin (the first change to come" in future
    both = tzdiff(*SITUATIONS["both"], *WINDOW)[1].splitlines()[0]
    assert ("to do: upgrade to 2026f+override now, it fixes the runs already at the wrong instant (the next change "
            "comes on 2027-03-28 in Europe/Berlin)") in both
    nothing = tzdiff(*SITUATIONS["nothing"], *WINDOW)[1].splitlines()[0]
    assert nothing.startswith("0 of 3 schedules change") and "to do: nothing, no run moves" in nothing


# -- bad gate options: one line, exit 2 ----------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    (["--fail-on", "futur"], "calsim: error: --fail-on: unknown value 'futur' (allowed: 'future', 'any', "
                             "'in-effect' or 'never') (did you mean 'future'?)"),
    (["--fail-on", "in-effect", "--within", "30d"], "calsim: error: --within: '30d' bounds changes still to come; "
                                                    "with --fail-on in-effect it would change nothing"),
    (["--fail-on", "never", "--within", "30d"], "calsim: error: --within: '30d' bounds changes still to come"),
    (["--within", "soon"], "calsim: error: --within: cannot parse 'soon'"),
    (["--within", "P1M"], "calsim: error: --within: 'P1M' is a calendar period"),
    (["--fail-on-change", "--fail-on", "future"], "calsim: error: --fail-on-change: is --fail-on any, not with "
                                                  "--fail-on 'future'"),
])
def test_bad_gate_options_exit_2_with_one_line(tzdiff, args, message):
    code, out, err = tzdiff(*SITUATIONS["both"], *WINDOW, *args)
    assert code == 2 and out == ""
    assert err.startswith(message) and len(err.strip().splitlines()) == 1, err


def test_bad_summary_json_path_is_refused_before_any_work(tzdiff, tmp_path):
    code, _, err = tzdiff(*SITUATIONS["both"], *WINDOW, "--summary-json", str(tmp_path / "no" / "s.json"))
    assert code == 2 and err.startswith("calsim: error: --summary-json: directory ")
    out = tmp_path / "d.csv"
    code, _, err = tzdiff(*SITUATIONS["both"], *WINDOW, "--format", "csv", "--output", str(out),
                          "--summary-json", str(out))
    assert code == 2 and "--summary-json" in err and not out.exists()


# -- the JSON summary ----------------------------------------------------------------------------------------------


def test_json_is_an_object_with_the_first_lines_facts_and_the_rows(tzdiff):
    code, out, err = tzdiff(*SITUATIONS["both"], *WINDOW, "--format", "json", "--occurrences")
    doc = json.loads(out)
    assert set(doc) == {"summary", "rows"}
    s = doc["summary"]
    assert s["line"] == err.strip()  # the line on stderr, the document on stdout
    assert (s["old"], s["new"], s["now"]) == ("2026a", "2026f+override", "2026-12-01T12:00Z")
    assert s["window"] == {"start": "2026-11-01T00:00Z", "end": "2027-06-01T00:00Z"}
    assert (s["schedules"], s["changed_schedules"], s["in_effect_schedules"], s["future_schedules"]) == (3, 2, 1, 1)
    assert s["occurrences"] == len(doc["rows"]) and s["row_kind"] == "occurrences"
    assert s["first_change"] == {
        "schedule_id": "vancouver/payroll", "label": "vancouver/payroll", "zone": "America/Vancouver",
        "local_date": "2026-11-01", "utc": "2026-11-01T09:00Z", "change": "moved", "shift_s": -3600,
        "local_shift_s": 0, "shift": "1 h earlier in UTC, same local time", "in_effect": True}
    assert s["in_effect_since"]["local_date"] == "2026-11-01" and s["in_effect_since"]["zone"] == "America/Vancouver"
    assert s["next_change"] == {"schedule_id": "berlin/report", "label": "berlin/report", "zone": "Europe/Berlin",
                                "local_date": "2027-03-28", "utc": "2027-03-28T04:00Z"}  # old instant, the earlier
    zones = {z["zone"]: z for z in s["zones"]}
    assert list(zones) == ["America/Vancouver", "Europe/Berlin"]  # what is already wrong first
    assert zones["America/Vancouver"]["in_effect_since"] == "2026-11-01"
    assert zones["America/Vancouver"]["next_change"] is None
    assert zones["Europe/Berlin"]["in_effect_since"] is None and zones["Europe/Berlin"]["next_change"] == "2027-03-28"
    assert zones["Europe/Berlin"]["shifts"] == [
        {"shift_s": 3600, "local_shift_s": 0, "shift": "1 h later in UTC, same local time", "occurrences": 65}]
    assert s["gate"] == {"fail_on": "future", "within_s": None, "until": None, "failed": True, "exit_code": code,
                         "schedules": 1, "verdict": "gate --fail-on future: FAIL (exit 1), 1 schedule changes from "
                                                    "2027-03-28 in Europe/Berlin"}
    assert s["advice"].startswith("upgrade to 2026f+override now")
    row = doc["rows"][0]
    assert (row["schedule_id"], row["shift_s"], row["local_shift_s"], row["shift"]) == (
        "berlin/report", 3600, 0, "1 h later in UTC, same local time")


def test_json_per_schedule_rows_and_the_gate_with_within(tzdiff):
    code, out, _ = tzdiff(*SITUATIONS["both"], *WINDOW, "--format", "json", "--summary", "--fail-on", "any",
                          "--within", "30d")
    doc = json.loads(out)
    assert code == 1 and doc["summary"]["row_kind"] == "schedules"
    assert doc["summary"]["gate"] | {"verdict": None} == {
        "fail_on": "any", "within_s": 30 * 86400, "until": "2026-12-31T12:00Z", "failed": True, "exit_code": 1,
        "schedules": 1, "verdict": None}
    assert [r["schedule_id"] for r in doc["rows"]] == ["vancouver/payroll", "berlin/report"]
    assert [r["already_in_effect_since"] for r in doc["rows"]] == ["2026-11-01", None]
    assert doc["rows"][0]["shifts"] == ["1 h earlier in UTC, same local time"]


def test_csv_rows_with_the_summary_in_a_sidecar(tzdiff, tmp_path):
    sidecar, out = tmp_path / "summary.json", tmp_path / "diff.csv"
    code, printed, _ = tzdiff(*SITUATIONS["in_effect"], *WINDOW, "--format", "csv", "--output", str(out),
                              "--summary-json", str(sidecar))
    summary = json.loads(sidecar.read_text())
    assert code == 0 and summary["line"] == printed.strip()
    assert summary["first_change"]["local_date"] == "2026-11-01" and summary["gate"]["exit_code"] == 0
    csv = pl.read_csv(out)
    assert csv.columns[:11] == ["schedule_id", "revision", "nominal_local", "fold", "zone", "old_utc", "new_utc",
                                "shift_s", "local_shift_s", "shift", "change"]
    assert csv.height == summary["occurrences"]
    assert set(csv["shift"]) == {"1 h earlier in UTC, same local time"}


def test_summary_json_beside_a_table(tzdiff, tmp_path):
    sidecar = tmp_path / "summary.json"
    code, out, _ = tzdiff(*SITUATIONS["future"], *WINDOW, "--summary-json", str(sidecar))
    assert code == 1 and json.loads(sidecar.read_text())["line"] == out.splitlines()[0]


# -- shifts in words ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "kwargs", "words"), [
    ((-3600, 0), {}, "1 h earlier in UTC, same local time"),
    ((3600, 0), {}, "1 h later in UTC, same local time"),
    ((1800, 1800), {}, "30 min later, local time moves too"),
    ((-5400, -5400), {}, "1 h 30 min earlier, local time moves too"),
    ((86400, 0), {}, "1 d later in UTC, same local time"),
    ((3600, -1800), {}, "1 h later in UTC, 30 min earlier in local time"),
    ((0, 0), {}, "same instant, only the notes differ"),
    ((0, -3600), {}, "same instant, local time reads 1 h earlier"),
    ((None, None), {"old_runs": False}, "runs now, did not before"),
    ((None, None), {"new_runs": False}, "no longer runs"),
    ((None, None), {"old_runs": False, "new_runs": False}, "runs under neither release, only the notes differ"),
])
def test_shift_words(args, kwargs, words):
    assert shift_words(*args, **kwargs) == words


def test_shifts_in_words_from_the_utc_and_the_local_shift_of_real_rows():
    # Havana 2026a -> 2026f: the zone stays on UTC-4. A run at 00:00 on 2027-03-14, pushed by 2026a's spring gap
    # to 01:00 (gap="shift"), now runs at 00:00: an hour earlier, and the wall clock reads an hour earlier too.
    s = calsim.Schedule("havana", "America/Havana", "2027-03-12T00:00", "FREQ=DAILY", gap="shift")
    d = describe_shifts(calsim.tzdiff([s], "2026a", "2026f", "2027-03-12T00:00Z", "2027-03-16T00:00Z"),
                        "2026a", "2026f")
    assert d.columns[7:10] == ["shift_s", "local_shift_s", "shift"]
    rows = d.select("nominal_local", "change", "shift_s", "local_shift_s", "shift").rows()
    assert rows == [
        (dt.datetime(2027, 3, 12), "moved", -3600, 0, "1 h earlier in UTC, same local time"),
        (dt.datetime(2027, 3, 13), "moved", -3600, 0, "1 h earlier in UTC, same local time"),
        (dt.datetime(2027, 3, 14), "no_longer_gap", -3600, -3600, "1 h earlier, local time moves too"),
    ]


def test_table_output_adds_the_words_and_keeps_the_numbers(tzdiff):
    out = tzdiff(*SITUATIONS["both"], *WINDOW, "--occurrences")[1].splitlines()
    header = out[1].split()
    assert header[7:11] == ["shift_s", "local_shift_s", "shift", "change"]
    berlin = next(line for line in out[2:] if line.startswith("berlin/report"))
    assert berlin.split()[7:9] == ["3600", "0"] and "  1 h later in UTC, same local time  " in berlin


# -- one calendar -------------------------------------------------------------------------------------------------


def test_dates_are_local_dates_of_the_zone_in_the_table_json_and_summary(fleet, tmp_path, monkeypatch, capsys):
    # Auckland frozen on NZST from 2027-01-01T13:00Z, which is 02:00 on 2 January there (01:00 by the new clock).
    # The first moved run, 09:00 on 2 January, is 20:00Z on 1 January: a UTC date would say the 1st.
    p = tmp_path / "nz.toml"
    p.write_text('[[schedule]]\nid = "nz/daily"\nzone = "Pacific/Auckland"\nstart = "2026-12-01T09:00"\n'
                 'rule = "FREQ=DAILY"\n')
    monkeypatch.setenv("CALSIM_NOW", "2027-02-01T00:00Z")
    args = ["tzdiff", str(p), "--old", "2026f", "--new", "2026f", "--override",
            "Pacific/Auckland@2027-01-01T13:00Z=NZST-12", "--from", "2026-12-15T00:00Z", "--to", "2027-03-01T00:00Z"]
    assert main([*args, "--summary"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "already in effect since 2027-01-02 in Pacific/Auckland" in out[0]
    row = dict(zip(out[1].split()[:9], out[2].split()[:9]))
    assert row["first_local_date"] == row["already_in_effect_since"] == "2027-01-02"
    main([*args, "--summary", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"][0]["first_local_date"] == doc["rows"][0]["already_in_effect_since"] == "2027-01-02"
    assert doc["summary"]["in_effect_since"]["local_date"] == "2027-01-02"
    assert doc["summary"]["in_effect_since"]["utc"] == "2027-01-01T13:00Z"  # the instant says UTC
    assert doc["summary"]["zones"][0]["first_local_date"] == "2027-01-02"
    assert doc["summary"]["first_change"]["local_date"] == "2027-01-02"


def test_tzdiff_summary_dates_a_change_in_effect_in_the_zones_wall_clock():
    s = calsim.Schedule("nz", "Pacific/Auckland", "2026-12-01T09:00", "FREQ=DAILY")
    new = calsim.release("2026f").with_override("Pacific/Auckland", "2027-01-01T13:00Z", "NZST-12")
    d = calsim.tzdiff([s], "2026f", new, "2026-12-15T00:00Z", "2027-03-01T00:00Z")
    row = calsim.tzdiff_summary(d, now="2027-02-01T00:00Z").row(0, named=True)
    assert row["in_effect_since"] == dt.datetime(2027, 1, 1, 20, tzinfo=dt.timezone.utc)
    assert row["in_effect_since_local"] == row["first_affected"] == dt.datetime(2027, 1, 2, 9)
