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

import math

import numpy as np
import polars as pl
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator

from ..simulation.faults import WorkerCrash
from ..simulation.ledger import Ledger
from ..simulation.views import CLASSIFIED_COLUMNS
import calsim.plots.inputs as inputs
from .outcomes import SUMMARY_COLUMNS
from .style import (OKABE_ITO, Figure, date_axis, date_num, duration_label, duration_words, legend_below, new_figure,
                    series_style, shade_outages, us_num)

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


def _crashes(leds: list[Ledger]) -> list[int]:
    """The instants (µs) of the scenarios' :class:`WorkerCrash` events (random crash rates are not drawn)."""
    return sorted({ev.at_us for led in leds for ev in getattr(led.scenario, "events", ()) or ()
                   if isinstance(ev, WorkerCrash)})


_MARKERS = "osD^v<>p"
#: Round steps for a linear duration axis (seconds): ticks read "30 s", "1 min", "1.5 min", never "1.33 min".
_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400)


def _duration_axis(axis, high: float) -> None:
    """Ticks at a round duration step (at most six of them up to ``high`` seconds), labelled as durations."""
    step = next((s for s in _STEPS if high / s <= 6), 86400 * math.ceil(high / 86400 / 6))
    axis.set_major_locator(MultipleLocator(step))
    axis.set_major_formatter(FuncFormatter(lambda v, _: duration_label(v)))


def rate_waits(ledgers: object) -> Figure:
    """How long runs waited for a rate-limit token (``rate_wait_s`` > 0), per policy: over time and as a CDF.

    Left: each run that waited, at its start (UTC), against its wait, with
    the scenarios' outages shaded and their :class:`~calsim.WorkerCrash`
    instants marked, so a catch-up burst draining through a token bucket
    shows as a ramp. Right: the cumulative distribution of those waits. The
    legend's counts and maxima are :meth:`Ledger.summary`'s ``rate_waits``
    and ``rate_wait_max``. A run's wait is its attempts' together (a retry
    takes a token too), the maximum in the summary's words (``2m 30s``,
    :func:`~.style.duration_words`). When nothing waited, the chart says so.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> s = [calsim.Schedule(f"d{i}", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
    ...                      policy=calsim.Policy(rate_limit="crm")) for i in range(4)]
    >>> sc = calsim.Scenario("limited", s, "2026-01-01T00:00Z", "2026-01-01T03:00Z",
    ...                      rate_limits=[calsim.RateLimit("crm", rate="1/min", burst=2)])
    >>> fig = calsim.plots.rate_waits(calsim.simulate(sc))
    >>> fig.axes[0].get_title(), fig.legends[0].texts[0].get_text()
    ('Waits for a rate-limit token, at the run’s start', 'limited: 6 of 12 runs waited, max 2m')
    """
    leds = inputs.ledgers(ledgers)
    fig = new_figure(11, 4.8)
    strip, cdf = fig.subplots(1, 2, width_ratios=(3, 2))
    handles: list = []
    high, starts = 0.0, []
    for i, led in enumerate(leds):
        f = inputs.frame(led.frame, "ledgers", WORKER_SUMMARY_COLUMNS, _WHAT)
        summary = led.summary(full=True)
        n, top = int(summary["rate_waits"][0]), summary["rate_wait_max"][0]
        style, marker = series_style(i), _MARKERS[i % len(_MARKERS)]
        if f["rate_wait_s"].null_count() == f.height:
            label = f"{led.name}: no rate limit (not simulated at worker level)"
        elif n:
            label = f"{led.name}: {n} of {int((f['kind'] == 'scheduled').sum())} runs waited, max {duration_words(top)}"
        else:
            label = f"{led.name}: no run waited"
        handles.append(Line2D([], [], color=style["color"], ls=style["ls"], marker=marker, mfc="none", ms=6,
                              label=label))
        if not n:
            continue
        waited = f.filter(pl.col("rate_wait_s") > 0)
        w = waited["rate_wait_s"].to_numpy().astype(float)
        x = date_num(waited["started_utc"])
        high = max(high, float(w.max()))
        starts.append(x[np.isfinite(x)])
        # Hollow markers, larger for earlier series: policies that waited alike stay visible on top of each other.
        strip.scatter(x, w, s=max(12, 44 - 8 * i), marker=marker, facecolors="none", edgecolors=style["color"],
                      lw=1.1, zorder=3)
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
    # Time axis: the span of the waiting runs' starts (a catch-up burst is minutes long, the outage
    # before it hours), with the outages and crashes that fall in it: why the burst came, what it met.
    x = np.concatenate(starts)
    lo, hi = (float(x.min()), float(x.max())) if len(x) else strip.get_xlim()
    pad = max((hi - lo) * 0.08, 1 / 1440)  # at least a minute
    spans = sorted({(o.start_us, o.end_us) for led in leds for o in getattr(led.scenario, "outages", ()) or ()})
    handles += shade_outages(strip, [(a, b) for a, b in spans if us_num(b) >= lo - pad and us_num(a) <= hi + pad])
    crashes = [at for at in _crashes(leds) if lo - pad <= us_num(at) <= hi + pad]
    for at in crashes:
        strip.axvline(us_num(at), color=OKABE_ITO["black"], ls=":", lw=1.2, zorder=2)
    if crashes:
        handles.append(Line2D([], [], color=OKABE_ITO["black"], ls=":", lw=1.2, label="worker crash"))
    strip.set_xlim(lo - pad, hi + pad)
    date_axis(strip)
    strip.set_xlabel("start of the run (UTC)")
    strip.set_ylabel("wait for its token(s)")
    strip.set_ylim(0, high * 1.1)
    _duration_axis(strip.yaxis, high * 1.1)
    cdf.set_xlim(0, high * 1.1)
    _duration_axis(cdf.xaxis, high * 1.1)
    cdf.set_ylim(0, 1.02)
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
    >>> for c in fig.axes[0].containers:
    ...     print(c.get_label(), [int(b.get_height()) for b in c])
    duplicate effects (summary) [3]
    windows never processed [0]
    windows processed late [0]
    windows processed twice [3]
    """
    leds = inputs.ledgers(ledgers)
    values = np.zeros((len(DELIVERY_BARS), len(leds)))
    windows = []
    for k, led in enumerate(leds):
        inputs.frame(led.frame, "ledgers", tuple(dict.fromkeys(WORKER_SUMMARY_COLUMNS + WORKER_COVERAGE_COLUMNS)),
                     _WHAT)
        cov = led.coverage(late_after=late_after).select(pl.col("occurrences", "never", "late", "twice").sum())
        values[0, k] = led.summary(full=True)["duplicate_effects"][0]
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
