"""Charts of worker-level delivery: waits for rate-limit tokens, duplicate effects and data windows.

Both draw the ledger's views (:mod:`calsim.simulation.views`), so a chart
never says another number than the ledger: :func:`rate_waits` prints
:meth:`Ledger.summary`'s ``rate_waits`` and ``rate_wait_max`` and draws
exactly the runs that count (``rate_wait_s`` > 0); the bars of
:func:`delivery_outcomes` are the summary's ``duplicate_effects`` and the sums
over schedules of :meth:`Ledger.coverage`'s ``never``, ``late`` and ``twice``.
What the charts compute themselves is where to draw: a run's wait at its start.

A ledger that was not simulated at worker level (no workers, crashes, rate
limits...) has these columns null: its runs waited for no token and each
took effect once, which is what the charts show. A frame that lacks the
columns (written before calsim had them) is refused with an
:class:`~calsim.InputError` naming them.

The chart of duplicates and windows is not named ``delivery``, as this module
is: a submodule would shadow a function of the same name on ``calsim.plots``
(see the package docstring).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from ..simulation.faults import WorkerCrash
from ..simulation.ledger import Ledger
from ..simulation.views import CLASSIFIED_COLUMNS
from . import inputs
from .outcomes import SUMMARY_COLUMNS
from .style import (OKABE_ITO, Figure, date_axis, date_num, duration_label, legend_below, new_figure, series_style,
                    shade_outages, us_num)

__all__ = ["rate_waits", "delivery_outcomes", "WORKER_SUMMARY_COLUMNS", "WORKER_COVERAGE_COLUMNS", "DELIVERY_BARS"]

#: The ledger columns :meth:`Ledger.summary` reads, worker-level ones included.
WORKER_SUMMARY_COLUMNS = (*SUMMARY_COLUMNS, "reason", "effects", "rate_wait_s")
#: The ledger columns :meth:`Ledger.coverage` reads (data windows and effects).
WORKER_COVERAGE_COLUMNS = (*CLASSIFIED_COLUMNS, "window_start_utc", "window_end_utc", "effects")
#: The bars of :func:`delivery_outcomes`, in order: (view column, legend label, colour).
DELIVERY_BARS = (
    ("duplicate_effects", "duplicate effects (summary)", OKABE_ITO["reddish_purple"]),
    ("never", "windows never processed", OKABE_ITO["vermillion"]),
    ("late", "windows processed late", OKABE_ITO["orange"]),
    ("twice", "windows processed twice", OKABE_ITO["blue"]),
)
_WHAT = "worker-level ledger frame"


def _seconds(value) -> float:
    """A summary Duration (a ``timedelta`` or None) in seconds; None -> nan."""
    return float("nan") if value is None else value.total_seconds()


def _crashes(leds: list[Ledger]) -> list[int]:
    """The instants (µs) of the scenarios' :class:`WorkerCrash` events (random crash rates are not drawn)."""
    return sorted({ev.at_us for led in leds for ev in getattr(led.scenario, "events", ()) or ()
                   if isinstance(ev, WorkerCrash)})


def rate_waits(ledgers: object) -> Figure:
    """How long runs waited for a rate-limit token (``rate_wait_s`` > 0), per policy: over time and as a CDF.

    Left: each run that waited, at its start (UTC), against its wait, with
    the scenarios' outages shaded and their :class:`~calsim.WorkerCrash`
    instants marked, so a catch-up burst draining through a token bucket
    shows as a ramp. Right: the cumulative distribution of those waits. The
    legend's counts and maxima are :meth:`Ledger.summary`'s ``rate_waits``
    and ``rate_wait_max``. A run's wait is its attempts' together (a retry
    takes a token too). When nothing waited, the chart says so.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> s = [calsim.Schedule(f"d{i}", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
    ...                      policy=calsim.Policy(rate_limit="crm")) for i in range(4)]
    >>> sc = calsim.Scenario("limited", s, "2026-01-01T00:00Z", "2026-01-01T03:00Z",
    ...                      rate_limits=[calsim.RateLimit("crm", rate="1/min", burst=2)])
    >>> fig = calsim.plots.rate_waits(calsim.simulate(sc))
    >>> fig.axes[0].get_title(), fig.legends[0].texts[0].get_text()
    ('Waits for a rate-limit token, at the run’s start', 'limited: 6 of 12 runs waited, max 2 min')
    """
    leds = inputs.ledgers(ledgers)
    fig = new_figure(11, 4.8)
    strip, cdf = fig.subplots(1, 2, width_ratios=(3, 2), sharey=False)
    handles: list = []
    high = 0.0
    for i, led in enumerate(leds):
        f = inputs.frame(led.frame, "ledgers", WORKER_SUMMARY_COLUMNS, _WHAT)
        summary = led.summary()
        n, top = int(summary["rate_waits"][0]), _seconds(summary["rate_wait_max"][0])
        waited = f.filter(pl.col("rate_wait_s") > 0)
        style = series_style(i)
        scheduled = int((f["kind"] == "scheduled").sum())
        if f["rate_wait_s"].null_count() == f.height:
            label = f"{led.name}: no rate limit (not simulated at worker level)"
        elif n:
            label = f"{led.name}: {n} of {scheduled} runs waited, max {duration_label(top)}"
        else:
            label = f"{led.name}: no run waited"
        handles.append(Line2D([], [], color=style["color"], ls=style["ls"], marker="o", ms=4, label=label))
        if not n:
            continue
        w = waited["rate_wait_s"].to_numpy().astype(float)
        high = max(high, float(w.max()))
        strip.scatter(date_num(waited["started_utc"]), w, s=14, color=style["color"], alpha=0.8, lw=0,
                      marker="os^Dv<>p"[i % 8], zorder=3)
        cdf.ecdf(w, lw=1.8, **style)
    strip.set_title("Waits for a rate-limit token, at the run’s start")
    cdf.set_title("Waits for a token (cumulative)")
    if not high:
        for ax in (strip, cdf):
            ax.set_xticks([])
            ax.set_yticks([])
        strip.text(0.5, 0.5, "no run waited for a rate-limit token", ha="center", va="center",
                   transform=strip.transAxes)
        legend_below(fig, handles, ncols=2)
        return fig
    # Outages and crashes: why the burst came, and what it ran into.
    spans = sorted({(o.start_us, o.end_us) for led in leds for o in getattr(led.scenario, "outages", ()) or ()})
    handles += shade_outages(strip, spans)
    crashes = _crashes(leds)
    for at in crashes:
        strip.axvline(us_num(at), color=OKABE_ITO["black"], ls=":", lw=1.2, zorder=2)
    if crashes:
        handles.append(Line2D([], [], color=OKABE_ITO["black"], ls=":", lw=1.2, label="worker crash"))
    if spans:  # the outage alone would stretch the axis over the quiet hours before it: start near the burst
        lo, hi = strip.get_xlim()
        strip.set_xlim(max(lo, us_num(spans[0][0]) - (hi - lo) * 0.02), hi)
    date_axis(strip)
    strip.set_xlabel("start of the run (UTC)")
    duration = FuncFormatter(lambda x, _: duration_label(x))
    strip.yaxis.set_major_formatter(duration)
    strip.set_ylabel("wait for its token(s)")
    strip.set_ylim(0, high * 1.08)
    cdf.set_xlim(0, high * 1.08)
    cdf.xaxis.set_major_formatter(duration)
    cdf.xaxis.set_major_locator(MaxNLocator(5))
    cdf.set_xlabel("wait for its token(s)")
    cdf.set_ylabel("fraction of the runs that waited")
    for ax in (strip, cdf):
        ax.grid(color="#dddddd", lw=0.6)
        ax.set_axisbelow(True)
    legend_below(fig, handles, ncols=2)
    return fig


