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

A typo gets the closest name, for a value (:func:`check_choice`) as for a
keyword (:func:`refuse_unknown_keywords`):

>>> calsim.Policy(catch_up="latest")
Traceback (most recent call last):
...
calsim.errors.UnknownPolicyKeywordError: Policy: unexpected keyword argument 'catch_up' (did you mean 'catchup'?; ...
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Callable, Collection, Iterable
from typing import Any, TypeVar

__all__ = [
    "CalsimError",
    "check_choice",
    "closest",
    "did_you_mean",
    "refuse_unknown_keywords",
    "InputError",
    "PolicyError",
    "UnknownKeywordError",
    "UnknownPolicyKeywordError",
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


class UnknownKeywordError(InputError, TypeError):
    """A keyword argument a calsim class does not take (``Scenario(outage=...)``), with the closest one it does.

    Also a ``TypeError``, as Python's own error for an unknown keyword is, and
    its message keeps Python's words (``unexpected keyword argument 'x'``), so
    code that caught or parsed that error still does. ``keyword``,
    ``allowed`` and ``suggestion`` (None when nothing is close) carry the
    facts for a caller that words them its own way (a file's "unknown key").
    """

    keyword: str
    allowed: tuple[str, ...]
    suggestion: str | None


class UnknownPolicyKeywordError(PolicyError, UnknownKeywordError):
    """:class:`UnknownKeywordError` of a policy class (:class:`~calsim.Policy`, :class:`~calsim.Failures`...)."""


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


def closest(value: object, allowed: Iterable[object]) -> str | None:
    """The allowed name a mistyped ``value`` most likely meant, or None when none is close.

    Tried in turn: the same name but for case, ``-`` or spaces (``"Latest"``,
    ``"buffer-one"``); the closest by :func:`difflib.get_close_matches`
    (ratio >= 0.6, case ignored); the only name ``value`` begins (``"SMART"``
    for ``"SMART_POLICY"``). Only strings are compared.

    >>> closest("lastest", ("all", "latest", "skip")), closest("Buffer-One", ("buffer_one",)), closest(3, ("a",))
    ('latest', 'buffer_one', None)
    >>> closest("SMART", ("SMART_POLICY", "DO_NOTHING")), closest("zzz", ("all", "latest"))
    ('SMART_POLICY', None)
    """
    if not isinstance(value, str) or not value or len(value) > 200:
        return None
    names = [a for a in allowed if isinstance(a, str) and a != value]
    if not names:
        return None

    def norm(text: str) -> str:
        return text.strip().lower().replace("-", "_").replace(" ", "_")

    given = norm(value)
    for name in names:
        if norm(name) == given:
            return name
    lowered = {norm(name): name for name in names}
    near = difflib.get_close_matches(given, list(lowered), n=1, cutoff=0.6)
    if near:
        return lowered[near[0]]
    starts = [name for name in names if len(given) >= 2 and norm(name).startswith(given)]
    return starts[0] if len(starts) == 1 else None


def did_you_mean(value: object, allowed: Iterable[object]) -> str:
    """``" (did you mean 'x'?)"`` for the closest allowed name (:func:`closest`), else ``""``: appended to a message.

    >>> did_you_mean("lastest", ("all", "latest")), did_you_mean("zzz", ("all", "latest"))
    (" (did you mean 'latest'?)", '')
    """
    near = closest(value, allowed)
    return f" (did you mean {near!r}?)" if near is not None else ""


def check_choice(field: str, value: object, allowed: Collection[object], *, noun: str = "value",
                 error: type[CalsimError] | None = None) -> str:
    """The one check of a name against a closed set: ``value`` back, or ``error`` (default :class:`PolicyError`)
    naming the field, the value and every allowed one, then the closest allowed one (:func:`did_you_mean`).

    >>> check_choice("overlap", "skip", ("allow", "skip"), noun="policy")
    'skip'
    >>> check_choice("overlap", "skipp", ("allow", "skip"), noun="policy")
    Traceback (most recent call last):
    ...
    calsim.errors.PolicyError: overlap: unknown policy 'skipp' (allowed: 'allow' or 'skip') (did you mean 'skip'?)
    """
    if not isinstance(value, str) or value not in allowed:
        raise (error or PolicyError)(f"{field}: unknown {noun} {shown(value)} (allowed: {choices(allowed)})"
                                     f"{did_you_mean(value, allowed)}")
    return value


def unknown_keyword(owner: str, keyword: str, allowed: Iterable[str], *, policy: bool = False) -> UnknownKeywordError:
    """The error for ``keyword``, which ``owner`` (a class or function name) does not take: the allowed keywords
    listed, the closest first (:class:`UnknownPolicyKeywordError` with ``policy``)."""
    names = tuple(allowed)
    near = closest(keyword, names)
    hint = f"did you mean {near!r}?; " if near is not None else ""
    cls = UnknownPolicyKeywordError if policy else UnknownKeywordError
    exc = cls(f"{owner}: unexpected keyword argument {shown(keyword)} ({hint}allowed: {', '.join(names)})")
    exc.keyword, exc.allowed, exc.suggestion = keyword, names, near
    return exc


_C = TypeVar("_C", bound=type)


def refuse_unknown_keywords(*, policy: bool = False) -> Callable[[_C], _C]:
    """Class decorator (over ``@dataclass``): an unknown keyword argument is an :class:`UnknownKeywordError`
    (:class:`UnknownPolicyKeywordError` with ``policy``) naming it, the closest keyword and every allowed one,
    where Python would raise a bare ``TypeError`` naming only the keyword.

    The check is one set comparison per call, before the class's own ``__init__``; the signature
    (``inspect.signature``) is the class's own. ``dataclasses.replace`` goes through it too.

    >>> import dataclasses
    >>> @refuse_unknown_keywords()
    ... @dataclasses.dataclass(frozen=True)
    ... class Box:
    ...     width: int = 1
    ...     height: int = 1
    >>> Box(widht=2)
    Traceback (most recent call last):
    ...
    calsim.errors.UnknownKeywordError: Box: unexpected keyword argument 'widht' (did you mean 'width'?; allowed: width, height)
    """  # noqa: E501  (a doctest output line)

    def decorate(cls: _C) -> _C:
        target: Any = cls  # (its __init__ is read and replaced: mypy reads either as unsound on a type variable)
        init = target.__init__
        params = inspect.signature(init).parameters.values()
        names = tuple(p.name for p in params if p.name != "self"
                      and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY))
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return cls  # takes any keyword: nothing to refuse
        known = frozenset(names)

        @functools.wraps(init)
        def __init__(self: object, *args: object, **kwargs: object) -> None:
            if not known.issuperset(kwargs):
                bad = next(k for k in kwargs if k not in known)
                raise unknown_keyword(cls.__name__, bad, names, policy=policy) from None
            init(self, *args, **kwargs)

        target.__init__ = __init__
        return cls

    return decorate
