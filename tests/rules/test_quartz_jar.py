"""``quartz:`` rules in a time zone against the real Quartz 2.3.2: what a ``CronTrigger`` fires around DST.

The oracle (``tests/oracles/quartz_jar.py``) is Debian's ``libquartz2-java``
jar on this machine's Java 17, one JVM for this module. The JVM reads its
own tz database (``lib/tzdb.dat``, 2025a), so calsim is given its release
``2025a`` here, and the first test checks that the JVM says so. Compared:

* **the JDK's wall rule**: :func:`calsim.rules.quartz_walk.java_wall_to_utc`
  against a lenient ``GregorianCalendar`` given wall times in and around
  every gap and fold (what ``getTimeAfter``'s ``set``/``get`` make of them);
* **the walk**: :meth:`QuartzCron.next_after` against ``getTimeAfter`` from
  instants around every 2026 transition of the zones below, many expressions
  (fixed times in and around gaps and folds, hourly, every 15 minutes, every
  minute, seconds fields, day rules), and random expressions (hypothesis);
* **expansion**: ``calsim.expand`` of ``quartz:`` schedules with
  ``gap``/``fold="scheduler"`` (what ``presets.quartz()`` sets) against the
  chain of ``getTimeAfter`` calls a running trigger makes, over 2026 and over
  windows that start next to a transition;
* **the quirks**, each pinned with the jar's own answer and calsim's rows;
* years past the JDK's own transition table (2037), where Java 17's
  ``TimeZone`` drops Casablanca's and El Aaiun's changes: the one stated
  difference (``presets.quartz()``'s ``differences``), matched exactly by
  :func:`past_the_jdks_table`.

``CALSIM_LONG=1`` adds eight zones (Havana, St John's, Troll, London, Nuuk,
Norfolk, Easter, Gaza), every expression to the year and window expansions,
more start instants, windows and years. The counts of
(rule, instant) pairs compared are in the run's summary.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import os

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim import presets
from calsim.rules.quartz import QuartzCron
from calsim.rules.quartz_walk import java_wall_to_utc
from calsim.tz.clock import ZoneClock, civil, wall_seconds

RELEASE = "2025a"  # the JVM's own tzdb.dat (checked by test_the_jvm_reads_the_tz_release_calsim_is_given)
LONG = os.environ.get("CALSIM_LONG") == "1"
UTC = dt.timezone.utc
T2026 = int(dt.datetime(2026, 1, 1, tzinfo=UTC).timestamp())
T2027 = int(dt.datetime(2027, 1, 1, tzinfo=UTC).timestamp())
ZONES = ("America/New_York", "Europe/Berlin", "Europe/Dublin", "Australia/Lord_Howe", "Pacific/Chatham",
         "Asia/Beirut", "Africa/Cairo", "America/Santiago", "Australia/Sydney", "Asia/Jerusalem", "Africa/Casablanca")
if LONG:
    ZONES += ("America/Havana", "America/St_Johns", "Antarctica/Troll", "Europe/London", "America/Nuuk",
              "Pacific/Norfolk", "Pacific/Easter", "Asia/Gaza")
EXPRS = ("0 0 0 * * ?", "0 30 0 * * ?", "0 0 1 * * ?", "0 30 1 * * ?", "0 0 2 * * ?", "0 30 2 * * ?", "0 45 2 * * ?",
         "0 0 3 * * ?", "0 50 3 * * ?", "0 0 12 * * ?", "0 0 23 * * ?", "0 59 23 * * ?", "0 0 * * * ?",
         "0 30 * * * ?", "0 15,45 * * * ?", "0 */15 * * * ?", "0 0/20 1-3 * * ?", "30 59 * * * ?", "15 30 1 ? * *",
         "0 0 0,12 * * ?", "0 0 */2 * * ?", "0 0 0 ? * SUN", "0 0 12 ? * 1", "0 0 12 ? * 6", "0 0 12 29 * ?",
         "0 0 0 1 * ?", "0 0 0 */2 * ?", "0 0 0 ? * MON-FRI", "0 0 0 L * ?", "0 0 2 LW * ?", "0 30 2 15W * ?",
         "0 0 0 ? * 1L", "0 0 0 ? * 1#5", "0 0 0 ? * 1#1", "0 0 12 L-3 * ?", "0 0 0 1 1 ?", "0 * * * * ?",
         "*/20 * 1-3 * * ?", "0,30 * 0-4 * * ?")
DENSE = {"0 * * * * ?", "*/20 * 1-3 * * ?", "0,30 * 0-4 * * ?"}  # around transitions only, not the whole year
# Expanded over the year and in windows by default (CALSIM_LONG=1: all of EXPRS).
YEAR_EXPRS = EXPRS if LONG else ("0 30 0 * * ?", "0 30 1 * * ?", "0 30 2 * * ?", "0 50 3 * * ?", "0 0 * * * ?",
                                 "15 30 1 ? * *", "0 0 12 ? * 1", "0 0 0 L * ?", "0 30 2 15W * ?",
                                 "0 0 0 ? * 1#5", "0 0/20 1-3 * * ?")
WINDOW_EXPRS = EXPRS if LONG else ("0 30 1 * * ?", "0 30 2 * * ?", "0 50 3 * * ?", "0 */15 * * * ?",
                                   "0 0 12 ? * 1", "0 * * * * ?")
OFFSETS = (-2 * 86400, -86400, -3 * 3600, -5400, -3660, -3600, -3540, -1860, -1800, -900, -60, -1, 0, 1, 59, 60,
           900, 1800, 3599, 3600, 5400, 3 * 3600, 86400)
if LONG:
    OFFSETS = tuple(sorted(set(OFFSETS) | set(range(-7200, 7201, 300)) | {-1801, -3601, 1799, 3601}))


@pytest.fixture(scope="module")
def jar():
    from oracles.quartz_jar import QuartzJar

    oracle = QuartzJar()
    yield oracle
    oracle.close()


@pytest.fixture(scope="module")
def counts():
    return {}


_REPORT: list = []


@pytest.fixture(autouse=True)
def _report_list(report):
    """Keeps the run's report list for the module's summary below."""
    if not _REPORT:
        _REPORT.append(report)


@pytest.fixture(scope="module", autouse=True)
def summary(counts):
    """The pairs compared in this module, listed in the run's summary once its tests are done."""
    yield
    if counts and _REPORT:
        _REPORT[0].append("quartz 2.3.2 jar, DST (zones " + ", ".join(z.split("/")[-1] for z in ZONES) + "): "
                          + ", ".join(f"{k} {v:,}" for k, v in counts.items()) + "; 0 unstated disagreements")
    _REPORT.clear()


