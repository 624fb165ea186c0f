"""calsim.plots: every chart is a Figure with readable defaults, built from real simulations."""

from __future__ import annotations

import datetime as dt
import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import calsim  # noqa: E402
import calsim.plots as plots  # noqa: E402

OUTAGE = ("2026-03-05T01:01Z", "2026-03-07T12:00Z")
HORIZON = dict(start="2026-03-01T00:00Z", end="2026-03-15T00:00Z", tick="1min")
POLICIES = ("all", "latest", "skip")


def _num(iso: str) -> float:
    return float(mdates.date2num(np.datetime64(iso.rstrip("Z"), "us")))


@pytest.fixture(scope="module")
def fleet():
    return calsim.examples.fleet(20, seed=1)


@pytest.fixture(scope="module")
def runs(fleet):
    """Three catch-up policies after a 2.5-day outage, under a daily budget that makes some runs wait."""
    world = dict(HORIZON, outages=[calsim.Outage(*OUTAGE)],
                 budgets=[calsim.Budget("tenant-000", limit=70, period="day", zone="UTC")])
    out = {}
    for p in POLICIES:
        f = calsim.with_policy(fleet, catchup=p, cost=1.0, account="tenant-000",
                               max_lateness="2d" if p == "all" else None)
        out[p] = calsim.simulate(calsim.Scenario(p, f, **world))
    return out


@pytest.fixture(scope="module")
def unbudgeted(fleet):
    """The same outage without a budget: catching up everything is a burst of cost."""
    world = dict(HORIZON, outages=[calsim.Outage(*OUTAGE)])
    return [calsim.simulate(calsim.Scenario(p, calsim.with_policy(fleet, catchup=p, cost=1.0), **world))
            for p in ("all", "latest")]


WINDOW = ("2025-07-01T00:00Z", "2027-07-01T00:00Z")


@pytest.fixture(scope="module")
def diff(fleet):
    return calsim.tzdiff(fleet, "2022e", "2026f", *WINDOW)


#: New York keeps EDT (UTC-4) all winter from 2026-11-01: a what-if release, in memory only.
WHAT_IF = ("America/New_York", "2026-11-01T06:00Z", "EDT4")


@pytest.fixture(scope="module")
def what_if():
    """A job at 04:30 UTC billed to a New York daily budget, under 2026f and under the what-if release.

    04:30Z is 23:30 the day before in EST (2026f) but 00:30 the same day in EDT (the what-if).
    """
    job = calsim.Schedule("late-job", "UTC", "2026-11-01T04:30", "FREQ=DAILY",
                          policy=calsim.Policy(cost=1.0, account="ny"))
    out = {}
    for name, rel in (("real", "2026f"), ("what-if", calsim.release("2026f").with_override(*WHAT_IF))):
        out[name] = calsim.simulate(calsim.Scenario(name, [job], "2026-11-10T00:00Z", "2026-11-14T00:00Z", release=rel,
                                                    budgets=[calsim.Budget("ny", 5, "day", "America/New_York")]))
    return out


@pytest.fixture(scope="module")
def calendar_runs():
    """Two policies over an outage, with a holiday-excluded schedule and one skipping a DST-gap time."""
    fleet = [calsim.Schedule("ny-0230", "America/New_York", "2026-03-01T02:30", "FREQ=DAILY", gap="skip"),
             calsim.Schedule("hol-0900", "America/New_York", "2026-03-01T09:00", "FREQ=DAILY",
                             exclude=["2026-03-10", "2026-03-11"]),
             calsim.Schedule("six-hourly", "UTC", "2026-03-01T00:15", "FREQ=HOURLY;INTERVAL=6")]
    return {p: calsim.simulate(calsim.Scenario(p, calsim.with_policy(fleet, catchup=p), "2026-03-05T00:00Z",
                                               "2026-03-14T00:00Z", release="2026f",
                                               outages=[calsim.Outage("2026-03-08T00:00Z", "2026-03-09T12:00Z")]))
            for p in ("all", "latest")}


NEW_YORK = calsim.Schedule("nightly", "America/New_York", "2026-01-01T02:30", "FREQ=DAILY")

CHARTS = {
    "timeline": lambda r, d: plots.timeline(r["latest"]),
    "state_counts": lambda r, d: plots.state_counts(r),
    "cost_impact": lambda r, d: plots.cost_impact(r),
    "lateness": lambda r, d: plots.lateness(r),
    "budget_waits": lambda r, d: plots.budget_waits(r),
    "local_vs_utc": lambda r, d: plots.local_vs_utc(NEW_YORK, release="2026f"),
    "tzdiff_map": lambda r, d: plots.tzdiff_map(d, start=WINDOW[0], end=WINDOW[1]),
}
SEVERAL_SERIES = ("timeline", "state_counts", "cost_impact", "lateness", "budget_waits", "local_vs_utc")


@pytest.fixture(scope="module")
def figures(runs, diff):
    return {name: build(runs, diff) for name, build in CHARTS.items()}


def _main_axes(fig):
    return fig.axes[0]


