"""Charts of calsim frames: each function takes ledgers or frames and returns a matplotlib ``Figure``.

Nothing here touches pyplot's global state: figures are built with
:class:`matplotlib.figure.Figure` and an Agg canvas, so they work headless,
never pop up a window and are not kept alive by pyplot. Save one with
``fig.savefig("out.png")``; in Jupyter a figure shows as a cell's value (it
has ``_repr_png_``, so no ``%matplotlib inline`` is needed).

=================  ==============================================================
:func:`timeline`   per schedule a row: runs (late ones marked), missed and excluded occurrences,
                   outages, observation gaps; several policies as panels with the same rows
:func:`state_counts`  policies side by side, stacked by terminal state
:func:`cost_impact`   cost per budget period and policy against the budget limit
:func:`lateness`      CDF of lateness of started runs per policy
:func:`budget_waits`  how long runs waited for budget, per policy
:func:`local_vs_utc`  a schedule's local and UTC fire times of day across a year
:func:`tzdiff_map`    what a tzdata upgrade moves, by zone, schedule and date
=================  ==============================================================

Ledger arguments (``ledgers``) take a :class:`~calsim.Ledger`, a list or a
``{label: Ledger}`` dict of them, or a ledger frame (polars or pandas; split by
its ``scenario`` column). Colours come from one colour-blind-safe palette,
Okabe-Ito (:data:`OKABE_ITO`); states keep one colour and marker everywhere
(:data:`STATE_STYLE`); shifts use the diverging ColorBrewer ``PuOr`` map.
All instants are drawn in UTC unless an axis label says otherwise; local
calendar days are read from each ledger's own tz release (calsim's tables,
never polars' bundled tz database), so a what-if release moves them.
"""

from __future__ import annotations

import math

import matplotlib.dates as mdates
import numpy as np
import polars as pl
from matplotlib.colors import Normalize
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from .errors import InputError
from .plot_timeline import timeline
from .schedule import Schedule
from .simulation.ledger import LEDGER_STATES, Ledger
from .simulation.scenario import Budget

from .plot_style import (  # the palette, styles, inputs, local time and axis helpers
    _C,
    _date_axis,
    _DIVERGING,
    _dur,
    _duration_ticks,
    Figure,
    _figure,
    _frame,
    _int_arg,
    _is_pandas,
    _ledgers,
    _legend_below,
    _num,
    _offset,
    OKABE_ITO,
    _release_of,
    _seconds,
    SERIES_COLORS,
    _series_style,
    _shade_outages,
    _shift_ticks,
    _short,
    STATE_STYLE,
    _us_num,
    _wall_us,
)

__all__ = ["timeline", "state_counts", "cost_impact", "lateness", "budget_waits", "local_vs_utc", "tzdiff_map",
           "OKABE_ITO", "SERIES_COLORS", "STATE_STYLE"]

# ----------------------------------------------------------------------------- charts


def _counts(ledgers: object) -> tuple[list[str], dict[str, np.ndarray]]:
    """Scenario labels and per-state counts, from ledgers or a ``compare``/``summary``-like frame."""
    if ((isinstance(ledgers, pl.DataFrame) or _is_pandas(ledgers)) and "scenario" in ledgers.columns
            and "state" not in ledgers.columns):
        df = _frame(ledgers, "ledgers", ("scenario", *LEDGER_STATES), "LedgerStore.compare frame")
        return [str(s) for s in df["scenario"]], {s: df[s].fill_null(0).to_numpy().astype(float) for s in LEDGER_STATES}
    leds = _ledgers(ledgers)
    per = [dict(led.frame.group_by(pl.col("state").cast(pl.String)).len().iter_rows()) for led in leds]
    return [led.name for led in leds], {s: np.array([float(c.get(s, 0)) for c in per]) for s in LEDGER_STATES}