def _add(counts, key, n):
    counts[key] = counts.get(key, 0) + n


def _iso(t: int) -> str:
    return dt.datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _show(ts, zone: str) -> list[str]:
    z = calsim.release(RELEASE).zone(zone)
    return [dt.datetime.fromtimestamp(t, z).strftime("%Y-%m-%d %H:%M:%S%z") if t is not None else "None" for t in ts]


@functools.cache
def clock(zone: str) -> ZoneClock:
    return ZoneClock(calsim.release(RELEASE).table(zone))


def transitions(zone: str, lo: int = T2026, hi: int = T2027) -> tuple[int, ...]:
    c = clock(zone).covering(civil(hi)[0] + 1)
    return tuple(c.transitions(lo, hi))


def chain(jar, expr: str, zone: str, start: int, until: int) -> list[int]:
    """The fire times of a trigger running since ``start``, up to ``until`` (UTC seconds): the jar's own."""
    out, t = [], start
    while True:
        got = jar.chains(expr, zone, [t], 20_000, until)[0]
        out += got
        if len(got) < 20_000:
            return out
        t = got[-1]


def calsim_fires(expr: str, zone: str, lo: int, hi: int) -> list[int]:
    s = calsim.Schedule("j", zone, "2025-06-01T00:00", "quartz:" + expr, gap="scheduler", fold="scheduler")
    f = calsim.expand(s, _iso(lo), _iso(hi), release=RELEASE)
    return f.filter(pl.col("due_utc").is_not_null())["due_utc"].dt.epoch("s").to_list()


