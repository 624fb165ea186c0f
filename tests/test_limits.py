"""Bounded work (issue 15 item 1): every expansion is estimated first and refused past a limit.

The estimate (:mod:`calsim.limits`) must be an upper bound of the rows
``expand`` gives, for every kind of rule, and close to them for the common
ones; every entry point (expand, simulate, tzdiff, preview) refuses above the
limit and accepts at it; hostile inputs are refused in well under a second
in a process that could not survive the expansion (``CASES``, run under
``RLIMIT_AS`` 4 GiB and ``RLIMIT_CPU``).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import calsim
from calsim import limits
from calsim.errors import RuleError, ScheduleError
from messages import assert_clear

REL = "2026f"
US = 10**6
HOUR = 3600 * US
DAY = 86400 * US
ZONES = ("UTC", "America/New_York", "Australia/Lord_Howe", "Europe/London", "Africa/Casablanca",
         "Pacific/Apia", "America/Santiago", "Europe/Dublin")
FOLDS = ("first", "second", "both")
GAPS = ("skip", "shift", "next_valid", "shift_backward")

# ---------------------------------------------------------------------------
# Hostile inputs, refused in a process limited to 4 GiB of address space
# ---------------------------------------------------------------------------

# (name, code, expected error class, text the one-line message must contain).
# Each code runs after `import calsim` in a fresh process under RLIMIT_AS 4 GiB
# and RLIMIT_CPU 20 s: had the guard failed, it would allocate gigabytes.
CASES = [
    ("secondly_100_years",
     "calsim.expand([calsim.Schedule('s', 'UTC', '2026-01-01T00:00', 'FREQ=SECONDLY')],"
     " '2026-01-01T00:00Z', '2126-01-01T00:00Z')",
     "InputError", "expand: ~3,155,846,400 occurrences (schedule 's' alone"),
    ("count_10e12_one_day_window_far_from_dtstart",
     "calsim.expand([calsim.Schedule('c', 'UTC', '2020-01-01T00:00', 'FREQ=SECONDLY;COUNT=1000000000000')],"
     " '2026-01-01T00:00Z', '2026-01-02T00:00Z')",
     "InputError", "expand: ~189,648,000 occurrences"),
    ("every_second_10_years",
     "calsim.expand([calsim.Schedule('e', 'UTC', '2026-01-01T00:00Z', calsim.Every('1s'))],"
     " '2026-01-01T00:00Z', '2036-01-01T00:00Z')",
     "InputError", "expand: ~315,532,800 occurrences"),
    ("preview_n_99999999999",
     "calsim.preview(calsim.Schedule('p', 'UTC', '2026-01-01T00:00', 'FREQ=DAILY'), n=99999999999)",
     "InputError", "preview: n=99,999,999,999 exceeds the limit 50,000,000"),
    ("simulate_secondly_10_years",
     "calsim.simulate(calsim.Scenario('x', [calsim.Schedule('s', 'UTC', '2026-01-01T00:00', 'FREQ=SECONDLY')],"
     " '2026-01-01T00:00Z', '2036-01-01T00:00Z'))",
     "InputError", "simulate: ~"),
    ("tzdiff_secondly_10_years",
     "calsim.tzdiff([calsim.Schedule('mx', 'America/Mexico_City', '2023-01-01T00:00', 'FREQ=SECONDLY')],"
     " '2022e', '2022f', '2023-01-01T00:00Z', '2033-01-01T00:00Z')",
     "InputError", "tzdiff: ~"),
    ("fleet_of_minutely_schedules_over_a_year",
     "s = calsim.Schedule('m-0', 'UTC', '2026-01-01T00:00', 'FREQ=MINUTELY')\n"
     "import dataclasses\n"
     "calsim.expand([dataclasses.replace(s, id=f'm-{i}') for i in range(1000)],"
     " '2026-01-01T00:00Z', '2027-01-01T00:00Z')",
     "InputError", "schedule 'm-0' alone ~"),
    ("oncalendar_every_fifth_of_a_second_for_a_year",
     "calsim.expand([calsim.Schedule('o', 'UTC', '2026-01-01T00:00', 'OnCalendar=*:*:0/0.2')],"
     " '2026-01-01T00:00Z', '2027-01-01T00:00Z')",
     "InputError", "expand: ~"),
    ("quartz_every_second_for_5_years",
     "calsim.expand([calsim.Schedule('q', 'UTC', '2026-01-01T00:00', 'quartz:* * * ? * *')],"
     " '2026-01-01T00:00Z', '2031-01-01T00:00Z')",
     "InputError", "expand: ~"),
    ("window_every_microsecond",
     "calsim.expand([calsim.Schedule('w', 'UTC', '2026-01-01T00:00', calsim.Window('00:00', '00:00', '1us'))],"
     " '2026-01-01T00:00Z', '2026-01-02T00:00Z')",
     "InputError", "expand: ~"),
    ("bad_environment_variable",
     "import os\nos.environ['CALSIM_MAX_OCCURRENCES'] = 'lots' * 1000\n"
     "calsim.expand([calsim.Schedule('d', 'UTC', '2026-01-01T00:00', 'FREQ=DAILY')],"
     " '2026-01-01T00:00Z', '2026-02-01T00:00Z')",
     "InputError", "CALSIM_MAX_OCCURRENCES: environment variable is 'lotslots"),
]

# A bound on CPU seconds (never wall time) wide enough for a loaded machine; each guarded case
# costs well under a second, each unguarded one minutes or the memory limit.
WIDE_CPU_S = 10.0

_HARNESS = """
import resource, sys, time
# 4 GiB: polars 2's thread pools (and a tokio runtime) reserve address space per thread; under 2 GiB a
# thread could not be spawned (a panic) depending on what else was mapped. The CPU limit bounds the work.
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
import calsim
import calsim.distributed
code = sys.stdin.read()
cpu, wall = time.process_time(), time.perf_counter()
try:
    exec(compile(code, "<case>", "exec"), {"calsim": calsim})