def state_counts(ledgers: object) -> Figure:
    """Policies side by side: occurrences stacked by terminal state.

    Parameters
    ----------
    ledgers
        Ledgers (a Ledger, list, ``{label: Ledger}`` dict or ledger frame), or a
        frame with ``scenario`` and one count column per state, such as
        :meth:`LedgerStore.compare` or concatenated :meth:`Ledger.summary` rows.

    Examples
    --------
    >>> import calsim, calsim.plots, polars as pl
    >>> counts = pl.DataFrame({"scenario": ["all", "latest"], "done": [20, 17], "coalesced": [0, 3],
    ...     "skipped": [1, 1], "expired": [0, 0], "cancelled": [0, 0], "failed": [0, 0]})
    >>> fig = calsim.plots.state_counts(counts)
    >>> type(fig).__name__, fig.axes[0].get_title()
    ('Figure', 'Occurrences by terminal state, per policy')
    """
    labels, counts = _counts(ledgers)
    fig = _figure(9, max(2.8, 1.6 + 0.45 * len(labels)))
    ax = fig.add_subplot()
    y = np.arange(len(labels))
    totals = sum(counts.values())
    left = np.zeros(len(labels))
    for state in LEDGER_STATES:
        v = counts[state]
        if not v.any():
            continue
        color, _ = STATE_STYLE[state]
        bars = ax.barh(y, v, left=left, color=color, edgecolor="white", lw=0.6, label=state, height=0.65)
        text = [f"{int(n)}" if n >= 0.06 * max(totals.max(), 1) else "" for n in v]
        dark = state in ("done", "expired", "failed", "cancelled")
        ax.bar_label(bars, labels=text, label_type="center", fontsize=8, color="white" if dark else "black")
        left += v
    ax.set_yticks(y, labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xlabel("occurrences (ledger rows)")
    ax.set_ylabel("scenario / policy")
    ax.set_title("Occurrences by terminal state, per policy")
    ax.grid(axis="x", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    _legend_below(fig, ax.get_legend_handles_labels()[0], ncols=6)
    return fig


def _budget(budget: object, leds: list[Ledger]) -> Budget | None:
    if budget is None:
        found = {b for led in leds for b in getattr(led.scenario, "budgets", ()) or ()}
        return found.pop() if len(found) == 1 else None
    if isinstance(budget, Budget):
        return budget
    if isinstance(budget, (int, float)) and not isinstance(budget, bool):
        return Budget("(all)", float(budget), "day", "UTC")
    raise InputError(f"budget: expected a calsim.Budget, a daily limit (number) or None, got "
                     f"{type(budget).__name__} {_short(budget)}")


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
    from .simulation.rules import period_index

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
        own.append([(*(int(v) for v in _wall_us(table, np.array([o.start_us, o.end_us]))),
                     int(period_index(table, period, np.array([o.end_us]))[0]))
                    for o in getattr(sc, "outages", ()) or ()])
    return bins, own, lo, hi


#: More bars than this (policies x periods), or more than three policies, and each policy gets its own panel.
_MAX_GROUPED_BARS = 60


def cost_impact(ledgers: object, budget: object = None, *, release: object = None) -> Figure:
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
    leds = _ledgers(ledgers)
    for led in leds:
        _frame(led.frame, "ledgers", ("cost",), "ledger frame")
    b = _budget(budget, leds)
    zone, period = (b.zone, b.period) if b else ("UTC", "day")
    rels = [None if zone == "UTC" else _release_of(led, release) for led in leds]
    bins, own, lo, hi = _cost_periods(leds, [r.table(zone) if r else _UTCTable() for r in rels], b, period)
    spans = sorted({span for part in own for span in part})
    facets = len(leds) > 3 or len(leds) * (max(hi) - min(lo) + 1 if lo else 0) > _MAX_GROUPED_BARS
    n_ax = len(leds) if facets else 1
    fig = _figure(10, 4.6 if not facets else 1.3 + 1.45 * n_ax)
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
            bars = ax.bar(left, y, span * width, align="edge", color=_series_style(i)["color"],
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
        patch = _shade_outages(ax, [(a, e) for a, e, _ in (own[k] if facets else spans)])
        shaded = shaded or patch
        if b is not None:
            who = "all runs" if b.account == "(all)" else f"account {b.account}"
            limit = ax.axhline(b.limit, color=_C["black"], ls="--", lw=1.2,
                               label=f"budget limit {b.limit:g} per {period} ({who})")
        ax.grid(color="#dddddd", lw=0.6)
        ax.set_axisbelow(True)
        _date_axis(ax)
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
    _legend_below(fig, handles, ncols=3)
    return fig


def _started_values(led: Ledger, col: str) -> np.ndarray:
    f = _frame(led.frame, "ledgers", (col,), "ledger frame")
    return f.filter(pl.col("started_utc").is_not_null())[col].drop_nulls().to_numpy().astype(float)


def lateness(ledgers: object) -> Figure:
    """Cumulative distribution of lateness (start − eligible) of started runs, per policy.

    The x axis is linear from 0 to 1 s and logarithmic beyond (symlog), so
    on-time runs (lateness 0) stay visible next to catch-ups hours late. When
    every policy ran at least half its runs on time, the y axis starts just
    below the smallest on-time share (its tick labels say where) so that the
    late tail is not squeezed against the top.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    >>> sc = calsim.Scenario("all", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
    ...                      outages=[calsim.Outage("2026-01-01T03:30Z", "2026-01-01T07:10Z")])
    >>> fig = calsim.plots.lateness([calsim.simulate(sc)])
    >>> type(fig).__name__, fig.axes[0].get_xscale()
    ('Figure', 'symlog')
    """
    leds = _ledgers(ledgers)
    fig = _figure(9, 4.6)
    ax = fig.add_subplot()
    high, on_time = 60.0, 1.0
    for i, led in enumerate(leds):
        v = np.clip(_started_values(led, "lateness_s"), 0, None)
        if not len(v):
            ax.plot([], [], label=f"{led.name} (no run started)", **_series_style(i))
            continue
        high, on_time = max(high, float(v.max())), min(on_time, float((v == 0).mean()))
        p50, p95 = np.quantile(v, [0.5, 0.95])
        ax.ecdf(v, lw=1.8, label=f"{led.name} (n={len(v)}, p50 {_dur(p50)}, p95 {_dur(p95)})", **_series_style(i))
    ax.set_xscale("symlog", linthresh=1.0, linscale=0.6)
    ax.set_xlim(-0.25, high * 1.5)  # the jump at 0 s stays off the spine
    _duration_ticks(ax, high * 1.5)
    # Mostly on time: start the y axis just below the smallest on-time share, so the late tail shows.
    ax.set_ylim(math.floor(on_time * 10) / 10 - 0.02 if on_time >= 0.5 else 0, 1.005)
    ax.grid(color="#dddddd", lw=0.6)
    ax.set_xlabel("lateness = start − eligible (0–1 s linear, log beyond)")
    ax.set_ylabel("fraction of started runs")
    ax.set_title("Lateness of started runs per policy (cumulative)")
    ax.legend(loc="lower right", fontsize=9)
    return fig


_WAIT_EDGES = (0, 60, 600, 3600, 6 * 3600, 86400, 2 * 86400, 7 * 86400, math.inf)
_WAIT_LABELS = ("< 1 min", "1–10 min", "10 min–1 h", "1–6 h", "6–24 h", "1–2 d", "2–7 d", "≥ 7 d")


def budget_waits(ledgers: object) -> Figure:
    """How long occurrences waited for budget (``budget_wait_s`` > 0), per policy, in duration buckets.

    Occurrences that never waited are left out of the bars and counted in the
    legend; a policy under which nothing waited gets no bars (its legend entry
    says so), so the others' stay wide. When nothing waited at all, the chart
    says so, with no axis ticks.

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
    leds = _ledgers(ledgers)
    waits = []
    for led in leds:
        f = _frame(led.frame, "ledgers", ("budget_wait_s",), "ledger frame")
        w = np.nan_to_num(_seconds(f["budget_wait_s"]), nan=0.0)
        waits.append((w[w > 0], f.height))
    hist = np.array([np.histogram(w, bins=_WAIT_EDGES)[0] for w, _ in waits])
    used = np.flatnonzero(hist.sum(axis=0))
    fig = _figure(9, 4.6)
    ax = fig.add_subplot()
    ax.set_title("Budget waits per policy")
    ax.set_xlabel("time held waiting for a budget period with room")
    ax.set_ylabel("occurrences")
    label = lambda i: f"{leds[i].name}: {len(waits[i][0])} of {waits[i][1]} waited" + (  # noqa: E731
        f", max {_dur(waits[i][0].max())}" if len(waits[i][0]) else "")
    handles = [Patch(color=_series_style(i)["color"], label=label(i)) for i in range(len(leds))]
    if not len(used):
        # No bar: no scale to read either (matplotlib would centre an empty axis on 0, ticks going negative).
        ax.text(0.5, 0.5, "no occurrence waited for budget", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xticks([])
        ax.set_yticks([])
        _legend_below(fig, handles, ncols=3)
        return fig
    cols = np.arange(used[0], used[-1] + 1)
    waited = [i for i in range(len(leds)) if len(waits[i][0])]
    width = min(0.8 / len(waited), 0.45)  # one policy alone: a bar, not a wall
    for k, i in enumerate(waited):
        handles[i] = bars = ax.bar(np.arange(len(cols)) + (k - (len(waited) - 1) / 2) * width, hist[i, cols], width,
                                   color=_series_style(i)["color"], label=label(i))
        # Counts on the bars: a bar of 3 next to one of 450 is a sliver, its number is not.
        ax.bar_label(bars, labels=[f"{v}" if v else "" for v in hist[i, cols]], fontsize=7, padding=1)
    ax.set_xticks(np.arange(len(cols)), [_WAIT_LABELS[c] for c in cols])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(y=0.1)
    ax.grid(axis="y", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    _legend_below(fig, handles, ncols=3)
    return fig


def local_vs_utc(frame_or_schedule: object, start: object = None, end: object = None, release: object = None) -> Figure:
    """A schedule's fire times as time of day, local wall clock and UTC, across a year: DST edges show.

    Parameters
    ----------
    frame_or_schedule
        A :class:`~calsim.Schedule` (expanded over ``[start, end)`` with
        ``release``), or an occurrence or ledger frame of one schedule.
    start, end
        UTC window (instants; naive means UTC). For a Schedule, default: a
        year (365 days) from the day of its start. For a frame: all its rows.
    release
        tz database release for a Schedule (see :func:`calsim.release`).

    Vertical lines mark where the schedule's UTC offset changes; crosses mark
    occurrences with no instant (skipped in a DST gap, merged, excluded).

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> s = calsim.Schedule("nightly", "America/New_York", "2026-01-01T02:30", "FREQ=DAILY")
    >>> fig = calsim.plots.local_vs_utc(s, release="2026f")
    >>> type(fig).__name__, fig.axes[0].get_ylabel()
    ('Figure', 'time of day (hh:mm)')
    """
    from .expansion import expand
    from .times import instant_us

    if isinstance(frame_or_schedule, Schedule):
        s = frame_or_schedule
        day = 86400 * 10**6
        base = s.start_utc if s.start_utc is not None else s.start_wall
        lo = instant_us(start, "start") if start is not None else (base // day) * day
        hi = instant_us(end, "end") if end is not None else lo + 365 * day
        iso = lambda us: str(np.datetime64(int(us), "us")) + "Z"  # noqa: E731
        f = expand([s], iso(lo), iso(hi), release)
    else:
        if release is not None:
            raise InputError(f"release: {release!r} is only used to expand a Schedule; this frame is already resolved")
        f = _frame(frame_or_schedule, "frame_or_schedule", ("schedule_id", "nominal_local", "due_utc", "zone"),
                   "Schedule, or occurrence frame")
        if "kind" in f.columns:
            f = f.filter(pl.col("kind") == "scheduled")
        ids = f["schedule_id"].unique(maintain_order=True).to_list()
        if len(ids) > 1:
            raise InputError(f"frame_or_schedule: the frame holds {len(ids)} schedules ({ids[:3]}...); "
                             "filter it to one, e.g. frame.filter(pl.col('schedule_id') == ...)")
        if start is not None or end is not None:
            lo = instant_us(start, "start") if start is not None else -(2**62)
            hi = instant_us(end, "end") if end is not None else 2**62
            # A row without an instant is placed by its nominal time (within a day of where expand puts it).
            us = pl.coalesce(pl.col("due_utc").dt.epoch("us"), pl.col("nominal_local").dt.epoch("us"))
            f = f.filter((us >= lo) & (us < hi))
    fig = _figure(11, 4.8)
    ax = fig.add_subplot()
    ax.set_ylabel("time of day (hh:mm)")
    if f.height == 0:
        ax.text(0.5, 0.5, "no occurrence in this window", ha="center", va="center", transform=ax.transAxes)
        ax.set_title("Local vs UTC fire times")
        ax.set_xlabel("local date")
        return fig
    sid, zone = f["schedule_id"][0], f["zone"][0]
    f = f.sort("nominal_local", "fold")
    tod = lambda c: (c.dt.hour() + c.dt.minute() / 60 + c.dt.second() / 3600)  # noqa: E731
    f = f.with_columns(_x=pl.col("nominal_local").dt.date(), _loc=tod(pl.col("nominal_local")),
                       _utc=tod(pl.col("due_utc").dt.convert_time_zone("UTC")))
    x = _num(f["_x"])
    has = f["due_utc"].is_not_null().to_numpy()
    small = 12 if f.height < 800 else 4
    ax.scatter(x, f["_loc"].to_numpy(), s=small, color=_C["blue"], marker="o", lw=0,
               label=f"local wall time ({zone})", zorder=3)
    ax.scatter(x[has], f["_utc"].to_numpy()[has], s=small, color=_C["vermillion"], marker="s", lw=0,
               label="UTC", zorder=3)
    if (~has).any():
        ax.scatter(x[~has], f["_loc"].to_numpy()[~has], s=40, color=_C["black"], marker="x", lw=1.2, zorder=4,
                   label=f"no instant: DST gap, merged or excluded ({int((~has).sum())})")
    if "utc_offset_s" in f.columns:
        g = f.filter(pl.col("utc_offset_s").is_not_null()).sort("due_utc")
        off = g["utc_offset_s"].to_numpy()
        edges = np.flatnonzero(off[1:] != off[:-1]) + 1
        gx = _num(g["_x"])
        for k, e in enumerate(edges):
            xe = (gx[e - 1] + gx[e]) / 2 if gx[e] - gx[e - 1] > 1 else gx[e] - 0.5
            ax.axvline(xe, color=_C["black"], ls=":", lw=1, zorder=1,
                       label="UTC offset changes" if k == 0 else None)
            if len(edges) <= 8:
                ax.text(xe, 23.6, f" {_offset(off[e - 1])} → {_offset(off[e])}", rotation=90, va="top",
                        ha="right", fontsize=7, color="#333333")
    ax.set_ylim(0, 24)
    ax.set_yticks(range(0, 25, 3), [f"{h:02d}:00" for h in range(0, 25, 3)])
    _date_axis(ax)
    ax.grid(color="#e5e5e5", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(f"local date ({zone})")
    release_name = f["tzdata"][0] if "tzdata" in f.columns else "?"
    ax.set_title(f"{sid}: local and UTC fire times (tzdata {release_name})")
    # Proxies: the scatter points may be tiny, the legend's should not be.
    proxy = {"o": dict(marker="o", color=_C["blue"]), "s": dict(marker="s", color=_C["vermillion"]),
             "x": dict(marker="x", color=_C["black"], mew=1.2)}
    handles = [Line2D([], [], ls="", ms=6, label=h.get_label(), **proxy[m])
               for h, m in zip(ax.collections, "osx")]
    handles += [ln for ln in ax.lines if not ln.get_label().startswith("_")]
    _legend_below(fig, handles)
    return fig


_CHANGE_MARKERS = {"now_gap": "v", "no_longer_gap": "^", "now_fold": "D", "no_longer_fold": "d",
                   "merged": "P", "unmerged": "X", "moved": "s"}


def _pick_rows(f: pl.DataFrame, n: int) -> pl.DataFrame:
    """``(zone, schedule_id)`` rows to draw: every zone gets a row before any gets a second.

    Zones are ordered by how many schedules they affect (then by their first
    change, then name), schedules within a zone by how many occurrences change
    (then id); the rows come back grouped by zone in that order.
    """
    per = (f.group_by("zone", "schedule_id").agg(pl.len().alias("n"), pl.col("nominal_local").min().alias("first"))
           .sort(["n", "schedule_id"], descending=[True, False]))
    zones = (per.group_by("zone").agg(pl.len().alias("schedules"), pl.col("first").min())
             .sort(["schedules", "first", "zone"], descending=[True, False, False]).with_row_index("_z"))
    per = per.join(zones.select("zone", "_z"), on="zone").with_columns(
        pl.int_range(pl.len()).over("zone").alias("_k"))  # its rank within the zone (per is sorted by n)
    return per.sort("_k", "_z").head(n).sort("_z", "_k").select("zone", "schedule_id")


def tzdiff_map(diff: object, max_schedules: int = 40, *, start: object = None, end: object = None) -> Figure:
    """What a tzdata upgrade moves: affected schedules (grouped by zone) by date, coloured by shift.

    Each occurrence that moves is a square at its nominal local date, coloured
    by ``shift_s`` (new − old instant; diverging, centred on 0, round ticks).
    Changes that move no instant — a zero shift (``no_longer_fold``: the time
    stops being ambiguous but resolves where it did) or a side without an
    instant (``now_gap``...) — are hollow black markers, one shape per
    ``change`` kind, never a colour that vanishes at the centre of the scale.
    An empty diff gives a figure that says so.

    Parameters
    ----------
    diff
        A :func:`calsim.tzdiff` frame (polars or pandas).
    max_schedules
        At most this many rows. When there are more schedules, every zone gets
        a row before any gets a second (zones with the most affected schedules
        first), so a zone late in the alphabet is not left out; the title says
        how many were left out.
    start, end
        The window the diff was computed over (instants): the x axis spans it,
        so where nothing moves shows as empty. Default: the months the changes fall in.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> s = calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")
    >>> d = calsim.tzdiff([s], "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z")
    >>> fig = calsim.plots.tzdiff_map(d, start="2023-01-01T00:00Z", end="2024-01-01T00:00Z")
    >>> type(fig).__name__, len(fig.axes)   # the map and its colour bar
    ('Figure', 2)
    >>> calsim.plots.tzdiff_map(d.head(0)).axes[0].texts[0].get_text()
    'no changes: every occurrence resolves to the same instant in both releases'
    """
    from .times import instant_us

    f = _frame(diff, "diff", ("schedule_id", "nominal_local", "zone", "shift_s", "change"), "calsim.tzdiff frame")
    max_schedules = _int_arg(max_schedules, "max_schedules")
    lo = instant_us(start, "start") if start is not None else None
    hi = instant_us(end, "end") if end is not None else None
    if lo is not None and hi is not None and hi <= lo:
        raise InputError(f"end: {end!r} is not after start {start!r} (the window [start, end) would be empty)")
    title = "tzdata upgrade: changed occurrences by zone and schedule"
    if f.height == 0:
        fig = _figure(8, 2.6)
        ax = fig.add_subplot()
        ax.text(0.5, 0.5, "no changes: every occurrence resolves to the same instant in both releases",
                ha="center", va="center", transform=ax.transAxes, fontsize=11)
        ax.set_axis_off()
        ax.set_title(title)
        return fig
    order = _pick_rows(f, max_schedules)
    total, zones_total = f["schedule_id"].n_unique(), f["zone"].n_unique()
    row = {sid: i for i, sid in enumerate(order["schedule_id"])}
    f = f.filter(pl.col("schedule_id").is_in(list(row))).with_columns(
        pl.col("schedule_id").replace_strict(row, return_dtype=pl.Int64).alias("_row"))
    height = max(3.0, 1.9 + 0.32 * len(row))
    fig = _figure(11, height)
    ax = fig.add_subplot()
    x = _num(f["nominal_local"])
    shift = f["shift_s"].cast(pl.Float64).to_numpy()
    y = f["_row"].to_numpy()
    moves = ~np.isnan(shift) & (shift != 0)
    if moves.any():
        limit, ticks = _shift_ticks(float(np.abs(shift[moves]).max()))
        points = ax.scatter(x[moves], y[moves], c=shift[moves], cmap=_DIVERGING, norm=Normalize(-limit, limit),
                            marker="s", s=22, lw=0, zorder=3)
        cbar = fig.colorbar(points, ax=ax, pad=0.01, fraction=0.04, aspect=max(20.0, 8 * height))  # full height
        cbar.set_label("shift = new − old instant")
        cbar.set_ticks(ticks, labels=["0" if v == 0 else ("+" if v > 0 else "−") + _dur(abs(v)) for v in ticks])
    handles = []
    change = f["change"].to_numpy()
    for kind in sorted(set(change[~moves].tolist())):
        m = ~moves & (change == kind)
        ax.scatter(x[m], y[m], marker=_CHANGE_MARKERS.get(kind, "o"), s=40, facecolors="none",
                   edgecolors=_C["black"], lw=1.1, zorder=4)
        zero = int((m & (shift == 0)).sum())
        how = "no shift" if zero == m.sum() else ("one side has no instant" if not zero else "no shift or no instant")
        handles.append(Line2D([], [], ls="", marker=_CHANGE_MARKERS.get(kind, "o"), mfc="none", mec=_C["black"],
                              label=f"{kind}: {how} ({int(m.sum())})"))
    zones = order["zone"].to_list()
    for i in range(1, len(zones)):
        if zones[i] != zones[i - 1]:
            ax.axhline(i - 0.5, color="#999999", lw=0.8)
    ax.set_yticks(range(len(row)), [f"{z} · {sid}" for z, sid in order.iter_rows()], fontsize=8)
    ax.set_ylim(len(row) - 0.5, -0.5)
    days = f["nominal_local"].dt.date()
    left = _us_num(lo) if lo is not None else _num(pl.Series([days.min()]).dt.month_start())[0]
    right = _us_num(hi) if hi is not None else _num(pl.Series([days.max()]).dt.month_end().dt.offset_by("1d"))[0]
    ax.set_xlim(left, right)
    _date_axis(ax)
    ax.grid(axis="x", color="#e5e5e5", lw=0.6)
    ax.set_axisbelow(True)
    window = f"; window {_iso_day(lo)} – {_iso_day(hi)}" if lo is not None and hi is not None else ""
    ax.set_xlabel(f"nominal local date (in each schedule's zone){window}")
    ax.set_ylabel("zone · schedule")
    shown = (f" ({len(row)} of {total} schedules, {order['zone'].n_unique()} of {zones_total} zones)"
             if len(row) < total else "")
    ax.set_title(f"{title}{shown}")
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=min(3, len(handles)), frameon=False,
                   fontsize=9, title="changes that move no instant", title_fontsize=9)
    return fig


def _iso_day(us: int) -> str:
    return str(np.datetime64(int(us), "us").astype("datetime64[D]"))