def _diff(expr, zone, got, want) -> str:
    a, b = set(got), set(want)
    return (f"{expr!r} in {zone}: calsim only {_show(sorted(a - b)[:4], zone)}, "
            f"Quartz only {_show(sorted(b - a)[:4], zone)}")


def walk(rule: QuartzCron, zone: str, start: int, n: int) -> list[int | None]:
    """``n`` chained :meth:`QuartzCron.next_after` from ``start`` (stopping at None)."""
    got, p = [], start
    for _ in range(n):
        p = rule.next_after(clock(zone), p)
        got.append(p)
        if p is None:
            break
    return got


# The zones whose tz data lists transitions after 2037 that its recurring rule does not give (the Ramadan
# changes); test_the_zones_past_the_jdks_table_are_those_with_transitions_their_rule_does_not_give checks it.
JDK_DROPPED = ("Africa/Casablanca", "Africa/El_Aaiun", "Asia/Gaza", "Asia/Hebron")


def past_the_jdks_table(zone: str, instant: int) -> bool:
    """The stated difference (``presets.quartz()``, topic "tz data"): Java 17's ``java.util.TimeZone`` keeps no
    transition after 2037 (``sun.util.calendar.ZoneInfoFile``), only the zone's recurring rule, so from 2038
    Quartz fires Casablanca and El Aaiun in +01 throughout and Gaza and Hebron by their plain EET/EEST rule,
    where the tz data (and ``java.time``) still change for Ramadan until 2086-2087."""
    return zone in JDK_DROPPED and civil(instant)[0] >= 2038


# -- the oracle itself ------------------------------------------------------------------------------------------------

def test_the_jvm_reads_the_tz_release_calsim_is_given(jar, report):
    from oracles.quartz_jar import TZDB, VERSION_RANGE

    line = "quartz DST oracle: " + jar.describe() + f"; calsim release {RELEASE}"
    print("\n" + line)
    report.append(line)
    assert jar.version["tzdb"] == TZDB == RELEASE, jar.describe()
    assert VERSION_RANGE[0] <= jar.version["quartz"] <= VERSION_RANGE[1]


# -- the JDK's wall-to-instant rule --------------------------------------------------------------------------------

def _walls_around(zone: str, lo: int, hi: int) -> list[tuple[int, ...]]:
    """Wall times every 5 minutes from 3 h before to 3 h after each transition's wall times, and ±1 s of them."""
    c = clock(zone)
    out = []
    for t in transitions(zone, lo, hi):
        before, after = c.offset(t - 1), c.offset(t)
        for base in (t + before, t + after):
            for d in itertools.chain(range(-3 * 3600, 3 * 3600 + 1, 300), (-1, 1)):
                out.append(civil(base + d)[:6])
    return out


@pytest.mark.parametrize("zone", ZONES)
def test_the_jdks_wall_to_instant_rule_is_java_wall_to_utc(jar, counts, zone):
    """``GregorianCalendar.computeTime`` -> ``ZoneInfo.getOffsetsByWall``: a gap's wall time lands past the gap,
    a fold's in its second pass (2026, 2040 and 2101: the JDK's table ends in 2037, then its last rule)."""
    walls = _walls_around(zone, T2026, T2027)
    for year in (2040, 2101):
        y0 = int(dt.datetime(year, 1, 1, tzinfo=UTC).timestamp())
        walls += _walls_around(zone, y0, y0 + 366 * 86400)
    walls += [(2026, 13, 1, 0, 0, 0), (2026, 3, 0, 24, 0, 0), (2026, 1, 32, -1, 61, 61)]  # lenient fields
    want = jar.wall_to_utc(zone, walls)
    got = [java_wall_to_utc(clock(zone), wall_seconds(*w)) for w in walls]
    bad = [(w, g, x) for w, g, x in zip(walls, got, want) if g != x and not past_the_jdks_table(zone, x)]
    assert not bad, f"{zone}: (wall, calsim, JDK) {bad[:5]}"
    _add(counts, "wall times", len(walls))


