"""Charts of calsim frames: each function takes ledgers or frames and returns a matplotlib ``Figure``.

Nothing here touches pyplot's global state: figures are built with
:class:`matplotlib.figure.Figure` and an Agg canvas, so they work headless,
never pop up a window and are not kept alive by pyplot. Save one with
``fig.savefig("out.png")``; in Jupyter a figure shows as a cell's value (it
has ``_repr_png_``, so no ``%matplotlib inline`` is needed).

=================  ==============================================================
:func:`timeline`   per schedule a row: runs, missed marks, outages, observation gaps
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
All instants are drawn in UTC unless an axis label says otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import polars as pl
from matplotlib.colors import CenteredNorm
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from .errors import InputError
from .schedule import Schedule
from .simulation.ledger import LEDGER_STATES, Ledger
from .simulation.scenario import Budget

from .plot_style import (  # the palette, styles, inputs and axis helpers
    _BY_DESIGN,
    _C,
    _date_axis,
    _DIVERGING,
    _dur,
    _duration_ticks,
    Figure,
    _figure,
    _frame,
    _GAP,
    _int_arg,
    _is_pandas,
    _ledgers,
    _legend_below,
    _num,
    _offset,
    OKABE_ITO,
    _outages,
    SERIES_COLORS,
    _series_style,
    _shade_outages,
    _short,
    STATE_STYLE,
    _us_num,
)

__all__ = ["timeline", "state_counts", "cost_impact", "lateness", "budget_waits", "local_vs_utc", "tzdiff_map",
           "OKABE_ITO", "SERIES_COLORS", "STATE_STYLE"]

# ----------------------------------------------------------------------------- charts


def timeline(ledger: object, schedules: object = None, max_schedules: int = 20) -> Figure:
    """Per schedule a row over the horizon: runs, missed occurrences, outages and observation gaps.

    Done runs are drawn where they started; occurrences that did not run
    (``coalesced``, ``skipped``, ``expired``, ``cancelled``, ``failed``) where
    they were eligible, each state with its own colour and marker. Outages of
    the ledger's scenario are shaded; observation gaps (:meth:`Ledger.gaps`)
    are highlighted on their row. Occurrences without an instant (DST gap,
    merged, calendar) have no place on the UTC axis and are not drawn.

    Parameters
    ----------
    ledger
        A :class:`~calsim.Ledger` (outages come from its scenario) or a ledger frame.
    schedules
        Schedule ids (or :class:`~calsim.Schedule` objects) to show, in this order.
        None: the ``max_schedules`` schedules with the most missed occurrences, by id.
    max_schedules
        At most this many rows; the title says when some were left out.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(catchup="latest"))
    >>> sc = calsim.Scenario("latest", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
    ...                      outages=[calsim.Outage("2026-01-01T03:30Z", "2026-01-01T07:10Z")])
    >>> fig = calsim.plots.timeline(calsim.simulate(sc))
    >>> type(fig).__name__, fig.axes[0].get_xlabel()
    ('Figure', 'time (UTC)')
    """
    leds = [] if isinstance(ledger, (list, tuple, Mapping)) else _ledgers(ledger, "ledger")
    if len(leds) != 1:
        raise InputError(f"ledger: expected one Ledger or a ledger frame of one scenario, got "
                         f"{type(ledger).__name__} of {len(leds) or len(ledger)} ledgers")  # type: ignore[arg-type]
    led = leds[0]
    max_schedules = _int_arg(max_schedules, "max_schedules")
    f = led.frame.filter(pl.col("kind") == "scheduled") if "kind" in led.frame.columns else led.frame
    known = f["schedule_id"].unique(maintain_order=True).to_list()
    if schedules is None:
        missed = f.filter(~pl.col("reason").cast(pl.String).is_in(_BY_DESIGN).fill_null(False)) \
            if "reason" in f.columns else f
        ranked = (missed.group_by("schedule_id").agg((pl.col("state").cast(pl.String) != "done").sum().alias("n"))
                  .sort(["n", "schedule_id"], descending=[True, False]))
        ids = sorted(ranked["schedule_id"].head(max_schedules).to_list())
    else:
        items = [schedules] if isinstance(schedules, (str, Schedule)) else schedules
        try:
            ids = [s.id if isinstance(s, Schedule) else s for s in items]  # type: ignore[union-attr]
        except TypeError:
            raise InputError(f"schedules: expected schedule ids or Schedules, got {type(schedules).__name__}") from None
        unknown = [s for s in ids if s not in known]
        if unknown:
            raise InputError(f"schedules: {unknown[:3]} not in the ledger (it has {len(known)} schedules, "
                             f"e.g. {known[:3]})")
        ids = list(dict.fromkeys(ids))[:max_schedules]
    total = len(known)
    row = {sid: i for i, sid in enumerate(ids)}
    f = f.filter(pl.col("schedule_id").is_in(ids)).with_columns(
        pl.col("schedule_id").replace_strict(row, return_dtype=pl.Int64).alias("_row"),
        pl.col("state").cast(pl.String))
    fig = _figure(11, max(3.2, 1.6 + 0.3 * len(ids)))
    ax = fig.add_subplot()
    spans = _outages([led])
    handles = _shade_outages(ax, spans)
    lo = hi = None
    sc = led.scenario
    if sc is not None and hasattr(sc, "start_us"):
        lo, hi = _us_num(sc.start_us), _us_num(sc.end_us)
    gaps = led.gaps().filter(pl.col("schedule_id").is_in(ids)) if "reason" in led.frame.columns else None
    if gaps is not None and gaps.height:
        x0, x1 = _num(gaps["from_utc"]), _num(gaps["to_utc"])
        left = lo if lo is not None else np.nanmin(_num(f["due_utc"]))
        right = hi if hi is not None else np.nanmax(_num(f["due_utc"]))
        x0, x1 = np.where(np.isnan(x0), left, x0), np.where(np.isnan(x1), right, x1)
        for sid, a, b in zip(gaps["schedule_id"].to_list(), x0, x1):
            ax.barh(row[sid], b - a, left=a, height=0.7, zorder=1, **_GAP)
        handles.append(Patch(facecolor=_GAP["color"], alpha=_GAP["alpha"], label="observation gap (no done run)"))
    for state in LEDGER_STATES:
        part = f.filter(pl.col("state") == state)
        col = "started_utc" if state == "done" else ("eligible_utc" if "eligible_utc" in f.columns else "due_utc")
        if state != "done" and col == "eligible_utc":
            x = _num(part.select(pl.coalesce("eligible_utc", "due_utc")).to_series())
        else:
            x = _num(part[col]) if part.height else np.array([])
        ok = ~np.isnan(x)
        if not ok.any():
            continue
        color, marker = STATE_STYLE[state]
        y = part["_row"].to_numpy()[ok]
        ax.scatter(x[ok], y, marker=marker, s=70 if state == "done" else 26, color=color, zorder=3,
                   linewidths=1.2 if marker in "|x" else 0.5, edgecolors=None if marker in "|x" else "white",
                   label=f"{state} ({'ran' if state == 'done' else 'did not run'}; {int(ok.sum())})")
    handles = [h for h in ax.get_legend_handles_labels()[0] if not isinstance(h, Patch)] + handles
    ax.set_yticks(range(len(ids)), [f"{sid} ({z})" for sid, z in _zones(f, ids)], fontsize=8)
    ax.set_ylim(len(ids) - 0.5, -0.5)
    if lo is not None:
        ax.set_xlim(lo, hi)
    _date_axis(ax)
    ax.grid(axis="x", color="#dddddd", lw=0.6)
    ax.set_xlabel("time (UTC)")
    ax.set_ylabel("schedule (zone)")
    shown = f" ({len(ids)} of {total} schedules)" if len(ids) < total else ""
    ax.set_title(f"{led.name}: runs and missed occurrences per schedule{shown}")
    _legend_below(fig, handles)
    return fig


def _zones(f: pl.DataFrame, ids: list[str]) -> list[tuple[str, str]]:
    zone = dict(f.group_by("schedule_id").agg(pl.col("zone").first()).iter_rows()) if "zone" in f.columns else {}
    return [(sid, zone.get(sid, "?")) for sid in ids]


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


def cost_impact(ledgers: object, budget: object = None) -> Figure:
    """Cost started per budget period and policy, against the budget limit: the catch-up burst shows.

    Parameters
    ----------
    ledgers
        Ledgers to compare (a Ledger, list, ``{label: Ledger}`` dict or ledger frame).
    budget
        A :class:`~calsim.Budget`: only its account's runs count and periods are
        its calendar periods in its zone, so the limit line is exact. A number:
        a limit per UTC day over all runs. None: the scenarios' budget when they
        share exactly one, else total cost per UTC day without a limit line.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> fleet = calsim.with_policy([calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")],
    ...                            cost=1.0, account="a")
    >>> sc = calsim.Scenario("all", fleet, "2026-01-01T00:00Z", "2026-01-03T00:00Z",
    ...                      budgets=[calsim.Budget("a", 30, "day", "UTC")])
    >>> fig = calsim.plots.cost_impact(calsim.simulate(sc))
    >>> type(fig).__name__, fig.axes[0].get_ylabel()
    ('Figure', 'cost started per day')
    """
    leds = _ledgers(ledgers)
    for led in leds:
        _frame(led.frame, "ledgers", ("cost",), "ledger frame")
    b = _budget(budget, leds)
    zone, period = (b.zone, b.period) if b else ("UTC", "day")
    every = {"day": "1d", "week": "1w", "month": "1mo"}[period]
    series = []
    for led in leds:
        f = led.frame.filter(pl.col("started_utc").is_not_null())
        if b is not None and b.account != "(all)" and led.accounts:
            f = f.filter(pl.col("schedule_id").replace_strict(led.accounts, default=None, return_dtype=pl.String)
                         == b.account)
        f = f.with_columns(bin=pl.col("started_utc").dt.convert_time_zone(zone).dt.truncate(every).dt.date())
        series.append(f.group_by("bin").agg(pl.col("cost").sum()).sort("bin"))
    bounds = [s["bin"] for s in series if s.height]
    for led in leds:
        sc = led.scenario
        if sc is not None and hasattr(sc, "start_us"):
            ends = pl.Series([sc.start_us, sc.end_us - 1]).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
            bounds.append(ends.dt.convert_time_zone(zone).dt.truncate(every).dt.date())
    fig = _figure(10, 4.6)
    ax = fig.add_subplot()
    handles = []
    if bounds:
        allb = pl.concat(bounds)
        days = pl.date_range(allb.min(), allb.max(), every, eager=True).alias("bin").to_frame()
        width = 0.84 / len(leds)
        peak = None
        # Only a peak from the period the scheduler came back in onwards is a
        # catch-up burst; without an outage, the busiest period is just that
        # (a month-end job is not a burst).
        spans = _outages(leds)
        after = None
        if spans:
            first_end = pl.Series([spans[0][1]]).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
            after = _num(first_end.dt.convert_time_zone(zone).dt.truncate(every).dt.date())[0]
        for i, (led, s) in enumerate(zip(leds, series)):
            full = days.join(s, on="bin", how="left").with_columns(pl.col("cost").fill_null(0.0))
            x, y = _num(full["bin"]), full["cost"].to_numpy()
            span = np.diff(np.append(x, x[-1] + (x[-1] - x[-2] if len(x) > 1 else 1.0)))  # a month is not 30 d
            left = x + span * (0.08 + i * width)
            handles.append(ax.bar(left, y, span * width, align="edge", color=_series_style(i)["color"],
                                  label=f"{led.name} (total {y.sum():g})"))
            yy = np.where(x >= after, y, -np.inf) if after is not None else y
            if len(y) and np.isfinite(yy.max()) and (peak is None or yy.max() > peak[1]):
                j = int(np.argmax(yy))
                peak = (left[j] + span[j] * width / 2, float(y[j]), led.name, float(np.median(y)))
        if peak is not None and peak[1] > 1.2 * peak[3] and peak[1] > 0:
            what = "catch-up burst" if after is not None else f"busiest {period}"
            ax.annotate(f"{what}: {peak[1]:g} ({peak[2]})", (peak[0], peak[1]), xytext=(6, 4),
                        textcoords="offset points", fontsize=8)
    to_x = (lambda us: _us_num(us)) if zone == "UTC" else (lambda us: float(_num(
        pl.Series([us]).cast(pl.Datetime("us")).dt.replace_time_zone("UTC").dt.convert_time_zone(zone)
        .dt.replace_time_zone(None))[0]))
    handles += _shade_outages(ax, _outages(leds), to_x)
    if b is not None:
        who = "all runs" if b.account == "(all)" else f"account {b.account}"
        handles.append(ax.axhline(b.limit, color=_C["black"], ls="--", lw=1.2,
                                  label=f"budget limit {b.limit:g} per {period} ({who})"))
    _date_axis(ax)
    ax.set_ylim(bottom=0)
    ax.margins(y=0.15)
    ax.grid(color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(f"{period} of the run's start ({zone} calendar)")
    ax.set_ylabel(f"cost started per {period}")
    scope = "" if b is None or b.account == "(all)" else f" (account {b.account})"
    ax.set_title(f"Cost per {period} and policy vs budget{scope}")
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

    Occurrences that never waited are left out of the bars and counted in the legend.

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
        waits.append((f["budget_wait_s"].fill_null(0).to_numpy().astype(float), f.height))
    hist = np.array([np.histogram(w[w > 0], bins=_WAIT_EDGES)[0] for w, _ in waits])
    used = np.flatnonzero(hist.sum(axis=0))
    fig = _figure(9, 4.6)
    ax = fig.add_subplot()
    ax.set_title("Budget waits per policy")
    ax.set_xlabel("time held waiting for a budget period with room")
    ax.set_ylabel("occurrences")
    if not len(used):
        ax.text(0.5, 0.5, "no occurrence waited for budget", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        for i, led in enumerate(leds):
            ax.bar([], [], label=f"{led.name}: 0 of {waits[i][1]} waited", color=_series_style(i)["color"])
        ax.legend(loc="upper right", fontsize=9)
        return fig
    cols = np.arange(used[0], used[-1] + 1)
    width = 0.8 / len(leds)
    for i, led in enumerate(leds):
        w, n = waits[i]
        pos = w[w > 0]
        extra = f", max {_dur(pos.max())}" if len(pos) else ""
        ax.bar(np.arange(len(cols)) + (i - (len(leds) - 1) / 2) * width, hist[i, cols], width,
               color=_series_style(i)["color"], label=f"{led.name}: {len(pos)} of {n} waited{extra}")
    ax.set_xticks(np.arange(len(cols)), [_WAIT_LABELS[c] for c in cols])
    ax.grid(axis="y", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    ax.legend(loc="upper right", fontsize=9)
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


def tzdiff_map(diff: object, max_schedules: int = 40) -> Figure:
    """What a tzdata upgrade moves: affected schedules (grouped by zone) by date, coloured by shift.

    Each changed occurrence is a square at its nominal local date, coloured by
    ``shift_s`` (new − old instant, hours; diverging, centred on 0). Changes
    without a shift (an occurrence gains or loses its instant) are drawn in
    black with a marker per ``change`` kind. An empty diff gives a figure that
    says so.

    Parameters
    ----------
    diff
        A :func:`calsim.tzdiff` frame (polars or pandas).
    max_schedules
        At most this many rows (schedules, in zone order); the title says when some were left out.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> s = calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")
    >>> d = calsim.tzdiff([s], "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z")
    >>> fig = calsim.plots.tzdiff_map(d)
    >>> type(fig).__name__, len(fig.axes)   # the map and its colour bar
    ('Figure', 2)
    >>> calsim.plots.tzdiff_map(d.head(0)).axes[0].texts[0].get_text()
    'no changes: every occurrence resolves to the same instant in both releases'
    """
    f = _frame(diff, "diff", ("schedule_id", "nominal_local", "zone", "shift_s", "change"), "calsim.tzdiff frame")
    max_schedules = _int_arg(max_schedules, "max_schedules")
    title = "tzdata upgrade: changed occurrences by zone and schedule"
    if f.height == 0:
        fig = _figure(8, 2.6)
        ax = fig.add_subplot()
        ax.text(0.5, 0.5, "no changes: every occurrence resolves to the same instant in both releases",
                ha="center", va="center", transform=ax.transAxes, fontsize=11)
        ax.set_axis_off()
        ax.set_title(title)
        return fig
    order = f.select("zone", "schedule_id").unique().sort("zone", "schedule_id")
    total = order.height
    order = order.head(max_schedules)
    row = {sid: i for i, sid in enumerate(order["schedule_id"])}
    f = f.filter(pl.col("schedule_id").is_in(list(row))).with_columns(
        pl.col("schedule_id").replace_strict(row, return_dtype=pl.Int64).alias("_row"))
    height = max(3.0, 1.9 + 0.32 * len(row))
    fig = _figure(11, height)
    ax = fig.add_subplot()
    x = _num(f["nominal_local"])
    shift_h = f["shift_s"].cast(pl.Float64).to_numpy() / 3600
    y = f["_row"].to_numpy()
    has = ~np.isnan(shift_h)
    half = float(np.nanmax(np.abs(shift_h))) if has.any() else 1.0
    points = ax.scatter(x[has], y[has], c=shift_h[has], cmap=_DIVERGING, norm=CenteredNorm(0, half or 1.0),
                        marker="s", s=22, lw=0, zorder=3)
    cbar = fig.colorbar(points, ax=ax, pad=0.01, fraction=0.04, aspect=max(20.0, 8 * height))  # full height
    cbar.set_label("shift = new − old instant")
    cbar.ax.yaxis.set_major_locator(MaxNLocator(nbins=max(4, int(height)), symmetric=True))
    cbar.ax.yaxis.set_major_formatter(FuncFormatter(
        lambda v, _: "0" if abs(v) < 1e-9 else ("+" if v > 0 else "−") + _dur(abs(v) * 3600)))
    handles = []
    change = f["change"].to_numpy()
    for kind in sorted(set(change[~has].tolist())):
        m = ~has & (change == kind)
        ax.scatter(x[m], y[m], marker=_CHANGE_MARKERS.get(kind, "o"), s=36, facecolors="none",
                   edgecolors=_C["black"], lw=1, zorder=4)
        handles.append(Line2D([], [], ls="", marker=_CHANGE_MARKERS.get(kind, "o"), mfc="none", mec=_C["black"],
                              label=f"{kind} ({int(m.sum())})"))
    zones = order["zone"].to_list()
    for i in range(1, len(zones)):
        if zones[i] != zones[i - 1]:
            ax.axhline(i - 0.5, color="#999999", lw=0.8)
    ax.set_yticks(range(len(row)), [f"{z} · {sid}" for z, sid in order.iter_rows()], fontsize=8)
    ax.set_ylim(len(row) - 0.5, -0.5)
    _date_axis(ax)
    ax.grid(axis="x", color="#e5e5e5", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel("nominal local date (in each schedule's zone)")
    ax.set_ylabel("zone · schedule")
    shown = f" ({len(row)} of {total} schedules)" if len(row) < total else ""
    ax.set_title(f"{title}{shown}")
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=min(4, len(handles)), frameon=False,
                   fontsize=9, title="changes without a shift (one side has no instant)", title_fontsize=9)
    return fig
