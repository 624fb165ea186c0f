"""What-if zones: a zone that follows a POSIX TZ rule from a chosen instant on, as TZif bytes and as a source.

:meth:`calsim.Release.with_override` derives a release in which one zone
keeps its history up to an instant and follows a new rule from it (for
studying a change before IANA publishes it). This module does the work: it
cuts the zone's transition table at the instant, writes the result as a TZif
file whose footer is the new rule (:func:`override_tzif`), and layers such
files over a release's own (:class:`OverrideSource`). The written file passes
calsim's own TZif checks like any other, so every consumer reads an override
exactly as it reads a published zone.

>>> import calsim
>>> from calsim.tz.tzif import ZoneTable
>>> data = override_tzif(calsim.release("2026f").table("America/New_York"), "2027-01-01T00:00Z", "EST5")
>>> ZoneTable.from_bytes("America/New_York", data).offset_at_utc(np.array([1814400000])).tolist()  # 2027-07-01
[-18000]
"""

from __future__ import annotations

import numpy as np

from ..errors import CorruptReleaseError, InputError
from ..times import instant_us
from .posix import PosixTZ, cut
from .sources import Source
from .tzif import END_TIME, FIRST_TIME, ZoneTable, write_tzif

__all__ = ["OverrideSource", "override_tzif"]


def override_tzif(table: ZoneTable, from_utc: object, posix_tz: str) -> bytes:
    """TZif bytes of ``table``'s zone, its history kept before ``from_utc`` and ``posix_tz`` followed from it.

    Raises :class:`~calsim.InputError` for an instant that is not one, outside
    the years a TZif transition may have, or a rule that is not a POSIX TZ
    string (the message of :meth:`PosixTZ.parse`, as the caller's mistake).
    """
    at_us = instant_us(from_utc, "from_utc")
    if not isinstance(posix_tz, str):
        raise InputError(
            f"posix_tz: expected a POSIX TZ string such as 'EST5EDT,M3.2.0,M11.1.0', got {cut(posix_tz)}"
        )
    try:
        rule = PosixTZ.parse(posix_tz, "posix_tz")
    except CorruptReleaseError as exc:
        raise InputError(str(exc)) from None  # the same message, as the caller's mistake
    at = -(-at_us // 1_000_000)  # TZif has whole seconds: the first second at or after from_utc
    if not FIRST_TIME <= at < END_TIME:
        # The derived file must pass calsim's own TZif checks (transitions in 1800..2500).
        raise InputError(
            f"from_utc: {cut(str(from_utc))} is outside the years a TZif transition may have (allowed 1800..2500)"
        )
    year = int(np.datetime64(at, "s").astype("datetime64[Y]").astype(int)) + 1970
    table.covering(year + 1)
    keep = table.utc < at
    utc = list(table.utc[keep])
    offsets = list(table.offsets[: int(keep.sum()) + 1])
    new_off = rule.std_offset  # the rule's offset in force at the instant
    if rule.has_dst:
        marks = sorted(t for y in (year - 1, year, year + 1) for t in rule.transitions(y))
        before = [off for t, off in marks if t <= at]
        new_off = before[-1] if before else rule.std_offset
    # Always an explicit transition at the instant, even when the offset
    # does not change: the footer rule governs only after the last one.
    utc.append(at)
    offsets.append(new_off)
    return write_tzif(np.array(utc, dtype=np.int64), np.array(offsets, dtype=np.int64), posix_tz)


class OverrideSource(Source):
    """A release's files with some zones replaced by generated TZif bytes (what-if releases)."""

    def __init__(self, base: Source, overrides: dict[str, bytes], version: str):
        super().__init__(base.path)
        self._base, self._overrides, self._version = base, overrides, version

    @classmethod
    def adding(cls, base: Source, zone: str, data: bytes, version: str) -> OverrideSource:
        """``base`` with ``zone`` replaced by ``data``; overrides of an override pile on one base."""
        overrides = dict(base._overrides) if isinstance(base, OverrideSource) else {}
        overrides[zone] = data
        root = base._base if isinstance(base, OverrideSource) else base
        return cls(root, overrides, version)

    def read(self, name: str) -> bytes | None:
        return self._overrides.get(name) or self._base.read(name)

    def zone_names(self) -> list[str]:
        return self._base.zone_names()

    def version(self) -> str | None:
        return self._version