# -- the walk ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("zone", ZONES)
def test_next_after_is_getTimeAfter_from_instants_around_each_transition(jar, counts, zone):
    starts = [t + d for t in transitions(zone) for d in OFFSETS]
    if not starts:
        pytest.skip(f"not applicable here: {zone} has no transition in 2026 in tzdata {RELEASE}")
    n = 0
    for expr in EXPRS:
        rule = QuartzCron.parse("quartz:" + expr)
        for t, want in zip(starts, jar.chains(expr, zone, starts, 3)):
            got = walk(rule, zone, t, len(want) + (len(want) < 3))
            got = [x for x in got if x is not None]
            assert got == want, (f"{expr!r} in {zone} from {_show([t], zone)}: {_show(got, zone)} "
                                 f"vs Quartz {_show(want, zone)}")
            n += len(want)
    _add(counts, "getTimeAfter calls", n)


@pytest.mark.parametrize("year", [2040, 2101] + ([2038, 2070, 2099, 2120] if LONG else []))
def test_next_after_is_getTimeAfter_past_the_jdks_own_table(jar, counts, year):
    """Past 2037 the JDK's ``ZoneInfo`` reads its last rule (a ``SimpleTimeZone``); the walk is the same."""
    y0 = int(dt.datetime(year, 1, 1, tzinfo=UTC).timestamp())
    n = stated = 0
    for zone in ZONES:
        starts = [t + d for t in transitions(zone, y0, y0 + 366 * 86400) for d in (-3600, -1800, -1, 0, 1, 1800)]
        for expr in ("0 0 0 * * ?", "0 30 1 * * ?", "0 30 2 * * ?", "0 */15 * * * ?", "0 50 3 * * ?"):
            rule = QuartzCron.parse("quartz:" + expr)
            for t, want in zip(starts, jar.chains(expr, zone, starts, 2)):
                got = [x for x in walk(rule, zone, t, len(want)) if x is not None]
                n += len(want)
                if got != want and any(past_the_jdks_table(zone, x) for x in got + want):
                    stated += 1
                    continue
                assert got == want, (f"{expr!r} in {zone} from {_show([t], zone)}: {_show(got, zone)} "
                                     f"vs Quartz {_show(want, zone)}")
    _add(counts, "getTimeAfter calls past 2037", n)
    _add(counts, f"stated (tz data past 2037: Casablanca, El Aaiun, Gaza, Hebron) in {year}", stated)


def test_the_zones_past_the_jdks_table_are_those_with_transitions_their_rule_does_not_give():
    rel = calsim.release(RELEASE)
    t2038, t2100 = (int(dt.datetime(y, 1, 1, tzinfo=UTC).timestamp()) for y in (2038, 2100))
    found = []
    for zone in rel.zones:
        table = rel.table(zone)
        listed = {int(t) for t in table.utc if t2038 <= t < t2100}
        rule = set()
        if table.footer is not None and table.footer.has_dst:
            rule = {int(t) for t in table.footer.transitions_between(2037, 2100)[0] if t2038 <= t < t2100}
        if listed != rule:
            found.append(zone)
    assert tuple(found) == JDK_DROPPED


