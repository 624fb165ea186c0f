"""RFC 5545 ``DTSTART``/``RRULE`` blocks (content lines, §3.1 folding): :func:`parse_block`."""

from __future__ import annotations

import re

import numpy as np  # noqa: F401  (the doctest below reads it)

from ..errors import RuleError
from .rrule import RRule, date_us

__all__ = ["parse_block"]


def _unfold(text: str) -> list[str]:
    """RFC 5545 §3.1: a CRLF followed by a space or tab continues the line."""
    text = re.sub(r"\r?\n[ \t]", "", text.replace("\r\n", "\n").replace("\r", "\n"))
    return [line.strip() for line in text.split("\n") if line.strip()]


def _name_end(line: str) -> int:
    """Index of the ':' ending a content line's name and parameters (not one in quotes), or -1."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == ":" and not quoted:
            return i
    return -1


def parse_block(text: str) -> tuple[RRule, int | None, str | None]:
    """Read a ``DTSTART``/``RRULE`` block, or a bare rule.

    Parameters
    ----------
    text : str
        E.g. ``'DTSTART;TZID=America/New_York:20260308T023000\\nRRULE:FREQ=DAILY'``.
        Lines may be folded (RFC 5545 §3.1). Only ``DTSTART`` and one ``RRULE``
        line are read; any other line is an error.

    Returns
    -------
    rule : RRule
    dtstart : int or None
        DTSTART as wall-clock µs (a ``VALUE=DATE`` start is its midnight), or
        None when the block has no DTSTART.
    tzid : str or None
        The ``TZID`` parameter; ``"UTC"`` for a UTC start
        (``DTSTART:20260308T073000Z``), whose wall time then is the instant; None
        for a floating start or none.

    Examples
    --------
    >>> rule, start, tzid = parse_block("DTSTART;TZID=America/New_York:20260308T023000\\nRRULE:FREQ=DAILY")
    >>> rule.freq, str(np.datetime64(start, "us")), tzid
    ('DAILY', '2026-03-08T02:30:00.000000', 'America/New_York')
    """
    if not isinstance(text, str):
        raise RuleError(f"rrule: expected the block as a str, got {type(text).__name__}")
    quoted = text.strip()

    def error(message: str) -> RuleError:
        return RuleError(f"rrule: {message} in {quoted!r}")

    rule: RRule | None = None
    start: int | None = None
    tzid: str | None = None
    seen_dtstart = False
    for line in _unfold(text):
        colon = _name_end(line)
        head, value = (line[:colon], line[colon + 1:]) if colon >= 0 else ("RRULE", line)  # a bare rule
        name, *params = head.split(";")
        name = name.upper()
        if name == "RRULE":
            if rule is not None:
                raise error("the block has more than one RRULE line (allowed one)")
            if params:
                raise error(f"RRULE takes no parameters, got {';'.join(params)!r}")
            rule = RRule.parse(value)
        elif name == "DTSTART":
            if seen_dtstart:
                raise error("the block has more than one DTSTART line (allowed one)")
            seen_dtstart = True
            is_date_value = False
            for p in params:
                pname, eq, pval = p.partition("=")
                pname, pval = pname.upper(), pval.strip('"')
                if pname == "TZID" and eq and pval:
                    tzid = pval
                elif pname == "VALUE" and pval.upper() in ("DATE", "DATE-TIME"):
                    is_date_value = pval.upper() == "DATE"
                else:
                    raise error(f"DTSTART parameter {p!r} is not supported (allowed TZID=<zone> and "
                                "VALUE=DATE or DATE-TIME)")
            parsed = date_us(value.upper())
            if parsed is None or parsed[1] != is_date_value:
                form = "YYYYMMDD" if is_date_value else "YYYYMMDDTHHMMSS with an optional Z"
                raise error(f"DTSTART value {value!r} is invalid (allowed {form})")
            start, _, utc = parsed
            if utc:
                if tzid is not None:
                    raise error(f"DTSTART has both TZID={tzid} and a UTC time ending in Z (allowed one)")
                tzid = "UTC"
        else:
            raise error(f"line {line!r} is not supported (allowed DTSTART and RRULE lines)")
    if rule is None:
        raise error("the block has no RRULE line (expected e.g. 'RRULE:FREQ=DAILY')")
    return rule, start, tzid