except Exception as exc:
    print("RAISED", type(exc).__name__, time.process_time() - cpu, time.perf_counter() - wall)
    print(str(exc))
else:
    print("RETURNED", "-", time.process_time() - cpu, time.perf_counter() - wall)
"""


def run_limited(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` (after ``import calsim``) in a fresh process under RLIMIT_AS 4 GiB and RLIMIT_CPU 20 s."""
    env = {k: v for k, v in os.environ.items() if k != limits.ENV}
    return subprocess.run([sys.executable, "-c", _HARNESS], input=code, capture_output=True, text=True,
                          timeout=timeout, env=env)


def _outcome(done: subprocess.CompletedProcess) -> tuple[str, str, float, float, str]:
    assert done.returncode == 0, done.stderr[-2000:]
    head, _, message = done.stdout.partition("\n")
    status, cls, cpu, wall = head.split()
    return status, cls, float(cpu), float(wall), message.rstrip("\n")


@pytest.mark.parametrize("name,code,error,needle", CASES, ids=[c[0] for c in CASES])
def test_hostile_input_is_refused_with_bounded_work(name, code, error, needle):
    status, cls, cpu, wall, message = _outcome(run_limited(code))
    assert (status, cls) == ("RAISED", error), message
    assert needle in message
    assert "\n" not in message and len(message) < 400
    assert cpu < WIDE_CPU_S, (cpu, wall)  # unguarded, these cost minutes or the memory limit


def test_count_10e12_from_the_window_day_expands_only_up_to_the_window_end():
    # COUNT beyond the window: the search stops at the window's end instead of
    # looking for the 10**12-th instance (it used to double its span without bound).
    code = ("f = calsim.expand([calsim.Schedule('c', 'UTC', '2026-01-01T00:00', "
            "'FREQ=SECONDLY;COUNT=1000000000000')], '2026-01-01T00:00Z', '2026-01-02T00:00Z')\n"
            "assert f.height == 86400, f.height")
    status, _, cpu, _, message = _outcome(run_limited(code))
    assert status == "RETURNED", message
    assert cpu < WIDE_CPU_S