def _overlapping_tick_labels(fig) -> list[tuple[str, str]]:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bad = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            boxes = [(t.get_text(), t.get_window_extent(renderer))
                     for loc, t in zip(axis.get_majorticklocs(), axis.get_majorticklabels())
                     if t.get_visible() and t.get_text() and lo - 1e-9 <= loc <= hi + 1e-9]
            for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
                w = min(a.x1, b.x1) - max(a.x0, b.x0)
                h = min(a.y1, b.y1) - max(a.y0, b.y0)
                if w > 0.5 and h > 0.5:
                    bad.append((ta, tb))
    return bad


# ----------------------------------------------------------------------------- every chart


@pytest.mark.parametrize("name", CHARTS)
def test_every_chart_returns_a_figure_with_title_and_axis_labels(figures, name):
    fig = figures[name]
    assert isinstance(fig, Figure)
    ax = _main_axes(fig)
    assert ax.get_title()
    assert ax.get_xlabel() and ax.get_ylabel()


@pytest.mark.parametrize("name", CHARTS)
def test_every_chart_draws_data_artists(figures, name):
    ax = _main_axes(figures[name])
    assert len(ax.collections) + len(ax.lines) + len(ax.patches) > 0


@pytest.mark.parametrize("name", SEVERAL_SERIES)
def test_charts_with_several_series_have_a_legend(figures, name):
    fig = figures[name]
    legends = list(fig.legends) + [a.get_legend() for a in fig.axes if a.get_legend() is not None]
    assert legends and sum(len(lg.get_texts()) for lg in legends) >= 2


@pytest.mark.parametrize("name", CHARTS)
def test_every_chart_has_no_overlapping_tick_labels(figures, name):
    assert _overlapping_tick_labels(figures[name]) == []


@pytest.mark.parametrize("name", CHARTS)
def test_every_chart_renders_to_png(figures, name, tmp_path):
    path = tmp_path / f"{name}.png"
    figures[name].savefig(path, dpi=60)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_the_time_axis_says_utc_or_local(figures):
    assert "UTC" in figures["timeline"].axes[0].get_xlabel()
    assert "UTC" in figures["cost_impact"].axes[0].get_xlabel()
    assert "America/New_York" in figures["local_vs_utc"].axes[0].get_xlabel()


def test_charts_leave_no_pyplot_figures_behind(runs):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plots.state_counts(runs)
    plots.timeline(runs["all"])
    assert plt.get_fignums() == before


def test_state_colours_come_from_the_okabe_ito_palette():
    assert {c for c, _ in plots.STATE_STYLE.values()} <= set(plots.OKABE_ITO.values())
    assert len({c for c, _ in plots.STATE_STYLE.values()}) == len(plots.STATE_STYLE)
    assert len({m for _, m in plots.STATE_STYLE.values()}) == len(plots.STATE_STYLE)


# ----------------------------------------------------------------------------- timeline


def test_timeline_shades_the_outage_span(figures):
    ax = figures["timeline"].axes[0]
    spans = [(p.get_x(), p.get_x() + p.get_width()) for p in ax.patches
             if isinstance(p, Rectangle) and p.get_hatch() == "//"]
    assert spans == [pytest.approx((_num(OUTAGE[0]), _num(OUTAGE[1])))]


def test_timeline_highlights_each_observation_gap(runs, figures):
    ax = figures["timeline"].axes[0]
    yellow = matplotlib.colors.to_rgb(plots.OKABE_ITO["yellow"])
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch() is None
            and matplotlib.colors.to_rgb(p.get_facecolor()) == yellow]
    assert len(bars) == runs["latest"].gaps().height > 0


def test_timeline_highlights_the_silence_of_an_outage_caught_up_by_running_everything_late(calendar_runs):
    # catchup="all" runs every occurrence of the outage, late: still a gap (it used to show none). The
    # daily jobs' one occurrence in the outage ran before their next was due: on time, no gap.
    gaps = calendar_runs["all"].gaps()
    six = gaps.filter(pl.col("schedule_id") == "six-hourly").row(0, named=True)
    assert (six["missed"], six["late"]) == (0, 5) and six["catchup_lateness"] > dt.timedelta(hours=30)
    ax = plots.timeline(calendar_runs["all"]).axes[0]
    yellow = matplotlib.colors.to_rgb(plots.OKABE_ITO["yellow"])
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch() is None
            and matplotlib.colors.to_rgb(p.get_facecolor()) == yellow]
    assert len(bars) == gaps.height == 1


def _shape(collection) -> tuple:
    return tuple(map(tuple, collection.get_paths()[0].vertices.round(3)))


def _collections(ax, prefix: str) -> list:
    return [c for c in ax.collections if isinstance(c, PathCollection) and c.get_label().startswith(prefix)]


def test_timeline_draws_each_state_with_its_own_marker(runs, figures):
    ax = figures["timeline"].axes[0]
    labels = [c.get_label().split(" ")[0] for c in ax.collections if isinstance(c, PathCollection)]
    present = set(runs["latest"].frame["state"].cast(pl.String).unique())
    assert set(labels) == present and {"done", "coalesced"} <= present
    shapes = [_shape(c) for c in ax.collections if isinstance(c, PathCollection)]
    assert len(set(shapes)) == len(shapes)


