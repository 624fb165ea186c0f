"""Time-zone data: IANA tz database releases, their TZif files and POSIX rules, read side by side.

The package turns a ``release=`` argument into a :class:`~calsim.Release`
and a zone of it into a columnar transition table; every layer above
(resolution, expansion, simulation, tzdiff) reads zones only through it.
Its public names are re-exported by :mod:`calsim` (``calsim.release``,
``calsim.Release``, ``calsim.releases``, ``calsim.fetch_release``); this
``__init__`` imports nothing, so reading a TZif file does not load the
release machinery. Modules, lowest first:

``posix``     POSIX TZ strings (a TZif footer, a what-if rule): parsed, range-checked, their transitions by year
``tzif``      TZif files (RFC 9636): read and checked into a ``ZoneTable``; written for what-if zones
``sources``   the bytes of a release: a ``tzdata`` wheel or a zoneinfo directory, read safely
``locate``    where releases are found offline: shipped wheels, the user cache, installed ``tzdata``, system
``override``  what-if zones: a zone cut at an instant and following a new POSIX rule from it
``release``   ``Release`` (zones, tables, ``ZoneInfo``, links, ``with_override``) and ``release()``/``releases()``
``fetch``     ``fetch_release()``: a PyPI ``tzdata`` wheel downloaded with pip into the user cache

Nothing here goes through ``zoneinfo.ZoneInfo(key)``: its process-wide
cache would hide the difference between two releases of one zone.

>>> from calsim.tz.release import release
>>> release("2026f").table("Europe/Paris").offset_at_utc([1774746000]).tolist()  # 2026-03-29T01:00Z
[7200]
"""
