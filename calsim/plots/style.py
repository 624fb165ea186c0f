"""The look every calsim chart shares: palette, state styles, the ``Figure`` returned, and axis helpers.

Drawing only: nothing here reads a ledger. Colours come from one
colour-blind-safe palette, Okabe-Ito (:data:`OKABE_ITO`); a terminal state
keeps one colour and marker in every chart (:data:`STATE_STYLE`); signed
shifts use the diverging ColorBrewer ``PuOr`` map (:data:`DIVERGING`).

>>> fig = new_figure(4, 2)
>>> type(fig).__name__, fig._repr_png_()[:4]
('Figure', b'\\x89PNG')
"""

from __future__ import annotations

import io
import math
from typing import Any, cast

import matplotlib.dates as mdates
import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as _MplFigure
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter

__all__ = ["OKABE_ITO", "SERIES_COLORS", "STATE_STYLE", "OUTAGE_STYLE", "GAP_STYLE", "DIVERGING", "Figure",
           "new_figure", "date_num", "us_num", "series_style", "date_axis", "shade_outages", "legend_below",
           "duration_label", "duration_words", "duration_ticks", "shift_ticks", "offset_label"]

#: The Okabe-Ito palette (Okabe & Ito 2008), distinguishable with the common colour-vision deficiencies.
OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7",
}
_C = OKABE_ITO
#: One colour per series (policy), in order; repeats with another line style past eight.
SERIES_COLORS = (_C["blue"], _C["orange"], _C["bluish_green"], _C["vermillion"], _C["reddish_purple"],
                 _C["sky_blue"], _C["black"], _C["yellow"])
#: Colour and marker of each terminal state.
STATE_STYLE = {
    "done": (_C["bluish_green"], "|"), "coalesced": (_C["sky_blue"], "o"), "skipped": (_C["orange"], "s"),
    "expired": (_C["vermillion"], "x"), "cancelled": (_C["reddish_purple"], "v"), "failed": (_C["black"], "X"),
}
#: How a span with the scheduler down is shaded (hatched grey), and an observation gap (yellow).
OUTAGE_STYLE: dict[str, Any] = dict(color="#777777", alpha=0.22, hatch="//", lw=0)
GAP_STYLE: dict[str, Any] = dict(color=_C["yellow"], alpha=0.55, lw=0)
DIVERGING = "PuOr"  # ColorBrewer, colour-blind safe


class Figure(_MplFigure):
    """A :class:`matplotlib.figure.Figure` that also shows itself in Jupyter without pyplot."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=100)
        return buf.getvalue()


def new_figure(width: float, height: float) -> Figure:
    """A constrained-layout :class:`Figure` on an Agg canvas: headless, never kept alive by pyplot."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # savefig / canvas.draw without pyplot
    return fig


def date_num(s: pl.Series) -> np.ndarray:
    """Matplotlib date numbers of a Datetime/Date series (instants in UTC, naive as they are); null -> nan."""
    if s.dtype == pl.Date:
        s = s.cast(pl.Datetime("us"))
    elif getattr(s.dtype, "time_zone", None):
        s = s.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
    return mdates.date2num(s.cast(pl.Datetime("us")).to_numpy())


def us_num(us: int) -> float:
    """The matplotlib date number of an instant in µs since the epoch."""
    return float(mdates.date2num(np.datetime64(int(us), "us")))


def series_style(i: int) -> dict:
    """Colour and dash of series ``i``: both vary, so overlapping lines stay apart."""
    return dict(color=SERIES_COLORS[i % len(SERIES_COLORS)], ls=("-", "--", "-.", ":")[i % 4])


def date_axis(ax, axis: str = "x") -> None:
    """Concise date ticks (3 to 9 of them) on ``ax``'s x (or y) axis."""
    locator = mdates.AutoDateLocator(minticks=3, maxticks=9)
    a = ax.xaxis if axis == "x" else ax.yaxis
    a.set_major_locator(locator)
    a.set_major_formatter(mdates.ConciseDateFormatter(locator, show_offset=True))