def test_timeline_marks_every_occurrence_that_has_an_instant(runs, figures):
    ax = figures["timeline"].axes[0]
    drawn = sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
    f = runs["latest"].frame
    has_instant = f.filter(pl.when(pl.col("state") == "done").then(pl.col("started_utc"))
                           .otherwise(pl.col("due_utc")).is_not_null())
    assert drawn == has_instant.height


def test_timeline_marks_late_catchup_runs_apart_from_on_time_runs(runs):
    ax = plots.timeline(runs["all"]).axes[0]
    (on_time,) = _collections(ax, "done on time")
    (late,) = _collections(ax, "done late")
    done = runs["all"].frame.filter(pl.col("state") == "done")
    n_late = done.filter(pl.col("lateness_s") > 60).height
    assert n_late > 100  # the catch-up after the outage, then runs held for budget
    assert (len(late.get_offsets()), len(on_time.get_offsets())) == (n_late, done.height - n_late)
    assert _shape(late) != _shape(on_time)
    assert late.get_offsets()[:, 0].min() >= _num(OUTAGE[1])  # where they started: once the scheduler was back


def test_timeline_counts_a_run_late_only_past_the_scenarios_tick():
    s = calsim.Schedule("q", "UTC", "2026-01-01T00:05", "FREQ=HOURLY")
    world = dict(start="2026-01-01T00:00Z", end="2026-01-01T06:00Z", tick="15min")
    led = calsim.simulate(calsim.Scenario("t", [s], **world))
    assert set(led.frame["lateness_s"].to_list()) == {600.0}  # each run waits for the next quarter hour
    ax = plots.timeline(led).axes[0]
    assert len(_collections(ax, "done on time")[0].get_offsets()) == 6 and not _collections(ax, "done late")
    down = calsim.simulate(calsim.Scenario("t", [s], **world, outages=[calsim.Outage("2026-01-01T01:00Z",
                                                                                       "2026-01-01T03:00Z")]))
    legend = [t.get_text() for t in plots.timeline(down).legends[0].get_texts()]
    assert legend[1].startswith("done late (> 15 min: catch-up or wait)")


def test_timeline_draws_holiday_excluded_and_dst_gap_skipped_occurrences(calendar_runs):
    ax = plots.timeline(calendar_runs["latest"]).axes[0]
    (excluded,) = _collections(ax, "excluded")
    (gap,) = _collections(ax, "skipped in a DST gap")
    # 09:00 in New York (EDT after 2026-03-08) is 13:00 UTC; 02:30 on 2026-03-08 does not exist and is
    # placed with the schedule's offset before the jump (EST): 07:30 UTC.
    assert sorted(excluded.get_offsets()[:, 0]) == pytest.approx([_num("2026-03-10T13:00"), _num("2026-03-11T13:00")])
    assert list(gap.get_offsets()[:, 0]) == pytest.approx([_num("2026-03-08T07:30")])
    rows = [t.get_text().split(" ")[0] for t in ax.get_yticklabels()]
    assert set(excluded.get_offsets()[:, 1]) == {rows.index("hol-0900")}


def test_timeline_places_excluded_occurrences_of_a_frame_without_opening_a_release(calendar_runs):
    frame = calendar_runs["latest"].frame.with_columns(pl.lit("2026f+override").alias("tzdata"))
    ax = plots.timeline(frame).axes[0]  # its own offsets place them: no release to open
    (excluded,) = _collections(ax, "excluded")
    assert sorted(excluded.get_offsets()[:, 0]) == pytest.approx([_num("2026-03-10T13:00"), _num("2026-03-11T13:00")])


def test_timeline_of_several_policies_draws_one_panel_each_with_the_same_schedules(runs):
    fig = plots.timeline(runs, max_schedules=6)
    assert [ax.get_title("left").split(":")[0] for ax in fig.axes] == list(POLICIES)
    rows = [[t.get_text() for t in ax.get_yticklabels()] for ax in fig.axes]
    assert len(rows[0]) == 6 and rows[1] == rows[0] and rows[2] == rows[0]
    assert {ax.get_xlim() for ax in fig.axes} == {fig.axes[0].get_xlim()}
    assert "6 of 19 schedules" in fig.get_suptitle()


def test_timeline_picks_the_same_default_schedules_whatever_the_policy(runs):
    rows = {p: [t.get_text() for t in plots.timeline(runs[p], max_schedules=5).axes[0].get_yticklabels()]
            for p in POLICIES}
    assert rows["all"] == rows["latest"] == rows["skip"]


def test_timeline_caps_rows_at_max_schedules_and_says_so(runs):
    fig = plots.timeline(runs["all"], max_schedules=5)
    ax = fig.axes[0]
    assert len(ax.get_yticklabels()) == 5
    n = runs["all"].frame["schedule_id"].n_unique()
    assert f"5 of {n} schedules" in ax.get_title()


def test_timeline_has_a_hollow_marker_for_every_by_design_reason():
    from calsim.plots.timelines import BY_DESIGN_STYLE
    from calsim.simulation.ledger_schema import BY_DESIGN_REASONS

    assert set(BY_DESIGN_STYLE) == set(BY_DESIGN_REASONS)
    assert len({marker for _, marker in BY_DESIGN_STYLE.values()}) == len(BY_DESIGN_STYLE)


