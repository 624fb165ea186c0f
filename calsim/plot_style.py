"""The look and the inputs every calsim chart shares: the colour-blind-safe palette, state styles, the
``Figure`` the charts return, argument checks, local time from calsim's own release tables, and axis
helpers (used by :mod:`calsim.plots` and :mod:`calsim.plot_timeline`)."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping

import matplotlib.dates as mdates
import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as _MplFigure
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter

from .errors import CalsimError, InputError
from .simulation.ledger import Ledger


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
_OUTAGE = dict(color="#777777", alpha=0.22, hatch="//", lw=0)
_GAP = dict(color=_C["yellow"], alpha=0.55, lw=0)
_DIVERGING = "PuOr"  # ColorBrewer, colour-blind safe
_LEDGER_COLS = ("schedule_id", "due_utc", "started_utc", "state", "kind")


# ----------------------------------------------------------------------------- inputs


class Figure(_MplFigure):
    """A :class:`matplotlib.figure.Figure` that also shows itself in Jupyter without pyplot."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=100)
        return buf.getvalue()


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # savefig / canvas.draw without pyplot
    return fig


def _is_pandas(obj: object) -> bool:
    return type(obj).__module__.split(".")[0] == "pandas" and hasattr(obj, "columns")


def _frame(obj: object, arg: str, required: tuple[str, ...], what: str) -> pl.DataFrame:
    if isinstance(obj, Ledger):
        df = obj.frame
    elif isinstance(obj, pl.DataFrame):
        df = obj
    elif isinstance(obj, pl.LazyFrame):
        df = obj.collect()
    elif _is_pandas(obj):
        df = pl.from_pandas(obj)
    else:
        raise InputError(f"{arg}: expected {what} (polars or pandas), got {type(obj).__name__} {_short(obj)}")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(f"{arg}: missing column(s) {', '.join(missing)} (a {what} needs {', '.join(required)}; "
                         f"got {', '.join(df.columns) or 'no columns'})")
    return df


def _short(obj: object) -> str:
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."


def _ledgers(obj: object, arg: str = "ledgers") -> list[Ledger]:
    """Normalise ``ledgers`` to labelled :class:`Ledger` objects (frames are wrapped)."""
    what = "a Ledger, a list or dict of Ledgers, or a ledger frame"

    def one(item: object, label: str | None) -> list[Ledger]:
        if isinstance(item, Ledger) and label is None:
            _frame(item, arg, _LEDGER_COLS, "ledger frame")
            return [item]
        if isinstance(item, Ledger):
            _frame(item, arg, _LEDGER_COLS, "ledger frame")
            return [Ledger(label, item.frame, item.accounts, item.scenario)]
        if not (isinstance(item, (pl.DataFrame, pl.LazyFrame)) or _is_pandas(item)):
            raise InputError(f"{arg}: expected {what}, got {type(item).__name__} {_short(item)}")
        df = _frame(item, arg, _LEDGER_COLS, "ledger frame")
        if label is None and "scenario" in df.columns and df.height:
            return [Ledger(str(k[0]), part) for k, part in df.group_by("scenario", maintain_order=True)]
        return [Ledger(label or "ledger", df)]

    if isinstance(obj, Mapping):
        out = [led for k, v in obj.items() for led in one(v, str(k))]
    elif isinstance(obj, (list, tuple)):
        out = [led for v in obj for led in one(v, None)]
    else:
        out = one(obj, None)
    if not out:
        raise InputError(f"{arg}: expected at least one ledger ({what}), got an empty {type(obj).__name__}")
    seen: dict[str, int] = {}
    for i, led in enumerate(out):  # two ledgers of one name would share a legend entry
        n = seen[led.name] = seen.get(led.name, 0) + 1
        if n > 1:
            out[i] = Ledger(f"{led.name} ({n})", led.frame, led.accounts, led.scenario)
    return out


