"""Issue 30's chart fixes, each checked on the Figure's artists (never pixels): the lateness axis says where it
starts, budget waits quote the summary's words, the timeline's default rows vary and its height is capped, and
the cost chart's local days are the daily_cost view's in the budget's calendar."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import datetime as dt  # noqa: E402
import re  # noqa: E402

import matplotlib.dates as mdates  # noqa: E402
import polars as pl  # noqa: E402
import pytest  # noqa: E402

import calsim  # noqa: E402
import calsim.plots as plots  # noqa: E402
from calsim.plots.style import duration_words  # noqa: E402
from calsim.simulation import views  # noqa: E402


def _sim(sc: calsim.Scenario) -> calsim.Ledger:
    return calsim.simulate(sc, progress=False)


# ----------------------------------------------------------------------------- lateness: where the y axis starts


def _lateness_ledgers(outage_hours: float) -> list[calsim.Ledger]:
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    end = dt.datetime(2026, 1, 1, 3) + dt.timedelta(hours=outage_hours)
    out = calsim.Outage("2026-01-01T03:30Z", end.strftime("%Y-%m-%dT%H:%MZ"))
    return [_sim(calsim.Scenario(p, calsim.with_policy([s], catchup=p), "2026-01-01T00:00Z", "2026-01-03T00:00Z",
                                 outages=[out])) for p in ("all", "latest")]


def test_lateness_says_on_its_axis_when_the_axis_does_not_start_at_zero():
    ax = plots.lateness(_lateness_ledgers(4)).axes[0]
    bottom = ax.get_ylim()[0]
    assert 0.5 < bottom < 1  # mostly on time: zoomed on the late tail
    assert f"axis starts at {bottom:g}, not 0" in ax.get_ylabel()
    assert min(ax.get_yticks()) == pytest.approx(bottom)  # and its lowest tick is that value


def test_lateness_from_zero_says_nothing_more():
    ax = plots.lateness(_lateness_ledgers(30)).axes[0]  # 'all' ran most of its runs late
    assert ax.get_ylim()[0] == 0 and ax.get_ylabel() == "fraction of started runs"


def test_lateness_legend_quotes_the_summary_in_its_words():
    leds = _lateness_ledgers(4)
    texts = [t.get_text() for t in plots.lateness(leds).axes[0].get_legend().get_texts()]
    for led, text in zip(leds, texts):
        p95 = led.summary()["lateness_p95"].dt.to_string("polars")[0].replace("0µs", "0s")
        assert f"p95 {p95})" in text
    assert not any(re.search(r"\d\.\d+ h\b", t) for t in texts)


# ----------------------------------------------------------------------------- budget waits: the summary's words


@pytest.fixture(scope="module")
def waited() -> calsim.Ledger:
    """Hourly at :15 with a budget of 20 a day: from 20:15 runs wait for the next day (and its own waiters)."""
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:15", "FREQ=HOURLY", policy=calsim.Policy(cost=1.0, account="a"))
    return _sim(calsim.Scenario("wait", [s], "2026-01-01T00:00Z", "2026-01-03T00:00Z",
                                budgets=[calsim.Budget("a", 20, "day", "UTC")]))


def test_budget_waits_legend_says_max_as_the_summary_does(waited):
    legend = [t.get_text() for t in plots.budget_waits(waited).legends[0].texts]
    top = waited.summary()["budget_wait_max"]
    assert top.item() == dt.timedelta(hours=7, minutes=45)
    assert legend == [f"wait: {waited.summary()['budget_waits'].item()} of {waited.frame.height} waited, "
                      f"max {top.dt.to_string('polars')[0]}"]
    assert legend[0].endswith("max 7h 45m") and "7.75 h" not in legend[0]


def test_duration_words_are_polars_words_with_zero_as_0s():
    values = [dt.timedelta(hours=5, minutes=45), dt.timedelta(days=2, seconds=3), dt.timedelta(seconds=90)]
    assert [duration_words(v) for v in values] == pl.Series(values).dt.to_string("polars").to_list()
    assert duration_words(dt.timedelta(0)) == duration_words(0) == "0s"


# ----------------------------------------------------------------------------- timeline: varied rows, capped height


CADENCES = {"quarter": "*/15 * * * *", "hourly": "FREQ=HOURLY", "daily": "FREQ=DAILY", "weekly": "FREQ=WEEKLY"}


@pytest.fixture(scope="module")
def mixed() -> dict[str, calsim.Ledger]:
    """Three tenants with 8 schedules of each of four cadences (96); ids numbered 1.. without zero padding."""
    fleet, i = [], 0
    for tenant in ("a", "b", "c"):
        for rule in CADENCES.values():
            for _ in range(8):
                i += 1
                fleet.append(calsim.Schedule(f"tenant-{tenant}/job-{i}", "UTC", "2026-01-01T00:05", rule))
    world = dict(start="2026-01-01T00:00Z", end="2026-01-15T00:00Z",
                 outages=[calsim.Outage("2026-01-05T03:00Z", "2026-01-06T12:00Z")])
    policies = {p: dict(catchup=p) for p in ("all", "latest", "skip", "earliest")} | {
        "bounded": dict(catchup="bounded", limit=2)}
    return {p: _sim(calsim.Scenario(p, calsim.with_policy(fleet, **kw), **world)) for p, kw in policies.items()}


def _rows(ax) -> list[str]:
    return [t.get_text().split(" (")[0] for t in ax.get_yticklabels()]


def _cadence(sid: str) -> str:
    n = int(sid.rsplit("-", 1)[1]) - 1
    return list(CADENCES)[(n // 8) % 4]


def test_timeline_default_rows_spread_over_cadences_and_tenants(mixed):
    rows = _rows(plots.timeline(mixed["latest"]).axes[0])
    assert len(rows) == 20
    per_cadence = {c: sum(_cadence(r) == c for r in rows) for c in CADENCES}
    per_tenant = {t: sum(r.startswith(f"tenant-{t}/") for r in rows) for t in "abc"}
    assert max(per_cadence.values()) - min(per_cadence.values()) <= 1  # 5 of each, not 20 of the busiest
    assert max(per_tenant.values()) - min(per_tenant.values()) <= 1
    assert rows == sorted(rows, key=views.natural_sort_key)  # natural order: job-9 before job-10


def test_timeline_default_rows_still_favour_what_the_outage_hit(mixed):
    rows = _rows(plots.timeline(mixed["latest"], max_schedules=4).axes[0])
    assert sorted(_cadence(r) for r in rows) == sorted(CADENCES)  # one of each cadence, weekly included
    assert len({r.split("/")[0] for r in rows}) >= 3


def test_a_five_policy_timeline_is_at_most_1200_px_tall(mixed):
    fig = plots.timeline(mixed)
    assert len(fig.axes) == 5
    assert fig.get_figheight() <= 12.0 and fig.get_figheight() * fig.dpi <= 1200
    assert {len(_rows(ax)) for ax in fig.axes} == {7}
    assert "7 of 96 schedules" in fig.get_suptitle()


def test_timeline_row_counts_asked_for_thin_the_rows_before_the_figure_grows(mixed):
    asked = plots.timeline(mixed, max_schedules=11)
    assert asked.get_figheight() < 15  # it was 21.45 in (2,145 px)
    one = plots.timeline(mixed["all"])
    assert len(_rows(one.axes[0])) == 20 and one.get_figheight() == pytest.approx(1.6 + 0.3 * 20)


# ----------------------------------------------------------------------------- cost: one calendar for table and chart


@pytest.fixture(scope="module")
def lord_howe() -> tuple[list[calsim.Ledger], calsim.Budget]:
    """A Lord Howe tenant (+11 in January: its day starts at 13:00 UTC) through an outage that ends at 11:00 UTC."""
    budget = calsim.Budget("tenant-b", 45, "day", "Australia/Lord_Howe")
    fleet = [calsim.Schedule(f"b/{i}", "Australia/Lord_Howe", "2026-01-01T00:10", "FREQ=HOURLY;INTERVAL=2",
                             policy=calsim.Policy(cost=float(i), account="tenant-b")) for i in (1, 2)]
    world = dict(start="2026-01-01T00:00Z", end="2026-01-08T00:00Z", release="2026f", budgets=[budget],
                 outages=[calsim.Outage("2026-01-03T00:00Z", "2026-01-04T11:00Z")])
    return [_sim(calsim.Scenario(p, calsim.with_policy(fleet, catchup=p), **world)) for p in ("all", "latest")], budget


def _bars(fig) -> dict[tuple[str, dt.date], float]:
    out = {}
    for ax in fig.axes:
        for c in ax.containers:
            name = c.get_label().split(" (")[0]
            for p in c.patches:
                if p.get_height():
                    out[(name, mdates.num2date(p.get_x()).date())] = p.get_height()
    return out


def test_daily_cost_in_the_budgets_calendar_is_what_cost_impact_draws(lord_howe):
    leds, budget = lord_howe
    drawn = _bars(plots.cost_impact(leds, budget=budget))
    table = {(led.name, day): cost
             for led in leds
             for day, cost in views.daily_cost(led.frame, led.accounts, zones=[budget]).collect()
             .filter(pl.col("account") == budget.account).select("day", "cost").iter_rows()}
    assert table == drawn
    utc = {(led.name, day): cost for led in leds
           for day, cost in views.daily_cost(led.frame, led.accounts).collect().select("day", "cost").iter_rows()}
    assert utc != drawn  # UTC days are another calendar: mixing them is what this test catches
    assert max(utc.values()) > budget.limit >= max(drawn.values())  # a "breach" that only UTC days show


def test_tzdiff_map_rows_of_a_zone_come_in_natural_id_order():
    ids = ["crontab:10", "crontab:9", "crontab:1", "crontab:2"]
    diff = pl.DataFrame({"schedule_id": ids, "nominal_local": [dt.datetime(2026, 11, 1, 1, 30)] * 4,
                         "zone": ["America/Havana"] * 4, "shift_s": pl.Series([-3600] * 4, dtype=pl.Int64),
                         "change": ["moved"] * 4})
    labels = [t.get_text() for t in plots.tzdiff_map(diff).axes[0].get_yticklabels()]
    assert labels == [f"America/Havana · crontab:{i}" for i in (1, 2, 9, 10)]