def test_timeline_shows_the_schedules_asked_for_in_order(runs, fleet):
    ids = [fleet[3].id, fleet[0].id]
    ax = plots.timeline(runs["all"], schedules=[fleet[3], fleet[0].id]).axes[0]
    assert [t.get_text().split(" ")[0] for t in ax.get_yticklabels()] == ids


def test_timeline_rejects_an_unknown_schedule_id(runs):
    with pytest.raises(calsim.InputError, match="schedules: .*nope"):
        plots.timeline(runs["all"], schedules=["nope"])


def test_timeline_accepts_a_pandas_ledger_frame(runs):
    fig = plots.timeline(runs["skip"].to_pandas())
    assert fig.axes[0].get_title().startswith("skip:")


def test_timeline_of_a_frame_with_only_the_run_columns_draws_runs_without_gaps(runs):
    # The five columns the chart asks for are enough: gaps need more (reason, lateness...), so none are drawn.
    frame = runs["latest"].frame.select("schedule_id", "due_utc", "started_utc", "state", "kind")
    ax = plots.timeline(frame).axes[0]
    assert _collections(ax, "done on time") and not [p for p in ax.patches if isinstance(p, Rectangle)
                                                      and p.get_hatch() is None]


# ----------------------------------------------------------------------------- state counts


def _bar_totals(ax) -> list[float]:
    totals: dict[float, float] = {}
    for p in ax.patches:
        y = round(p.get_y() + p.get_height() / 2, 6)
        totals[y] = totals.get(y, 0) + p.get_width()
    return [totals[y] for y in sorted(totals)]


def test_state_counts_bars_add_up_to_ledger_rows(runs, figures):
    assert _bar_totals(figures["state_counts"].axes[0]) == [float(runs[p].frame.height) for p in POLICIES]


def test_state_counts_bars_are_the_summary_views_counts_per_state(runs, figures):
    ax = figures["state_counts"].axes[0]
    drawn = {c.get_label(): [p.get_width() for p in c.patches] for c in ax.containers}
    summaries = [runs[p].summary() for p in POLICIES]
    assert drawn == {s: [float(row[s][0]) for row in summaries] for s in drawn}
    assert set(drawn) == {s for s in plots.STATE_STYLE if any(row[s][0] for row in summaries)}  # no empty bars


def test_state_counts_reads_a_ledger_store_compare_frame(runs):
    with calsim.LedgerStore(":memory:") as store:
        for led in runs.values():
            store.write(led)
        table = store.compare(list(POLICIES))
    ax = plots.state_counts(table).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(POLICIES)
    assert _bar_totals(ax) == [float(runs[p].frame.height) for p in POLICIES]


def test_state_counts_splits_one_frame_by_scenario(runs):
    both = pl.concat([runs["all"].frame, runs["skip"].frame])
    ax = plots.state_counts(both).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["all", "skip"]


# ----------------------------------------------------------------------------- cost


def test_cost_impact_draws_the_budget_limit_line(figures):
    ax = figures["cost_impact"].axes[0]
    limits = [ln for ln in ax.lines if "budget limit" in ln.get_label()]
    assert len(limits) == 1 and list(limits[0].get_ydata()) == [70, 70]


def test_cost_impact_bars_add_up_to_the_accounts_cost(runs, figures):
    ax = figures["cost_impact"].axes[0]
    total = sum(p.get_height() for p in ax.containers[0].patches)
    assert total == pytest.approx(runs["all"].frame["cost"].sum())


def test_cost_impact_shows_the_catchup_burst_after_the_outage(unbudgeted):
    ax = plots.cost_impact(unbudgeted).axes[0]
    assert not [ln for ln in ax.lines if "budget limit" in ln.get_label()]
    (note,) = [t for t in ax.texts if t.get_text().startswith("catch-up burst")]
    assert "(all)" in note.get_text()
    assert _num(OUTAGE[0]) < note.xy[0] < _num(OUTAGE[1]) + 1  # the day the scheduler came back


def test_cost_impact_takes_a_number_as_a_daily_limit(unbudgeted):
    ax = plots.cost_impact(unbudgeted, budget=50).axes[0]
    assert [ln.get_ydata()[0] for ln in ax.lines if "budget limit" in ln.get_label()] == [50]


def _limit_lines(ax) -> list:
    return [ln for ln in ax.lines if "budget limit" in ln.get_label()]


@pytest.mark.parametrize("budget", ["scenario", None, 50], ids=["scenario-budget", "none", "number"])
def test_cost_impact_says_vs_budget_only_when_it_draws_the_budget(runs, unbudgeted, budget):
    fig = plots.cost_impact(runs) if budget == "scenario" else plots.cost_impact(unbudgeted, budget=budget)
    ax = fig.axes[0]
    assert ("vs budget" in ax.get_title()) == bool(_limit_lines(ax))
    assert bool(_limit_lines(ax)) == (budget is not None)