def delivery_outcomes(ledgers: object, *, late_after: object = None) -> Figure:
    """Per policy, grouped bars: duplicate effects, and data windows never, late and twice processed.

    ``duplicate effects`` is :meth:`Ledger.summary`'s ``duplicate_effects``
    (effects beyond a run's first: a crash between effect and
    acknowledgement, or a second scheduler, where the sink is not
    idempotent); the windows are :meth:`Ledger.coverage`'s ``never``,
    ``late`` and ``twice`` summed over schedules (each occurrence owns one
    window; one duplicated catch-up run covering four windows makes one
    duplicate effect and four windows processed twice). Each bar carries its
    count, zeros included: an empty bar is an answer too. ``late_after`` is
    passed to :meth:`Ledger.coverage`.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
    ...                     policy=calsim.Policy(duration="2min", covers="own_window"))
    >>> sc = calsim.Scenario("twice", [s], "2026-01-01T00:00Z", "2026-01-01T03:00Z", schedulers=2, dedupe="none")
    >>> fig = calsim.plots.delivery_outcomes(calsim.simulate(sc))
    >>> {c.get_label(): [int(b.get_height()) for b in c] for c in fig.axes[0].containers}
    {'duplicate effects (summary)': [3], 'windows never processed': [0], 'windows processed late': [0], 'windows processed twice': [3]}
    """
    leds = inputs.ledgers(ledgers)
    values = np.zeros((len(DELIVERY_BARS), len(leds)))
    windows = []
    for k, led in enumerate(leds):
        inputs.frame(led.frame, "ledgers", tuple(dict.fromkeys(WORKER_SUMMARY_COLUMNS + WORKER_COVERAGE_COLUMNS)),
                     _WHAT)
        cov = led.coverage(late_after=late_after).select(pl.col("occurrences", "never", "late", "twice").sum())
        values[0, k] = led.summary()["duplicate_effects"][0]
        values[1:, k] = [cov[c][0] for c in ("never", "late", "twice")]
        windows.append(int(cov["occurrences"][0]))
    fig = new_figure(max(7.0, 3.0 + 1.7 * len(leds)), 4.8)
    ax = fig.add_subplot()
    x = np.arange(len(leds))
    width = 0.8 / len(DELIVERY_BARS)
    for b, (_, label, color) in enumerate(DELIVERY_BARS):
        bars = ax.bar(x + (b - (len(DELIVERY_BARS) - 1) / 2) * width, values[b], width, color=color, label=label)
        ax.bar_label(bars, labels=[f"{int(v)}" for v in values[b]], fontsize=8, padding=1)
    ax.set_xticks(x, [f"{led.name}\n({n} windows)" for led, n in zip(leds, windows)], fontsize=9)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, max(1.0, values.max()) * 1.15)  # room for the counts; all zero: still an axis from 0
    ax.set_ylabel("effects / data windows")
    ax.set_title("Delivery per policy: duplicate effects, and data windows not processed once on time")
    ax.grid(axis="y", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    legend_below(fig, [Patch(color=c, label=lab) for _, lab, c in DELIVERY_BARS], ncols=4)
    return fig