def _int_arg(value: object, arg: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InputError(f"{arg}: {value!r} (allowed an integer >= {low})")
    return value


def _seconds(s: pl.Series) -> np.ndarray:
    """Float seconds of a duration column, whether stored as seconds (``*_s``) or as a polars ``Duration``."""
    if isinstance(s.dtype, pl.Duration):
        s = s.dt.total_microseconds() / 1e6
    return s.cast(pl.Float64).to_numpy()


# ----------------------------------------------------------------------------- local time (calsim's tables)


def _release_of(led: Ledger, release: object = None):
    """The tz release ``led`` was simulated with: ``release`` if given, its scenario's, else the one its
    ``tzdata`` column names (the earliest occurrence's: a TzUpgrade changes later rows, not the budget's
    calendar). Local days are read from this release, never from polars' bundled tz database, so a
    what-if release moves the bins exactly as it moved the engine's budget periods.
    """
    from .tzdb import release as get_release

    if release is not None:
        return get_release(release)
    sc = led.scenario
    if sc is not None and hasattr(sc, "release") and hasattr(sc, "start_us"):
        return get_release(sc.release)
    f = led.frame
    names = f["tzdata"].drop_nulls() if "tzdata" in f.columns else pl.Series([], dtype=pl.String)
    if not len(names):
        raise InputError(f"release: ledger {led.name!r} is a frame without tzdata values or scenario; pass "
                         "release= (the tz release it was simulated with)")
    first = f["due_utc"].arg_min() if "due_utc" in f.columns else None
    version = f["tzdata"][first] if first is not None and f["tzdata"][first] is not None else names[0]
    try:
        return get_release(version)
    except CalsimError:
        raise InputError(f"release: ledger {led.name!r} was simulated with tzdata {_short(version)}, which is not "
                         "available offline (a what-if release lives in memory only); pass the Ledger returned by "
                         "calsim.simulate, or release=") from None


def _wall_us(table, us: np.ndarray) -> np.ndarray:
    """Local wall-clock microseconds of UTC instants (µs) with a calsim zone table."""
    us = np.asarray(us, dtype=np.int64)
    return us + table.offset_at_utc(us // 1_000_000).astype(np.int64) * 1_000_000


# ----------------------------------------------------------------------------- helpers


def _num(s: pl.Series) -> np.ndarray:
    """Matplotlib date numbers of a Datetime/Date series (instants in UTC, naive as they are); null -> nan."""
    if s.dtype == pl.Date:
        s = s.cast(pl.Datetime("us"))
    elif getattr(s.dtype, "time_zone", None):
        s = s.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
    return mdates.date2num(s.cast(pl.Datetime("us")).to_numpy())


def _us_num(us: int) -> float:
    return float(mdates.date2num(np.datetime64(int(us), "us")))


def _series_style(i: int) -> dict:
    """Colour and dash of series ``i``: both vary, so overlapping lines stay apart."""
    return dict(color=SERIES_COLORS[i % len(SERIES_COLORS)], ls=("-", "--", "-.", ":")[i % 4])


def _date_axis(ax, axis: str = "x") -> None:
    locator = mdates.AutoDateLocator(minticks=3, maxticks=9)
    a = ax.xaxis if axis == "x" else ax.yaxis
    a.set_major_locator(locator)
    a.set_major_formatter(mdates.ConciseDateFormatter(locator, show_offset=True))


def _outages(ledgers: list[Ledger]) -> list[tuple[int, int]]:
    spans = {(o.start_us, o.end_us) for led in ledgers for o in getattr(led.scenario, "outages", ()) or ()}
    return sorted(spans)


def _shade_outages(ax, spans: list[tuple[int, int]], to_x=_us_num) -> list:
    for a, b in spans:
        ax.axvspan(to_x(a), to_x(b), zorder=0, **_OUTAGE)
    return [Patch(facecolor=_OUTAGE["color"], alpha=_OUTAGE["alpha"], hatch="//", label="outage (scheduler down)")] \
        if spans else []


_UNITS = ((7 * 86400, "wk"), (86400, "d"), (3600, "h"), (60, "min"), (1, "s"))


def _dur(seconds: float) -> str:
    """``5400`` -> ``'1.5 h'``: a duration in its largest whole unit."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "n/a"
    if seconds == 0:
        return "0 s"
    for size, unit in _UNITS:
        if abs(seconds) >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.2g} s"


def _duration_ticks(ax, high: float) -> None:
    """Readable duration ticks (0, 1 s, 1 min, 1 h, 1 d, ...) on a symlog x axis."""
    nice = [0, 1, 10, 60, 600, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400]
    ticks = [t for t in nice if t <= high * 1.05]
    if len(ticks) > 8:
        ticks = [t for t in ticks if t not in (10, 6 * 3600)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: _dur(x)))


_NICE_SHIFTS = (60, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400)


def _shift_ticks(half: float) -> tuple[float, np.ndarray]:
    """Round colour-bar ticks (seconds) for shifts up to ``half`` either way: ``(limit, ticks)``.

    The step is the smallest round duration (1, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1 d...) that
    needs at most three ticks a side, and the limit is rounded up to a step so the ends are ticks too.
    """
    half = abs(float(half)) or 3600.0
    step = next((s for s in _NICE_SHIFTS if math.ceil(half / s - 1e-9) <= 3), None)
    if step is None:
        step = 86400 * 10 ** math.ceil(math.log10(half / 86400 / 3))
    n = max(1, math.ceil(half / step - 1e-9))
    return float(n * step), np.arange(-n, n + 1) * float(step)


def _offset(seconds: int) -> str:
    sign = "+" if seconds >= 0 else "−"
    h, m = divmod(abs(int(seconds)) // 60, 60)
    return f"UTC{sign}{h}" + (f":{m:02d}" if m else "")


def _legend_below(fig, handles: list, ncols: int = 4) -> None:
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=min(ncols, len(handles)), frameon=False,
                   fontsize=9)