def test_cost_impact_without_a_single_budget_says_why_no_line_is_drawn(fleet):
    world = dict(HORIZON, budgets=[calsim.Budget("tenant-000", 70), calsim.Budget("other", 5)])
    led = calsim.simulate(calsim.Scenario("two", calsim.with_policy(fleet[:3], cost=1.0, account="tenant-000"),
                                          **world))
    ax = plots.cost_impact(led).axes[0]
    assert "vs budget" not in ax.get_title() and not _limit_lines(ax)
    assert any("2 budgets; pass budget=" in t.get_text() for t in ax.texts)


def _bars_by_day(fig) -> dict[str, float]:
    """Cost per local day as drawn: ``{YYYY-MM-DD: height}`` over the non-empty bars of every panel."""
    out = {}
    for ax in fig.axes:
        for c in ax.containers:
            for p in c.patches:
                if p.get_height():
                    out[str(mdates.num2date(p.get_x()).date())] = p.get_height()
    return out


def test_cost_impact_bins_by_the_ledgers_own_release_so_a_what_if_moves_the_bins(what_if):
    real, moved = (_bars_by_day(plots.cost_impact(what_if[k])) for k in ("real", "what-if"))
    assert real == {"2026-11-09": 1, "2026-11-10": 1, "2026-11-11": 1, "2026-11-12": 1}  # 23:30 EST
    assert moved == {"2026-11-10": 1, "2026-11-11": 1, "2026-11-12": 1, "2026-11-13": 1}  # 00:30 EDT
    assert "tzdata 2026f+override" in plots.cost_impact(what_if["what-if"]).axes[0].get_xlabel()


def test_cost_impact_never_uses_polars_tz_database(what_if, monkeypatch):
    from polars.expr.datetime import ExprDateTimeNameSpace
    from polars.series.datetime import DateTimeNameSpace

    def refuse(self, zone, *args, **kwargs):
        raise AssertionError(f"polars' bundled tz data used for {zone}")

    for ns in (ExprDateTimeNameSpace, DateTimeNameSpace):
        original = ns.convert_time_zone
        monkeypatch.setattr(ns, "convert_time_zone",
                            lambda self, zone, *a, _o=original, **k: _o(self, zone, *a, **k) if zone == "UTC"
                            else refuse(self, zone))
    ny = calsim.Budget("ny", 5, "day", "America/New_York")
    assert _bars_by_day(plots.cost_impact(what_if["what-if"], budget=ny))


def test_cost_impact_of_a_frame_uses_the_release_its_tzdata_column_names(what_if):
    ny = calsim.Budget("ny", 5, "day", "America/New_York")
    frame = what_if["real"].frame  # no scenario: tzdata says 2026f
    assert _bars_by_day(plots.cost_impact(frame, budget=ny)) == _bars_by_day(plots.cost_impact(what_if["real"]))


def test_cost_impact_of_a_what_if_frame_asks_for_its_release(what_if):
    ny = calsim.Budget("ny", 5, "day", "America/New_York")
    frame = what_if["what-if"].frame
    with pytest.raises(calsim.InputError, match=r"^release: ledger .*2026f\+override.* not available offline"):
        plots.cost_impact(frame, budget=ny)
    rel = calsim.release("2026f").with_override(*WHAT_IF)
    assert _bars_by_day(plots.cost_impact(frame, budget=ny, release=rel)) == \
        _bars_by_day(plots.cost_impact(what_if["what-if"]))


@pytest.fixture(scope="module")
def month_of_five(fleet):
    world = dict(start="2026-03-01T00:00Z", end="2026-04-01T00:00Z", outages=[calsim.Outage(*OUTAGE)],
                 budgets=[calsim.Budget("tenant-000", limit=70, period="day", zone="UTC")])
    policies = {"all": {}, "all-1d": {"catchup": "all", "max_lateness": "1d"}, "latest": {}, "earliest": {}, "skip": {}}
    return {p: calsim.simulate(calsim.Scenario(p, calsim.with_policy(fleet[:6], cost=1.0, account="tenant-000",
                                                                     **(kw or {"catchup": p})), **world))
            for p, kw in policies.items()}


def test_cost_impact_of_a_month_of_five_policies_gives_each_its_own_readable_panel(month_of_five):
    fig = plots.cost_impact(month_of_five)
    assert [ax.get_title("left").split(" (")[0] for ax in fig.axes] == list(month_of_five)
    assert "vs budget" in fig.get_suptitle()
    fig.set_dpi(100)
    fig.canvas.draw()
    for ax, led in zip(fig.axes, month_of_five.values()):
        (bars,) = ax.containers
        assert len(bars.patches) == 31
        assert sum(p.get_height() for p in bars.patches) == pytest.approx(led.frame["cost"].sum())
        assert min(p.get_window_extent().width for p in bars.patches) >= 10  # pixels: a bar, not a hairline
        assert len(_limit_lines(ax)) == 1 and len(_hatched(ax)) == 1
    assert len({ax.get_ylim() for ax in fig.axes}) == 1  # one scale: panels compare at a glance


def _hatched(ax) -> list:
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch() == "//"]


