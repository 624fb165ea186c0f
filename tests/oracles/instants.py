"""Instants as the oracle tests write them: integer µs since the Unix epoch (UTC), and their text forms."""

from __future__ import annotations

import datetime as dt

US = 1_000_000


def us_at(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> int:
    """µs of a UTC wall time."""
    return int(dt.datetime(y, mo, d, h, mi, s, tzinfo=dt.timezone.utc).timestamp()) * US


def us_of(value: dt.datetime) -> int:
    """µs since the epoch of a datetime, exactly (no float); a naive one is read as a wall clock."""
    naive = value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo else value
    d = naive - dt.datetime(1970, 1, 1)
    return (d.days * 86400 + d.seconds) * US + d.microseconds


def iso(us: int) -> str:
    """ISO 8601 with µs and ``Z``, as a reproducer writes an instant."""
    return dt.datetime.fromtimestamp(us / US, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def hm(us: int | None) -> str:
    """``MM-DD HH:MM:SS`` for messages ('-' for none)."""
    if us is None:
        return "-"
    return dt.datetime.fromtimestamp(us / US, dt.timezone.utc).strftime("%m-%d %H:%M:%S")
