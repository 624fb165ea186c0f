"""The one error hierarchy of calsim.

Every error a user can cause is a :class:`CalsimError` (itself a
``ValueError``), and every message names the field, the value that was given
and what is allowed, so that the CLI can print it as one line.

Some subclasses also inherit the builtin exception a caller would naturally
catch (an unknown zone is a ``KeyError`` too, as in ``zoneinfo``).

Examples
--------
>>> import calsim
>>> try:
...     calsim.release().zone("America/New_Yrok")
... except calsim.UnknownZoneError as exc:
...     print(exc)
zone: unknown zone 'America/New_Yrok' in tzdata ... (did you mean 'America/New_York'?)
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

__all__ = [
    "CalsimError",
    "check_choice",
    "InputError",
    "PolicyError",
    "ReleaseError",
    "UnknownReleaseError",
    "CorruptReleaseError",
    "UnknownZoneError",
    "ResolutionError",
    "NonexistentTimeError",
    "AmbiguousTimeError",
    "RuleError",
    "ScheduleError",
    "StoreError",
    "LedgerLockedError",
    "SchemaVersionError",
    "ScenarioExistsError",
    "UnknownScenarioError",
    "LedgerSchemaError",
    "DuplicateKeyError",
]


class CalsimError(ValueError):
    """Root of every error a user of calsim can cause.

    A message never carries an attacker-sized value: messages quote what was
    given, and a rule of a megabyte quoted whole (and again by each importer
    that wraps the error) would flood a CI log or a terminal. Past
    :data:`MAX_MESSAGE` characters, every quoted value longer than
    :data:`MAX_QUOTED` is cut in its middle (``'xxxx...xxxx'``), so the field
    names and the reason stay readable; what is still too long is cut too.

    >>> len(str(CalsimError("cron: minute value " + repr("9" * 10**6) + " is out of range (allowed 0..59)")))
    112
    """

    # Set only on the error an importer raises when it refused every item: each refusal (an
    # importers.Skipped), for the CLI to print. Declared, not assigned: other errors have no such attribute.
    refused: tuple[object, ...]

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str) and len(args[0]) > MAX_MESSAGE:
            args = (_cut_message(args[0]), *args[1:])
        super().__init__(*args)


def shown(value: object, width: int = 60) -> str:
    """``repr(value)`` for a message, at most ``width`` characters; a huge int by its size.

    >>> shown(10**5000), shown("x" * 100, 12)
    ('an integer of 5,001 digits', "'xxxxxxxx...")
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        digits = len(str(abs(value))) if value.bit_length() < 14000 else value.bit_length() * 30103 // 100000 + 1
        return f"an integer of {digits:,} digits"
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


MAX_MESSAGE = 600
MAX_QUOTED = 60
_QUOTED = re.compile(r"'[^'\n]{%d,}'|\"[^\"\n]{%d,}\"" % (MAX_QUOTED + 1, MAX_QUOTED + 1))


def _cut_message(text: str) -> str:
    """``text`` with every long quoted value cut in its middle, then at most MAX_MESSAGE characters."""
    half = (MAX_QUOTED - 3) // 2
    text = _QUOTED.sub(lambda m: m[0][: half + 1] + "..." + m[0][-half - 1:], text)
    if len(text) > MAX_MESSAGE:
        text = (text[: MAX_MESSAGE // 2] + f" [...{len(text) - MAX_MESSAGE:,} characters cut...] "
                + text[-MAX_MESSAGE // 2:])
    return text


class InputError(CalsimError):
    """A value has the wrong type or form (an aware time where a naive one is needed, ...)."""


class PolicyError(CalsimError):
    """An unknown policy name (``gap=``, ``fold=``, ``invalid_day=``, ...)."""


class ReleaseError(CalsimError):
    """A tz database release cannot be used."""


class UnknownReleaseError(ReleaseError, LookupError):
    """A release was named that is neither shipped, cached, installed nor a path."""

    def __str__(self) -> str:  # LookupError would not quote, but be explicit
        return str(self.args[0]) if self.args else ""


class CorruptReleaseError(ReleaseError):
    """A file or directory that should hold TZif data does not."""


class UnknownZoneError(CalsimError, KeyError):
    """A zone name that the release does not contain."""

    def __str__(self) -> str:  # KeyError.__str__ would wrap the message in quotes
        return str(self.args[0]) if self.args else ""


class ResolutionError(CalsimError):
    """A local time could not be turned into an instant under the chosen policy."""


class NonexistentTimeError(ResolutionError):
    """A local time falls in a gap (clocks jump forward) and ``gap="reject"``."""


class AmbiguousTimeError(ResolutionError):
    """A local time happens twice (clocks fall back) and ``fold="reject"``."""


class RuleError(CalsimError):
    """A recurrence rule (RRULE, cron, interval, window) is malformed."""


class ScheduleError(CalsimError):
    """A schedule is inconsistent (unknown zone, overlapping revisions, ...)."""


class StoreError(CalsimError):
    """The ledger store cannot do what was asked (not a calsim store, bad SQL, ...)."""


class LedgerLockedError(StoreError):
    """Another process holds the DuckDB file open for writing."""


class SchemaVersionError(StoreError):
    """The file was written by a newer calsim with a store layout this one does not know."""


class ScenarioExistsError(StoreError):
    """A different ledger is already stored under this scenario name."""


class UnknownScenarioError(StoreError, KeyError):
    """No scenario of this name is in the store."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class LedgerSchemaError(StoreError):
    """A ledger frame lacks a column or has a wrong dtype."""


class DuplicateKeyError(StoreError):
    """A ledger holds two rows with the same primary key."""



def choices(allowed: Iterable[object]) -> str:
    """Render a set of allowed values for a message: ``'a', 'b' or 'c'``."""
    items = [repr(a) for a in allowed]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def check_choice(field: str, value: object, allowed: Collection[object], *, noun: str = "value",
                 error: type[CalsimError] | None = None) -> str:
    """The one check of a name against a closed set: ``value`` back, or ``error`` (default :class:`PolicyError`)
    naming the field, the value and every allowed one.

    >>> check_choice("overlap", "skip", ("allow", "skip"), noun="policy")
    'skip'
    >>> check_choice("overlap", "skipp", ("allow", "skip"), noun="policy")
    Traceback (most recent call last):
    ...
    calsim.errors.PolicyError: overlap: unknown policy 'skipp' (allowed: 'allow' or 'skip')
    """
    if not isinstance(value, str) or value not in allowed:
        raise (error or PolicyError)(f"{field}: unknown {noun} {shown(value)} (allowed: {choices(allowed)})")
    return value