def test_casablanca_past_2037_is_a_stated_difference(jar):
    """Java 17's ``TimeZone`` for Casablanca stays at +01 from 2038 (``java.time`` keeps the Ramadan +00): a
    daily midnight trigger fires at 23:00+00 in calsim's reading of tzdata's Ramadan 2040; before 2038 both
    agree. The difference is stated in the preset, and ``past_the_jdks_table`` matches exactly these pairs."""
    zone, expr = "Africa/Casablanca", "0 0 0 * * ?"
    lo, hi = (int(dt.datetime(2040, m, 20, tzinfo=UTC).timestamp()) for m in (8, 10))
    want = [t for t in chain(jar, expr, zone, lo - 86400, hi) if t >= lo]
    got = calsim_fires(expr, zone, lo, hi)
    assert got != want and all(past_the_jdks_table(zone, t) for t in set(got) ^ set(want))
    assert {clock(zone).offset(t) for t in want} == {0, 3600}  # calsim's reading of the JVM's fires
    assert all(clock(zone).fields(t)[3] in (0, 23) for t in want)
    lo37, hi37 = (int(dt.datetime(2037, m, 1, tzinfo=UTC).timestamp()) for m in (9, 12))
    assert calsim_fires(expr, zone, lo37, hi37) == [t for t in chain(jar, expr, zone, lo37 - 86400, hi37) if t >= lo37]
    d = presets.differences(presets.quartz())
    assert d.filter(pl.col("difference").str.contains("Casablanca") & pl.col("difference").str.contains("Gaza")
                    & (pl.col("topic") == "tz data")).height == 1


# Random expressions from the grammar of test_quartz_oracle (hypothesis), each walked in a random zone from a
# random instant next to one of its 2026 transitions.
def _item(lo: int, hi: int):
    a, b, n = st.integers(lo, hi), st.integers(lo, hi), st.integers(1, hi - lo)
    return st.one_of(st.just("*"), n.map(lambda k: f"*/{k}"), a.map(str),
                     st.tuples(a, b).map(lambda p: f"{p[0]}-{p[1]}"),
                     st.tuples(a, n).map(lambda p: f"{p[0]}/{p[1]}"),
                     st.lists(a, min_size=1, max_size=3).map(lambda v: ",".join(map(str, v))))


@st.composite
def expressions(draw):
    sec = draw(st.one_of(st.just("0"), _item(0, 59)))
    minute = draw(_item(0, 59))
    hour = draw(st.one_of(_item(0, 23), st.sampled_from(["0-3", "1,2", "2", "3", "23,0", "*/2"])))
    if draw(st.booleans()):
        dom = draw(st.one_of(_item(1, 31), st.sampled_from(["L", "LW", "L-2", "L-5W", "15W", "1W", "28W"])))
        dow = "?"
    else:
        dom, dow = "?", draw(st.one_of(_item(1, 7), st.sampled_from(["1L", "7L", "1#1", "1#5", "6#2", "MON-FRI"])))
    month = draw(st.one_of(st.just("*"), _item(1, 12)))
    return f"{sec} {minute} {hour} {dom} {month} {dow}"