def test_dask_simulate_refuses_on_the_client_before_partitioning(tmp_path):
    out = tmp_path / "ledgers"
    sc = calsim.Scenario("x", [calsim.Schedule("s", "UTC", "2026-01-01T00:00", "FREQ=SECONDLY")],
                         "2026-01-01T00:00Z", "2036-01-01T00:00Z")
    # No Dask client is running: the refusal comes first, and nothing is written.
    with pytest.raises(calsim.InputError, match=r"^simulate: ~315,705,600 occurrences"):
        calsim.simulate(sc, engine="dask", output=str(out))
    assert not out.exists()


# ---------------------------------------------------------------------------
# The limit: argument > scope > environment variable > default
# ---------------------------------------------------------------------------


def test_default_limit_without_environment_variable(monkeypatch):
    monkeypatch.delenv(limits.ENV, raising=False)
    assert limits.max_occurrences() == limits.DEFAULT_MAX_OCCURRENCES == 50_000_000


@pytest.mark.parametrize("raw,expected", [("5000", 5000), (" 42 ", 42), ("1_000_000", 1_000_000),
                                          ("", limits.DEFAULT_MAX_OCCURRENCES)])
def test_environment_variable_sets_the_limit(monkeypatch, raw, expected):
    monkeypatch.setenv(limits.ENV, raw)
    assert limits.max_occurrences() == expected


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "1e8", "10.5", "12 34", "9" * 100, "1,000"])
def test_bad_environment_variable_is_refused_naming_it(monkeypatch, raw):
    monkeypatch.setenv(limits.ENV, raw)
    with pytest.raises(calsim.InputError, match=r"^CALSIM_MAX_OCCURRENCES: environment variable is ") as info:
        limits.max_occurrences()
    assert_clear(info.value)
    assert len(str(info.value)) < 250


def test_argument_wins_over_environment_variable(monkeypatch):
    monkeypatch.setenv(limits.ENV, "not a number")
    assert limits.max_occurrences(7) == 7
    assert limits.max_occurrences(1e6) == 1_000_000


@pytest.mark.parametrize("bad", [0, -1, True, "100", 1.5, float("inf"), float("nan"), [10]])
def test_bad_argument_is_refused_naming_it(bad):
    with pytest.raises(calsim.InputError, match=r"^max_occurrences: expected a positive whole number") as info:
        limits.max_occurrences(bad)
    assert_clear(info.value)


def test_scope_sets_the_limit_inside_the_block_only(monkeypatch):
    monkeypatch.setenv(limits.ENV, "123")
    with limits.scope(55):
        assert limits.max_occurrences() == 55
        assert limits.max_occurrences(9) == 9
    assert limits.max_occurrences() == 123


# ---------------------------------------------------------------------------
# Each entry point refuses above the limit and accepts at it
# ---------------------------------------------------------------------------

HOURLY = calsim.Schedule("hourly", "Europe/London", "2026-03-20T00:15", "FREQ=HOURLY", fold="both")
START, END = "2026-03-25T00:00Z", "2026-04-05T00:00Z"


def test_expand_accepts_at_the_limit_and_refuses_one_below():
    n = limits.estimate([HOURLY], START, END, REL)
    frame = calsim.expand([HOURLY], START, END, REL, max_occurrences=n)
    assert 0 < frame.height <= n
    with pytest.raises(calsim.InputError) as info:
        calsim.expand([HOURLY], START, END, REL, max_occurrences=n - 1)
    assert str(info.value) == (
        f"expand: ~{n:,} occurrences (schedule 'hourly' alone ~{n:,}) exceeds the limit {n - 1:,}; narrow the "
        "window, or raise it with max_occurrences=, the CALSIM_MAX_OCCURRENCES environment variable or "
        "--max-occurrences")
    assert_clear(info.value)


