"""Charts of cost and budget: cost started per budget period against the limit, and waits for budget.

The bars of :func:`cost_impact` are the engine's own budget periods: local
calendar days (weeks, months) in the budget's zone, read with
:func:`calsim.simulation.run_rules.period_index` from each ledger's own tz release
(a what-if release moves them; polars' bundled tz database is never used).
That aggregate is the chart's own, by the same rule as the ledger's
``daily_cost`` view given the budgets' zones
(``views.daily_cost(frame, accounts, zones=budgets)``; without them the view
counts UTC days). :func:`budget_waits` buckets each wait, and its legend
counts the very values it draws and quotes their maximum as
:meth:`Ledger.summary` prints ``budget_wait_max`` (``5h 45m``).
"""

from __future__ import annotations

import datetime as dt
import math

import matplotlib.dates as mdates
import numpy as np
import polars as pl
from matplotlib.container import BarContainer
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..errors import InputError, shown
from ..simulation.ledger import Ledger
from ..simulation.run_rules import period_index
from ..simulation.scenario import Budget
from ..simulation.views import resolution_of, seconds_to_duration
from ..tz.release import ReleaseLike
import calsim.plots.inputs as inputs
from .style import OKABE_ITO, Figure, date_axis, duration_words, legend_below, new_figure, series_style, shade_outages

__all__ = ["cost_impact", "budget_waits"]


def _budget(budget: object, leds: list[Ledger]) -> Budget | None:
    if budget is None:
        found = {b for led in leds for b in getattr(led.scenario, "budgets", ()) or ()}
        return found.pop() if len(found) == 1 else None
    if isinstance(budget, Budget):
        return budget
    if isinstance(budget, (int, float)) and not isinstance(budget, bool):
        return Budget("(all)", float(budget), "day", "UTC")
    raise InputError(f"budget: expected a calsim.Budget, a daily limit (number) or None, got "
                     f"{type(budget).__name__} {shown(budget)}")


class _UTCTable:
    """UTC's offsets as a zone table: a UTC budget needs no release (a frame of a what-if run has none to open)."""

    utc = np.zeros(0, dtype=np.int64)
    offsets = np.zeros(1, dtype=np.int32)

    def offset_at_utc(self, utc_seconds: np.ndarray) -> np.ndarray:
        return np.zeros(np.shape(utc_seconds), dtype=np.int32)


def _period_x(index: np.ndarray, period: str) -> np.ndarray:
    """Matplotlib date numbers of the first local day of each period index (as rules.period_index counts)."""
    index = np.asarray(index, dtype=np.int64)
    if period == "month":
        days = index.astype("datetime64[M]").astype("datetime64[D]")
    else:
        days = (index * 7 - 3 if period == "week" else index).astype("datetime64[D]")
    return mdates.date2num(days)


def _cost_periods(leds: list[Ledger], tables: list, b: Budget | None, period: str):
    """Per ledger: the local period index and cost of each started run (of the budget's account), and its
    outages as local wall-time spans with the period the scheduler came back in; plus the periods to show."""
    bins, own, lo, hi = [], [], [], []
    for led, table in zip(leds, tables):
        f = led.frame.filter(pl.col("started_utc").is_not_null())
        if b is not None and b.account != "(all)" and led.accounts:
            f = f.filter(pl.col("schedule_id").replace_strict(led.accounts, default=None, return_dtype=pl.String)
                         == b.account)
        # The engine's own rule (rules.period_index) with the ledger's release: the bars are its budget periods.
        idx = period_index(table, period, f["started_utc"].dt.epoch("us").to_numpy())
        bins.append((idx, f["cost"].to_numpy()))
        lo += [int(idx.min())] if len(idx) else []
        hi += [int(idx.max())] if len(idx) else []
        sc = led.scenario
        if sc is not None and hasattr(sc, "start_us"):
            ends = period_index(table, period, np.array([sc.start_us, sc.end_us - 1], dtype=np.int64))
            lo, hi = lo + [int(ends[0])], hi + [int(ends[1])]
        own.append([(*(int(v) for v in inputs.wall_us(table, np.array([o.start_us, o.end_us]))),
                     int(period_index(table, period, np.array([o.end_us]))[0]))
                    for o in getattr(sc, "outages", ()) or ()])
    return bins, own, lo, hi


#: More bars than this (policies x periods), or more than three policies, and each policy gets its own panel.
_MAX_GROUPED_BARS = 60


