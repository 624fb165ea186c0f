"""Rule kinds: each turns a recurrence into sorted nominal local wall times (int64 µs).

Every rule kind (RRULE, cron, ``Every``, ``Window``) produces naive wall-clock
times only; resolving them in a zone (gaps, folds) is the job of
:mod:`calsim.resolution`, so that all kinds share one set of DST semantics.
"""