def shade_outages(ax, spans: list[tuple[int, int]], to_x=us_num) -> list:
    """Shade each ``(start_us, end_us)`` span; returns the legend patch (none without a span)."""
    for a, b in spans:
        ax.axvspan(to_x(a), to_x(b), zorder=0, **OUTAGE_STYLE)
    return [Patch(facecolor=OUTAGE_STYLE["color"], alpha=OUTAGE_STYLE["alpha"], hatch="//",
                  label="outage (scheduler down)")] if spans else []


def legend_below(fig, handles: list, ncols: int = 4) -> None:
    """One frameless legend under the axes (constrained layout makes room); nothing without handles."""
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=min(ncols, len(handles)), frameon=False,
                   fontsize=9)


_UNITS = ((7 * 86400, "wk"), (86400, "d"), (3600, "h"), (60, "min"), (1, "s"))


def duration_label(seconds: float) -> str:
    """A duration in its largest whole unit, three significant digits, as chart labels print it.

    Not :func:`calsim.durations.format_duration` (``1h30m``, exact): a tick or
    legend wants one short number.

    >>> duration_label(5400), duration_label(0), duration_label(0.25), duration_label(float("nan"))
    ('1.5 h', '0 s', '0.25 s', 'n/a')
    """
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "n/a"
    if seconds == 0:
        return "0 s"
    for size, unit in _UNITS:
        if abs(seconds) >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.2g} s"


def duration_words(value: object) -> str:
    """A span as :meth:`Ledger.summary <calsim.Ledger.summary>` prints it: polars' own words for a Duration.

    For the numbers a chart quotes from the summary (a legend's ``max``,
    ``p95``), so that the chart and the table say the same thing: ``5h 45m``,
    never ``5.75 h``. ``value`` is a ``timedelta`` (a summary cell) or seconds,
    taken as they are (round them as the summary does first: :func:`calsim.
    simulation.views.seconds_to_duration`). Zero is ``0s`` (polars prints ``0µs``).

    >>> import datetime as dt
    >>> duration_words(dt.timedelta(hours=5, minutes=45)), duration_words(0), duration_words(None)
    ('5h 45m', '0s', 'n/a')
    >>> duration_words(2 * 86400 + 13 * 3600 + 55 * 60 + 3)
    '2d 13h 55m 3s'
    """
    import datetime as dt

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    td = value if isinstance(value, dt.timedelta) else dt.timedelta(seconds=float(cast(float, value)))
    if td == dt.timedelta(0):
        return "0s"
    return str(pl.Series([td], dtype=pl.Duration("us")).dt.to_string("polars")[0])


def duration_ticks(ax, high: float) -> None:
    """Readable duration ticks (0, 1 s, 1 min, 1 h, 1 d, ...) on a symlog x axis."""
    nice = [0, 1, 10, 60, 600, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400]
    ticks = [t for t in nice if t <= high * 1.05]
    if len(ticks) > 8:
        ticks = [t for t in ticks if t not in (10, 6 * 3600)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: duration_label(x)))


_NICE_SHIFTS = (60, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400)


def shift_ticks(half: float) -> tuple[float, np.ndarray]:
    """Round colour-bar ticks (seconds) for shifts up to ``half`` either way: ``(limit, ticks)``.

    The step is the smallest round duration (1, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1 d...) that
    needs at most three ticks a side, and the limit is rounded up to a step so the ends are ticks too.

    >>> limit, ticks = shift_ticks(2400)   # Asia/Tehran's 40 min
    >>> limit, ticks.tolist()
    (2700.0, [-2700.0, -1800.0, -900.0, 0.0, 900.0, 1800.0, 2700.0])
    """
    half = abs(float(half)) or 3600.0
    step = next((s for s in _NICE_SHIFTS if math.ceil(half / s - 1e-9) <= 3), None)
    if step is None:
        step = 86400 * 10 ** math.ceil(math.log10(half / 86400 / 3))
    n = max(1, math.ceil(half / step - 1e-9))
    return float(n * step), np.arange(-n, n + 1) * float(step)


def offset_label(seconds: int) -> str:
    """A UTC offset as a label, with a true minus sign.

    >>> offset_label(-18000), offset_label(20700), offset_label(0)
    ('UTC−5', 'UTC+5:45', 'UTC+0')
    """
    sign = "+" if seconds >= 0 else "−"
    h, m = divmod(abs(int(seconds)) // 60, 60)
    return f"UTC{sign}{h}" + (f":{m:02d}" if m else "")