def test_expand_reads_the_environment_variable(monkeypatch):
    n = limits.estimate([HOURLY], START, END, REL)
    monkeypatch.setenv(limits.ENV, str(n - 1))
    with pytest.raises(calsim.InputError, match=rf"exceeds the limit {n - 1:,};"):
        calsim.expand([HOURLY], START, END, REL)
    assert calsim.expand([HOURLY], START, END, REL, max_occurrences=n).height > 0


def test_refusal_names_the_heaviest_schedule_and_cuts_a_long_id():
    light = calsim.Schedule("light", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
    heavy = calsim.Schedule("h" * 900, "UTC", "2026-01-01T00:00", "*/5 * * * *")
    with pytest.raises(calsim.InputError) as info:
        calsim.expand([light, heavy], START, END, REL, max_occurrences=100)
    msg = str(info.value)
    assert "(schedule 'hhhhhhhh" in msg and "... alone ~" in msg and len(msg) < 400


def _scenario(schedules, **kw):
    return calsim.Scenario("limits", schedules, START, END, release=REL, **kw)


def test_simulate_accepts_at_the_limit_and_refuses_one_below():
    sc = _scenario([HOURLY])
    n = limits.estimate([HOURLY], START, END, REL)
    ledger = calsim.simulate(sc, max_occurrences=n)
    assert ledger.frame.height > 0
    with pytest.raises(calsim.InputError, match=rf"^simulate: ~{n:,} occurrences .* exceeds the limit {n - 1:,};"):
        calsim.simulate(sc, max_occurrences=n - 1)


def test_simulate_argument_reaches_the_engine_past_a_lower_environment_limit(monkeypatch):
    # The engine's own expansion must use the caller's limit, not the environment's.
    sc = _scenario([HOURLY])
    n = limits.estimate([HOURLY], START, END, REL)
    monkeypatch.setenv(limits.ENV, "10")
    assert calsim.simulate(sc, max_occurrences=n).frame.height > 0
    with pytest.raises(calsim.InputError, match=r"^simulate: .* exceeds the limit 10;"):
        calsim.simulate(sc)


def test_simulate_counts_revisions_added_by_events():
    daily = calsim.Schedule("job", "UTC", "2026-03-20T00:00", "FREQ=DAILY")
    minutely = calsim.Schedule("job", "UTC", "2026-03-20T00:00", "FREQ=MINUTELY")
    sc = _scenario([daily], events=[calsim.Revise("2026-03-30T00:00Z", minutely)])
    with pytest.raises(calsim.InputError, match=r"^simulate: ~.* \(schedule 'job' alone"):
        calsim.simulate(sc, max_occurrences=1000)  # daily alone would be ~13 rows


MX = calsim.Schedule("mx", "America/Mexico_City", "2023-03-25T09:00", "FREQ=HOURLY")


# tzdiff expands the window widened by two days on each side (an occurrence moved across an edge is a shift).
WIDE = ("2023-03-26T00:00Z", "2023-04-12T00:00Z")


def test_tzdiff_accepts_at_the_limit_and_refuses_one_below():
    lo, hi = "2023-03-28T00:00Z", "2023-04-10T00:00Z"
    n = max(limits.estimate([MX], *WIDE, r) for r in ("2022e", "2022f"))
    assert calsim.tzdiff([MX], "2022e", "2022f", lo, hi, max_occurrences=n).height > 0
    with pytest.raises(calsim.InputError, match=rf"^tzdiff: ~{n:,} occurrences .* exceeds the limit {n - 1:,};"):
        calsim.tzdiff([MX], "2022e", "2022f", lo, hi, max_occurrences=n - 1)


def test_tzdiff_does_not_count_schedules_in_unchanged_zones():
    # Only schedules in zones that changed are expanded, so only they are estimated.
    quiet = calsim.Schedule("tokyo", "Asia/Tokyo", "2023-01-01T00:00", "FREQ=SECONDLY")
    lo, hi = "2023-03-28T00:00Z", "2023-04-10T00:00Z"
    n = max(limits.estimate([MX], *WIDE, r) for r in ("2022e", "2022f"))
    assert calsim.tzdiff([MX, quiet], "2022e", "2022f", lo, hi, max_occurrences=n).height > 0


def test_preview_refuses_n_above_the_limit_before_expanding():
    s = calsim.Schedule("p", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
    with pytest.raises(calsim.InputError, match=r"^preview: n=1,001 exceeds the limit 1,000 of occurrences"):
        calsim.preview(s, n=1001, max_occurrences=1000)
    assert limits.check_count(1000, 1000) == 1000


@pytest.mark.parametrize("bad", [-1, 2.5, "10", True, None])
def test_preview_refuses_n_that_is_not_a_whole_number(bad):
    s = calsim.Schedule("p", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
    with pytest.raises(calsim.InputError, match=r"^n: expected a whole number >= 0"):
        calsim.preview(s, n=bad)


def test_preview_of_a_dense_rule_stays_under_the_limit():
    # The growing search windows are cut to what the limit allows.
    s = calsim.Schedule("sec", "UTC", "2026-01-01T00:00", "FREQ=SECONDLY")
    frame = calsim.preview(s, n=300_000, release=REL, max_occurrences=1_000_000)
    assert frame.height == 300_000
    with pytest.raises(calsim.InputError, match=r"^preview: ~.* exceeds the limit 1,000,000;"):
        calsim.preview(s, n=999_999, release=REL, max_occurrences=1_000_000)


# ---------------------------------------------------------------------------
# COUNT and UNTIL bound the work
# ---------------------------------------------------------------------------


def test_count_estimate_is_count_and_one_day_when_the_window_holds_more():
    # The search builds whole days (the kernel widens to them), then keeps COUNT.
    s = calsim.Schedule("c", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;COUNT=500")
    assert calsim.expand([s], "2026-01-01T00:00Z", "2027-01-01T00:00Z", REL).height == 500
    assert limits.estimate([s], "2026-01-01T00:00Z", "2027-01-01T00:00Z", REL) == 500 + 1440


def test_utc_until_bounds_a_long_window():
    s = calsim.Schedule("u", "UTC", "2026-01-01T00:00", "FREQ=SECONDLY;UNTIL=20260101T010000Z")
    assert limits.estimate([s], "2026-01-01T00:00Z", "2126-01-01T00:00Z", REL) <= 3 * 86400
    assert calsim.expand([s], "2026-01-01T00:00Z", "2126-01-01T00:00Z", REL).height == 3601


def test_count_search_crosses_many_rounds_for_a_sparse_rule():
    leap = calsim.Schedule("leap", "UTC", "2025-01-01T12:00", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;COUNT=3")
    f = calsim.expand([leap], "2025-01-01T00:00Z", "2040-01-01T00:00Z", REL)
    assert [d.year for d in f["nominal_local"].to_list()] == [2028, 2032, 2036]
    month31 = calsim.Schedule("m31", "UTC", "2026-01-31T09:00", "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=7")
    f = calsim.expand([month31], "2026-01-01T00:00Z", "2028-01-01T00:00Z", REL)
    assert [d.month for d in f["nominal_local"].to_list()] == [1, 3, 5, 7, 8, 10, 12]


def test_count_with_gap_skip_counts_only_runs_across_search_rounds():
    # Every 30 minutes from New York's spring-forward night: the two skipped
    # half-hours keep their rows and are not counted.
    s = calsim.Schedule("g", "America/New_York", "2026-03-08T00:00", "FREQ=MINUTELY;INTERVAL=30;COUNT=6")
    f = calsim.expand([s], "2026-03-08T00:00Z", "2026-03-10T00:00Z", REL)
    assert f.height == 8 and f["due_utc"].null_count() == 2
    assert limits.estimate([s], "2026-03-08T00:00Z", "2026-03-10T00:00Z", REL) >= 8


# ---------------------------------------------------------------------------
# The estimate is an upper bound for every kind of rule (hypothesis)
# ---------------------------------------------------------------------------

_FINE_SPAN = {"SECONDLY": 2 * HOUR, "MINUTELY": 2 * DAY, "HOURLY": 20 * DAY}
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


@st.composite
def rrule_text(draw) -> str:
    freq = draw(st.sampled_from(("SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")))
    parts = [f"FREQ={freq}"]

    def some(values, most=3):
        return ",".join(str(v) for v in draw(st.lists(st.sampled_from(values), min_size=1, max_size=most,
                                                      unique=True)))

    def often():  # each BY part one time in four: more of them rarely leave an instance
        return draw(st.integers(0, 3)) == 0

    if draw(st.booleans()):
        parts.append(f"INTERVAL={draw(st.integers(1, 5))}")
    if often():
        parts.append("BYMONTH=" + some(range(1, 13)))
    if freq != "WEEKLY" and often():
        parts.append("BYMONTHDAY=" + some([1, 2, 15, 28, 29, 30, 31, -1, -2, -31]))
    if freq in ("YEARLY", "HOURLY", "MINUTELY", "SECONDLY") and often():
        parts.append("BYYEARDAY=" + some([1, 32, 60, 100, 365, 366, -1, -366]))
    weekno = freq == "YEARLY" and often()
    if weekno:
        parts.append("BYWEEKNO=" + some([1, 2, 10, 52, 53, -1, -53]))
    if often():
        numbered = freq in ("MONTHLY", "YEARLY") and not weekno
        days = [d for d in _WEEKDAYS] + ([f"{n}{d}" for n in (1, 2, -1, 5, 20) for d in ("MO", "FR")]
                                         if numbered else [])
        parts.append("BYDAY=" + some(days, 4))
    if often():
        parts.append("BYHOUR=" + some([0, 1, 2, 3, 9, 12, 23]))
    if often():
        parts.append("BYMINUTE=" + some([0, 1, 15, 30, 59]))
    if often():
        parts.append("BYSECOND=" + some([0, 30, 59, 60]))
    if len(parts) > 1 and often():
        parts.append("BYSETPOS=" + some([1, 2, -1, -2, 5]))
    end = draw(st.sampled_from(("", "COUNT", "UNTIL", "UNTILZ")))
    if end == "COUNT":
        parts.append(f"COUNT={draw(st.integers(1, 40))}")
    elif end:
        day = draw(st.integers(0, 500))
        stamp = (np.datetime64("2025-06-01") + np.timedelta64(day, "D")).astype(str).replace("-", "")
        parts.append(f"UNTIL={stamp}T120000" + ("Z" if end == "UNTILZ" else ""))
    return ";".join(parts)


_CRON_FIELDS = (
    ("0", "*/15", "5,35", "0-10", "*"),
    ("*", "2", "9-17", "*/6", "1,13"),
    ("*", "1", "L", "15W", "1-7", "31", "LW", "*/2"),
    ("*", "1-3", "*/2", "FEB", "11"),
    ("*", "1-5", "MON", "5L", "1#2", "SUN,SAT", "*/3"),
)
_ONCALENDAR = ("daily", "Mon..Fri 09:00", "*-*-* *:00/15", "*-*~03", "Sat *-*-1..7 18:00", "quarterly",
               "*-02-29 12:00", "2025,2026-*-* 00:30", "*:*:0/20", "hourly", "Mon *-05~07/1 02:30",
               "2026-03-29 01:30 Europe/London", "*-*-* 01,02:30:00")
_QUARTZ = ("0 0/15 9-17 ? * MON-FRI", "0 0 12 L * ?", "0 30 2 ? * 6#3", "*/30 * * ? * *", "0 0 0 15W * ?",
           "0 0 8 ? * 6L 2025-2027", "0 30 1 L-2 * ?", "15 10 22-2 ? * FRI-MON", "0 0/5 * 1,15 NOV-FEB ?")


KINDS = ("rrule", "rrule", "cron", "every", "window", "oncalendar", "quartz")


@st.composite
def schedules(draw):
    """``(schedule, lo, hi)``: one schedule of any kind and a window short enough to expand."""
    kind = draw(st.sampled_from(KINDS))
    zone = draw(st.sampled_from(ZONES))
    lo = int(np.datetime64("2025-01-01T00:00", "us").astype(np.int64)) + draw(st.integers(0, 720)) * DAY \
        + draw(st.integers(0, 95)) * 15 * 60 * US
    span = 30 * DAY
    kw = {"gap": draw(st.sampled_from(GAPS)), "fold": draw(st.sampled_from(FOLDS))}
    start_back = draw(st.integers(-20, 400)) * DAY + draw(st.integers(0, 1439)) * 60 * US  # may follow lo
    start = str(np.datetime64(lo - start_back, "us"))[:19]
    if kind == "rrule":
        rule: object = draw(rrule_text())
        freq = rule.split(";")[0][5:]
        span = _FINE_SPAN.get(freq, 400 * DAY)
        kw["invalid_day"] = draw(st.sampled_from(("omit", "backward", "forward")))
    elif kind == "cron":
        rule = " ".join(draw(st.sampled_from(options)) for options in _CRON_FIELDS)
    elif kind == "every":
        rule = calsim.Every(draw(st.sampled_from(("90s", "7min", "1h", "6h", "24h", "36h"))),
                            anchor=draw(st.sampled_from((None, "2025-02-03T04:05Z"))))
        if draw(st.booleans()):
            start += "Z"
    elif kind == "window":
        hhmm = st.sampled_from(("00:00", "01:30", "02:00", "08:00", "20:00", "22:00", "23:59"))
        rule = calsim.Window(draw(hhmm), draw(hhmm), draw(st.sampled_from(("1min", "7min", "30min", "1h", "5h"))),
                             days=draw(st.sampled_from((None, "MO,TU,WE,TH,FR", "SA", ["SU", "WE"]))))
    elif kind == "oncalendar":
        rule = "OnCalendar=" + draw(st.sampled_from(_ONCALENDAR))
    else:
        rule = "quartz:" + draw(st.sampled_from(_QUARTZ))
    if draw(st.booleans()):
        kw["rdate"] = tuple(str(np.datetime64(lo + k * 7 * HOUR, "us"))[:16] for k in range(draw(st.integers(1, 3))))
    if draw(st.booleans()):
        kw["exdate"] = (str(np.datetime64(lo + DAY, "us"))[:16],)
    if draw(st.booleans()):
        kw["effective_from"] = str(np.datetime64(lo + draw(st.integers(0, 3)) * DAY, "us")) + "Z"
    try:
        s = calsim.Schedule("s", zone, start, rule, **kw)
    except (RuleError, ScheduleError):
        assume(False)
    hi = lo + draw(st.integers(1, 96)) * (span // 96)
    return s, f"{np.datetime64(lo, 'us')}Z", f"{np.datetime64(hi, 'us')}Z"


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schedules())
def test_estimate_is_an_upper_bound_of_the_rows_for_every_kind_of_rule(case):
    s, lo, hi = case
    rows = calsim.expand([s], lo, hi, REL, max_occurrences=10**12).height
    assert limits.estimate([s], lo, hi, REL) >= rows, (s, lo, hi)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.sampled_from(("{m} {h} * * *", "{m} * * * *", "{m} {h} * * 1-5", "FREQ=DAILY", "FREQ=HOURLY",
                        "FREQ=WEEKLY;BYDAY=MO,WE")),
       st.integers(0, 59), st.integers(0, 23), st.sampled_from(ZONES), st.sampled_from(FOLDS),
       st.integers(0, 700), st.integers(7, 400))
def test_estimate_is_within_ten_times_the_rows_for_common_rules(rule, m, h, zone, fold, day, days):
    s = calsim.Schedule("c", zone, f"2025-01-01T{h:02d}:{m:02d}", rule.format(m=m, h=h), fold=fold)
    lo = np.datetime64("2025-01-01", "D") + np.timedelta64(day, "D")
    bounds = f"{lo}T00:00Z", f"{lo + np.timedelta64(days, 'D')}T00:00Z"
    rows = calsim.expand([s], *bounds, REL).height
    assert rows <= limits.estimate([s], *bounds, REL) <= 10 * rows


@pytest.mark.parametrize("rule", [
    "30 2 * * *", "5 * * * *", "0 9 * * 1-5", "*/15 9-17 * * 1-5", "FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE",
    "FREQ=MONTHLY;BYMONTHDAY=-1", "FREQ=HOURLY;INTERVAL=6;BYMINUTE=30", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
    calsim.Every("1h"), calsim.Window("08:00", "20:00", "30min", days="MO,TU,WE,TH,FR"),
    "OnCalendar=Mon..Fri 09:00", "quartz:0 0/15 9-17 ? * MON-FRI",
])
def test_estimate_is_close_over_a_year_for_everyday_rules(rule):
    # Within 5%, or a few periods for monthly rules (the margins touch the months around the year).
    s = calsim.Schedule("c", "Europe/Berlin", "2025-06-01T09:00", rule)
    bounds = "2026-01-01T00:00Z", "2027-01-01T00:00Z"
    rows = calsim.expand([s], *bounds, REL).height
    assert rows <= limits.estimate([s], *bounds, REL) <= max(1.05 * rows, rows + 3)


# ---------------------------------------------------------------------------
# The example fleet
# ---------------------------------------------------------------------------

# calsim.expand(calsim.examples.fleet(20_000), 2026, 2027, release="2026f") has
# 21,652,460 rows (measured: 12 s, 3.0 GB peak RSS); not expanded here.
FLEET_ROWS = 21_652_460


@pytest.fixture(scope="module")
def fleet_20000():
    return calsim.examples.fleet(20_000, seed=0)


def test_fleet_of_20000_for_a_year_passes_the_default_limit_with_margin(fleet_20000):
    est = limits.check(fleet_20000, "2026-01-01T00:00Z", "2027-01-01T00:00Z", release=REL)
    assert FLEET_ROWS <= est <= 1.05 * FLEET_ROWS
    assert 2 * est < limits.DEFAULT_MAX_OCCURRENCES  # room for twice the fleet-year (and memory kept ~7 GB)


# How fast the estimate is: benchmarks/limits_benchmark.py (a benchmark, not a timed test).


def test_estimates_are_per_schedule_in_the_order_given(fleet_20000):
    part = fleet_20000[:50]
    each = limits.estimates(part, "2026-01-01T00:00Z", "2027-01-01T00:00Z", REL)
    assert len(each) == 50 and int(each.sum()) == limits.estimate(part, "2026-01-01T00:00Z",
                                                                   "2027-01-01T00:00Z", REL)
    rows = calsim.expand(part, "2026-01-01T00:00Z", "2027-01-01T00:00Z", REL)["schedule_id"].value_counts()
    by_id = dict(rows.iter_rows())
    assert all(each[i] >= by_id.get(s.id, 0) for i, s in enumerate(part))


def test_margin_is_the_expansion_margin():
    from calsim import expansion

    assert expansion._MARGIN == limits.MARGIN == 2 * DAY


@pytest.mark.parametrize("field,generous,other,rule", [
    ("fold", "both", "first", "* * * * *"),  # a time in a fold is two rows with "both"
    ("gap", "skip", "shift", "FREQ=MINUTELY;COUNT=2000"),  # COUNT counts no skipped time: more rows with "skip"
])
def test_a_by_local_hour_policy_is_estimated_as_its_most_generous_one(field, generous, other, rule):
    from calsim.resolution import ByLocalHour

    window = ("2026-03-08T00:00Z", "2026-11-02T12:00Z")  # New York's gap (March 8) and fold (November 1)

    def schedule(setting):
        return calsim.Schedule("h", "America/New_York", "2026-03-08T01:00", rule, **{field: setting})

    either = schedule(ByLocalHour((1, 2), inside=generous, outside=other))
    estimate = limits.estimate([either], *window, "2026f")
    assert estimate == limits.estimate([schedule(generous)], *window, "2026f")
    assert estimate >= calsim.expand([either], *window, release="2026f").height
