"""What calsim's notebooks share: readable tables, an output directory, and the tzdiff views of notebook 04.

The helpers live in the package, not in a file beside the notebooks, so a
notebook imports them wherever it runs: ``papermill
/abs/path/notebooks/04_tzdata_upgrade.ipynb out.ipynb`` from any directory,
``calsim report``, or a copy of the notebook mailed to a colleague.

* :func:`setup` sets polars display options (every row and column of a
  conclusion table, no dtype row) and returns :func:`output_dir`;
* :func:`output_dir` is where PNGs and DuckDB files go: a temporary
  directory (``$CALSIM_OUT`` overrides it), never the directory of the
  notebook;
* :func:`fresh` removes an earlier run's DuckDB file;
* :func:`load_fleet` reads a notebook's ``fleet_spec`` parameter as the CLI does;
* :func:`behaviour_changes`, :func:`zones_by_impact` and
  :func:`freeze_clocks` are notebook 04's tzdata-upgrade views (a rename is
  not a behaviour change; the zones that move the most schedules come first;
  a what-if for any zone).

>>> from calsim.notebook import fresh, output_dir
>>> out = output_dir()
>>> out.name, out.is_dir()
('calsim-notebooks', True)
>>> fresh(out / "scratch.duckdb").exists()
False
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import numpy as np
import polars as pl

from .errors import InputError
from .times import US, instant_us

if TYPE_CHECKING:
    from .schedule import Schedule
    from .tz.release import ReleaseLike

__all__ = ["setup", "output_dir", "fresh", "load_fleet", "instant", "behaviour_changes", "zones_by_impact",
           "freeze_clocks"]


def output_dir() -> Path:
    """``$CALSIM_OUT/calsim-notebooks`` (default: under the system temporary directory), created if missing."""
    out = Path(os.environ.get("CALSIM_OUT") or tempfile.gettempdir()) / "calsim-notebooks"
    out.mkdir(parents=True, exist_ok=True)
    return out


def setup() -> Path:
    """Display settings for readable tables that nbval compares stably; returns :func:`output_dir`."""
    pl.Config.set_tbl_rows(40)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_fmt_str_lengths(110)
    pl.Config.set_tbl_width_chars(200)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_tbl_hide_column_data_types(True)
    return output_dir()


def fresh(path: str | Path) -> Path:
    """Remove an earlier run's DuckDB file (and its WAL) so the notebook starts from an empty store."""
    path = Path(path)
    for p in (path, path.with_name(path.name + ".wal")):
        if p.exists():
            p.unlink()
    return path


def load_fleet(spec: str) -> list:
    """``"example:N[:SEED]"`` (:func:`calsim.examples.fleet`) or a file :func:`calsim.load` reads.

    >>> len(load_fleet("example:30:1"))
    30
    """
    from .examples import fleet as example_fleet
    from .importers import load_any as load

    if isinstance(spec, str) and spec.startswith("example:"):
        n, _, seed = spec.removeprefix("example:").partition(":")
        try:
            return example_fleet(int(n), int(seed or 0))
        except ValueError:
            raise InputError(f"fleet_spec: {spec!r} is not 'example:N' or 'example:N:SEED'") from None
    return list(load(spec))


def instant(value: object, field: str = "instant") -> dt.datetime:
    """An instant parameter (``"2026-12-01T00:00Z"``, a datetime...) as an aware UTC datetime.

    >>> instant("2026-12-01T01:00+01:00")
    datetime.datetime(2026, 12, 1, 0, 0, tzinfo=datetime.timezone.utc)
    """
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=instant_us(value, field))


