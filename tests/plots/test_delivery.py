"""calsim.plots.rate_waits and delivery_outcomes: worker-level charts drawn from real ledgers, with the
views' numbers."""

from __future__ import annotations

import dataclasses

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import calsim  # noqa: E402
import calsim.plots as plots  # noqa: E402
from calsim.plots.delivery import DELIVERY_BARS  # noqa: E402
from calsim.plots.style import date_num, us_num  # noqa: E402

START, END = "2026-06-01T06:00Z", "2026-06-01T18:00Z"
OUTAGE = calsim.Outage("2026-06-01T09:10Z", "2026-06-01T12:00Z")
CRASH = "2026-06-01T12:00:20Z"
#: A digest job's run: 30 s, its send halfway, acknowledged 30 s after it ends (a crash in between repeats it).
RUN = dict(duration="30s", effect_at=0.5, ack_delay="30s", cost=1.0)
POLICIES = {
    "plain": dict(catchup="all", covers="own_window"),
    "idempotent+limit": dict(catchup="all", covers="own_window", idempotent=True, rate_limit="crm"),
    "latest-own": dict(catchup="latest", covers="own_window", idempotent=True, rate_limit="crm"),
    "latest-since": dict(catchup="latest", covers="since_last_success", idempotent=True, rate_limit="crm"),
}


def _fleet(n: int = 6) -> list:
    return [calsim.Schedule(f"digest/{i}", "UTC", f"2026-06-01T06:{5 * i:02d}", "FREQ=HOURLY",
                            policy=calsim.Policy(**RUN)) for i in range(n)]


def _world(fleet, *, crash_at=CRASH, crashed=3, workers=6, name="base"):
    return calsim.Scenario(name, fleet, START, END, release="2026f", outages=[OUTAGE],
                           events=[calsim.WorkerCrash(crash_at, workers=crashed, down_for="10min")],
                           workers=calsim.Workers(workers, lease="10min", heartbeat="30s"),
                           rate_limits=[calsim.RateLimit("crm", rate="6/min", burst=2)],
                           failures=calsim.Failures(0.0, max_attempts=3))


@pytest.fixture(scope="module")
def ledgers():
    """The four policies of notebook 05, small: six hourly digests, an outage, a crash in the catch-up burst."""
    fleet, world = _fleet(), _world(_fleet())
    return {name: calsim.simulate(dataclasses.replace(world, name=name, schedules=calsim.with_policy(fleet, **kw)),
                                  progress=False)
            for name, kw in POLICIES.items()}


@pytest.fixture(scope="module")
def column_path():
    """The same outage without any worker-level feature: the worker-level columns are null."""
    fleet = calsim.with_policy(_fleet(), catchup="latest", duration="30s")
    return calsim.simulate(calsim.Scenario("no-workers", fleet, START, END, release="2026f", outages=[OUTAGE]),
                           progress=False)


def _bars(fig) -> dict[str, list[float]]:
    return {c.get_label(): [float(b.get_height()) for b in c] for c in fig.axes[0].containers}


def _legend(fig) -> list[str]:
    return [t.get_text() for t in fig.legends[0].texts]


def _expected_bars(leds) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {label: [] for _, label, _ in DELIVERY_BARS}
    for led in leds:
        cov = led.coverage().select(pl.col("never", "late", "twice").sum())
        values = {"duplicate_effects": led.summary()["duplicate_effects"][0], **cov.row(0, named=True)}
        for column, label, _ in DELIVERY_BARS:
            out[label].append(float(values[column]))
    return out


# -- rate_waits ------------------------------------------------------------------------------------------------


def test_rate_waits_returns_a_strip_over_time_and_a_cdf_of_the_waits(ledgers):
    fig = plots.rate_waits(ledgers)
    assert isinstance(fig, Figure)
    strip, cdf = fig.axes
    assert strip.get_title() == "Waits for a rate-limit token, at the run’s start"
    assert strip.get_xlabel() == "start of the run (UTC)" and cdf.get_ylabel() == "fraction of the runs that waited"
    assert fig._repr_png_()[:4] == b"\x89PNG"


def test_rate_waits_draws_each_run_that_waited_at_its_start_and_wait(ledgers):
    fig = plots.rate_waits(ledgers)
    points = [c for c in fig.axes[0].collections if isinstance(c, PathCollection)]
    waited = [led for led in ledgers.values() if led.summary()["rate_waits"][0] > 0]
    assert len(points) == len(waited) == 3  # the three policies with the crm limit
    for dots, led in zip(points, waited):
        rows = led.frame.filter(pl.col("rate_wait_s") > 0)
        assert len(dots.get_offsets()) == led.summary()["rate_waits"][0] == rows.height
        np.testing.assert_allclose(dots.get_offsets()[:, 0], date_num(rows["started_utc"]))
        np.testing.assert_allclose(dots.get_offsets()[:, 1], rows["rate_wait_s"].to_numpy())


def test_rate_waits_legend_prints_the_summary_count_and_max(ledgers):
    legend = _legend(plots.rate_waits(ledgers))
    for led in ledgers.values():
        s = led.summary()
        if s["rate_waits"][0]:
            top = s["rate_wait_max"].dt.to_string("polars")[0]  # the summary's own words, as polars prints them
            assert f"{led.name}: {s['rate_waits'][0]} of {s['occurrences'][0]} runs waited, max {top}" in legend
        else:
            assert f"{led.name}: no run waited" in legend


