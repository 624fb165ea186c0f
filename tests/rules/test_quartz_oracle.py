"""``quartz:`` rules against Quartz itself: the ``CronExpression`` of Debian's Quartz 2.3.2 jar.

The oracle (``tests/oracles/quartz_jar.py``, one JVM for this module) parses
each expression with ``new CronExpression(expr)`` and walks its fire times as
a ``CronTrigger`` does (``getTimeAfter`` on the previous fire time), in UTC;
calsim must accept what Quartz accepts, refuse what it refuses, and give the
same instants from ``QuartzCron.wall_times``:

* a grid over every grammar feature and random expressions from the grammar
  (hypothesis), each compared over its first N fires or a window of years;
* near-grammar text (hypothesis): both accept or both refuse;
* one test per difference calsim documents (``calsim/rules/quartz.py``),
  showing that the jar and calsim differ exactly there;
* Quartz's own tests replayed: ``CronExpressionTest`` and ``Quartz601Test``
  of 2.3.2 (``quartz-core/src/test/java/org/quartz/``) and the cases the main
  branch added to ``CronExpressionTest`` (``quartz/src/test/java/org/quartz/
  CronExpressionTest.java`` at commit 93adc83371ca1f9d47260c32eb1e677c2349ec93),
  each test named after the upstream method, each assertion checked on calsim
  and on the jar.

DST (the jar's ``getTimeAfter`` in a zone) is ``test_quartz_jar.py``'s. The
number of (expression, instant) pairs compared is printed (``-s``) and listed
in the run's summary.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calsim.errors import RuleError
from calsim.rules.quartz import QuartzCron
from calsim.rules.quartz_walk import walk_sets

US = 1_000_000
_EPOCH = dt.datetime(1970, 1, 1)


def to_epoch(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> int:
    """Epoch seconds of a UTC wall time."""
    return int((dt.datetime(year, month, day, hour, minute, second) - _EPOCH).total_seconds())


def from_epoch(epoch_s: int) -> str:
    """``'YYYY-MM-DDTHH:MM:SS'`` of epoch seconds (UTC)."""
    return (_EPOCH + dt.timedelta(seconds=epoch_s)).isoformat()


END = to_epoch(2100, 1, 1)  # before the jar's MAX_YEAR (this year + 100): later years are a documented difference
_JAR: list = []


@pytest.fixture(scope="module", autouse=True)
def quartz_jar():
    """The real Quartz for this module (skips, or fails under CALSIM_REQUIRE_ORACLES=1, without Java or the jar)."""
    from oracles.quartz_jar import QuartzJar

    oracle = QuartzJar()
    _JAR.append(oracle)
    yield oracle
    _JAR.clear()
    oracle.close()


def jar():
    return _JAR[0]


def test_the_oracle_is_quartz_2_3_2(quartz_jar, report):
    from oracles.quartz_jar import VERSION_RANGE

    emit(report, "quartz grammar oracle: " + quartz_jar.describe())
    assert VERSION_RANGE[0] <= quartz_jar.version["quartz"] <= VERSION_RANGE[1], quartz_jar.describe()


def calsim_fires(expr: str, lo: int, hi: int) -> list[int]:
    """calsim's fire times in ``[lo, hi)``, epoch seconds (UTC wall clock)."""
    times = QuartzCron.parse("quartz:" + expr).wall_times(lo * US, hi * US)
    return [int(t) // US for t in times]


def quartz_fires(expr: str, start: int, n: int, end: int = END) -> list[int]:
    """Quartz's first ``n`` fire times at or after ``start`` and before ``end`` (the jar, in UTC)."""
    return jar().fires(expr, "UTC", start, n, end)


def quartz_refuses(expr: str) -> str | None:
    """The jar's ``ParseException`` message for ``expr`` (None: ``new CronExpression`` accepts it)."""
    return jar().parse_error(expr)


def compare(expr: str, start: int, n: int, end: int = END) -> int:
    """Assert calsim == Quartz over Quartz's first ``n`` fires from ``start`` (or up to ``end``); the pair count."""
    want = quartz_fires(expr, start, n, end)
    hi = want[-1] + 1 if len(want) == n else end
    got = calsim_fires(expr, start, hi)
    if got != want:
        diff = sorted(set(got) ^ set(want))[:4]
        raise AssertionError(f"{expr!r} from {from_epoch(start)}: calsim {len(got)} fires, Quartz {len(want)}; "
                             f"first differing instants {[from_epoch(t) for t in diff]} "
                             f"({'calsim only' if diff and diff[0] in got else 'Quartz only'} first)")
    return max(len(want), 1)


def satisfied(expr: str, when: int) -> bool:
    """calsim's answer to ``CronExpression.isSatisfiedBy`` (L312-323): does ``expr`` fire at ``when``?"""
    return calsim_fires(expr, when, when + 1) == [when]


def refused(expr: str) -> bool:
    try:
        QuartzCron.parse("quartz:" + expr)
    except RuleError:
        return True
    return False


def emit(report, line: str) -> None:
    print("\n" + line)
    report.append(line)


# --------------------------------------------------------------------------- the grid

SECONDS = ["0", "*", "*/20", "15,45", "5-10", "50-5", "/30", "7/25", "10-40/15", "58-2/2"]
MINUTES = ["0", "*/15", "10-20/5", "55-5", "7", "0/45", "59"]
HOURS = ["0", "9-17", "22-2", "*/6", "12", "23", "0-23/5", "/8"]
# Day-of-month items the documented differences leave out: L/W in a list, nW past 28, L-nW past L-27.
DOMS = ["*", "1", "15", "31", "30", "29", "1,15", "10-20/3", "28-3", "*/7", "5/10", "1-31/2", "L", "L-0", "L-2",
        "L-27", "L-30", "LW", "L-3W", "L-27W", "1W", "15W", "28W", "2W"]
DOWS = ["*", "MON-FRI", "2", "1,7", "FRI-MON", "*/2", "L", "6L", "SUNL", "1L", "7L", "2#1", "6#3", "4#5", "7#5",
        "MON#2", "SAT-SUN", "3-5", "7-2/2", "sun,wed"]
MONTHS = ["*", "2", "JAN-MAR", "NOV-FEB", "*/5", "4,6,9,11", "7/6", "12", "feb-feb"]
YEARS = ["", " *", " 2027", " 2026-2030", " 2025/3", " 2028,2032", " 2030-2040/4", " 1970-2099"]
STARTS = [to_epoch(2024, 1, 1), to_epoch(2025, 2, 27, 12, 0, 0), to_epoch(2026, 5, 31, 23, 59, 59)]


@functools.cache
def grid_times_of_day() -> int:
    """Seconds x minutes x hours, every day, first 150 fires from two instants."""
    n = 0
    for sec, minute, hour in itertools.product(SECONDS, MINUTES, HOURS):
        for start in STARTS[1:]:
            n += compare(f"{sec} {minute} {hour} * * ?", start, 150)
    return n


@functools.cache
def grid_days() -> int:
    """Every day rule x months x two times of day, first 150 fires (to 2036) from three instants."""
    n = 0
    days = [(d, "?") for d in DOMS] + [("?", w) for w in DOWS]
    for (dom, dow), month, tod in itertools.product(days, MONTHS, ["0 0 12", "*/30 59 23,0"]):
        for start in STARTS:
            n += compare(f"{tod} {dom} {month} {dow}", start, 150, to_epoch(2036, 1, 1))
    return n


@functools.cache
def grid_years() -> int:
    """Year fields x a few day rules, every fire to 2100 (at most 400) from two instants."""
    n = 0
    for year, day in itertools.product(YEARS, ["1 1 ?", "L 2 ?", "? 3 6#2", "29 2 ?", "15W * ?", "* * ?", "? * 2-6"]):
        for start in (STARTS[0], STARTS[2]):
            n += compare(f"0 0 6 {day}{year}", start, 400)
    return n


def test_times_of_day_match_quartz(report):
    n = grid_times_of_day()
    emit(report, f"quartz CronExpression 2.3.2 (jar): {n:,} (expression, instant) pairs of the times-of-day grid "
                 f"({len(SECONDS) * len(MINUTES) * len(HOURS)} expressions) agree")
    assert n > 100_000


def test_day_rules_match_quartz(report):
    n = grid_days()
    emit(report, f"quartz CronExpression 2.3.2 (jar): {n:,} (expression, instant) pairs of the day-rule grid "
                 f"({(len(DOMS) + len(DOWS)) * len(MONTHS) * 2} expressions) agree")
    assert n > 150_000


def test_years_match_quartz(report):
    n = grid_years()
    emit(report, f"quartz CronExpression 2.3.2 (jar): {n:,} (expression, instant) pairs of the year grid agree")
    assert n > 5_000


# ------------------------------------------------------------- random expressions (hypothesis)


def _values(lo: int, hi: int, names: tuple[str, ...] = ()):
    nums = st.integers(lo, hi).map(str)
    return st.one_of(nums, st.sampled_from(names)) if names else nums


def _plain_item(lo: int, hi: int, max_step: int):
    """``*``, ``*/n``, ``/n``, ``a``, ``a-b`` (may wrap), ``a/n``, ``a-b/n`` with numbers."""
    a, b, n = st.integers(lo, hi), st.integers(lo, hi), st.integers(1, max_step)
    return st.one_of(
        st.just("*"), n.map(lambda k: f"*/{k}"), n.map(lambda k: f"/{k}"), a.map(str),
        st.tuples(a, b).map(lambda p: f"{p[0]}-{p[1]}"), st.tuples(a, n).map(lambda p: f"{p[0]}/{p[1]}"),
        st.tuples(a, b, n).map(lambda p: f"{p[0]}-{p[1]}/{p[2]}"))


def _named_item(lo: int, hi: int, names: tuple[str, ...]):
    """A name, a name range (may wrap), or any plain item; names in any case."""
    name = st.sampled_from(names).flatmap(lambda s: st.sampled_from([s, s.lower(), s.title()]))
    return st.one_of(name, st.tuples(name, name).map(lambda p: f"{p[0]}-{p[1]}"), _plain_item(lo, hi, hi))


def _list(item):
    return st.lists(item, min_size=1, max_size=3).map(",".join)


MONTH_NAMES = tuple("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split())
DAY_NAMES = tuple("SUN MON TUE WED THU FRI SAT".split())

# Day-of-month: a list of plain items, or one L/W form (lists with L/W, nW past 28, L-nW past 27: documented).
_DOM = st.one_of(
    _list(_plain_item(1, 31, 31)),
    st.sampled_from(["L", "LW"]),
    st.integers(0, 30).map(lambda k: f"L-{k}"),
    st.integers(0, 27).map(lambda k: f"L-{k}W"),
    st.integers(1, 28).map(lambda k: f"{k}W"))
# Day-of-week: a list of plain or named items, or one L / nL / n#k form.
_DOW = st.one_of(
    _list(_named_item(1, 7, DAY_NAMES)),
    st.just("L"),
    st.one_of(st.integers(1, 7).map(str), st.sampled_from(DAY_NAMES)).map(lambda d: f"{d}L"),
    st.tuples(st.one_of(st.integers(1, 7).map(str), st.sampled_from(DAY_NAMES)), st.integers(1, 5))
      .map(lambda p: f"{p[0]}#{p[1]}"))
_YEAR = st.one_of(st.just(""), st.just(" *"), _list(_plain_item(2026, 2099, 30)).map(
    # a year range may not wrap (addToSet L1075): order each range's ends
    lambda s: " " + ",".join(_ordered(part) for part in s.split(","))))


def _ordered(item: str) -> str:
    """``2090-2030/5`` -> ``2030-2090/5``."""
    head, slash, step = item.partition("/")
    if "-" in head:
        head = "-".join(str(y) for y in sorted(int(x) for x in head.split("-")))
    return head + slash + step


@st.composite
def expressions(draw):
    sec = draw(_list(_plain_item(0, 59, 59)))
    minute = draw(_list(_plain_item(0, 59, 59)))
    hour = draw(_list(_plain_item(0, 23, 23)))
    dom, dow = (draw(_DOM), "?") if draw(st.booleans()) else ("?", draw(_DOW))
    month = draw(_list(_named_item(1, 12, MONTH_NAMES)))
    return f"{sec} {minute} {hour} {dom} {month} {dow}{draw(_YEAR)}"


# Deterministic runs (the same examples every time); a long exploratory run found no more than these.
FUZZ = dict(deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def test_random_expressions_from_the_grammar_match_quartz(report):
    count = {"pairs": 0, "expressions": 0}

    @settings(max_examples=400, **FUZZ)
    @given(expr=expressions(), start=st.integers(to_epoch(2025, 1, 1), to_epoch(2031, 1, 1)))
    def check(expr, start):
        count["pairs"] += compare(expr, start, 60)
        count["expressions"] += 1

    check()
    emit(report, f"quartz CronExpression 2.3.2 (jar): {count['pairs']:,} (expression, instant) pairs of "
                 f"{count['expressions']} random grammar expressions agree")
    assert count["pairs"] > 5_000


# Near-grammar text: mostly valid pieces, some broken ones, and the things Quartz's parser reads past.
_NOISE = st.sampled_from([""] * 60 + ["X", "?", "L", "W", "#2", "/", "-", ",", "/0", "0", "5"])


@st.composite
def near_grammar(draw):
    def fld(lo, hi, names=()):
        item = _named_item(lo, hi, names) if names else _plain_item(lo, hi, hi + 2)
        return draw(_list(st.tuples(item, _NOISE).map("".join)))
    parts = [fld(0, 60), fld(0, 60), fld(0, 24)]
    if draw(st.booleans()):
        dom = draw(st.one_of(_DOM, _DOM.map(lambda d: d + ",1"), st.just("*")))
        parts += [dom + draw(_NOISE), fld(1, 13, MONTH_NAMES), "?" + draw(_NOISE)]
    else:
        parts += ["?" + draw(_NOISE), fld(1, 13, MONTH_NAMES), draw(st.one_of(_DOW, st.just("*"))) + draw(_NOISE)]
    if draw(st.booleans()):
        parts.append(fld(2020, 2060) if draw(st.booleans()) else draw(st.sampled_from(["1969", "2200", "2150"])))
    return " ".join(parts)


def _dom_list_with_l_or_w(expr: str) -> bool:
    dom = expr.split()[3] if len(expr.split()) > 3 else ""
    return "," in dom and ("L" in dom.upper() or "W" in dom.upper())


def test_what_calsim_accepts_quartz_accepts_and_fires_alike_and_what_quartz_refuses_calsim_refuses(report):
    seen = {"both": 0, "refused": 0, "pairs": 0}

    @settings(max_examples=1000, **FUZZ)
    @given(expr=near_grammar())
    def check(expr):
        if quartz_refuses(expr) is not None:
            if not _dom_list_with_l_or_w(expr):  # documented: calsim reads those lists as Quartz's main branch
                assert refused(expr), f"Quartz refuses {expr!r}, calsim accepts it"
            seen["refused"] += 1
            return
        if refused(expr) or _dom_list_with_l_or_w(expr):
            return  # Quartz reads past text calsim refuses; W in a list is the smallest day's (both documented)
        seen["both"] += 1
        seen["pairs"] += compare(expr, to_epoch(2026, 1, 1), 40)

    check()
    emit(report, f"quartz CronExpression 2.3.2 (jar): near-grammar fuzz, {seen['refused']} texts Quartz refuses "
                 f"(calsim too), {seen['both']} both accept ({seen['pairs']:,} pairs agree)")
    assert seen["both"] > 150 and seen["refused"] > 300


# ---------------------------------------------------- documented differences (each shown to hold)


class TestDocumentedDifferences:
    """Each bullet of ``calsim/rules/quartz.py``'s "Where calsim differs" list, against the oracle."""

    def test_day_of_month_list_with_L_is_refused_by_quartz_2_3_and_read_item_by_item_by_calsim(self):
        assert "'L' and 'LW' with other days of the month is not implemented" in quartz_refuses("0 0 12 1,15,L * ?")
        got = calsim_fires("0 0 12 1,15,L * ?", to_epoch(2026, 2, 1), to_epoch(2026, 3, 1))
        assert [from_epoch(t)[:10] for t in got] == ["2026-02-01", "2026-02-15", "2026-02-28"]

    def test_day_of_month_list_with_W_is_the_smallest_days_W_in_quartz_2_3_and_each_item_in_calsim(self):
        lo, hi = to_epoch(2010, 10, 1), to_epoch(2011, 1, 1)
        quartz = quartz_fires("0 0 12 2W,16 * ? 2010", lo, 100)
        assert quartz == quartz_fires("0 0 12 2W * ? 2010", lo, 100)  # only daysOfMonth.first(), with W
        calsim = calsim_fires("0 0 12 2W,16 * ? 2010", lo, hi)
        assert set(quartz) < set(calsim)
        assert [from_epoch(t)[:10] for t in sorted(set(calsim) - set(quartz))] == [
            "2010-10-16", "2010-11-16", "2010-12-16"]

    def test_hash_in_a_day_of_week_list_is_the_smallest_weekdays_nth_in_quartz_and_refused_by_calsim(self):
        lo = to_epoch(2026, 1, 1)
        assert quartz_fires("0 0 12 ? * 3,2#1", lo, 24) == quartz_fires("0 0 12 ? * 2#1", lo, 24)
        assert refused("0 0 12 ? * 3,2#1") and refused("0 0 12 ? * 2#1,3")

    def test_nL_in_a_day_of_week_list_is_refused_by_both(self):
        assert "'L' with other days of the week" in quartz_refuses("0 0 12 ? * 6L,2")
        assert refused("0 0 12 ? * 6L,2")

    @pytest.mark.parametrize("zero, quartz_reads", [("*/0", "*"), ("5/0", "5"), ("1-5/0", "1")])
    def test_step_0_is_read_by_quartz_and_refused_by_calsim(self, zero, quartz_reads):
        lo = to_epoch(2026, 1, 1)
        assert quartz_fires(f"{zero} 0 12 * * ?", lo, 200) == quartz_fires(f"{quartz_reads} 0 12 * * ?", lo, 200)
        assert refused(f"{zero} 0 12 * * ?")

    def test_31W_fires_on_friday_april_30_in_quartz_when_may_1_is_a_saturday_and_never_in_calsim(self):
        lo, hi = to_epoch(2027, 1, 1), to_epoch(2028, 1, 1)
        quartz = quartz_fires("0 0 12 31W * ?", lo, 100, hi)
        calsim = calsim_fires("0 0 12 31W * ?", lo, hi)
        assert [from_epoch(t)[:10] for t in sorted(set(quartz) - set(calsim))] == ["2027-04-30"]
        assert set(calsim) <= set(quartz)

    def test_29W_in_february_fires_on_friday_february_28_2025_in_quartz_and_never_in_calsim(self):
        # 2025-03-01 is a Saturday: Quartz's "February 29" is March 1, moved back to Friday the 28th.
        lo, hi = to_epoch(2025, 1, 1), to_epoch(2026, 1, 1)
        assert [from_epoch(t)[:10] for t in quartz_fires("0 0 12 29W 2 ?", lo, 100, hi)] == ["2025-02-28"]
        assert calsim_fires("0 0 12 29W 2 ?", lo, hi) == []

    def test_29W_after_a_january_run_skips_february_in_both(self):
        # getTimeAfter L1346-1348: January 29 is past, so day 29 of month 2 -- which the lenient Calendar makes
        # March 1 -- and the walk goes on from March: the lenient day is only reached from inside February.
        lo, hi = to_epoch(2025, 1, 1), to_epoch(2025, 4, 1)
        assert compare("0 0 12 29W * ?", lo, 100, hi) == 2

    def test_L_minus_30W_in_a_30_day_month_is_the_1st_in_quartz_when_the_month_before_ends_on_a_sunday(self):
        # 2026-05-31 is a Sunday: Quartz's day 0 of June is May 31, moved to Monday June 1.
        lo = to_epoch(2026, 5, 15)
        assert [from_epoch(t) for t in quartz_fires("0 0 12 L-30W 6 ?", lo, 1)] == ["2026-06-01T12:00:00"]
        assert calsim_fires("0 0 12 L-30W 6 ?", lo, to_epoch(2027, 1, 1)) == []

    def test_L_minus_30W_sends_quartz_round_for_ever_and_gives_calsim_no_run_that_month(self):
        # After the January 1st fire: February's day -2 is January 29 (the jar's call is stopped after 2 s).
        chains, timed_out = jar().chains_timed("0 0 12 L-30W * ?", "UTC", [to_epoch(2026, 1, 1, 12)], 1,
                                               timeout_ms=2000)
        assert chains == [[]] and timed_out == [0]
        got = calsim_fires("0 0 12 L-30W * ?", to_epoch(2026, 1, 1), to_epoch(2026, 5, 1))
        assert [from_epoch(t)[:10] for t in got] == ["2026-01-01", "2026-03-02"]  # 2026-03-01 is a Sunday

    def test_plain_days_the_month_lacks_agree(self):
        # Not a difference: getTimeAfter L1353-1358 skips a short month for plain days, and L-n (L1268).
        for expr in ("0 0 12 30 * ?", "0 0 12 31 * ?", "0 0 12 L-30 * ?", "0 0 12 29-31 2 ?"):
            assert compare(expr, to_epoch(2024, 1, 1), 200)

    def test_years_past_quartz_max_year_fire_in_calsim_only(self):
        max_year = jar().version["max_year"]  # Calendar.getInstance().get(YEAR) + 100 on the JVM's clock
        assert max_year < 2150 and jar().chains("0 0 0 1 1 ? 2150", "UTC", [to_epoch(2026, 1, 1)], 1) == [[]]
        assert [from_epoch(t) for t in calsim_fires("0 0 0 1 1 ? 2150", to_epoch(2149, 1, 1),
                                                     to_epoch(2151, 1, 1))] == ["2150-01-01T00:00:00"]
        quartz = jar().chains("0 0 0 1 1 ?", "UTC", [to_epoch(2120, 1, 1) - 1], 1000)[0]
        calsim = calsim_fires("0 0 0 1 1 ?", to_epoch(2120, 1, 1), to_epoch(2300, 1, 1))
        assert from_epoch(quartz[-1])[:4] == str(max_year) and from_epoch(calsim[-1])[:4] == "2199"  # none after
        assert calsim[: len(quartz)] == quartz

    @pytest.mark.parametrize("year", ["1969", "2200", "3000"])
    def test_years_outside_1970_2199_are_accepted_by_quartz_and_refused_by_calsim(self, year):
        assert quartz_refuses(f"0 0 0 1 1 ? {year}") is None
        assert refused(f"0 0 0 1 1 ? {year}")

    @pytest.mark.parametrize("text, quartz_reads", [
        ("0 5X 12 * * ?", "0 5 12 * * ?"),
        ("0 0 12 ? * MONDAY", "0 0 12 ? * MON"),
        ("0 0 12 1? * ?", "0 0 12 1 * ?"),
        ("0 *X 12 * * ?", "0 * 12 * * ?"),
        ("0 0 12 ? JAN-MAR/2 *", "0 0 12 ? JAN-MAR *"),
        ("0 0 12 ? * MON-FRI/2", "0 0 12 ? * MON-FRI"),
        ("0 0 12 ? MAR/3 *", "0 0 12 ? MAR *"),
        ("0 0 12 1,,15 * ?", "0 0 12 1,15 * ?"),
        ("0 0 12 1-5W * ?", "0 0 12 1-5 * ?"),
        ("0 0-59/120 12 * * ?", "0 0 12 * * ?"),
        ("0 0 12 * * ? 2026 *", "0 0 12 * * ? 2026"),
    ])
    def test_text_quartz_never_reads_is_dropped_by_quartz_and_refused_by_calsim(self, text, quartz_reads):
        lo = to_epoch(2026, 1, 1)
        assert quartz_fires(text, lo, 100) == quartz_fires(quartz_reads, lo, 100)
        assert refused(text)

    def test_slash_n_is_star_slash_n_in_both(self):
        assert compare("/20 /15 /8 * * ?", to_epoch(2026, 1, 1), 300)
        assert QuartzCron.parse("/20 0 0 * * ?").seconds == (0, 20, 40)


# ----------------------------------------------------------- Quartz's own tests, replayed

T = to_epoch  # Java's cal.set(y, Calendar.MONTH, d, h, m, s), in the default zone for both sides: UTC here


class TestQuartzCronExpressionTest:
    """``quartz-core/src/test/java/org/quartz/CronExpressionTest.java`` (2.3.2; L-numbers of that file) and
    the main branch's additions, each assertion checked on calsim and on the oracle."""

    @pytest.mark.parametrize("expr, when, expected", [
        # testIsSatisfiedBy (2.3.2 L68-86)
        ("0 15 10 * * ? 2005", T(2005, 6, 1, 10, 15), True),
        ("0 15 10 * * ? 2005", T(2006, 6, 1, 10, 15), False),
        ("0 15 10 * * ? 2005", T(2005, 6, 1, 10, 16), False),
        ("0 15 10 * * ? 2005", T(2005, 6, 1, 10, 14), False),
        # testIsSatisfiedBy (main additions)
        ("0 15 10 * * ? 2005", T(2005, 6, 30, 10, 15), True),
        ("0 15 10 * * ? 2005", T(2005, 3, 1, 10, 15), True),
        ("0 15 10 * * ? 2005", T(2005, 3, 31, 10, 15), True),
        ("0 15 10 * * ? 2005", T(2005, 3, 1, 10, 16), False),
        ("0 15 10 * * ? 2005", T(2005, 3, 1, 10, 14), False),
        ("0 15 10 * * ? 2005", T(2005, 2, 1, 10, 15), True),
        ("0 15 10 * * ? 2005", T(2005, 2, 28, 10, 15), True),
        ("0 15 10 * * ? 2005", T(2005, 2, 1, 10, 16), False),
        ("0 15 10 * * ? 2005", T(2005, 2, 1, 10, 14), False),
        ("0 15 10 12 * ? 2005", T(2005, 12, 12, 10, 15), True),
        ("0 15 10 12 * ? 2005", T(2005, 12, 11, 10, 15), False),
        ("0 15 10 12 * ? 2005", T(2005, 12, 13, 10, 15), False),
        # testLastDayOffset (2.3.2 L88-114)
        ("0 15 10 L-2 * ? 2010", T(2010, 10, 29, 10, 15), True),
        ("0 15 10 L-2 * ? 2010", T(2010, 10, 28, 10, 15), False),
        ("0 15 10 L-5W * ? 2010", T(2010, 10, 26, 10, 15), True),
        ("0 15 10 L-1 * ? 2010", T(2010, 10, 30, 10, 15), True),
        ("0 15 10 L-1W * ? 2010", T(2010, 10, 29, 10, 15), True),
        # testLastDayOffset (main additions without lists)
        ("0 15 10 L-2 * ? 2010", T(2010, 2, 26, 10, 15), True),
        ("0 15 10 L-2 * ? 2010", T(2010, 2, 25, 10, 15), False),
        ("0 15 10 L-2 * ? 2010", T(2010, 6, 28, 10, 15), True),
        ("0 15 10 L-2 * ? 2010", T(2010, 6, 27, 10, 15), False),
        ("0 15 10 L-5W * ? 2010", T(2010, 10, 25, 10, 15), False),
        ("0 15 10 L-5W * ? 2010", T(2010, 10, 27, 10, 15), False),
        ("0 15 10 L-5W * ? 2010", T(2010, 9, 24, 10, 15), True),
        ("0 15 10 L-5W * ? 2010", T(2010, 9, 23, 10, 15), False),
        ("0 15 10 L-5W * ? 2010", T(2010, 9, 25, 10, 15), False),
        # testIsSatisfiedByLastDayOfMonth (main)
        ("0 15 10 L * ? 2005", T(2005, 12, 31, 10, 15), True),
        ("0 15 10 L * ? 2005", T(2005, 12, 30, 10, 15), False),
        ("0 15 10 L * ? 2005", T(2005, 9, 30, 10, 15), True),
        ("0 15 10 L * ? 2005", T(2005, 9, 29, 10, 15), False),
        ("0 15 10 L 2 ? 2005", T(2005, 2, 28, 10, 15), True),
        ("0 15 10 L 2 ? 2005", T(2005, 2, 27, 10, 15), False),
        ("0 15 10 L 2 ? 2004", T(2004, 2, 29, 10, 15), True),
        ("0 15 10 L 2 ? 2004", T(2004, 2, 28, 10, 15), False),
        # testIsSatisfiedByLastDayOfMonthWithOffset (main)
        ("0 15 10 L-2 * ? 2005", T(2005, 12, 29, 10, 15), True),
        ("0 15 10 L-2 * ? 2005", T(2005, 12, 28, 10, 15), False),
        ("0 15 10 L-2 * ? 2005", T(2005, 12, 30, 10, 15), False),
        ("0 15 10 L-2 * ? 2005", T(2005, 12, 31, 10, 15), False),
        ("0 15 10 L-1 * ? 2005", T(2005, 9, 29, 10, 15), True),
        ("0 15 10 L-1 * ? 2005", T(2005, 9, 27, 10, 15), False),
        ("0 15 10 L-1 * ? 2005", T(2005, 9, 28, 10, 15), False),
        ("0 15 10 L-1 * ? 2005", T(2005, 9, 30, 10, 15), False),
        ("0 15 10 L-3 2 ? 2005", T(2005, 2, 25, 10, 15), True),
        ("0 15 10 L-3 2 ? 2005", T(2005, 2, 24, 10, 15), False),
        ("0 15 10 L-3 2 ? 2005", T(2005, 2, 26, 10, 15), False),
        ("0 15 10 L-3 2 ? 2005", T(2005, 2, 28, 10, 15), False),
        ("0 15 10 L-3 2 ? 2000", T(2000, 2, 26, 10, 15), True),
        ("0 15 10 L-3 2 ? 2000", T(2000, 2, 25, 10, 15), False),
        ("0 15 10 L-3 2 ? 2000", T(2000, 2, 27, 10, 15), False),
        ("0 15 10 L-3 2 ? 2000", T(2000, 2, 29, 10, 15), False),
    ])
    def test_isSatisfiedBy_cases(self, expr, when, expected):
        assert satisfied(expr, when) is expected
        assert jar().satisfied(expr, [when]) == [expected]  # the jar agrees with Quartz's own test

    @pytest.mark.parametrize("expr, when, expected", [
        # testLastDayOffset, main: lists with L / W (Quartz 2.3 refuses or misreads them: documented)
        ("0 15 10 1,L * ? 2010", T(2010, 10, 1, 10, 15), True),
        ("0 15 10 1,L * ? 2010", T(2010, 10, 31, 10, 15), True),
        ("0 15 10 1,L * ? 2010", T(2010, 10, 30, 10, 15), False),
        ("0 15 10 1,L * ? 2010", T(2010, 2, 1, 10, 15), True),
        ("0 15 10 1,L * ? 2010", T(2010, 2, 28, 10, 15), True),
        ("0 15 10 1,L * ? 2010", T(2010, 2, 27, 10, 15), False),
        ("0 15 10 L-1W,L-1 * ? 2010", T(2010, 10, 29, 10, 15), True),
        ("0 15 10 L-1W,L-1 * ? 2010", T(2010, 10, 30, 10, 15), True),
        ("0 15 10 L-1W,L-1 * ? 2010", T(2010, 2, 26, 10, 15), True),
        ("0 15 10 L-1W,L-1 * ? 2010", T(2010, 2, 27, 10, 15), True),
        ("0 15 10 2W,16 * ? 2010", T(2010, 10, 1, 10, 15), True),
        ("0 15 10 2W,16 * ? 2010", T(2010, 10, 2, 10, 15), False),
        ("0 15 10 2W,16 * ? 2010", T(2010, 10, 16, 10, 15), True),
        ("0 15 10 2W,16 * ? 2010", T(2010, 11, 2, 10, 15), True),
        ("0 15 10 2W,16 * ? 2010", T(2010, 11, 16, 10, 15), True),
    ])
    def test_testLastDayOffset_main_lists_with_L_and_W(self, expr, when, expected):
        assert satisfied(expr, when) is expected

    @pytest.mark.parametrize("expr", ["0 0 0 L-2 * ? *", "0 0 0 LW * ? *"])
    def test_testQtz259_and_testQtz259LW_successive_fire_times_never_repeat(self, expr):
        quartz = quartz_fires(expr, to_epoch(2026, 1, 1), 26)
        assert len(set(quartz)) == 26 and quartz == sorted(quartz)
        assert compare(expr, to_epoch(2026, 1, 1), 26)

    def test_testQuartz571_month_name_in_mixed_case_parses_and_fires(self):
        got = calsim_fires("19 15 10 4 Apr ? ", to_epoch(2026, 1, 1), to_epoch(2027, 1, 1))
        assert [from_epoch(t) for t in got] == ["2026-04-04T10:15:19"]
        assert compare("19 15 10 4 Apr ? ", to_epoch(2026, 1, 1), 5)

    @pytest.mark.parametrize("expr, quartz_message", [
        # testQuartz574 (L174-190)
        ("* * * * Foo ? ", "Invalid Month value:"),
        ("* * * * Jan-Foo ? ", "Invalid Month value:"),
        # testQuartz621 (L192-214)
        ("0 0 * * * *", "Support for specifying both a day-of-week AND a day-of-month parameter is not implemented."),
        ("0 0 * 4 * *", "Support for specifying both a day-of-week AND a day-of-month parameter is not implemented."),
        ("0 0 * * * 4", "Support for specifying both a day-of-week AND a day-of-month parameter is not implemented."),
        # testQuartz640 (L216-243), day-of-week
        ("0 43 9 ? * SAT,SUN,L", "Support for specifying 'L' with other days of the week is not implemented"),
        ("0 43 9 ? * 6,7,L", "Support for specifying 'L' with other days of the week is not implemented"),
        # testQtz96 (L246-254)
        ("0/5 * * 32W 1 ?", "The 'W' option does not make sense with values larger than"),
        # testSecRangeIntervalAfterSlash ... testDayOfWeekRangeIntervalAfterSlash (L268-479, Issue #58)
        ("/120 0 8-18 ? * 2-6", "Increment > 60 : 120"),
        ("0/120 0 8-18 ? * 2-6", "Increment > 60 : 120"),
        ("/ 0 8-18 ? * 2-6", "'/' must be followed by an integer."),
        ("0/ 0 8-18 ? * 2-6", "'/' must be followed by an integer."),
        ("0 /120 8-18 ? * 2-6", "Increment > 60 : 120"),
        ("0 0/120 8-18 ? * 2-6", "Increment > 60 : 120"),
        ("0 / 8-18 ? * 2-6", "'/' must be followed by an integer."),
        ("0 0/ 8-18 ? * 2-6", "'/' must be followed by an integer."),
        ("0 0 /120 ? * 2-6", "Increment > 24 : 120"),
        ("0 0 0/120 ? * 2-6", "Increment > 24 : 120"),
        ("0 0 / ? * 2-6", "'/' must be followed by an integer."),
        ("0 0 0/ ? * 2-6", "'/' must be followed by an integer."),
        ("0 0 0 /120 * 2-6", "Increment > 31 : 120"),
        ("0 0 0 0/120 * 2-6", "Increment > 31 : 120"),
        ("0 0 0 / * 2-6", "'/' must be followed by an integer."),
        ("0 0 0 0/ * 2-6", "'/' must be followed by an integer."),
        ("0 0 0 ? /120 2-6", "Increment > 12 : 120"),
        ("0 0 0 ? 0/120 2-6", "Increment > 12 : 120"),
        ("0 0 0 ? / 2-6", "'/' must be followed by an integer."),
        ("0 0 0 ? 0/ 2-6", "'/' must be followed by an integer."),
        ("0 0 0 ? * /120", "Increment > 7 : 120"),
        ("0 0 0 ? * 0/120", "Increment > 7 : 120"),
        ("0 0 0 ? * /", "'/' must be followed by an integer."),
        ("0 0 0 ? * 0/", "'/' must be followed by an integer."),
    ])
    def test_refused_by_quartz_and_by_calsim(self, expr, quartz_message):
        message = quartz_refuses(expr)
        assert message is not None and message.startswith(quartz_message), message
        assert refused(expr)

    def test_testQuartz640_5L_is_accepted_and_is_the_last_thursday(self):
        assert compare("0 43 9 ? * 5L", to_epoch(2026, 1, 1), 24)

    def test_testQuartz640_day_of_month_L_in_a_list_refused_by_2_3_accepted_by_main_and_calsim(self):
        # 2.3.2 L216-223 expects the refusal; main's testQuartz640 no longer does (PR #1175): documented.
        assert "'L' and 'LW' with other days of the month" in quartz_refuses("0 43 9 1,5,29,L * ?")
        got = calsim_fires("0 43 9 1,5,29,L * ?", to_epoch(2026, 2, 1), to_epoch(2026, 3, 1))
        assert [from_epoch(t)[8:10] for t in got] == ["01", "05", "28"]

    def test_testTooManyTokens_main_eight_fields_refused_by_calsim_ignored_by_2_3(self):
        assert quartz_fires("0 15 10 * * ? 2005 *", T(2005, 1, 1), 10) == quartz_fires("0 15 10 * * ? 2005",
                                                                                       T(2005, 1, 1), 10)
        assert refused("0 15 10 * * ? 2005 *")


class TestQuartz601Test:
    """``quartz-core/src/test/java/org/quartz/Quartz601Test.java`` (2.3.2): overflowing ranges parse to
    non-empty sets; here also the same sets as Quartz's, and the same fire times."""

    @pytest.mark.parametrize("expr, field", [
        ("0 15 10 * * ? 2005", "all"),  # testNormal
        ("58-4 5 21 ? * MON-FRI", "seconds"),  # testSecond
        ("0 58-4 21 ? * MON-FRI", "minutes"),  # testMinute
        ("0 0/5 21-3 ? * MON-FRI", "hours"),  # testHour
        ("58 5 21 ? * 6-2", "weekdays"),  # testDayOfWeekNumber
        ("58 5 21 ? * FRI-TUE", "weekdays"),  # testDayOfWeek
        ("58 5 21 28-5 1 ?", "days"),  # testDayOfMonth
        ("58 5 21 ? 11-2 FRI", "months"),  # testMonth
        ("0 0 14-6 ? * FRI-MON", "hours"),  # testAmbiguous
        ("0 0 14-6 ? * FRI-MON", "weekdays"),
        ("55-3 56-2 6 ? * FRI", "seconds"),
        ("55-3 56-2 6 ? * FRI", "minutes"),
    ])
    def test_overflowing_ranges(self, expr, field):
        cron, rule = jar().ask({"expr": expr, "sets": True}), QuartzCron.parse(expr)
        sets = {"seconds": cron["seconds"], "minutes": cron["minutes"], "hours": cron["hours"],
                "days": cron["daysOfMonth"], "months": cron["months"], "weekdays": cron["daysOfWeek"]}
        for name in sets if field == "all" else [field]:
            quartz = {v for v in sets[name] if v not in (98, 99)}  # without the '?' / '*' markers
            assert set(getattr(rule, name)) == quartz, name
        assert compare(expr, to_epoch(2005, 1, 1), 200)


@pytest.mark.parametrize("expr", [
    "0 0 10 ? * 2,5,6",  # CronScheduleBuilderTest.testAtHourAndMinuteOnGivenDaysOfWeek (MONDAY, THURSDAY, FRIDAY)
    "0 0 10 ? * 4",  # CronScheduleBuilderTest.testAtHourAndMinuteOnGivenDaysOfWeek (WEDNESDAY)
    "0 0 12 * * ?",  # CronTriggerTest.testClone, testMisfireInstructionInDerivedBuilder
    "0 0 0 * * ?",  # TriggerBuilderTest
])
def test_expressions_of_the_other_quartz_tests_fire_alike(expr):
    assert compare(expr, to_epoch(2026, 1, 1), 300)


# --------------------------------------------- the walk's reading of the rule: Quartz's own fields


def quartz_sets(expr: str) -> dict:
    """``CronExpression``'s fields after ``buildExpression`` (the jar, by reflection), markers 98/99 dropped."""
    raw = jar().ask({"expr": expr, "sets": True})
    return {k: ([x for x in v if x not in (98, 99)] if isinstance(v, list) else v) for k, v in raw.items()}


def check_walk_sets(expr: str) -> bool:
    """calsim's :func:`walk_sets` (what ``next_after`` walks) is the jar's own reading; False: not walked."""
    q = walk_sets(QuartzCron.parse("quartz:" + expr))
    if q is None:
        return False
    j = quartz_sets(expr)
    max_year = jar().version["max_year"]
    got = {"seconds": list(q.seconds), "minutes": list(q.minutes), "hours": list(q.hours),
           "daysOfMonth": list(q.days_of_month), "months": list(q.months), "daysOfWeek": list(q.days_of_week),
           "years": [y for y in q.years if y <= max_year], "lastdayOfMonth": q.lastday_of_month,
           "nearestWeekday": q.nearest_weekday, "lastdayOffset": q.lastday_offset,
           "lastdayOfWeek": q.lastday_of_week, "nthdayOfWeek": q.nthday_of_week}
    j["years"] = [y for y in j["years"] if y <= max_year]
    assert got == j, f"{expr!r}: calsim walks {got}, Quartz reads {j}"
    return True


def test_the_walk_reads_every_grid_expression_as_quartz_does(report):
    """Every grid expression calsim walks (``QuartzCron.emulates == "quartz"``) has Quartz's own fields in
    ``walk_sets``; the ones it does not walk are exactly the documented day-of-month differences."""
    exprs = [f"{s} {m} {h} * * ?" for s, m, h in itertools.product(SECONDS, MINUTES, HOURS)]
    exprs += [f"0 0 12 {dom} {month} {dow}" for (dom, dow), month in
              itertools.product([(d, "?") for d in DOMS] + [("?", w) for w in DOWS], MONTHS)]
    exprs += [f"0 0 6 {day}{year}" for year, day in itertools.product(YEARS, ["1 1 ?", "L 2 ?", "? 3 6#2"])]
    exprs += ["0 0 12 29W * ?", "0 0 12 31W * ?", "0 0 12 L-28W * ?", "0 0 12 1,15W * ?", "0 0 12 1,L * ?"]
    walked = [e for e in exprs if check_walk_sets(e)]
    not_walked = sorted(set(exprs) - set(walked))
    assert not_walked == ["0 0 12 1,15W * ?", "0 0 12 1,L * ?", "0 0 12 29W * ?", "0 0 12 31W * ?",
                          "0 0 12 L-28W * ?"]
    emit(report, f"quartz CronExpression 2.3.2 (jar): the walk reads {len(walked)} grid expressions with "
                 f"Quartz's own fields; {len(not_walked)} documented ones are not walked")
