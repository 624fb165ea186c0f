"""What every user-facing error must look like (calsim/errors.py: "every message names the field, the value that
was given and what is allowed", one line)."""

from __future__ import annotations


def assert_clear(exc: BaseException) -> None:
    """One line, starting with the field it is about (``"<field>: ..."``)."""
    msg = str(exc)
    assert msg and "\n" not in msg, f"not one line: {msg!r}"
    field, sep, rest = msg.partition(": ")
    assert sep and field.strip() and rest.strip(), f"does not start with the field: {msg!r}"