def test_rate_waits_cdf_of_each_policy_reaches_its_summary_max(ledgers):
    fig = plots.rate_waits(ledgers)
    lines = fig.axes[1].get_lines()
    tops = [led.summary()["rate_wait_max"][0].total_seconds() for led in ledgers.values()
            if led.summary()["rate_waits"][0]]
    assert [float(np.nanmax(np.where(np.isfinite(ln.get_xdata()), ln.get_xdata(), np.nan))) for ln in lines] \
        == pytest.approx(tops)


def test_rate_waits_marks_the_worker_crash_that_falls_in_the_burst(ledgers):
    fig = plots.rate_waits(ledgers)
    strip = fig.axes[0]
    crash = us_num(calsim.WorkerCrash(CRASH).at_us)
    assert any(list(ln.get_xdata()) == [crash, crash] for ln in strip.get_lines())
    assert "worker crash" in _legend(fig)
    lo, hi = strip.get_xlim()
    assert lo <= crash <= hi and hi - lo < 1 / 24  # the burst's minutes, not the outage's hours


def test_rate_waits_says_so_when_no_run_waited(ledgers, column_path):
    fig = plots.rate_waits({"plain": ledgers["plain"], "no-workers": column_path})
    assert "no run waited for a rate-limit token" in [t.get_text() for t in fig.axes[0].texts]
    assert _legend(fig) == ["plain: no run waited", "no-workers: no rate limit (not simulated at worker level)"]


# -- delivery_outcomes ---------------------------------------------------------------------------------------------


def test_delivery_outcomes_bars_are_the_summary_duplicates_and_the_coverage_sums(ledgers):
    fig = plots.delivery_outcomes(ledgers)
    assert _bars(fig) == _expected_bars(ledgers.values())
    # The scenario is built so that each bar has something to show somewhere.
    assert all(any(v) for v in _bars(fig).values())


def test_delivery_outcomes_labels_each_bar_with_its_count_zeros_included(ledgers):
    fig = plots.delivery_outcomes(ledgers)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    assert labels == [f"{int(v)}" for c in ax.containers for v in (b.get_height() for b in c)]
    assert "0" in labels
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"{n}\n(72 windows)" for n in ledgers]


def test_delivery_outcomes_of_a_frame_of_several_scenarios_equals_the_ledgers(ledgers):
    frame = pl.concat([led.frame for led in ledgers.values()])
    assert _bars(plots.delivery_outcomes(frame)) == _bars(plots.delivery_outcomes(ledgers))


def test_delivery_outcomes_passes_late_after_to_coverage(ledgers):
    led = ledgers["idempotent+limit"]
    fig = plots.delivery_outcomes(led, late_after="1min")
    late = led.coverage(late_after="1min")["late"].sum()
    assert _bars(fig)["windows processed late"] == [float(late)]
    assert late > led.coverage()["late"].sum()  # waits of a minute or more make more windows late


def test_delivery_outcomes_counts_a_column_path_ledger_as_one_effect_per_run(column_path):
    fig = plots.delivery_outcomes(column_path)
    cov = column_path.coverage()
    assert _bars(fig) == {"duplicate effects (summary)": [0.0], "windows never processed": [float(cov["never"].sum())],
                          "windows processed late": [float(cov["late"].sum())], "windows processed twice": [0.0]}
    assert cov["never"].sum() > 0  # latest coalesced the outage's windows


# -- refusals and registration -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("chart", "dropped"), [
    (plots.rate_waits, "effects"), (plots.rate_waits, "rate_wait_s"),
    (plots.delivery_outcomes, "effects"), (plots.delivery_outcomes, "rate_wait_s"),
    (plots.delivery_outcomes, "window_end_utc"),  # rate_waits reads no data window
], ids=lambda v: getattr(v, "__name__", v))
def test_charts_refuse_a_frame_without_worker_level_columns(ledgers, chart, dropped):
    old = ledgers["plain"].frame.drop(dropped)  # as a frame written before calsim had the column
    with pytest.raises(calsim.InputError, match=f"ledgers: missing column\\(s\\) {dropped} \\(a worker-level ledger "
                                                 "frame needs ") as exc:
        chart(old)
    assert isinstance(exc.value, calsim.CalsimError) and "\n" not in str(exc.value)


def test_charts_refuse_something_that_is_not_a_ledger():
    with pytest.raises(calsim.InputError, match="ledgers: expected a Ledger"):
        plots.delivery_outcomes(42)
    with pytest.raises(calsim.InputError, match="ledgers: expected at least one ledger"):
        plots.rate_waits([])


def test_both_charts_are_exported_and_listed_in_the_package_table():
    for name in ("rate_waits", "delivery_outcomes"):
        assert name in plots.__all__ and callable(getattr(plots, name))
        assert f":func:`{name}`" in plots.__doc__
    # The module is named after the family, not after a chart: importing it by path shadows no function.
    assert plots.rate_waits.__module__ == plots.delivery_outcomes.__module__ == "calsim.plots.delivery"


# -- properties ----------------------------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(crash_s=st.integers(0, 240), crashed=st.integers(1, 4), workers=st.integers(4, 8),
       policy=st.sampled_from(sorted(POLICIES)))
def test_charts_say_the_views_numbers_wherever_the_crash_falls(crash_s, crashed, workers, policy):
    fleet = calsim.with_policy(_fleet(4), **POLICIES[policy])
    crash = np.datetime64("2026-06-01T12:00:00") + np.timedelta64(crash_s, "s")
    led = calsim.simulate(_world(fleet, crash_at=f"{crash}Z", crashed=crashed, workers=workers, name=policy),
                          progress=False)
    assert _bars(plots.delivery_outcomes(led)) == _expected_bars([led])
    fig = plots.rate_waits(led)
    drawn = sum(len(c.get_offsets()) for c in fig.axes[0].collections if isinstance(c, PathCollection))
    assert drawn == led.summary()["rate_waits"][0]
