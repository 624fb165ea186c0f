"""What became of the occurrences under each policy: terminal states, and how late the runs started.

Both charts draw the ledger's summary view (:meth:`Ledger.summary`, defined
once in :mod:`calsim.simulation.views`): the bars of :func:`state_counts` are
its per-state counts, and the percentiles :func:`lateness` prints are its
``lateness_p50``/``lateness_p95`` (nearest rank), so a chart never says
another number than ``ledger.summary()``. The lateness curve itself is the
distribution of the started runs' ``lateness_s``, which no view aggregates.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ..simulation.ledger import Ledger
from ..simulation.ledger_schema import LEDGER_STATES
import calsim.plots.inputs as inputs
from .style import STATE_STYLE, Figure, duration_ticks, duration_words, legend_below, new_figure, series_style

__all__ = ["state_counts", "lateness"]

#: The ledger columns the summary view reads.
SUMMARY_COLUMNS = ("kind", "state", "started_utc", "lateness_s", "cost", "budget_wait_s")


def _summary(led: Ledger) -> pl.DataFrame:
    """``led.summary(full=True)`` (every column: summaries of different scenarios stack), or an InputError
    naming the columns a ledger frame lacks for it."""
    inputs.frame(led.frame, "ledgers", SUMMARY_COLUMNS, "ledger frame")
    return led.summary(full=True)


def _counts(ledgers: object) -> tuple[list[str], dict[str, np.ndarray]]:
    """Scenario labels and per-state counts: summary rows, given (a ``compare`` frame) or of each ledger."""
    if ((isinstance(ledgers, pl.DataFrame) or inputs.is_pandas(ledgers)) and "scenario" in ledgers.columns
            and "state" not in ledgers.columns):
        rows = inputs.frame(ledgers, "ledgers", ("scenario", *LEDGER_STATES), "LedgerStore.compare frame")
    else:
        rows = pl.concat([_summary(led) for led in inputs.ledgers(ledgers)])
    return [str(s) for s in rows["scenario"]], {s: rows[s].fill_null(0).to_numpy().astype(float)
                                                for s in LEDGER_STATES}


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
    fig = new_figure(9, max(2.8, 1.6 + 0.45 * len(labels)))
    ax = fig.add_subplot()
    y = np.arange(len(labels))
    totals = sum(counts.values(), np.zeros(len(labels)))
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
    legend_below(fig, ax.get_legend_handles_labels()[0], ncols=6)
    return fig


def lateness(ledgers: object) -> Figure:
    """Cumulative distribution of lateness (start − eligible) of started runs, per policy.

    The x axis is linear from 0 to 1 s and logarithmic beyond (symlog), so
    on-time runs (lateness 0) stay visible next to catch-ups hours late. When
    every policy ran at least half its runs on time, the y axis starts just
    below the smallest on-time share, so that the late tail is not squeezed
    against the top; the axis says so (its label ends "axis starts at 0.88,
    not 0", and its lowest tick is that value). The legend's p50 and p95 are
    :meth:`Ledger.summary`'s (nearest rank: each is a lateness some run had),
    in the summary's words (``2d 13h 55m``, :func:`~.style.duration_words`).

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
    leds = inputs.ledgers(ledgers)
    fig = new_figure(9, 4.6)
    ax = fig.add_subplot()
    high, on_time = 60.0, 1.0
    for i, led in enumerate(leds):
        summary = _summary(led)
        started = led.frame.filter(pl.col("started_utc").is_not_null())
        v = np.clip(started["lateness_s"].drop_nulls().to_numpy().astype(float), 0, None)
        if not len(v):
            ax.plot([], [], label=f"{led.name} (no run started)", **series_style(i))
            continue
        high, on_time = max(high, float(v.max())), min(on_time, float((v == 0).mean()))
        p50, p95 = (duration_words(summary[c][0]) for c in ("lateness_p50", "lateness_p95"))
        ax.ecdf(v, lw=1.8, label=f"{led.name} (n={len(v)}, p50 {p50}, p95 {p95})", **series_style(i))
    ax.set_xscale("symlog", linthresh=1.0, linscale=0.6)
    ax.set_xlim(-0.25, high * 1.5)  # the jump at 0 s stays off the spine
    duration_ticks(ax, high * 1.5)
    # Mostly on time: start the y axis just below the smallest on-time share, so the late tail shows,
    # and say so on the axis (a reader takes the bottom of a fraction axis for 0).
    bottom = round(math.floor(on_time * 10) / 10 - 0.02, 2) if on_time >= 0.5 else 0.0
    ax.set_ylim(bottom, 1.005)
    if bottom > 0:
        ticks = [t for t in ax.get_yticks() if bottom < t <= 1.0 + 1e-9]
        ax.set_yticks([bottom, *ticks])
    ax.grid(color="#dddddd", lw=0.6)
    ax.set_xlabel("lateness = start − eligible (0–1 s linear, log beyond)")
    ax.set_ylabel("fraction of started runs" + (f"\n(axis starts at {bottom:g}, not 0)" if bottom > 0 else ""))
    ax.set_title("Lateness of started runs per policy (cumulative)")
    ax.legend(loc="lower right", fontsize=9)
    return fig