def cost_impact(ledgers: object, budget: object = None, *, release: ReleaseLike = None) -> Figure:
    """Cost started per budget period and policy, against the budget limit: the catch-up burst shows.

    Periods are local calendar days (weeks, months) in the budget's zone,
    read from each ledger's own tz release exactly as the simulation's
    budget did (a what-if release moves them; no other tz data is used).
    Up to three policies over up to 60 bars are grouped bars; more are one
    panel per policy on shared axes, so a month of five policies stays readable.

    Parameters
    ----------
    ledgers
        Ledgers to compare (a Ledger, list, ``{label: Ledger}`` dict or ledger frame).
    budget
        A :class:`~calsim.Budget`: only its account's runs count and periods are
        its calendar periods in its zone, so the limit line is exact. A number:
        a limit per UTC day over all runs. None: the scenarios' budget when they
        share exactly one, else total cost per UTC day without a limit line
        (and without "vs budget" in the title).
    release
        The tz release to read every ledger's local periods with. Default:
        each ledger's own (its scenario's, else the one its ``tzdata`` column
        names); needed only for a ledger frame of a what-if release, which
        cannot be opened by name.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> fleet = calsim.with_policy([calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")],
    ...                            cost=1.0, account="a")
    >>> sc = calsim.Scenario("all", fleet, "2026-01-01T00:00Z", "2026-01-03T00:00Z",
    ...                      budgets=[calsim.Budget("a", 30, "day", "UTC")])
    >>> fig = calsim.plots.cost_impact(calsim.simulate(sc))
    >>> fig.axes[0].get_ylabel(), fig.axes[0].get_title()
    ('cost started per day', 'Cost per day and policy vs budget (account a)')
    """
    leds = inputs.ledgers(ledgers)
    for led in leds:
        inputs.frame(led.frame, "ledgers", ("cost",), "ledger frame")
    b = _budget(budget, leds)
    zone, period = (b.zone, b.period) if b else ("UTC", "day")
    rels = [None if zone == "UTC" else inputs.release_of(led, release) for led in leds]
    bins, own, lo, hi = _cost_periods(leds, [r.table(zone) if r else _UTCTable() for r in rels], b, period)
    spans = sorted({span for part in own for span in part})
    facets = len(leds) > 3 or len(leds) * (max(hi) - min(lo) + 1 if lo else 0) > _MAX_GROUPED_BARS
    n_ax = len(leds) if facets else 1
    fig = new_figure(10, 4.6 if not facets else 1.3 + 1.45 * n_ax)
    axes = list(fig.subplots(n_ax, 1, sharex=True, sharey=True, squeeze=False)[:, 0])
    handles: list = []
    peak, tops = None, [0.0]
    if lo:
        index = np.arange(min(lo), max(hi) + 2)  # one past the last: the last bar's right edge
        edges = _period_x(index, period)
        x, span = edges[:-1], np.diff(edges)  # a month is not 30 d
        width = 0.84 if facets else 0.84 / len(leds)
        # Only a peak from the period the scheduler came back in onwards is a
        # catch-up burst; without an outage, the busiest period is just that
        # (a month-end job is not a burst).
        after = spans[0][2] if spans else None
        for i, (led, (idx, cost)) in enumerate(zip(leds, bins)):
            ax = axes[i if facets else 0]
            y = np.bincount(idx - index[0], weights=cost, minlength=len(x))[:len(x)] if len(idx) else np.zeros(len(x))
            left = x + span * (0.08 + (0 if facets else i * width))
            bars = ax.bar(left, y, span * width, align="edge", color=series_style(i)["color"],
                          label=f"{led.name} (total {y.sum():g})")
            tops.append(float(y.max()))
            if facets:
                ax.set_title(f"{led.name} (total {y.sum():g})", fontsize=9, loc="left")
            else:
                handles.append(bars)
            yy = np.where(index[:-1] >= after, y, -np.inf) if after is not None else y
            if len(y) and np.isfinite(yy.max()) and (peak is None or yy.max() > peak[1]):
                j = int(np.argmax(yy))
                peak = (left[j] + span[j] * width / 2, float(y[j]), led.name, float(np.median(y)), ax)
    if peak is not None and peak[1] > 1.2 * peak[3] and peak[1] > 0:
        what = "catch-up burst" if spans else f"busiest {period}"
        peak[4].annotate(f"{what}: {peak[1]:g} ({peak[2]})", (peak[0], peak[1]), xytext=(6, 4),
                         textcoords="offset points", fontsize=8)
    shaded: list = []
    for k, ax in enumerate(axes):
        # A panel shades its own policy's outages (a no-outage baseline stays clear); one chart shades them all.
        patch = shade_outages(ax, [(a, e) for a, e, _ in (own[k] if facets else spans)])
        shaded = shaded or patch
        if b is not None:
            who = "all runs" if b.account == "(all)" else f"account {b.account}"
            limit = ax.axhline(b.limit, color=OKABE_ITO["black"], ls="--", lw=1.2,
                               label=f"budget limit {b.limit:g} per {period} ({who})")
        ax.grid(color="#dddddd", lw=0.6)
        ax.set_axisbelow(True)
        date_axis(ax)
    # Room above the highest bar and the limit line alike (shared by every panel).
    axes[0].set_ylim(0, 1.15 * (max(tops + [b.limit if b is not None else 0.0]) or 1.0))
    if facets:
        fig.supylabel(f"cost started per {period}", fontsize=10)
    else:
        axes[0].set_ylabel(f"cost started per {period}")
    handles += shaded[:1] + ([limit] if b is not None else [])
    releases = sorted({r.version for r in rels if r is not None})
    calendar = f"{zone} calendar" + (f", tzdata {', '.join(releases)}" if releases else "")
    axes[-1].set_xlabel(f"{period} of the run's start ({calendar})")
    scope = "" if b is None or b.account == "(all)" else f" (account {b.account})"
    title = f"Cost per {period} and policy" + (f" vs budget{scope}" if b is not None else " (all accounts)")
    (fig.suptitle if facets else axes[0].set_title)(title)
    budgets = {x for led in leds for x in getattr(led.scenario, "budgets", ()) or ()}
    if b is None and budgets:
        axes[0].text(0.01, 0.97, f"no budget line: the scenarios have {len(budgets)} budgets; pass budget= to draw one",
                     transform=axes[0].transAxes, fontsize=8, color="#555555", va="top")
    legend_below(fig, handles, ncols=3)
    return fig


