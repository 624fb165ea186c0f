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


@pytest.fixture(scope="module")
def diff(fleet):
    return calsim.tzdiff(fleet, "2022e", "2026f", "2025-07-01T00:00Z", "2027-07-01T00:00Z")


NEW_YORK = calsim.Schedule("nightly", "America/New_York", "2026-01-01T02:30", "FREQ=DAILY")

CHARTS = {
    "timeline": lambda r, d: plots.timeline(r["latest"]),
    "state_counts": lambda r, d: plots.state_counts(r),
    "cost_impact": lambda r, d: plots.cost_impact(r),
    "lateness": lambda r, d: plots.lateness(r),
    "budget_waits": lambda r, d: plots.budget_waits(r),
    "local_vs_utc": lambda r, d: plots.local_vs_utc(NEW_YORK, release="2026f"),
    "tzdiff_map": lambda r, d: plots.tzdiff_map(d),
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


def test_timeline_draws_each_state_with_its_own_marker(runs, figures):
    ax = figures["timeline"].axes[0]
    labels = [c.get_label().split(" ")[0] for c in ax.collections if isinstance(c, PathCollection)]
    present = set(runs["latest"].frame["state"].cast(pl.String).unique())
    assert set(labels) == present and {"done", "coalesced"} <= present


def test_timeline_marks_every_occurrence_that_has_an_instant(runs, figures):
    ax = figures["timeline"].axes[0]
    drawn = sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
    f = runs["latest"].frame
    has_instant = f.filter(pl.when(pl.col("state") == "done").then(pl.col("started_utc"))
                           .otherwise(pl.col("due_utc")).is_not_null())
    assert drawn == has_instant.height


def test_timeline_caps_rows_at_max_schedules_and_says_so(runs):
    fig = plots.timeline(runs["all"], max_schedules=5)
    ax = fig.axes[0]
    assert len(ax.get_yticklabels()) == 5
    n = runs["all"].frame["schedule_id"].n_unique()
    assert f"5 of {n} schedules" in ax.get_title()


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


# ----------------------------------------------------------------------------- state counts


def _bar_totals(ax) -> list[float]:
    totals: dict[float, float] = {}
    for p in ax.patches:
        y = round(p.get_y() + p.get_height() / 2, 6)
        totals[y] = totals.get(y, 0) + p.get_width()
    return [totals[y] for y in sorted(totals)]


def test_state_counts_bars_add_up_to_ledger_rows(runs, figures):
    assert _bar_totals(figures["state_counts"].axes[0]) == [float(runs[p].frame.height) for p in POLICIES]


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


# ----------------------------------------------------------------------------- lateness and waits


def test_lateness_keeps_zero_lateness_visible_on_a_log_axis(runs, figures):
    ax = figures["lateness"].axes[0]
    assert ax.get_xscale() == "symlog" and ax.get_xlim()[0] < 0
    started = runs["latest"].frame.filter(pl.col("started_utc").is_not_null())
    zero_share = (started["lateness_s"] == 0).mean()
    latest = [ln for ln in ax.lines if ln.get_label().startswith("latest")][0]
    x, y = latest.get_data()
    assert y[np.searchsorted(x, 0, side="right") - 1] == pytest.approx(zero_share, abs=1e-9)


def test_lateness_tick_labels_carry_units(figures):
    labels = [t.get_text() for t in figures["lateness"].axes[0].get_xticklabels()]
    assert "0 s" in labels and "1 h" in labels


def test_budget_waits_bars_count_every_waiting_occurrence(runs, figures):
    ax = figures["budget_waits"].axes[0]
    for container, p in zip(ax.containers, POLICIES):
        waited = runs[p].frame.filter(pl.col("budget_wait_s") > 0).height
        assert sum(b.get_height() for b in container.patches) == waited


def test_budget_waits_without_any_wait_says_so(unbudgeted):
    ax = plots.budget_waits(unbudgeted).axes[0]
    assert [t.get_text() for t in ax.texts] == ["no occurrence waited for budget"]
    assert ax.get_legend() is not None


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
    assert len(local.get_offsets()) == frame.filter(pl.col("due_utc") >= pl.datetime(2026, 6, 1, time_zone="UTC")).height


def test_local_vs_utc_rejects_a_frame_of_several_schedules(fleet):
    frame = calsim.expand(fleet[:3], "2026-01-01T00:00Z", "2026-02-01T00:00Z")
    with pytest.raises(calsim.InputError, match="frame_or_schedule: the frame holds 3 schedules"):
        plots.local_vs_utc(frame)


# ----------------------------------------------------------------------------- tzdiff


def test_tzdiff_map_colours_shifts_on_a_diverging_map_centred_on_zero(diff, figures):
    fig = figures["tzdiff_map"]
    (points,) = [c for c in fig.axes[0].collections if c.get_array() is not None]
    assert points.get_cmap().name == "PuOr"
    assert points.norm.vcenter == 0
    assert len(points.get_offsets()) == diff.filter(pl.col("shift_s").is_not_null()).height
    assert len(fig.axes) == 2  # the colour bar


def test_tzdiff_map_has_one_row_per_affected_schedule_grouped_by_zone(diff, figures):
    labels = [t.get_text() for t in figures["tzdiff_map"].axes[0].get_yticklabels()]
    zones = [lab.split(" · ")[0] for lab in labels]
    assert len(labels) == diff["schedule_id"].n_unique() and zones == sorted(zones)


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
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["now_gap (1)"]


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


def test_figures_show_in_jupyter_without_pyplot(figures):
    assert figures["state_counts"]._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"