def test_cost_impact_panels_shade_only_their_own_policys_outage(runs, fleet):
    base = calsim.simulate(calsim.Scenario("no-outage", calsim.with_policy(fleet, cost=1.0, account="tenant-000"),
                                           **HORIZON, budgets=[calsim.Budget("tenant-000", 70)]))
    fig = plots.cost_impact([base, *runs.values()])
    assert [len(_hatched(ax)) for ax in fig.axes] == [0, 1, 1, 1]


@pytest.mark.parametrize(("period", "first_day"), [("week", 0), ("month", None)])
def test_cost_impact_bars_start_on_the_local_period_start(runs, period, first_day):
    ax = plots.cost_impact(runs["all"], budget=calsim.Budget("tenant-000", 500, period, "Asia/Tokyo")).axes[0]
    days = [mdates.num2date(p.get_x() - 0.08 * p.get_width() / 0.84) for p in ax.containers[0].patches]
    assert days and all((d.weekday() == 0) if period == "week" else (d.day == 1) for d in days)
    assert sum(p.get_height() for p in ax.containers[0].patches) == pytest.approx(runs["all"].frame["cost"].sum())


def test_cost_impact_of_two_weeks_of_three_policies_stays_grouped_bars(figures):
    assert len(figures["cost_impact"].axes) == 1 and len(figures["cost_impact"].axes[0].containers) == 3


# ----------------------------------------------------------------------------- lateness and waits


def test_lateness_keeps_zero_lateness_visible_on_a_log_axis(runs, figures):
    ax = figures["lateness"].axes[0]
    assert ax.get_xscale() == "symlog" and ax.get_xlim()[0] < 0
    started = runs["latest"].frame.filter(pl.col("started_utc").is_not_null())
    zero_share = (started["lateness_s"] == 0).mean()
    latest = [ln for ln in ax.lines if ln.get_label().startswith("latest")][0]
    x, y = latest.get_data()
    assert y[np.searchsorted(x, 0, side="right") - 1] == pytest.approx(zero_share, abs=1e-9)


def test_lateness_legend_prints_the_summary_views_percentiles(runs, figures):
    # Nearest rank, as Ledger.summary(): 'all' has p50 2 h (np.quantile's linear interpolation said 1.98 h),
    # in the summary's own words (polars' Duration text; zero as 0s).
    labels = {t.get_text().split(" ")[0]: t.get_text() for t in figures["lateness"].axes[0].get_legend().get_texts()}
    for p in POLICIES:
        s = runs[p].summary()
        p50, p95 = (s[c].dt.to_string("polars")[0].replace("0µs", "0s") for c in ("lateness_p50", "lateness_p95"))
        assert f"p50 {p50}, p95 {p95})" in labels[p]
    assert "p50 2h," in labels["all"]


def test_lateness_of_a_frame_without_the_summary_columns_names_them(runs):
    frame = runs["all"].frame.drop("cost", "budget_wait_s")
    with pytest.raises(calsim.InputError, match=r"^ledgers: missing column\(s\) cost, budget_wait_s \(a ledger frame"):
        plots.lateness(frame)


def test_lateness_tick_labels_carry_units(figures):
    labels = [t.get_text() for t in figures["lateness"].axes[0].get_xticklabels()]
    assert "0 s" in labels and "1 h" in labels


def test_budget_waits_bars_count_every_waiting_occurrence(runs, figures):
    ax = figures["budget_waits"].axes[0]
    drawn = {c.get_label().split(":")[0]: sum(b.get_height() for b in c.patches) for c in ax.containers}
    waited = {p: runs[p].frame.filter(pl.col("budget_wait_s") > 0).height for p in POLICIES}
    assert drawn == {p: n for p, n in waited.items() if n} and drawn["all"] > 0


def test_budget_waits_lists_a_policy_that_never_waited_without_a_bar(figures):
    texts = [t.get_text() for t in figures["budget_waits"].legends[0].get_texts()]
    assert texts[1].startswith("latest: 0 of ") and texts[2].startswith("skip: 0 of ")


def test_budget_waits_reads_waits_stored_as_polars_durations(runs, figures):
    frame = runs["all"].frame.with_columns(pl.duration(microseconds=(pl.col("budget_wait_s") * 1e6).round().cast(
        pl.Int64)).alias("budget_wait_s"))
    ax = plots.budget_waits({"all": frame}).axes[0]
    (bars,) = ax.containers
    assert [b.get_height() for b in bars] == [b.get_height() for b in figures["budget_waits"].axes[0].containers[0]]


def test_budget_waits_without_any_wait_says_so_and_draws_no_scale(unbudgeted):
    fig = plots.budget_waits(unbudgeted)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["no occurrence waited for budget"]
    assert list(ax.get_yticks()) == [] and list(ax.get_xticks()) == []  # no negative count ticks
    assert ax.get_ylim() == (0, 1)
    assert [t.get_text().split(":")[0] for t in fig.legends[0].get_texts()] == ["all", "latest"]


# ----------------------------------------------------------------------------- local vs UTC


def test_local_vs_utc_marks_both_dst_edges_of_new_york(figures):
    ax = figures["local_vs_utc"].axes[0]
    edges = [ln for ln in ax.lines if ln.get_linestyle() == ":"]
    assert [t.get_text().strip() for t in ax.texts] == ["UTC−5 → UTC−4", "UTC−4 → UTC−5"]
    assert len(edges) == 2
    utc = [c for c in ax.collections if c.get_label() == "UTC"][0]
    assert sorted(set(np.round(utc.get_offsets()[:, 1], 6))) == [6.5, 7.5]