_WAIT_EDGES = (0, 60, 600, 3600, 6 * 3600, 86400, 2 * 86400, 7 * 86400, math.inf)
_WAIT_LABELS = ("< 1 min", "1–10 min", "10 min–1 h", "1–6 h", "6–24 h", "1–2 d", "2–7 d", "≥ 7 d")


def budget_waits(ledgers: object) -> Figure:
    """How long occurrences waited for budget (``budget_wait_s`` > 0), per policy, in duration buckets.

    Occurrences that never waited are left out of the bars and counted in the
    legend; a policy under which nothing waited gets no bars (its legend entry
    says so), so the others' stay wide. When nothing waited at all, the chart
    says so, with no axis ticks. The legend's count and ``max`` are
    :meth:`Ledger.summary`'s ``budget_waits`` and ``budget_wait_max``, in its
    words (``max 5h 45m``: rounded as the summary rounds, printed as polars
    prints it; :func:`~.style.duration_words`).

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> fleet = calsim.with_policy([calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")],
    ...                            cost=1.0, account="a")
    >>> sc = calsim.Scenario("all", fleet, "2026-01-01T00:00Z", "2026-01-03T00:00Z",
    ...                      budgets=[calsim.Budget("a", 20, "day", "UTC")])
    >>> fig = calsim.plots.budget_waits({"wait": calsim.simulate(sc)})
    >>> type(fig).__name__, fig.axes[0].get_ylabel()
    ('Figure', 'occurrences')
    """
    leds = inputs.ledgers(ledgers)
    waits, tops = [], []
    for led in leds:
        f = inputs.frame(led.frame, "ledgers", ("budget_wait_s",), "ledger frame")
        w = np.nan_to_num(inputs.seconds(f["budget_wait_s"]), nan=0.0)
        waits.append((w[w > 0], f.height))
        # The summary's budget_wait_max: the largest wait, rounded by the summary's own rule.
        top = float(w.max()) if len(w) and w.max() > 0 else None
        tops.append(None if top is None else pl.select(
            seconds_to_duration(pl.lit(top, pl.Float64), dt.timedelta(microseconds=resolution_of(led.scenario)))
        ).item())
    hist = np.array([np.histogram(w, bins=_WAIT_EDGES)[0] for w, _ in waits])
    used = np.flatnonzero(hist.sum(axis=0))
    fig = new_figure(9, 4.6)
    ax = fig.add_subplot()
    ax.set_title("Budget waits per policy")
    ax.set_xlabel("time held waiting for a budget period with room")
    ax.set_ylabel("occurrences")
    label = lambda i: f"{leds[i].name}: {len(waits[i][0])} of {waits[i][1]} waited" + (  # noqa: E731
        f", max {duration_words(tops[i])}" if len(waits[i][0]) else "")
    handles: list[Patch | BarContainer] = [Patch(color=series_style(i)["color"], label=label(i))
                                           for i in range(len(leds))]
    if not len(used):
        # No bar: no scale to read either (matplotlib would centre an empty axis on 0, ticks going negative).
        ax.text(0.5, 0.5, "no occurrence waited for budget", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xticks([])
        ax.set_yticks([])
        legend_below(fig, handles, ncols=3)
        return fig
    cols = np.arange(used[0], used[-1] + 1)
    waited = [i for i in range(len(leds)) if len(waits[i][0])]
    width = min(0.8 / len(waited), 0.45)  # one policy alone: a bar, not a wall
    for k, i in enumerate(waited):
        handles[i] = bars = ax.bar(np.arange(len(cols)) + (k - (len(waited) - 1) / 2) * width, hist[i, cols], width,
                                   color=series_style(i)["color"], label=label(i))
        # Counts on the bars: a bar of 3 next to one of 450 is a sliver, its number is not.
        ax.bar_label(bars, labels=[f"{v}" if v else "" for v in hist[i, cols]], fontsize=7, padding=1)
    ax.set_xticks(np.arange(len(cols)), [_WAIT_LABELS[c] for c in cols])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(y=0.1)
    ax.grid(axis="y", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    legend_below(fig, handles, ncols=3)
    return fig