def behaviour_changes(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of a :func:`calsim.zone_changes` or :func:`calsim.tzdiff` frame that change when something runs.

    A zone that only became a link or changed its name (kind ``now_link``)
    runs every job at the same instants, and so does an occurrence whose
    instant is the same under both releases with only its notes different
    (``shift_s == 0``: e.g. a wall time that stops being ambiguous while its
    first instant stays). Everything else is kept: another instant, or an
    occurrence that appears or disappears (null ``shift_s``).

    >>> import calsim
    >>> z = calsim.zone_changes("2022e", "2022f", "2022-01-01T00:00Z", "2024-01-01T00:00Z")
    >>> "now_link" in z["kind"].to_list(), "now_link" in behaviour_changes(z)["kind"].to_list()
    (True, False)
    """
    if "kind" in frame.columns:  # zone_changes
        return frame.filter(pl.col("kind") != "now_link")
    if "change" not in frame.columns or "shift_s" not in frame.columns:
        raise InputError(f"frame: expected a calsim.zone_changes or calsim.tzdiff frame, got columns {frame.columns}")
    return frame.filter(pl.col("change") != "now_link", pl.col("shift_s").fill_null(1) != 0)


def zones_by_impact(diff: pl.DataFrame, schedules: Iterable[Schedule] = ()) -> pl.DataFrame:
    """Per zone of a :func:`calsim.tzdiff` frame: how many schedules change behaviour, most first.

    Returns ``zone``, ``affected`` (schedules with a behaviour change, see
    :func:`behaviour_changes`), ``in_fleet`` (schedules of ``schedules`` in
    the zone; null when not given), ``occurrences``, ``first_utc`` (the first
    instant, old or new, of an affected run), ``shifts_s`` (distinct non-null
    shifts). Sorted by ``affected``, then ``occurrences``, both descending,
    then zone: the zones that matter come first, not the first letters.

    >>> import calsim
    >>> s = [calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")]
    >>> d = calsim.tzdiff(s, "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z")
    >>> zones_by_impact(d, s).select("zone", "affected", "in_fleet", "occurrences").row(0)
    ('America/Mexico_City', 1, 1, 210)
    """
    counts: dict[str, int] = {}
    for s in schedules:
        counts[s.zone] = counts.get(s.zone, 0) + 1
    out = (
        behaviour_changes(diff).group_by("zone")
        .agg(
            affected=pl.col("schedule_id").n_unique().cast(pl.Int64),
            occurrences=pl.len().cast(pl.Int64),
            first_utc=pl.min_horizontal("old_utc", "new_utc").min(),
            shifts_s=pl.col("shift_s").drop_nulls().unique().sort(),
        )
        .with_columns(in_fleet=pl.col("zone").replace_strict(counts, default=None, return_dtype=pl.Int64)
                      if counts else pl.lit(None, pl.Int64))
    )
    return (out.select("zone", "affected", "in_fleet", "occurrences", "first_utc", "shifts_s")
            .sort(["affected", "occurrences", "zone"], descending=[True, True, False]))


def freeze_clocks(release: ReleaseLike, zone: str, start: object, end: object) -> tuple[object, dt.datetime] | None:
    """A what-if: ``zone`` stops changing its clocks at its first change in ``[start, end)``, keeping its offset.

    Returns the derived release (:meth:`calsim.Release.with_override` with a
    fixed-offset POSIX TZ string) and the instant the zone stops; None when
    the zone keeps one UTC offset over the window (nothing to abolish). This
    is the change governments make most (abolishing DST by staying on the
    time in force), for any zone and window a notebook is given.

    >>> what_if, at = freeze_clocks("2026f", "Europe/Berlin", "2026-12-01T00:00Z", "2027-12-01T00:00Z")
    >>> what_if.version, str(at)
    ('2026f+override', '2027-03-28 01:00:00+00:00')
    >>> freeze_clocks("2026f", "Asia/Tokyo", "2026-12-01T00:00Z", "2027-12-01T00:00Z") is None
    True
    """
    from .tz.release import release as get_release

    rel = get_release(release)
    lo, hi = instant_us(start, "window_start"), instant_us(end, "window_end")
    year = int(np.datetime64(hi, "us").astype("datetime64[Y]").astype(int)) + 1970
    table = rel.table(zone).covering(year + 1)
    i = int(np.searchsorted(table.utc, -(-lo // US), side="left"))  # the first transition at or after start
    if i >= len(table.utc) or int(table.utc[i]) * US >= hi:
        return None
    at = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=int(table.utc[i]))
    return rel.with_override(zone, at, _fixed_offset_tz(int(table.offsets[i]))), at


def _fixed_offset_tz(offset_s: int) -> str:
    """A POSIX TZ string for a fixed UTC offset: 3600 -> ``"<+01>-1"``, -16200 -> ``"<-0430>4:30"``.

    POSIX counts west of Greenwich as positive, hence the inverted sign
    after the quoted name.
    """
    sign = "+" if offset_s >= 0 else "-"
    h, rest = divmod(abs(offset_s), 3600)
    m, s = divmod(rest, 60)
    name = f"{h:02d}" + (f"{m:02d}" if m or s else "") + (f"{s:02d}" if s else "")
    clock = f"{h}" + (f":{m:02d}" if m or s else "") + (f":{s:02d}" if s else "")
    return f"<{sign}{name}>{'-' if offset_s > 0 else ''}{clock}"
