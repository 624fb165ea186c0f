"""The timeline chart: per schedule a row of runs, late catch-ups, missed and excluded occurrences.

Several ledgers (policies) are drawn as stacked panels over one time axis with
the same schedules in the same rows, so what differs between panels is the
policy, never the selection. Observation gaps are the ledger's gaps view
(:meth:`Ledger.gaps`); what the chart computes itself is where to draw: which
schedules get a row, and where an occurrence without an instant falls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import matplotlib.dates as mdates
import numpy as np
import polars as pl
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..errors import InputError
from ..schedule import Schedule
from ..simulation.ledger import Ledger
from ..simulation.ledger_schema import BY_DESIGN_REASONS, LEDGER_STATES
from ..simulation.views import CLASSIFIED_COLUMNS, natural_key, natural_sort_key
from ..times import US
import calsim.plots.inputs as inputs
from .style import (
    GAP_STYLE,
    OKABE_ITO,
    STATE_STYLE,
    Figure,
    date_axis,
    date_num,
    duration_label,
    legend_below,
    new_figure,
    shade_outages,
    us_num,
)

__all__ = ["timeline", "BY_DESIGN_STYLE"]

#: Occurrences never meant to run (the ledger's BY_DESIGN_REASONS), by reason: label and hollow marker,
#: in the order they are drawn.
BY_DESIGN_STYLE = {"calendar": ("excluded (holiday/calendar)", "D"), "dst_gap": ("skipped in a DST gap", "^"),
                   "merged": ("merged into another run", "p")}
_LATE = (STATE_STYLE["done"][0], ">")


#: Default rows: 20 on one panel; with several, about :data:`_ROWS_IN_ALL` rows over all panels (at least 6 each).
_ROWS_ONE, _ROWS_IN_ALL, _ROWS_MIN = 20, 36, 6
#: The figure's height cap (inches; 1,200 px as Jupyter shows it): rows get thinner, down to :data:`_ROW_MIN`.
_MAX_HEIGHT, _ROW, _ROW_MIN, _PANEL, _FIXED = 12.0, 0.3, 0.18, 0.75, 1.2
#: Cadence classes of the default rows: the median spacing of a schedule's due instants, below each edge (s).
_CADENCES = ((3600, "sub-hourly"), (86400, "hourly"), (7 * 86400, "daily"), (28 * 86400, "weekly"))


def timeline(ledger: object, schedules: object = None, max_schedules: int | None = None) -> Figure:
    """Per schedule a row over the horizon: runs, late runs, missed and excluded occurrences, outages, gaps.

    Done runs are drawn where they started: a tick when on time, a triangle
    when they started more than a scheduler tick after they were eligible
    (a catch-up after an outage, a wait for budget or capacity). Occurrences
    that did not run (``coalesced``, ``skipped``, ``expired``, ``cancelled``,
    ``failed``) are drawn where they were eligible, each state with its own
    colour and marker. Occurrences never meant to run (excluded by a holiday
    calendar, skipped in a DST gap, merged) are hollow markers; those without
    an instant are drawn where their wall time falls with the schedule's own
    offset at its nearest occurrence (the ledger's release, no other tz data).
    Outages are shaded; observation gaps (:meth:`Ledger.gaps`: silences in
    which an occurrence was due that did not start) highlighted, when the
    frame has the columns they need.

    Parameters
    ----------
    ledger
        A :class:`~calsim.Ledger` or ledger frame; or several (a list, a
        ``{label: Ledger}`` dict, a frame of several scenarios): one panel
        each, over one time axis, with the same schedules in the same rows.
    schedules
        Schedule ids (or :class:`~calsim.Schedule` objects) to show, in this order.
        None: ``max_schedules`` schedules chosen for variety, then shown in
        natural id order (``job-6`` before ``job-10``). Each schedule has a
        *cadence* (the median spacing of its due instants: sub-hourly,
        hourly, daily, weekly, monthly or rarer) and a *tenant* (its account,
        else its id up to the first ``/`` or ``:``). Rows are picked one at a
        time from the cadence shown least so far, and within it the tenant
        shown least so far; ties go to the schedule with the most
        occurrences due while the scheduler was down, then the most
        excluded or DST-skipped, then the most occurrences, then by id. So
        a fleet's hourly jobs of one tenant no longer fill every row, and an
        outage still shows where it hit. None of this depends on the policy,
        so timelines of one fleet under different policies, drawn one at a
        time, show the same schedules too.
    max_schedules
        At most this many rows per panel; the title says when some were left
        out. None: 20 for one ledger; for several, 36 rows over all panels
        (at least 6 each: 7 for five policies). The figure is at most 12
        inches (1,200 px in Jupyter) tall: rows get thinner (down to 0.18 in)
        before it grows, and only rows asked for beyond that make it taller.

    Examples
    --------
    >>> import calsim, calsim.plots
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    >>> sc = {p: calsim.Scenario(p, calsim.with_policy([s], catchup=p), "2026-01-01T00:00Z", "2026-01-02T00:00Z",
    ...                          outages=[calsim.Outage("2026-01-01T03:30Z", "2026-01-01T07:10Z")])
    ...       for p in ("all", "latest")}
    >>> fig = calsim.plots.timeline({p: calsim.simulate(x) for p, x in sc.items()})
    >>> [ax.get_title("left").split(":")[0] for ax in fig.axes], fig.axes[-1].get_xlabel()
    (['all', 'latest'], 'time (UTC)')
    """
    if isinstance(ledger, (list, tuple, Mapping)) and not len(ledger):
        raise InputError(f"ledger: expected a Ledger, a ledger frame or several of them, got an empty "
                         f"{type(ledger).__name__}")
    leds = inputs.ledgers(ledger, "ledger")
    if max_schedules is None:
        max_schedules = _ROWS_ONE if len(leds) == 1 else max(_ROWS_MIN, min(_ROWS_ONE, _ROWS_IN_ALL // len(leds)))
    max_schedules = inputs.int_arg(max_schedules, "max_schedules")
    frames = [_scheduled(led) for led in leds]
    known = list(dict.fromkeys(sid for f in frames for sid in f["schedule_id"].unique(maintain_order=True)))
    if schedules is None:
        ids = _default_rows(leds, frames, max_schedules)
    else:
        ids = _asked_rows(schedules, known)[:max_schedules]
    row = {sid: i for i, sid in enumerate(ids)}
    one = len(leds) == 1
    fig = new_figure(11, _height(len(leds), len(ids)))
    axes = fig.subplots(len(leds), 1, sharex=True, squeeze=False)[:, 0]
    shown = f" ({len(ids)} of {len(known)} schedules)" if len(ids) < len(known) else ""
    legend: dict[str, object] = {}
    for ax, led, f in zip(axes, leds, frames):
        f = f.filter(pl.col("schedule_id").is_in(ids)).with_columns(
            pl.col("schedule_id").replace_strict(row, return_dtype=pl.Int64).alias("_row"),
            pl.col("state").cast(pl.String))
        counts = _panel(ax, led, f, ids, row, legend, one)
        ax.set_yticks(range(len(ids)), _row_labels(f, ids), fontsize=8)
        ax.set_ylim(len(ids) - 0.5, -0.5)
        ax.grid(axis="x", color="#dddddd", lw=0.6)
        ax.set_ylabel("schedule (zone)")
        if one:
            ax.set_title(f"{led.name}: runs and missed occurrences per schedule{shown}")
        else:
            ax.set_title(f"{led.name}: {counts}", fontsize=10, loc="left")
    if not one:
        fig.suptitle(f"Runs and missed occurrences: the same {len(ids)} schedules under each policy{shown}")
    date_axis(axes[-1])
    axes[-1].set_xlabel("time (UTC)")
    # Runs first, then what did not run, then what was never meant to, then the shading.
    order = ["done on time", "done late", *LEDGER_STATES[1:], *(v[0] for v in BY_DESIGN_STYLE.values()), "outage",
             "gap"]
    rank = lambda key: next(i for i, o in enumerate(order + [key]) if key.startswith(o))  # noqa: E731
    legend_below(fig, [legend[k] for k in sorted(legend, key=rank)], ncols=3)
    return fig


def _scheduled(led: Ledger) -> pl.DataFrame:
    f = led.frame
    return f.filter(pl.col("kind") == "scheduled") if "kind" in f.columns else f


def _by_design(f: pl.DataFrame) -> pl.Expr:
    if "reason" not in f.columns:
        return pl.lit(False)
    return pl.col("reason").cast(pl.String).is_in(list(BY_DESIGN_REASONS)).fill_null(False)


def _height(panels: int, rows: int) -> float:
    """The figure's height (inches): 0.3 in a row, thinner (to 0.18) to stay within 12 in (see timeline)."""
    if panels == 1:
        return max(3.2, 1.6 + _ROW * rows)
    fixed = _FIXED + _PANEL * panels
    row = min(_ROW, max(_ROW_MIN, (_MAX_HEIGHT - fixed) / max(1, panels * rows)))
    return fixed + max(1.4 - _PANEL, row * rows) * panels


def _cadence(seconds: float | None) -> str:
    if seconds is None:
        return "monthly or rarer"
    return next((name for edge, name in _CADENCES if seconds < edge), "monthly or rarer")


def _default_rows(leds: list[Ledger], frames: list[pl.DataFrame], n: int) -> list[str]:
    """The ``n`` schedules to show when none are asked for: varied cadences and tenants (see timeline)."""
    spans = sorted({(o.start_us, o.end_us) for led in leds for o in getattr(led.scenario, "outages", ()) or ()})
    scores = []
    for f in frames:
        due = pl.col("due_utc").dt.epoch("us")
        down = pl.lit(False)
        for a, b in spans:
            down = down | ((due >= a) & (due < b)).fill_null(False)
        spacing = due.drop_nulls().unique().sort().diff().median() / US
        scores.append(f.group_by("schedule_id").agg(down.sum().alias("down"), _by_design(f).sum().alias("design"),
                                                     pl.len().alias("rows"), spacing.alias("spacing")))
    # The largest of each count over the ledgers: the same number for one fleet whatever the policy.
    ranked = (pl.concat(scores).group_by("schedule_id").agg(pl.col("down", "design", "rows").max(),
                                                            pl.col("spacing").min())
              .with_columns(pl.col("schedule_id").cast(pl.String)))
    accounts = {k: v for led in leds for k, v in (led.accounts or {}).items() if v is not None}
    prefix = pl.col("schedule_id").str.extract(r"^([^/:]+)[/:]").fill_null("")
    tenant = (pl.col("schedule_id").replace_strict(accounts, default=None, return_dtype=pl.String).fill_null(prefix)
              if accounts else prefix)
    ranked = (ranked.with_columns(tenant=tenant,
                                  cadence=pl.col("spacing").map_elements(_cadence, return_dtype=pl.String,
                                                                         skip_nulls=False))
              .sort(["down", "design", "rows", natural_key(pl.col("schedule_id")), "schedule_id"],
                    descending=[True, True, True, False, False])
              # No group gives more than n rows: the rest cannot be picked.
              .filter(pl.int_range(pl.len()).over("tenant", "cadence") < n))
    by_cadence: dict[str, list[tuple[str, str]]] = {}
    for sid, who, cadence in ranked.select("schedule_id", "tenant", "cadence").iter_rows():
        by_cadence.setdefault(cadence, []).append((sid, who))  # best first
    rank = {sid: i for i, sid in enumerate(ranked["schedule_id"].to_list())}
    shown_c = dict.fromkeys(by_cadence, 0)
    shown_t: dict[str, int] = {}
    picked: list[str] = []
    while len(picked) < n and any(by_cadence.values()):
        # The cadence shown least, then the one whose best remaining schedule ranks first.
        c = min((k for k, v in by_cadence.items() if v), key=lambda k: (shown_c[k], rank[by_cadence[k][0][0]]))
        # Within it, the tenant shown least, then rank (the list is in rank order: min keeps the first).
        j = min(range(len(by_cadence[c])), key=lambda i: shown_t.get(by_cadence[c][i][1], 0))
        sid, who = by_cadence[c].pop(j)
        picked.append(sid)
        shown_c[c] += 1
        shown_t[who] = shown_t.get(who, 0) + 1
    return sorted(picked, key=natural_sort_key)


def _asked_rows(schedules: object, known: list[str]) -> list[str]:
    items = [schedules] if isinstance(schedules, (str, Schedule)) else schedules
    try:
        # (what is not iterable raises TypeError here)
        ids = [s.id if isinstance(s, Schedule) else s for s in cast(Iterable[Any], items)]
    except TypeError:
        raise InputError(f"schedules: expected schedule ids or Schedules, got {type(schedules).__name__}") from None
    unknown = [s for s in ids if s not in known]
    if unknown:
        raise InputError(f"schedules: {unknown[:3]} not in the ledger (it has {len(known)} schedules, "
                         f"e.g. {known[:3]})")
    return list(dict.fromkeys(ids))


def _row_labels(f: pl.DataFrame, ids: list[str]) -> list[str]:
    zone = dict(f.group_by("schedule_id").agg(pl.col("zone").first()).iter_rows()) if "zone" in f.columns else {}
    return [f"{sid} ({zone.get(sid, '?')})" for sid in ids]


def _late_after(led: Ledger) -> float:
    """Lateness (s) beyond which a run counts as late: the scenario's tick (a run waits for a tick), else 1 min."""
    tick = getattr(led.scenario, "tick_us", None)
    return max(tick / US, 1.0) if isinstance(tick, int) else 60.0


def _panel(ax, led: Ledger, f: pl.DataFrame, ids: list[str], row: dict, legend: dict, one: bool) -> str:
    """Draw one ledger's rows on ``ax``; adds its legend entries to ``legend``; returns its counts line."""
    sc = led.scenario
    lo = hi = None
    if sc is not None and hasattr(sc, "start_us"):
        lo, hi = us_num(sc.start_us), us_num(sc.end_us)
    spans = sorted({(o.start_us, o.end_us) for o in getattr(sc, "outages", ()) or ()})
    for h in shade_outages(ax, spans):
        legend.setdefault("outage", h)
    if "reason" in f.columns:
        _gaps(ax, led, f, ids, row, lo, hi, legend)
    design = f.filter(_by_design(f))
    f = f.filter(~_by_design(f))

    def edge_of(marker: str) -> str | None:
        # Line markers have no edge; filled ones a white rim (they stay apart), the late triangle a dark one
        # (it must stand out from the ticks it sits among).
        return None if marker in "|x" else (OKABE_ITO["black"] if marker == _LATE[1] else "white")

    def dots(x, y, label, color, marker, size, hollow=False):
        ok = ~np.isnan(x)
        if not ok.any():
            return 0
        n = int(ok.sum())
        edge = edge_of(marker)
        style = (dict(facecolors="none", edgecolors=color, linewidths=1.1) if hollow
                 else dict(color=color, linewidths=1.2 if edge is None else 0.5, edgecolors=edge))
        ax.scatter(x[ok], y[ok], marker=marker, s=size, zorder=3, label=f"{label}; {n}", **style)
        kw = dict(mfc="none", mec=color, mew=1.1) if hollow else dict(color=color, mec=edge or color,
                                                                      mew=1.2 if edge is None else 0.5)
        legend.setdefault(label, Line2D([], [], ls="", marker=marker, ms=7 if marker in "|x" else 6,
                                        label=f"{label} ({n})" if one else label, **kw))
        return n

    late_after = _late_after(led)
    done = f.filter(pl.col("state") == "done")
    late = (inputs.seconds(done["lateness_s"]) > late_after if "lateness_s" in done.columns
            else np.zeros(done.height, bool))
    x, y = date_num(done["started_utc"]), done["_row"].to_numpy()
    ran = dots(x[~late], y[~late], "done on time (ran)", STATE_STYLE["done"][0], "|", 70)
    n_late = dots(x[late], y[late], f"done late (> {duration_label(late_after)}: catch-up or wait)",
                  _LATE[0], _LATE[1], 42)
    missed = 0
    for state in LEDGER_STATES[1:]:
        part = f.filter(pl.col("state") == state)
        if not part.height:
            continue
        at = pl.coalesce("eligible_utc", "due_utc") if "eligible_utc" in part.columns else pl.col("due_utc")
        color, marker = STATE_STYLE[state]
        missed += dots(date_num(part.select(at).to_series()), part["_row"].to_numpy(), f"{state} (did not run)",
                       color, marker, 26)
    never, why = 0, []
    for reason, (label, marker) in BY_DESIGN_STYLE.items() if "reason" in design.columns else ():
        part = design.filter(pl.col("reason").cast(pl.String) == reason)
        if part.height:
            never += dots(_placed(led, f, part), part["_row"].to_numpy(), label, OKABE_ITO["black"], marker, 30, True)
            why.append(label.split(" (")[0])
    if lo is not None:
        ax.set_xlim(lo, hi)
    date_axis(ax)
    return (f"{ran + n_late} ran ({n_late} late), {missed} did not run"
            + (f", {never} not meant to run ({'; '.join(why)})" if never else ""))


def _gaps(ax, led: Ledger, f: pl.DataFrame, ids: list[str], row: dict, lo, hi, legend: dict) -> None:
    if not set(CLASSIFIED_COLUMNS) <= set(led.frame.columns):
        return  # a frame of the few columns the runs need: no gaps to draw (not an error)
    gaps = led.gaps()
    gaps = gaps.filter(pl.col("schedule_id").is_in(ids))
    if not gaps.height:
        return
    x0, x1 = date_num(gaps["from_utc"]), date_num(gaps["to_utc"])
    left = lo if lo is not None else np.nanmin(date_num(f["due_utc"]))
    right = hi if hi is not None else np.nanmax(date_num(f["due_utc"]))
    x0, x1 = np.where(np.isnan(x0), left, x0), np.where(np.isnan(x1), right, x1)
    for sid, a, b in zip(gaps["schedule_id"].to_list(), x0, x1):
        ax.barh(row[sid], b - a, left=a, height=0.7, zorder=1, **GAP_STYLE)
    legend.setdefault("gap", Patch(facecolor=GAP_STYLE["color"], alpha=GAP_STYLE["alpha"],
                                   label="observation gap (no done run)"))


def _placed(led: Ledger, rows_with_instants: pl.DataFrame, part: pl.DataFrame) -> np.ndarray:
    """Where occurrences never meant to run go on the UTC axis: at their instant if they have one, else at
    their wall time less the schedule's offset at its nearest occurrence that has one (the ledger's own
    release). A schedule none of whose occurrences has an instant is placed with the release's table."""
    ref = (rows_with_instants.filter(pl.col("due_utc").is_not_null())
           .select("schedule_id", "nominal_local", pl.col("utc_offset_s").alias("_off")).sort("nominal_local"))
    wall = part.select("schedule_id", "nominal_local", "zone", "_row").with_row_index("_i").sort("nominal_local")
    # Both sides are sorted by nominal_local, hence within each schedule too (polars cannot check that with by=).
    back = wall.join_asof(ref, on="nominal_local", by="schedule_id", strategy="backward", check_sortedness=False)
    ahead = wall.join_asof(ref, on="nominal_local", by="schedule_id", strategy="forward", check_sortedness=False)
    got = back.with_columns(pl.coalesce("_off", ahead["_off"]).alias("_off")).sort("_i")
    wall_us = got["nominal_local"].dt.epoch("us").to_numpy().astype(np.int64)
    off = got["_off"].cast(pl.Float64).to_numpy()
    if np.isnan(off).any():
        table_of = inputs.release_of(led).table
        for i in np.flatnonzero(np.isnan(off)):
            t = table_of(got["zone"][int(i)])
            off[i] = float(t.offset_at_utc(np.array([wall_us[i] // US]))[0])
    x = mdates.date2num((wall_us - off.astype(np.int64) * US).astype("datetime64[us]"))
    due = date_num(part["due_utc"])  # one that has an instant after all (a merged row may) is drawn at it
    return np.where(np.isnan(due), x, due)
