"""Charts of what time zones do to fire times, from expansions and diffs (no ledger needed).

:func:`local_vs_utc` draws one schedule's local and UTC times of day across a
year, so DST edges show; :func:`tzdiff_map` draws what a tzdata upgrade moves
(a :func:`calsim.tzdiff` frame), by zone, schedule and date.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.colors import Normalize
from matplotlib.lines import Line2D

from ..errors import InputError
from ..expansion import expand
from ..schedule import Schedule
from ..simulation.views import natural_key
from ..times import DAY_US, instant_us, iso_z
from ..tz.release import ReleaseLike
import calsim.plots.inputs as inputs
from .style import (DIVERGING, OKABE_ITO, Figure, date_axis, date_num, duration_label, legend_below, new_figure,
                    offset_label, shift_ticks, us_num)

__all__ = ["local_vs_utc", "tzdiff_map"]


def local_vs_utc(frame_or_schedule: object, start: object = None, end: object = None,
                 release: ReleaseLike = None) -> Figure:
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
    if isinstance(frame_or_schedule, Schedule):
        s = frame_or_schedule
        base = s.start_utc if s.start_utc is not None else s.start_wall
        if start is not None:
            lo = instant_us(start, "start")
        elif base is not None:
            lo = (base // DAY_US) * DAY_US
        else:  # an Every with its own anchor needs no start: the window then has no default
            raise InputError(f"start: required for schedule {s.id!r}, which has no start to default the window to")
        hi = instant_us(end, "end") if end is not None else lo + 365 * DAY_US
        f = expand([s], iso_z(lo), iso_z(hi), release)
    else:
        if release is not None:
            raise InputError(f"release: {release!r} is only used to expand a Schedule; this frame is already resolved")
        f = inputs.frame(frame_or_schedule, "frame_or_schedule", ("schedule_id", "nominal_local", "due_utc", "zone"),
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
    fig = new_figure(11, 4.8)
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
    x = date_num(f["_x"])
    has = f["due_utc"].is_not_null().to_numpy()
    small = 12 if f.height < 800 else 4
    ax.scatter(x, f["_loc"].to_numpy(), s=small, color=OKABE_ITO["blue"], marker="o", lw=0,
               label=f"local wall time ({zone})", zorder=3)
    ax.scatter(x[has], f["_utc"].to_numpy()[has], s=small, color=OKABE_ITO["vermillion"], marker="s", lw=0,
               label="UTC", zorder=3)
    if (~has).any():
        ax.scatter(x[~has], f["_loc"].to_numpy()[~has], s=40, color=OKABE_ITO["black"], marker="x", lw=1.2, zorder=4,
                   label=f"no instant: DST gap, merged or excluded ({int((~has).sum())})")
    if "utc_offset_s" in f.columns:
        g = f.filter(pl.col("utc_offset_s").is_not_null()).sort("due_utc")
        off = g["utc_offset_s"].to_numpy()
        edges = np.flatnonzero(off[1:] != off[:-1]) + 1
        gx = date_num(g["_x"])
        for k, e in enumerate(edges):
            xe = (gx[e - 1] + gx[e]) / 2 if gx[e] - gx[e - 1] > 1 else gx[e] - 0.5
            ax.axvline(xe, color=OKABE_ITO["black"], ls=":", lw=1, zorder=1,
                       label="UTC offset changes" if k == 0 else None)
            if len(edges) <= 8:
                ax.text(xe, 23.6, f" {offset_label(off[e - 1])} → {offset_label(off[e])}", rotation=90, va="top",
                        ha="right", fontsize=7, color="#333333")
    ax.set_ylim(0, 24)
    ax.set_yticks(range(0, 25, 3), [f"{h:02d}:00" for h in range(0, 25, 3)])
    date_axis(ax)
    ax.grid(color="#e5e5e5", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(f"local date ({zone})")
    release_name = f["tzdata"][0] if "tzdata" in f.columns else "?"
    ax.set_title(f"{sid}: local and UTC fire times (tzdata {release_name})")
    # Proxies: the scatter points may be tiny, the legend's should not be.
    proxy: dict[str, dict[str, Any]] = {
        "o": dict(marker="o", color=OKABE_ITO["blue"]), "s": dict(marker="s", color=OKABE_ITO["vermillion"]),
        "x": dict(marker="x", color=OKABE_ITO["black"], mew=1.2)}
    handles = [Line2D([], [], ls="", ms=6, label=h.get_label(), **proxy[m])
               for h, m in zip(ax.collections, "osx")]
    handles += [ln for ln in ax.lines if not str(ln.get_label()).startswith("_")]
    legend_below(fig, handles)
    return fig


_CHANGE_MARKERS = {"now_gap": "v", "no_longer_gap": "^", "now_fold": "D", "no_longer_fold": "d",
                   "merged": "P", "unmerged": "X", "moved": "s"}


def _pick_rows(f: pl.DataFrame, n: int) -> pl.DataFrame:
    """``(zone, schedule_id)`` rows to draw: every zone gets a row before any gets a second.

    Zones are ordered by how many schedules they affect (then by their first
    change, then name), schedules within a zone by how many occurrences change
    (then id, naturally: ``job-6`` before ``job-10``); the rows come back grouped by zone in that order.
    """
    per = (f.group_by("zone", "schedule_id").agg(pl.len().alias("n"), pl.col("nominal_local").min().alias("first"))
           .sort(["n", natural_key(pl.col("schedule_id")), "schedule_id"], descending=[True, False, False]))
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
    f = inputs.frame(diff, "diff", ("schedule_id", "nominal_local", "zone", "shift_s", "change"), "calsim.tzdiff frame")
    max_schedules = inputs.int_arg(max_schedules, "max_schedules")
    lo = instant_us(start, "start") if start is not None else None
    hi = instant_us(end, "end") if end is not None else None
    if lo is not None and hi is not None and hi <= lo:
        raise InputError(f"end: {end!r} is not after start {start!r} (the window [start, end) would be empty)")
    title = "tzdata upgrade: changed occurrences by zone and schedule"
    if f.height == 0:
        fig = new_figure(8, 2.6)
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
    fig = new_figure(11, height)
    ax = fig.add_subplot()
    x = date_num(f["nominal_local"])
    shift = f["shift_s"].cast(pl.Float64).to_numpy()
    y = f["_row"].to_numpy()
    moves = ~np.isnan(shift) & (shift != 0)
    if moves.any():
        limit, ticks = shift_ticks(float(np.abs(shift[moves]).max()))
        points = ax.scatter(x[moves], y[moves], c=shift[moves], cmap=DIVERGING, norm=Normalize(-limit, limit),
                            marker="s", s=22, lw=0, zorder=3)
        cbar = fig.colorbar(points, ax=ax, pad=0.01, fraction=0.04, aspect=max(20.0, 8 * height))  # full height
        cbar.set_label("shift = new − old instant")
        cbar.set_ticks(ticks.tolist(), labels=["0" if v == 0 else ("+" if v > 0 else "−") + duration_label(abs(v))
                                      for v in ticks])
    handles = []
    change = f["change"].to_numpy()
    for kind in sorted(set(change[~moves].tolist())):
        m = ~moves & (change == kind)
        ax.scatter(x[m], y[m], marker=_CHANGE_MARKERS.get(kind, "o"), s=40, facecolors="none",
                   edgecolors=OKABE_ITO["black"], lw=1.1, zorder=4)
        zero = int((m & (shift == 0)).sum())
        how = "no shift" if zero == m.sum() else ("one side has no instant" if not zero else "no shift or no instant")
        handles.append(Line2D([], [], ls="", marker=_CHANGE_MARKERS.get(kind, "o"), mfc="none", mec=OKABE_ITO["black"],
                              label=f"{kind}: {how} ({int(m.sum())})"))
    zones = order["zone"].to_list()
    for i in range(1, len(zones)):
        if zones[i] != zones[i - 1]:
            ax.axhline(i - 0.5, color="#999999", lw=0.8)
    ax.set_yticks(range(len(row)), [f"{z} · {sid}" for z, sid in order.iter_rows()], fontsize=8)
    ax.set_ylim(len(row) - 0.5, -0.5)
    days = f["nominal_local"].dt.date()
    left = us_num(lo) if lo is not None else date_num(pl.Series([days.min()]).dt.month_start())[0]
    right = us_num(hi) if hi is not None else date_num(pl.Series([days.max()]).dt.month_end().dt.offset_by("1d"))[0]
    ax.set_xlim(left, right)
    date_axis(ax)
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