FUZZ = dict(deadline=None, database=None, derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@settings(max_examples=1500 if LONG else 250, **FUZZ)
@given(expr=expressions(), zone=st.sampled_from(ZONES), which=st.integers(0, 10), delta=st.integers(-7200, 7200))
def test_random_expressions_walk_as_getTimeAfter_next_to_a_transition(jar, counts, expr, zone, which, delta):
    ts = transitions(zone)
    if not ts:
        return
    start = ts[which % len(ts)] + delta
    rule = QuartzCron.parse("quartz:" + expr)
    want = jar.chains(expr, zone, [start], 4)[0]
    got = [x for x in walk(rule, zone, start, len(want) + (len(want) < 4)) if x is not None]
    assert got == want, f"{expr!r} in {zone} from {_show([start], zone)}: {_show(got, zone)} vs {_show(want, zone)}"
    _add(counts, "random getTimeAfter calls", len(want))


# -- expansion --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("zone", ZONES)
def test_expansion_is_the_chain_a_running_trigger_fires_over_2026(jar, counts, zone):
    n = 0
    for expr in YEAR_EXPRS:
        if expr in DENSE:
            continue
        want = [t for t in chain(jar, expr, zone, T2026 - 86400 * 40, T2027) if t >= T2026]
        got = calsim_fires(expr, zone, T2026, T2027)
        assert got == want, _diff(expr, zone, got, want)
        n += len(want)
    _add(counts, "year pairs", n)


@pytest.mark.parametrize("zone", ZONES)
def test_a_window_starting_next_to_a_transition_sees_the_walk_that_led_into_it(jar, counts, zone):
    n = 0
    for expr, tau in itertools.product(WINDOW_EXPRS, transitions(zone)):
        lead = 86400 * (2 if expr in DENSE else 40)  # a trigger running since then (the walk's earlier fires)
        want_all = chain(jar, expr, zone, tau - lead, tau + 86400 * 3)
        for lo in (tau - 3600, tau, tau + 1800, tau + 86400) if LONG else (tau - 3600, tau + 1800):
            hi = lo + 86400 * 2
            want = [t for t in want_all if lo <= t < hi]
            got = calsim_fires(expr, zone, lo, hi)
            assert got == want, _diff(expr, zone, got, want) + f" (window from {_show([lo], zone)})"
            n += len(want)
    _add(counts, "window pairs", n)


def test_the_preset_fires_quartz_rules_as_getTimeAfter_and_other_rules_by_its_fallback(jar):
    p = presets.quartz()
    assert (p.gap, p.fold) == ("scheduler", "scheduler")
    quartz = p.apply(calsim.Schedule("q", "America/New_York", "2026-10-01T00:00", "quartz:0 30 1 * * ?"))
    cron = p.apply(calsim.Schedule("c", "America/New_York", "2026-10-01T00:00", "30 1 * * *"))
    listed = p.apply(calsim.Schedule("l", "America/New_York", "2026-10-01T00:00", "quartz:0 30 1 1,L * ?"))
    assert (quartz.gap, quartz.fold) == ("scheduler", "scheduler")
    assert (cron.gap, cron.fold) == (listed.gap, listed.fold) == p.fallback == ("skip", "second")
    f = calsim.expand(quartz, "2026-11-01T00:00Z", "2026-11-02T00:00Z", release=RELEASE)
    assert f["due_utc"].drop_nulls().dt.epoch("s").to_list() == jar.fires("0 30 1 * * ?", "America/New_York",
                                                                          T2026 + 304 * 86400, 1)


# -- the quirks, pinned -----------------------------------------------------------------------------------------------

def rows(expr: str, zone: str, lo: str, hi: str) -> list[tuple[str, str | None, list[str]]]:
    """calsim's rows as the quartz preset fires them: (nominal local, local time of the instant or None, notes)."""
    s = presets.quartz().apply(calsim.Schedule("j", zone, "2025-06-01T00:00", "quartz:" + expr))
    f = calsim.expand(s, lo, hi, release=RELEASE)
    z = calsim.release(RELEASE).zone(zone)
    return [(r["nominal_local"].strftime("%m-%d %H:%M"),
             None if r["due_utc"] is None else r["due_utc"].astimezone(z).strftime("%m-%d %H:%M%z"), r["notes"])
            for r in f.iter_rows(named=True)]


def quartz_local(jar, expr: str, zone: str, lo: str, hi: str) -> list[str]:
    a, b = (int(dt.datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()) for x in (lo, hi))
    z = calsim.release(RELEASE).zone(zone)
    return [dt.datetime.fromtimestamp(t, z).strftime("%m-%d %H:%M%z") for t in chain(jar, expr, zone, a - 86400 * 40, b)
            if t >= a]


def fired(rs) -> list[str]:
    return [due for _, due, _ in rs if due is not None]


def test_only_the_second_pass_of_a_repeated_hour_fires_in_new_york(jar):
    # getTimeAfter sets 01:30 and reads it back: ZoneInfo.getOffsetsByWall gives the EST offset (06:30Z).
    got = rows("0 30 1 * * ?", "America/New_York", "2026-11-01T00:00Z", "2026-11-02T12:00Z")
    assert [r[:2] for r in got] == [("11-01 01:30", None), ("11-01 01:30", "11-01 01:30-0500"),
                                    ("11-02 01:30", "11-02 01:30-0500")]
    assert got[0][2] == ["dst_lost:quartz"] and "dst_lost:quartz" not in got[1][2] + got[2][2]
    assert fired(got) == quartz_local(jar, "0 30 1 * * ?", "America/New_York", "2026-11-01T00:00Z",
                                      "2026-11-02T12:00Z")


def test_every_15_minutes_skips_the_first_pass_of_a_repeated_hour(jar):
    # From 00:45 EDT the minute step sets 01:00, which reads back as 01:00 EST: 01:00-01:45 EDT never fire.
    got = rows("0 */15 * * * ?", "America/New_York", "2026-11-01T04:30Z", "2026-11-01T07:30Z")
    assert fired(got) == ["11-01 00:30-0400", "11-01 00:45-0400", "11-01 01:00-0500", "11-01 01:15-0500",
                          "11-01 01:30-0500", "11-01 01:45-0500", "11-01 02:00-0500", "11-01 02:15-0500"]
    assert [n for _, due, n in got if due is None] == [["dst_lost:quartz"]] * 4
    assert fired(got) == quartz_local(jar, "0 */15 * * * ?", "America/New_York", "2026-11-01T04:30Z",
                                      "2026-11-01T07:30Z")


def test_a_time_in_a_spring_gap_is_skipped(jar):
    # setCalendarHour(2) reads back 03:30, sets hour 3, and the hour test moves to the next day's 02:30.
    got = rows("0 30 2 * * ?", "America/New_York", "2026-03-07T12:00Z", "2026-03-09T12:00Z")
    assert got == [("03-08 02:30", None, ["dst_gap_skipped"]), ("03-09 02:30", "03-09 02:30-0400", [])]
    assert fired(got) == quartz_local(jar, "0 30 2 * * ?", "America/New_York", "2026-03-07T12:00Z",
                                      "2026-03-09T12:00Z")


def test_an_hour_whose_start_is_in_chathams_gap_is_skipped_whole(jar):
    # 02:45 -> 03:45: 03:50 exists, but the hour step sets 03:00 (in the gap), reads back 04:00 and moves on.
    got = rows("0 50 3 * * ?", "Pacific/Chatham", "2026-09-25T12:00Z", "2026-09-28T12:00Z")
    assert got == [("09-26 03:50", "09-26 03:50+1245", []), ("09-27 03:50", None, ["dst_lost:quartz"]),
                   ("09-28 03:50", "09-28 03:50+1345", [])]
    assert fired(got) == quartz_local(jar, "0 50 3 * * ?", "Pacific/Chatham", "2026-09-25T12:00Z",
                                      "2026-09-28T12:00Z")


def test_lord_howes_half_hour_changes_skip_the_gap_hour_and_the_first_half_hour_pass(jar):
    # Spring 02:00 -> 02:30: 02:00 reads back as 02:30, the hour step moves to 03:00. Autumn 02:00 -> 01:30:
    # 01:30 reads back in the second pass.
    spring = rows("0 0 * * * ?", "Australia/Lord_Howe", "2026-10-03T14:00Z", "2026-10-03T17:00Z")
    assert spring == [("10-04 01:00", "10-04 01:00+1030", []), ("10-04 02:00", None, ["dst_gap_skipped"]),
                      ("10-04 03:00", "10-04 03:00+1100", [])]
    autumn = rows("0 30 1 * * ?", "Australia/Lord_Howe", "2026-04-04T13:00Z", "2026-04-05T13:00Z")
    assert [r[:2] for r in autumn] == [("04-05 01:30", None), ("04-05 01:30", "04-05 01:30+1030")]
    assert autumn[0][2] == ["dst_lost:quartz"]
    for expr, (lo, hi), got in (("0 0 * * * ?", ("2026-10-03T14:00Z", "2026-10-03T17:00Z"), spring),
                                ("0 30 1 * * ?", ("2026-04-04T13:00Z", "2026-04-05T13:00Z"), autumn)):
        assert fired(got) == quartz_local(jar, expr, "Australia/Lord_Howe", lo, hi)


def test_a_W_day_whose_time_is_in_a_gap_sends_getTimeAfter_round_for_ever_and_the_trigger_never_fires_again(jar):
    # Cairo 2026-04-24 (a Friday) 00:00 -> 01:00: 24W is the 24th, 00:30 reads back as 01:30, the hour test
    # moves to the 25th and the W test back to the 24th. The jar's call is stopped after its timeout.
    chains, hung = jar.chains_timed("0 30 0 24W * ?", "Africa/Cairo", [T2026 + 85 * 86400], 3)
    assert hung == [0] and chains == [[]]
    assert QuartzCron.parse("quartz:0 30 0 24W * ?").next_after(clock("Africa/Cairo"), T2026 + 85 * 86400) is None
    got = rows("0 30 0 24W * ?", "Africa/Cairo", "2026-03-01T00:00Z", "2026-07-01T00:00Z")
    assert got == [("03-24 00:30", "03-24 00:30+0200", []), ("04-24 00:30", None, ["dst_gap_skipped"]),
                   ("05-25 00:30", None, ["dst_stuck:quartz"]), ("06-24 00:30", None, ["dst_stuck:quartz"])]
    d = presets.differences(presets.quartz())
    assert d.filter(pl.col("difference").str.contains("round for ever")).height == 1


def test_a_midnight_in_beiruts_gap_is_skipped(jar):
    # 2026-03-29 00:00 -> 01:00: setCalendarHour(0) reads back 01:00, sets hour 1, and the hour test moves on.
    got = rows("0 0 0 * * ?", "Asia/Beirut", "2026-03-27T12:00Z", "2026-03-30T12:00Z")
    assert got == [("03-28 00:00", "03-28 00:00+0200", []), ("03-29 00:00", None, ["dst_gap_skipped"]),
                   ("03-30 00:00", "03-30 00:00+0300", [])]
    assert fired(got) == quartz_local(jar, "0 0 0 * * ?", "Asia/Beirut", "2026-03-27T12:00Z", "2026-03-30T12:00Z")



def test_a_walk_from_before_trolls_two_hour_gap_passes_the_hour_after_it_as_setCalendarHour_does(jar, counts):
    # 2026-03-29 01:00 +00 -> 03:00 +02. From a start before the change, the hour step sets 03:00 on a calendar
    # still reading +00, gets another hour back, and setCalendarHour (hour read != hour set) adds one more:
    # 03:00 +02 that day, which exists, is passed over. Only a gap of two hours shows the bump (Troll's is the
    # one in tzdata); the chain of a trigger already running fires it (tested above for every zone).
    zone, change = "Antarctica/Troll", transitions("Antarctica/Troll")[0]
    starts = list(range(change - 7200, change + 7201, 600))
    rule = QuartzCron.parse("quartz:0 0 3 * * ?")
    want = jar.chains("0 0 3 * * ?", zone, starts, 2)
    got = [walk(rule, zone, t, 2) for t in starts]
    assert got == want
    passed = [t for t, w in zip(starts, want) if w[0] - t > 86400]
    assert passed, "no start whose walk passes 03:00 +02 on the day of the change"
    _add(counts, "getTimeAfter calls", 2 * len(starts))


@pytest.mark.parametrize("expr", ["0 0 12 15W * ?", "0 0 12 1W * ?", "0 30 9 LW * ?", "0 0 0 2W * ?"])
def test_a_W_day_fire_one_second_after_the_start_is_the_next_fire(jar, counts, expr):
    # getTimeAfter(t) searches from t + 1 s: a weekday fire exactly there is not yet past (L1309, L1346: "<").
    zone, rule = "Europe/Berlin", QuartzCron.parse("quartz:" + expr)
    fires = jar.chains(expr, zone, [T2026], 12)[0]
    starts = [f + d for f in fires for d in (-2, -1, 0)]
    want = jar.chains(expr, zone, starts, 1)
    assert [walk(rule, zone, t, 1) for t in starts] == want
    assert all(w == [f] for f, w in zip(fires, want[1::3]))  # from fire - 1 s, the fire itself
    _add(counts, "getTimeAfter calls", len(starts))