def test_local_vs_utc_reads_an_occurrence_frame(fleet):
    frame = calsim.expand([NEW_YORK], "2026-01-01T00:00Z", "2027-01-01T00:00Z", "2026f")
    ax = plots.local_vs_utc(frame, start="2026-06-01T00:00Z").axes[0]
    local = [c for c in ax.collections if c.get_label().startswith("local")][0]
    assert len(local.get_offsets()) == frame.filter(
        pl.col("due_utc") >= pl.datetime(2026, 6, 1, time_zone="UTC")).height


def test_local_vs_utc_rejects_a_frame_of_several_schedules(fleet):
    frame = calsim.expand(fleet[:3], "2026-01-01T00:00Z", "2026-02-01T00:00Z")
    with pytest.raises(calsim.InputError, match="frame_or_schedule: the frame holds 3 schedules"):
        plots.local_vs_utc(frame)


# ----------------------------------------------------------------------------- tzdiff


def test_tzdiff_map_colours_shifts_on_a_diverging_map_centred_on_zero(diff, figures):
    fig = figures["tzdiff_map"]
    (points,) = [c for c in fig.axes[0].collections if c.get_array() is not None]
    assert points.get_cmap().name == "PuOr"
    assert points.norm.vmin == -points.norm.vmax
    moved = diff.filter(pl.col("shift_s").is_not_null() & (pl.col("shift_s") != 0))
    assert len(points.get_offsets()) == moved.height
    assert len(fig.axes) == 2  # the colour bar


def test_tzdiff_map_has_one_row_per_affected_schedule_grouped_by_zone(diff, figures):
    labels = [t.get_text() for t in figures["tzdiff_map"].axes[0].get_yticklabels()]
    zones = [lab.split(" · ")[0] for lab in labels]
    assert len(labels) == diff["schedule_id"].n_unique()
    assert zones == sorted(zones, key=zones.index)  # each zone's rows together
    per_zone = [zones.count(z) for z in dict.fromkeys(zones)]
    assert per_zone == sorted(per_zone, reverse=True)  # the zones with the most affected schedules first


def _diff_frame(rows: list[tuple[str, str, int | None, str]]) -> pl.DataFrame:
    """A tzdiff-like frame: (schedule_id, zone, shift_s, change), all on 2026-11-01 01:30."""
    return pl.DataFrame({
        "schedule_id": [r[0] for r in rows], "nominal_local": [dt.datetime(2026, 11, 1, 1, 30)] * len(rows),
        "zone": [r[1] for r in rows], "shift_s": pl.Series([r[2] for r in rows], dtype=pl.Int64),
        "change": [r[3] for r in rows]})


def test_tzdiff_map_picks_rows_across_zones_not_alphabetically():
    rows = [(f"a{i}", "Africa/Casablanca", 3600, "moved") for i in range(6)]
    rows += [("h1", "America/Havana", -3600, "moved"), ("h2", "America/Havana", -3600, "moved"),
             ("v", "America/Vancouver", -3600, "moved")]
    fig = plots.tzdiff_map(_diff_frame(rows), max_schedules=5)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["Africa/Casablanca · a0", "Africa/Casablanca · a1", "America/Havana · h1",
                      "America/Havana · h2", "America/Vancouver · v"]
    assert "5 of 9 schedules, 3 of 3 zones" in fig.axes[0].get_title()


def test_tzdiff_map_draws_a_zero_shift_change_as_a_visible_marker():
    van = calsim.Schedule("van-0130", "America/Vancouver", "2026-01-01T01:30", "FREQ=DAILY")
    d = calsim.tzdiff([van], "2026a", "2026f", "2026-06-01T00:00Z", "2027-06-01T00:00Z")
    assert d.filter(pl.col("change") == "no_longer_fold")["shift_s"].to_list() == [0]
    fig = plots.tzdiff_map(d)
    ax = fig.axes[0]
    (coloured,) = [c for c in ax.collections if c.get_array() is not None]
    assert 0 not in coloured.get_array()  # 0 is the white middle of the scale: invisible
    (hollow,) = [c for c in ax.collections if c.get_array() is None]
    assert list(hollow.get_offsets()[:, 0]) == [_num("2026-11-01T01:30")]
    assert matplotlib.colors.to_hex(hollow.get_edgecolor()[0]) == "#000000"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["no_longer_fold: no shift (1)"]


def test_tzdiff_map_spans_the_window_it_is_given(figures):
    assert figures["tzdiff_map"].axes[0].get_xlim() == pytest.approx((_num(WINDOW[0]), _num(WINDOW[1])))
    assert "window 2025-07-01 – 2027-07-01" in figures["tzdiff_map"].axes[0].get_xlabel()


def test_tzdiff_map_without_a_window_spans_whole_months(diff):
    d = diff.filter(pl.col("schedule_id") == "tenant-000/job-00014")
    lo, hi = plots.tzdiff_map(d).axes[0].get_xlim()
    first, last = d["nominal_local"].min(), d["nominal_local"].max()
    assert lo == _num(f"{first:%Y-%m}-01T00:00") and mdates.num2date(hi).day == 1 and hi > _num(f"{last:%Y-%m-%d}")


def test_tzdiff_map_colour_bar_ticks_are_round_durations(diff):
    big = pl.concat([diff.with_columns(pl.col("schedule_id") + f"-{i}") for i in range(6)])  # a tall figure
    for frame in (diff, big, _diff_frame([("x", "Asia/Tehran", 2400, "moved"), ("y", "UTC", -600, "moved")])):
        fig = plots.tzdiff_map(frame)
        cbar = fig.axes[1]
        labels = [t.get_text() for t in cbar.get_yticklabels()]
        minutes = [float(lab[1:].split()[0]) * (60 if lab.endswith(" h") else 1) for lab in labels if lab != "0"]
        assert "0" in labels and all(m % 15 == 0 or m in (5, 10) for m in minutes), labels
        (points,) = [c for c in fig.axes[0].collections if c.get_array() is not None]
        assert points.norm.vmax == max(cbar.get_yticks())  # the ends of the bar are ticks


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1, max_value=30 * 86400))
def test_shift_ticks_are_round_symmetric_and_cover_the_largest_shift(half):
    from calsim.plots.style import shift_ticks

    limit, ticks = shift_ticks(half)
    step = ticks[1] - ticks[0]
    assert limit >= half and ticks[-1] == limit and list(ticks) == list(-ticks[::-1]) and 0 in ticks
    assert 3 <= len(ticks) <= 7
    assert step % 60 == 0 and (86400 % step == 0 or step % 86400 == 0)


def test_tzdiff_map_of_an_empty_diff_says_no_changes(diff, tmp_path):
    fig = plots.tzdiff_map(diff.head(0))
    assert fig.axes[0].texts[0].get_text().startswith("no changes")
    fig.savefig(tmp_path / "empty.png")


def test_tzdiff_map_draws_changes_without_a_shift_as_black_markers():
    frame = pl.DataFrame({
        "schedule_id": ["n", "n"], "nominal_local": [dt.datetime(2026, 3, 8, 2, 30), dt.datetime(2026, 3, 9, 2, 30)],
        "zone": ["America/New_York"] * 2, "shift_s": pl.Series([None, 3600], dtype=pl.Int64),
        "change": ["now_gap", "moved"]})
    fig = plots.tzdiff_map(frame)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["now_gap: one side has no instant (1)"]


def test_tzdiff_map_rejects_a_window_that_ends_before_it_starts(diff):
    with pytest.raises(calsim.InputError, match="^end: .* is not after start"):
        plots.tzdiff_map(diff, start=WINDOW[1], end=WINDOW[0])


# ----------------------------------------------------------------------------- bad input

BAD_TYPE = [
    (plots.timeline, "ledger"), (plots.state_counts, "ledgers"), (plots.cost_impact, "ledgers"),
    (plots.lateness, "ledgers"), (plots.budget_waits, "ledgers"), (plots.local_vs_utc, "frame_or_schedule"),
    (plots.tzdiff_map, "diff"),
]


@pytest.mark.parametrize(("chart", "arg"), BAD_TYPE, ids=[c.__name__ for c, _ in BAD_TYPE])
def test_a_wrong_type_raises_input_error_naming_the_argument(chart, arg):
    with pytest.raises(calsim.InputError, match=rf"^{arg}: expected .*got int 42"):
        chart(42)


@pytest.mark.parametrize(("chart", "arg"), BAD_TYPE, ids=[c.__name__ for c, _ in BAD_TYPE])
def test_a_frame_missing_columns_raises_input_error_naming_them(chart, arg):
    with pytest.raises(calsim.InputError, match=rf"^{arg}: missing column\(s\) .*schedule_id.* needs "):
        chart(pl.DataFrame({"x": [1]}))


def test_an_empty_list_of_ledgers_is_an_input_error():
    with pytest.raises(calsim.InputError, match="ledgers: expected at least one ledger"):
        plots.lateness([])


def test_a_bad_budget_is_an_input_error(runs):
    with pytest.raises(calsim.InputError, match="budget: expected a calsim.Budget"):
        plots.cost_impact(runs, budget="lots")


def test_release_with_a_frame_is_an_input_error(fleet):
    frame = calsim.expand([NEW_YORK], "2026-01-01T00:00Z", "2026-02-01T00:00Z")
    with pytest.raises(calsim.InputError, match="release: "):
        plots.local_vs_utc(frame, release="2026f")


def test_no_submodule_of_calsim_plots_shadows_a_chart():
    # A module named like its chart (plots/timeline.py) would make calsim.plots.timeline the module or the
    # function depending on import order; the package's modules are named after chart families.
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(plots.__path__):
        importlib.import_module(f"calsim.plots.{info.name}")
        assert info.name not in plots.__all__
    assert all(callable(getattr(plots, name)) for name in plots.__all__ if name.islower())


def test_figures_show_in_jupyter_without_pyplot(figures):
    assert figures["state_counts"]._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"
