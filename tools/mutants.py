#!/usr/bin/env python3
"""Hand-made mutation testing: does the test suite fail when one line of calsim is wrong?

Usage (from the repository root)::

    .venv/bin/python tools/mutants.py                       # every mutant, one at a time
    .venv/bin/python tools/mutants.py --only tzif           # mutants whose id or file contains "tzif"
    .venv/bin/python tools/mutants.py --skip quartz         # all but those (repeatable)
    .venv/bin/python tools/mutants.py --jobs 2 --json /tmp/mutants.json
    .venv/bin/python tools/mutants.py --list                # check every snippet, run nothing
    .venv/bin/python tools/mutants.py --without _edges   # drop matching test files (here: the edge cases)
    .venv/bin/python tools/mutants.py --mutants tools/mutants_sim.py  # also the MUTANTS of another file

A mutant
--------
One dict of the ``MUTANTS`` list below (another file given with ``--mutants``
defines its own ``MUTANTS`` list the same way)::

    {
        "id": "res-fast-path-gap-start",      # unique and short; --only matches it
        "file": "calsim/resolution.py",        # relative to the repository root
        "old": "lower[i] > w_max",             # exact text; must occur exactly once in the file
        "new": "lower[i] >= w_max",            # what replaces it
        "why": "a wall time at a gap's first µs takes the fast path",   # the mistake it models
        "tests": ["tests/test_resolution_edges.py"], # pytest arguments: files or node ids, fastest killer first
        "equivalent": "...",                   # optional: why no test can kill it (reported, still run)
    }

How a mutant runs
-----------------
1. The repository's files (``git ls-files``, plus untracked files git does not
   ignore; never ``.venv``) are copied once, when the run starts, to a
   snapshot under /tmp, and each mutant (and each baseline) runs in a copy of
   that snapshot: every mutant sees the same tree, even while others go on
   editing the checkout. The checkout itself is never written.
2. ``old`` is replaced by ``new`` in the copy (refused unless it occurs exactly once).
3. ``python -c "import calsim"`` must load calsim from the copy: the venv's
   editable install of the checkout is a meta-path finder appended after the
   path finder, so ``PYTHONPATH=<copy>`` wins; the runner checks it.
4. ``python -m pytest -x -q -p no:cacheprovider <tests>`` runs with ``cwd``
   and ``PYTHONPATH`` the copy (so the copy's pyproject.toml and conftest.py).

Status: pytest exit 0 -> ``survived``; 1 (a test failed) or 2 (collection
error, e.g. the mutant does not import) -> ``killed``; a timeout ->
``timeout``; any other exit -> ``error``. Before the mutants, each distinct
test list runs once unmutated (the baseline): a mutant whose baseline fails
(the checkout is mid-edit, or a test is broken) is ``baseline_failed`` and not run.

Output: a line per mutant while running (on stderr), then a JSON summary on
stdout: counts per status and, per mutant, its status, exit code, seconds,
the tests that failed (the ``FAILED``/``ERROR`` lines of pytest's summary) and
its description. The exit status is 0 when no mutant survived (or only ones
marked ``equivalent``), else 1.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"

RESOLVE = ["tests/test_resolution_edges.py", "tests/test_resolution_pinned.py", "tests/test_resolution_synthetic.py",
           "tests/test_resolution_properties.py", "tests/test_resolution_oracle.py"]
TZIF = ["tests/tz/test_posix.py", "tests/test_resolution_synthetic.py", "tests/tz/test_release.py",
        "tests/test_tzchanges.py", "tests/test_resolution_oracle.py"]
EXPAND = ["tests/rules/test_rrule_edges.py", "tests/test_expansion_pinned.py", "tests/test_expansion.py",
          "tests/test_expansion_fast_paths.py", "tests/rules/test_rrule.py"]
STORE = ["tests/store/test_ledger_records.py", "tests/store/test_ledger_store.py", "tests/store/test_tables.py"]
CRON = ["tests/rules/test_cron.py"]
# A module's doctests come after the test files: collecting a module for its doctests imports it again
# (--import-mode=importlib), and a test file imported after that would see a second RobfigCron class.
ROBFIG = ["tests/rules/test_robfig.py", "calsim/rules/robfig.py"]  # the real robfig, then the module's doctest
EMU = ["tests/test_emulation.py", "tests/rules/test_robfig.py", "calsim/emulation.py"]
CLOCK = ["tests/test_emulation.py", "tests/rules/test_robfig.py", "calsim/tz/clock.py"]
K8S = ["calsim/presets/_kubernetes.py", "tests/presets/test_presets.py::TestKubernetes",
       "tests/presets/test_kubernetes.py"]
PRESETS = ["calsim/presets/_kubernetes.py", "tests/presets/test_presets.py::TestKubernetes",
           "tests/presets/test_presets.py::TestPreset", "tests/presets/test_kubernetes.py"]
CRONIE = ["calsim/presets/_cronie.py", "tests/presets/test_presets.py::TestCronie",
          "tests/presets/test_presets.py::TestCronieAgainstCronsim", "tests/presets/test_cronie.py",
          "tests/presets/test_cronie_daemon.py"]
APS = ["calsim/presets/_apscheduler.py", "tests/presets/test_presets.py::TestApscheduler",
       "tests/presets/test_presets.py::TestApschedulerAgainstCronTrigger", "tests/presets/test_apscheduler.py"]
TEMPORAL = ["calsim/presets/_temporal.py", "tests/presets/test_presets.py::TestTemporal",
            "tests/presets/test_temporal.py"]
EVENTBRIDGE = ["calsim/presets/_eventbridge.py", "tests/presets/test_presets.py::TestEventbridge",
               "tests/presets/test_eventbridge.py"]
QWALK = ["tests/rules/test_quartz_jar.py", "tests/presets/test_quartz.py", "calsim/rules/quartz_walk.py"]
QUARTZ = ["tests/rules/test_quartz.py", "tests/rules/test_quartz_oracle.py", "tests/rules/test_quartz_jar.py",
          "calsim/rules/quartz.py"]
QPRESET = ["calsim/presets/_quartz.py", "tests/presets/test_presets.py::TestQuartz", "tests/rules/test_quartz_jar.py",
           "tests/presets/test_quartz.py"]
GLIBC = ["tests/rules/test_calendarspec.py", "tests/rules/test_oncalendar.py", "calsim/tz/glibc.py"]
CALSPEC = ["tests/rules/test_calendarspec.py", "tests/rules/test_oncalendar.py", "calsim/rules/calendarspec.py"]
SPRESET = ["calsim/presets/_systemd.py", "tests/presets/test_presets.py::TestSystemd", "tests/presets/test_systemd.py",
           "tests/rules/test_calendarspec.py"]


def M(id: str, file: str, old: str, new: str, why: str, tests: list[str], equivalent: str | None = None) -> dict:
    d = {"id": id, "file": file, "old": old, "new": new, "why": why, "tests": tests}
    if equivalent:
        d["equivalent"] = equivalent
    return d


MUTANTS: list[dict] = [
    # --- resolution.py: gap and fold edges, the single-period fast path -----------------------
    M("res-fast-path-gap-start", "calsim/resolution.py",
      "(i == len(lower) or lower[i] > w_max)", "(i == len(lower) or lower[i] >= w_max)",
      "the fast path also takes walls ending exactly at a gap's start (02:00 read as ok)", RESOLVE),
    M("res-fast-path-wmin-only", "calsim/resolution.py",
      "(i == len(lower) or lower[i] > w_max)", "(i == len(lower) or lower[i] > w_min)",
      "the fast path checks the next anomaly against the earliest wall only", RESOLVE),
    M("res-fast-path-left", "calsim/resolution.py",
      "i = int(np.searchsorted(upper, w_min, side=\"right\"))", "i = int(np.searchsorted(upper, w_min, side=\"left\"))",
      "a batch starting exactly at an anomaly's upper end is located one period early", RESOLVE,
      equivalent="the earlier period's anomaly then starts at or before w_min, so the fast path is "
                 "refused and the per-row search gives the same result (only slower)"),
    M("res-fold1-index-strict", "calsim/resolution.py",
      "idx1 = idx0 + (padded[idx0] <= wall).view(np.int8)", "idx1 = idx0 + (padded[idx0] < wall).view(np.int8)",
      "the first µs of a gap or fold is not inside it (per-row path)", RESOLVE),
    M("res-bucket-search-strict", "calsim/resolution.py",
      "idx = base + (padded[base] <= q).view(np.int8)", "idx = base + (padded[base] < q).view(np.int8)",
      "the day-bucket searchsorted(side='right') counts an edge equal to the query as after it", RESOLVE),
    M("res-gap-diff", "calsim/resolution.py", "is_gap = diff > 0", "is_gap = diff >= 0",
      "every unambiguous time is a gap", RESOLVE),
    M("res-next-valid-prev", "calsim/resolution.py", "due[g] = utc[idx0[g]]", "due[g] = utc[idx0[g] - 1]",
      "next_valid uses the previous transition", RESOLVE),
    M("res-shift-offset-left", "calsim/resolution.py",
      "offset[g] = offs_s[np.searchsorted(utc, due[g], side=\"right\")]",
      "offset[g] = offs_s[np.searchsorted(utc, due[g], side=\"left\")]",
      "a shifted instant exactly at the transition reports the offset before it", RESOLVE),
    M("res-fold-second-offset", "calsim/resolution.py", "offset[f] = off1[f]", "offset[f] = off0[f]",
      "fold='second' reports the first pass's offset", RESOLVE),
    M("res-has-due-any-gap", "calsim/resolution.py",
      "skipped = [m for p, m in gaps if p == \"skip\" and m.any()]",
      "skipped = [m for p, m in gaps if m.any()]",
      "every gap policy drops the instant, not only skip", RESOLVE),
    M("res-by-hour-swapped", "calsim/resolution.py",
      "out = at[~np.isin(wall[at] // HOUR_US % 24, setting.hours)]",
      "out = at[np.isin(wall[at] // HOUR_US % 24, setting.hours)]",
      "ByLocalHour applies inside to the hours it does not name", ["tests/tz/test_gap_fold_by_local_hour.py"]),
    M("every-local-no-rephase", "calsim/rules/every.py",
      "ran = w if r.has_due is not None and not r.has_due[0] else int(r.due[0]) + int(r.offset[0]) * US",
      "ran = w",
      "a wall-clock interval goes on from the nominal time after a moved run (Prefect keeps the new phase)",
      ["tests/rules/test_every_local_days.py"]),
    M("res-crowded-open-start", "calsim/resolution.py",
      "hit = (wall >= start[k]) & (wall < end[k])", "hit = (wall > start[k]) & (wall < end[k])",
      "crowded tables: a wall time at a period's first µs is not shown by it", RESOLVE),
    # --- tz/posix.py and tz/tzif.py: POSIX footer dates, times, generated transitions ---------------
    M("tzif-j-leap-60", "calsim/tz/posix.py", "(_isleap(years) & (self.a >= 60))",
      "(_isleap(years) & (self.a > 60))", "Jn: J60 in a leap year is February 29", TZIF),
    M("tzif-j-one-based", "calsim/tz/posix.py", "jan1 + (self.a - 1) +", "jan1 + self.a +",
      "Jn read as zero-based", TZIF),
    M("tzif-n-one-based", "calsim/tz/posix.py", "return jan1 + self.a  # zero-based",
      "return jan1 + self.a - 1  # zero-based", "n read as one-based (CPython zoneinfo's reading)", TZIF),
    M("tzif-m-week5", "calsim/tz/posix.py", "day = np.where(day >= first + length, day - 7, day)",
      "day = np.where(day > first + length, day - 7, day)", "Mm.5.d: a fifth weekday on the next month's 1st is kept",
      TZIF),
    M("tzif-end-in-std", "calsim/tz/posix.py",
      "end = self.end.days(years) * 86400 + (self.end_time - self.dst_offset)",
      "end = self.end.days(years) * 86400 + (self.end_time - self.std_offset)",
      "the end time read in standard time, not in DST", TZIF),
    M("tzif-start-in-dst", "calsim/tz/posix.py",
      "start = self.start.days(years) * 86400 + (self.start_time - self.std_offset)",
      "start = self.start.days(years) * 86400 + (self.start_time - self.dst_offset)",
      "the start time read in DST, not in standard time", TZIF),
    M("tzif-no-sort", "calsim/tz/tzif.py", "order = np.argsort(gen_utc, kind=\"stable\")",
      "order = np.arange(len(gen_utc))",
      "generated transitions kept in rule order (unsorted in the southern hemisphere)", TZIF),
    M("tzif-first-year", "calsim/tz/tzif.py",
      "first_year = 1970 if last is None else _year_of(last) - 1",
      "first_year = 1970 if last is None else _year_of(last) + 1",
      "the footer starts the year after the last explicit transition", TZIF),
    M("tzif-bare-initial", "calsim/tz/tzif.py",
      "offsets[0] = tz.std_offset if offsets[1] != tz.std_offset else tz.dst_offset",
      "offsets[0] = tz.std_offset",
      "a file without transitions starts in standard time even when 1970 begins in DST", TZIF),
    M("tzif-leap-month", "calsim/tz/posix.py",
      "leap = 1 if (month > 2 and calendar.isleap(year)) else 0",
      "leap = 1 if (month >= 2 and calendar.isleap(year)) else 0",
      "February of a leap year starts a day late", TZIF),
    M("tzif-coinciding", "calsim/tz/tzif.py", "if len(gen_utc) > 1:", "if False:",
      "coinciding end and start (year-long DST) kept as two transitions", TZIF),
    # --- expansion.py and rrule: UNTIL, COUNT, windows -----------------------------------------
    M("exp-local-until-strict", "calsim/expansion.py", "keep = walls <= rule.until", "keep = walls < rule.until",
      "a local UNTIL equal to an instance excludes it", EXPAND),
    M("exp-utc-until-strict", "calsim/occurrence_rows.py", "keep &= place <= self.until[sched]",
      "keep &= place < self.until[sched]", "a Z UNTIL equal to an instance's instant excludes it", EXPAND),
    M("exp-count-off-by-one", "calsim/expansion.py",
      "parts.append((walls[: last + 1], inv[: last + 1]))", "parts.append((walls[: last], inv[: last]))",
      "COUNT keeps one instance too few", EXPAND),
    M("exp-count-folds", "calsim/expansion.py",
      ".has_due\n                counted = counted if skipped is None else skipped",
      ".kind\n                counted = skipped == 0",
      "COUNT does not count an instance in a fold", EXPAND),
    M("exp-count-shifted", "calsim/expansion.py",
      "            if \"skip\" in policies(s.gap):\n                # Folds do not change what is counted: one nominal "
      "instance each.\n                skipped = resolve_wall(walls, table, gap=s.gap,",
      "            if s.gap != \"reject\":\n                # Folds do not change what is counted: one nominal "
      "instance each.\n                skipped = resolve_wall(walls, table, gap=\"skip\",",
      "COUNT does not count a gap instance that the policy shifts", EXPAND),
    M("exp-window-closed", "calsim/occurrence_rows.py",
      "keep = (place >= self.lo) & (place < self.hi)",
      "keep = (place >= self.lo) & (place <= self.hi)",
      "the expand window includes its end", EXPAND),
    M("exp-dtstart-open", "calsim/expansion.py",
      "wlo, whi = max(lo - _MARGIN, dtstart), hi + _MARGIN",
      "wlo, whi = max(lo - _MARGIN, dtstart + 1), hi + _MARGIN",
      "DTSTART itself is never an instance", EXPAND),
    M("rrule-until-exclusive", "calsim/rules/rrule.py", "hi = min(int(hi), self.until + 1)",
      "hi = min(int(hi), self.until)", "wall_times: UNTIL equal to an instance excludes it", EXPAND),
    M("rrule-count-plus-one", "calsim/rules/rrule.py",
      "wall, note = wall[: self.count], note[: self.count]",
      "wall, note = wall[: self.count + 1], note[: self.count + 1]", "wall_times: COUNT + 1 instances", EXPAND),
    M("rrule-daily-floor", "calsim/rules/rrule.py",
      "k0 = -(-(start - w0) // step)  # start >= w0: k0 >= 0", "k0 = (start - w0) // step",
      "plain DAILY: the instance before the window's start is included", EXPAND),
    M("rrule-daily-end", "calsim/rules/rrule.py",
      "k1 = max(k0, -(-(end - w0) // step))", "k1 = max(k0, (end - w0) // step + 1)",
      "plain DAILY: an instance exactly at the window's end is included", EXPAND),
    M("rrule-expand-end", "calsim/rules/_rrule_expand.py",
      "i, j = wall.searchsorted(start), wall.searchsorted(end)",
      "i, j = wall.searchsorted(start), wall.searchsorted(end, side=\"right\")",
      "general expansion: an instance exactly at the window's end is included", EXPAND),
    # --- store/: idempotence and key --------------------------------------------------------
    M("store-digest-ordered", "calsim/store/ledger_records.py",
      "h.update(np.sort(frame.hash_rows(seed=7).to_numpy()).tobytes())",
      "h.update(frame.hash_rows(seed=7).to_numpy().tobytes())",
      "the digest depends on row order (same rows reordered = 'a different ledger')", STORE),
    M("store-digest-key-only", "calsim/store/ledger_records.py",
      "h.update(np.sort(frame.hash_rows(seed=7).to_numpy()).tobytes())",
      "h.update(np.sort(frame.select(list(KEY)).hash_rows(seed=7).to_numpy()).tobytes())",
      "the digest covers the key only (a changed value goes unnoticed)", STORE),
    M("store-index-no-kind", "calsim/store/ledger_records.py",
      "fields = [codes, frame[\"revision\"], frame[\"kind\"].to_physical(), frame[\"fold\"]]",
      "fields = [codes, frame[\"revision\"], frame[\"fold\"]]",
      "the write's key check forgets kind (a manual run at a scheduled nominal time is refused)", STORE),
    M("store-key-no-fold", "calsim/store/schema.py",
      "KEY = (\"scenario\", \"schedule_id\", \"revision\", \"nominal_local\", \"fold\", \"kind\")",
      "KEY = (\"scenario\", \"schedule_id\", \"revision\", \"nominal_local\", \"kind\")",
      "the key forgets fold (the two passes of a fold collide)", STORE),
    M("store-no-fallback", "calsim/store/writer.py",
      "return old[0] == new or (not comparable(*old) and same_rows(stored_ledger(db, name), frame))",
      "return old[0] == new",
      "a digest from another polars version is never compared by content", STORE),
    M("store-fallback-ordered", "calsim/store/ledger_records.py",
      "return a.height == b.height and a.sort(key, maintain_order=True).equals(b.sort(key, maintain_order=True))",
      "return a.equals(b)",
      "the content fallback compares row order too", STORE),
    # --- rules/cron.py: Vixie cron's grammar (cronsim 2.9 the oracle) ------------------------------
    M("cron-step-end-exclusive", "calsim/rules/cron.py", "values.update(range(start, end + 1, step))",
      "values.update(range(start, end, step))", "a step stops before the range's end (50/3 misses 59)", CRON),
    M("cron-star-step-from-zero", "calsim/rules/cron.py", "                start, end = f.lo, f.hi\n",
      "                start, end = 0, f.hi\n", "*/n counts from 0 in every field (day-of-month */2 on even days)",
      CRON),
    M("cron-a-n-single", "calsim/rules/cron.py", "start, end = _value(expr, f, base, item), f.hi",
      "start = end = _value(expr, f, base, item)", "a/n read as {a}, not a-max/n", CRON),
    M("cron-a-a-n-to-max", "calsim/rules/cron.py", "                start, end = _range(expr, f, base, item)\n",
      "                start, end = _range(expr, f, base, item)\n                if start == end:\n"
      "                    end = f.hi\n",
      "a-a/n read as a/n, a to the field's maximum (cronsim 2.8; issue 25's 9-9/1)", CRON),
    M("cron-range-end-exclusive", "calsim/rules/cron.py", "            values.update(range(start, end + 1))\n",
      "            values.update(range(start, end))\n", "a range a-b leaves out b", CRON),
    M("cron-range-one-value-refused", "calsim/rules/cron.py", "    if end < start:  # as cronsim",
      "    if end <= start:  # as cronsim", "a one-value range a-a is refused as reversed", CRON),
    M("cron-star-no-max", "calsim/rules/cron.py", "            values.update(range(f.lo, f.hi + 1))\n",
      "            values.update(range(f.lo, f.hi))\n", "'*' leaves out the field's maximum (minute 59, day 31)", CRON),
    M("cron-value-lo-exclusive", "calsim/rules/cron.py", "if not f.lo <= n <= f.hi:", "if not f.lo < n <= f.hi:",
      "the field's minimum is refused (minute 0, day 1)", CRON),
    M("cron-names-zero-based", "calsim/rules/cron.py", "return f.names.index(u) + f.offset",
      "return f.names.index(u)", "month names counted from 0 (JAN = 0, DEC = 11)", CRON),
    M("cron-names-case", "calsim/rules/cron.py", "    u = s.upper()\n    if u in f.names:",
      "    u = s\n    if u in f.names:", "names are case-sensitive (jan refused)", CRON),
    M("cron-seven-refused", "calsim/rules/cron.py", "DOW = _Field(\"day-of-week\", 0, 7,",
      "DOW = _Field(\"day-of-week\", 0, 6,", "day-of-week 7 refused (Sunday is 0 only)", CRON),
    M("cron-seven-nth-not-sunday", "calsim/rules/cron.py", "special.add((\"#\", w % 7, k))",
      "special.add((\"#\", w, k))", "7#k is not the k-th Sunday", CRON),
    M("cron-seven-last-not-sunday", "calsim/rules/cron.py",
      "special.add((\"wL\", _value(expr, f, item[:-1], item) % 7, 0))",
      "special.add((\"wL\", _value(expr, f, item[:-1], item), 0))", "7L is not the last Sunday", CRON),
    M("cron-nth-max-4", "calsim/rules/cron.py", "if k is None or not 1 <= k <= 5:", "if k is None or not 1 <= k <= 4:",
      "n#5 (a fifth weekday) is refused", CRON),
    M("cron-step-zero-accepted", "calsim/rules/cron.py", "            if not step:\n",
      "            if step is None:\n", "*/0 passes the check (range() then raises ValueError, not RuleError)", CRON),
    M("cron-star-test-whole-field", "calsim/rules/cron.py",
      "day_or = not (dom.startswith(\"*\") or dow.startswith(\"*\"))",
      "day_or = not (dom == \"*\" or dow == \"*\")",
      "the Vixie '*' test looks at the whole field: */2 counts as restricted (days ORed)", CRON),
    M("cron-star-test-both", "calsim/rules/cron.py",
      "day_or = not (dom.startswith(\"*\") or dow.startswith(\"*\"))",
      "day_or = not (dom.startswith(\"*\") and dow.startswith(\"*\"))",
      "the day fields are ORed as soon as one is restricted", CRON),
    M("cron-or-as-and", "calsim/rules/cron.py",
      "days_ok = None if dom_ok is None or dow_ok is None else dom_ok | dow_ok",
      "days_ok = None if dom_ok is None or dow_ok is None else dom_ok & dow_ok",
      "two restricted day fields must both match (no Vixie OR)", CRON),
    M("cron-or-full-field-ignored", "calsim/rules/cron.py",
      "days_ok = None if dom_ok is None or dow_ok is None else dom_ok | dow_ok",
      "days_ok = dow_ok if dom_ok is None else (dom_ok if dow_ok is None else dom_ok | dow_ok)",
      "under OR, a restricted field that names every day (1-31) does not decide", CRON),
    M("cron-never-occurs-max", "calsim/rules/cron.py", "if min(numeric) > longest:", "if max(numeric) > longest:",
      "a day list with one day the months lack (1,30 in February) is refused", CRON),
    M("cron-last-day-off-by-one", "calsim/rules/cron.py", "dom_ok |= dom == ldom\n", "dom_ok |= dom == ldom - 1\n",
      "L is the day before the last", CRON),
    M("cron-lw-sat-sun-swapped", "calsim/rules/cron.py",
      "np.where(last_wd == 6, 1, np.where(last_wd == 0, 2, 0))",
      "np.where(last_wd == 6, 2, np.where(last_wd == 0, 1, 0))",
      "LW backs a Saturday off 2 days and a Sunday 1 (weekday numbering confused)", CRON),
    M("cron-w-first-saturday-back", "calsim/rules/cron.py", "np.where(n == 1, 2, -1)", "-1",
      "1W on a Saturday moves back into the month before (so never runs)", CRON),
    M("cron-w-last-sunday-forward", "calsim/rules/cron.py", "np.where(n == ldom, -2, 1)", "1",
      "the last day's W on a Sunday moves forward out of the month", CRON),
    M("cron-w-missing-day", "calsim/rules/cron.py", "dom_ok |= (dom == n + shift) & (n <= ldom)",
      "dom_ok |= dom == n + shift", "nW of a day the month lacks still runs (31W in a 30-day month)", CRON),
    M("cron-nl-one-week-early", "calsim/rules/cron.py", "dow_ok |= (wd == w) & (dom + 7 > ldom)",
      "dow_ok |= (wd == w) & (dom + 7 >= ldom)", "nL also fires on the weekday a week before the last", CRON),
    M("cron-nth-week-index", "calsim/rules/cron.py", "dow_ok |= (wd == w) & ((dom + 6) // 7 == k)",
      "dow_ok |= (wd == w) & (dom // 7 + 1 == k)", "n#k counts weeks from day 0 (the 7th is in week 2)", CRON),
    M("cron-special-weekday-monday", "calsim/rules/cron.py", "wd = (wd_mon + 1) % 7 if special_wd else None",
      "wd = wd_mon if special_wd else None", "the extensions (LW, nW, nL, n#k) count weekdays from Monday", CRON),
    M("cron-macro-case", "calsim/rules/cron.py", "            if stripped.lower() not in MACROS:",
      "            if stripped not in MACROS:", "a macro in another case (@Weekly) is refused", CRON),
    M("cron-macro-unstripped", "calsim/rules/cron.py", "    stripped = text.strip()\n", "    stripped = text\n",
      "a macro with surrounding blanks is read as one field", CRON),
    M("cron-weekly-monday", "calsim/rules/cron.py", "\"@weekly\": \"0 0 * * 0\"", "\"@weekly\": \"0 0 * * 1\"",
      "@weekly runs on Mondays (ISO weeks)", CRON),
    # --- rules/robfig.py: robfig/cron v3's ParseStandard and Next() (the real library the oracle) ----
    M("robfig-question-not-star", "calsim/rules/robfig.py", "if low_and_high[0] in (\"*\", \"?\"):",
      "if low_and_high[0] == \"*\":", "'?' is not read as '*' (refused)", ROBFIG),
    M("robfig-star-step1-clears", "calsim/rules/robfig.py", "        if step > 1:\n            extra = 0",
      "        if step >= 1:\n            extra = 0", "*/1 clears the star bit (days ORed for '*/1')", ROBFIG),
    M("robfig-star-step2-keeps", "calsim/rules/robfig.py", "        if step > 1:\n            extra = 0",
      "        if False:\n            extra = 0", "*/2 keeps the star bit (days ANDed, as in Vixie cron)", ROBFIG),
    M("robfig-dow-to-seven", "calsim/rules/robfig.py", "(\"day-of-week\", 0, 6, _DAYS)",
      "(\"day-of-week\", 0, 7, _DAYS)", "day-of-week runs over 0..7 as in Vixie cron (7 accepted)", ROBFIG),
    M("robfig-n-step-single", "calsim/rules/robfig.py",
      "        if single:  # \"N/step\" means \"N-max/step\"\n            end = hi\n",
      "        if False:\n            end = hi\n", "N/step is {N}, not N-max/step", ROBFIG),
    M("robfig-a-a-step-to-max", "calsim/rules/robfig.py", "        if single:  # \"N/step\"",
      "        if start == end:  # \"N/step\"", "a-a/n read as a-max/n (issue 25's 9-9/1)", ROBFIG),
    M("robfig-star-range-end-read", "calsim/rules/robfig.py", "        start, end, extra = lo, hi, _STAR\n",
      "        start, end, extra = lo, (hi if single else _int_or_name(low_and_high[1], names, expr)), _STAR\n",
      "*-5 read as the range to 5 (robfig ignores what follows a star)", ROBFIG),
    M("robfig-empty-item-refused", "calsim/rules/robfig.py",
      "for expr in (part for part in text.split(\",\") if part):", "for expr in text.split(\",\"):",
      "an empty list item (1,,2) is refused (robfig drops it: strings.FieldsFunc)", ROBFIG),
    M("robfig-plus-sign-refused", "calsim/rules/robfig.py", "body = text[1:] if text[:1] in \"+-\" else text",
      "body = text", "a + sign is refused (strconv.Atoi accepts it)", ROBFIG),
    M("robfig-day-or-and", "calsim/rules/robfig.py", "day_or=not (dom & _STAR or dow & _STAR))",
      "day_or=not (dom & _STAR and dow & _STAR))", "the calendar reading ORs the day fields when only one is starred",
      ROBFIG),
    M("robfig-descriptor-case", "calsim/rules/robfig.py",
      "            if spec not in _DESCRIPTORS:\n", "            if spec.lower() not in _DESCRIPTORS:\n",
      "@Daily accepted (robfig compares the descriptor exactly)", ROBFIG),
    M("robfig-next-star-and", "calsim/rules/robfig.py", "star = dom_bits & _STAR or dow_bits & _STAR",
      "star = dom_bits & _STAR and dow_bits & _STAR", "Next() ORs the day fields when only one has the star bit",
      ROBFIG),
    M("robfig-next-from-t", "calsim/rules/robfig.py", "        t = t + 1  # \"Start", "        t = t  # \"Start",
      "Next(t) may return t itself (no 'upcoming second')", ROBFIG),
    M("robfig-month-reset-keeps-day", "calsim/rules/robfig.py", "t = date(f[0], f[1], 1, 0, 0, 0)",
      "t = date(f[0], f[1], f[2], 0, 0, 0)", "the month loop's reset keeps the day of the month", ROBFIG),
    M("robfig-day-reset-keeps-hour", "calsim/rules/robfig.py", "t = date(f[0], f[1], f[2], 0, 0, 0)",
      "t = date(f[0], f[1], f[2], f[3], f[4], f[5])", "the day loop does not reset to midnight", ROBFIG),
    M("robfig-day-fixup-none", "calsim/rules/robfig.py", "                if f[3] != 0:\n",
      "                if False:\n", "no 'hour is no longer midnight due to DST' fix-up", ROBFIG),
    M("robfig-day-fixup-forward", "calsim/rules/robfig.py", "if f[3] > 12 else -f[3] * 3600",
      "if f[3] > 0 else -f[3] * 3600", "the fix-up always rolls forward to the next midnight (not back to 0:00)",
      ROBFIG),
    M("robfig-day-no-wrap", "calsim/rules/robfig.py",
      "                if f[2] == 1:\n                    wrapped = True", "                if False:\n"
      "                    wrapped = True", "the day loop crosses into a month without checking it again", ROBFIG),
    M("robfig-hour-reset-absolute", "calsim/rules/robfig.py", "t = date(f[0], f[1], f[2], f[3], 0, 0)",
      "t -= t % 3600", "the hour loop truncates in UTC hours, not wall hours (Lord Howe, Chatham)", ROBFIG),
    M("robfig-hour-no-wrap", "calsim/rules/robfig.py",
      "                if f[3] == 0:\n                    wrapped = True", "                if False:\n"
      "                    wrapped = True", "the hour loop crosses midnight without checking the day again", ROBFIG),
    M("robfig-minute-no-truncate", "calsim/rules/robfig.py", "                    t -= t % 60  # t.Truncate",
      "                    pass  # t.Truncate", "the minute loop keeps the start's seconds", ROBFIG),
    M("robfig-minute-no-wrap", "calsim/rules/robfig.py",
      "                if f[4] == 0:\n                    wrapped = True", "                if False:\n"
      "                    wrapped = True", "the minute loop crosses the hour without checking it again", ROBFIG),
    M("robfig-seconds-no-wrap", "calsim/rules/robfig.py",
      "                t += 60 - f[5]  # t.Add(1 * time.Second) until Second() == 0: that wraps\n"
      "                continue\n",
      "                t += 60 - f[5]  # t.Add(1 * time.Second) until Second() == 0: that wraps\n",
      "rolling the seconds to the next minute returns it without checking the fields again", ROBFIG),
    M("robfig-go-date-end-inclusive", "calsim/rules/robfig.py", "if utc < start or utc >= end:",
      "if utc < start or utc > end:", "time.Date keeps its first guess for a result exactly at the period's end",
      ROBFIG),
    M("robfig-go-date-no-relookup", "calsim/rules/robfig.py", "            offset = clock.offset(utc)\n",
      "            pass\n", "time.Date keeps the offset of its first guess even when the result is outside its period",
      ROBFIG),
    # --- emulation.py: the scheduler's walk near transitions, columns elsewhere ---------------------
    M("emu-reach-after-only", "calsim/emulation.py", "        self.starts = t - r\n", "        self.starts = t\n",
      "a transition's reach starts at it (the repeated hour's first pass, before it, is not perturbed)", EMU),
    M("emu-reach-ends-no-max", "calsim/emulation.py", "self.ends = np.maximum.accumulate(t + r) if len(t) else t",
      "self.ends = t + r if len(t) else t",
      "a reach inside a longer one before it ends the longer one (transitions closer than their change)", EMU),
    M("emu-meets-left", "calsim/emulation.py", "j = np.searchsorted(self.starts, b, side=\"right\") - 1",
      "j = np.searchsorted(self.starts, b, side=\"left\") - 1",
      "a step ending exactly where a reach starts does not meet it", EMU),
    M("emu-chain-first-step-clean", "calsim/emulation.py", "prev = np.concatenate([[start], ideal[:-1]])",
      "prev = np.concatenate([ideal[:1], ideal[:-1]])",
      "the chain's first step (from the walk's start) is never checked against a transition", EMU),
    M("emu-chain-skips-bad", "calsim/emulation.py", "p, k = int(ideal[stop - 1]), stop\n",
      "p, k = int(ideal[stop - 1]), stop + 1\n", "a clean run of steps also passes over the next, perturbed, one",
      EMU, equivalent="the step from the run's last fire then spans the perturbed one's transition too, so the "
                      "walk is asked from the same instant and its answer resets k: same fires, same calls"),
    M("emu-stall-keeps-x", "calsim/emulation.py", "return fires[fires < p], p", "return fires, p",
      "a stalled walk's instant X (Next(X) == X) is kept as a fire", EMU),
    M("emu-stall-not-seen", "calsim/emulation.py", "if q is not None and q <= p:", "if q is not None and q < p:",
      "Next(X) == X is not a stall (the chain then never moves on)", EMU),
    M("emu-giveup-not-stall", "calsim/emulation.py",
      "            return (np.concatenate(out) if out else np.zeros(0, np.int64)), p + 1\n",
      "            break\n", "a walk that gives up is no stall: a later window fires again", EMU),
    M("emu-lookahead-ignored", "calsim/emulation.py", "bad = np.flatnonzero(reach.meets(prev, ideal + lookahead))",
      "bad = np.flatnonzero(reach.meets(prev, ideal))",
      "a walk that reads the clock past its answer is not asked when the change lies in that look-ahead",
      [*EMU, "tests/rules/test_calendarspec.py"]),
    M("emu-walk-one-clean-step", "calsim/emulation.py", "two = np.flatnonzero(clean[1:] & clean[:-1])",
      "two = np.flatnonzero(clean[1:])",
      "the walk starts after one clean step (a perturbed step before it can carry the walk past it)", EMU),
    M("emu-walk-start-middle", "calsim/emulation.py", "return int(inst[two[-1] + 2])", "return int(inst[two[-1] + 1])",
      "the walk starts at the instant between the two clean steps (reached by one)", EMU),
    M("emu-walk-floor-at-start", "calsim/emulation.py",
      "gap=\"shift\", fold=\"first\").due[0] // US) - 1", "gap=\"shift\", fold=\"first\").due[0] // US)",
      "the walk of a schedule starts at its start, so a fire exactly there is not one", EMU),
    M("emu-stalled-before-ignored", "calsim/emulation.py",
      "stalled = stalled_before(rule, table, reach, floor, lo)", "stalled = None",
      "a window after a stall fires again (the walk's earlier stall forgotten)", EMU),
    M("emu-stuck-after-x", "calsim/emulation.py", "kind[has & (due_s >= stalled)] = STUCK",
      "kind[has & (due_s > stalled)] = STUCK", "the stalled instant itself is lost, not stuck", EMU),
    M("emu-lost-keeps-due", "calsim/emulation.py", "    has_due = has & ~lost\n", "    has_due = has\n",
      "a lost row keeps its instant (it would run)", EMU),
    M("emu-fold-first-pass-unmarked", "calsim/emulation.py", "        kind[twin[fired[twin]]] = FIRST_PASS\n",
      "        pass\n", "a repeated time fired in its first pass only is not said to be (no dst_fold_first)", EMU),
    M("emu-fold-second-pass-unmarked", "calsim/emulation.py",
      "        kind[kind_prev[fired[kind_prev + 1]] + 1] = SECOND_PASS\n", "        pass\n",
      "a repeated time fired in its second pass only is not said to be (no dst_fold_second)", EMU),
    M("emu-extra-fold-zero", "calsim/emulation.py", "e_fold = (first != e_due).astype(np.int8)",
      "e_fold = np.zeros(len(e_due), np.int8)", "an extra fire in a repeated hour's second pass gets fold 0", EMU),
    # --- tz/clock.py: the clock a ported walk sees -----------------------------------------------------
    M("clock-month-no-carry", "calsim/tz/clock.py", "    y, m0 = divmod(month - 1, 12)\n",
      "    y, m0 = divmod(month, 12)\n", "lenient months off by one (month 12 carried into the next year)", CLOCK),
    M("clock-day-one-based", "calsim/tz/clock.py", "days = days_from_civil(year + y, m0 + 1, 1) + day - 1",
      "days = days_from_civil(year + y, m0 + 1, 1) + day",
      "day of the month counted from 0 (day 1 is the 2nd)", CLOCK),
    M("clock-weekday-monday", "calsim/tz/clock.py", "(days + 4) % 7  # 1970-01-01", "(days + 3) % 7  # 1970-01-01",
      "weekday 0 = Monday (not cron's Sunday)", CLOCK),
    M("clock-period-left", "calsim/tz/clock.py",
      "        i = bisect.bisect_right(self._utc, utc)\n        start",
      "        i = bisect.bisect_left(self._utc, utc)\n        start",
      "an instant exactly at a transition gets the period before it", CLOCK),
    M("clock-offset-left", "calsim/tz/clock.py", "return self._off[bisect.bisect_right(self._utc, utc)]",
      "return self._off[bisect.bisect_left(self._utc, utc)]",
      "the offset at a transition instant is the old one (its wall fields an hour off)", CLOCK),
    M("clock-period-end-closed", "calsim/tz/clock.py",
      "end = self._utc[i] if i < len(self._utc) else _NEVER",
      "end = self._utc[i] + 1 if i < len(self._utc) else _NEVER",
      "a period's end is inside it (time.Date keeps a guess exactly at the next transition)", CLOCK),
    # --- presets: each scheduler's DST choices -------------------------------------------------------
    M("preset-fallback-ignored", "calsim/presets/_base.py",
      "        if SCHEDULER in (self.gap, self.fold) and walks(self.rule_for(schedule)) is None:\n",
      "        if False:\n", "a rule the scheduler cannot walk still gets gap/fold 'scheduler'", PRESETS),
    M("preset-fallback-plain-rule", "calsim/presets/_base.py", "walks(self.rule_for(schedule)) is None",
      "walks(schedule.parsed_rule) is None",
      "the walkable test ignores the dialect (a cron rule under Kubernetes falls back to skip/both)", PRESETS),
    M("preset-fallback-fold-first", "calsim/presets/_base.py",
      "fallback: tuple[GapPolicy, FoldPolicy] = (\"skip\", \"both\")",
      "fallback: tuple[GapPolicy, FoldPolicy] = (\"skip\", \"first\")",
      "a rule the scheduler cannot walk runs once in a fold", PRESETS),
    M("preset-wildcard-test-whole", "calsim/presets/_base.py",
      "return rule.fields[0].startswith(\"*\") or rule.fields[1].startswith(\"*\")",
      "return rule.fields[0] == \"*\" or rule.fields[1] == \"*\"",
      "cron's MIN_STAR/HR_STAR read as the whole field '*' (0 */2 * * * fixed-time)", CRONIE),
    M("preset-wildcard-test-and", "calsim/presets/_base.py",
      "return rule.fields[0].startswith(\"*\") or rule.fields[1].startswith(\"*\")",
      "return rule.fields[0].startswith(\"*\") and rule.fields[1].startswith(\"*\")",
      "a wildcard job needs both minute and hour starred (30 * * * * fixed-time)", CRONIE),
    M("preset-wildcard-policy-dropped", "calsim/presets/_base.py",
      "if self.wildcard is not None and self.wildcard.policy and self.wildcard.matches(s):",
      "if False:", "a wildcard job keeps the fixed-time policy (cron's 180-minute catch-up limit)", CRONIE),
    M("preset-zone-ignored", "calsim/presets/_base.py", "zone=self.zone or s.zone)", "zone=s.zone)",
      "Kubernetes' timeZone is not set on the schedules", PRESETS),
    M("preset-robfig-reads-vixie", "calsim/presets/_base.py",
      "        return RobfigCron.parse(cast(Cron, rule).text)\n",
      "        return rule\n", "a CronJob's schedule read as Vixie cron (5/2 includes Sunday)", K8S),
    M("k8s-gap-skip", "calsim/presets/_kubernetes.py", "gap=\"scheduler\" if cron == \"robfig\" else \"skip\"",
      "gap=\"skip\"", "a CronJob skips gap times as a policy, not as robfig's Next() walks", K8S),
    M("k8s-calendar-fold-first", "calsim/presets/_kubernetes.py",
      "fold=\"scheduler\" if cron == \"robfig\" else \"both\"",
      "fold=\"scheduler\" if cron == \"robfig\" else \"first\"", "cron='calendar' runs a repeated time once", K8S),
    M("k8s-calendar-vixie", "calsim/presets/_kubernetes.py", "tick=\"10s\", notes=tuple(notes), dialect=\"robfig\",",
      "tick=\"10s\", notes=tuple(notes), dialect=\"robfig\" if cron == \"robfig\" else None,",
      "cron='calendar' reads the spec as Vixie cron instead of robfig's grammar", K8S),
    M("cronie-fixed-fold-both", "calsim/presets/_cronie.py",
      "fixed: tuple[GapPolicy, FoldPolicy] = (\"next_valid\", \"first\")",
      "fixed: tuple[GapPolicy, FoldPolicy] = (\"next_valid\", \"both\")",
      "a fixed-time job runs in both passes of a repeated hour", CRONIE),
    M("cronie-fixed-gap-shift", "calsim/presets/_cronie.py",
      "fixed: tuple[GapPolicy, FoldPolicy] = (\"next_valid\", \"first\")",
      "fixed: tuple[GapPolicy, FoldPolicy] = (\"shift\", \"first\")",
      "a fixed-time gap job runs an hour later (02:30 -> 03:30), not at the change", CRONIE),
    M("cronie-wild-fold-first", "calsim/presets/_cronie.py",
      "wild: tuple[GapPolicy, FoldPolicy] = (\"skip\", \"both\")",
      "wild: tuple[GapPolicy, FoldPolicy] = (\"skip\", \"first\")",
      "a wildcard job runs once in a repeated hour", CRONIE),
    M("cronie-wild-gap-next-valid", "calsim/presets/_cronie.py",
      "wild: tuple[GapPolicy, FoldPolicy] = (\"skip\", \"both\")",
      "wild: tuple[GapPolicy, FoldPolicy] = (\"next_valid\", \"both\")",
      "a wildcard job's gap minutes run at the change", CRONIE),
    M("cronie-forced-wildcard-ignored", "calsim/presets/_cronie.py",
      "gap, fold = wild if job_kind == \"wildcard\" else fixed", "gap, fold = fixed",
      "job_kind='wildcard' still gives the fixed-time DST policies", CRONIE),
    M("cronie-forced-kind-keeps-test", "calsim/presets/_cronie.py",
      "wild_policy) if job_kind == \"auto\" else None,", "wild_policy),",
      "a forced job kind still tells wildcard rules apart", CRONIE),
    M("cronie-fixed-limit-3h", "calsim/presets/_cronie.py", "FIXED_LIMIT = dt.timedelta(seconds=10799) - _US",
      "FIXED_LIMIT = dt.timedelta(seconds=10800) - _US",
      "a suspend of exactly 3 h (J = 181) still catches fixed-time jobs up", CRONIE),
    M("cronie-wild-limit-5min", "calsim/presets/_cronie.py", "WILD_LIMIT = dt.timedelta(seconds=299) - _US",
      "WILD_LIMIT = dt.timedelta(seconds=300) - _US",
      "a suspend of exactly 5 min (J = 6) still catches wildcard jobs up", CRONIE),
    M("cronie-wild-limit-dropped", "calsim/presets/_cronie.py",
      "    wild_policy = ((\"suspend_limit\", WILD_LIMIT),)", "    wild_policy = ()",
      "wildcard jobs get the fixed-time 180-minute catch-up limit", CRONIE),
    M("cronie-wakes-at-resume", "calsim/presets/_cronie.py", "                    suspend_wake=\"sleep_end\")",
      "                    suspend_wake=\"resume\")",
      "crond wakes at the resume instant, not when its interrupted sleep runs out", CRONIE),
    M("cronie-recovery-wake", "calsim/presets/_cronie.py", "recovery_wake=False, suspend_catchup",
      "recovery_wake=True, suspend_catchup", "a restarted crond runs the minute it starts in", CRONIE),
    M("aps-gap-skip", "calsim/presets/_apscheduler.py", "gap=\"scheduler\" if code else \"skip\"", "gap=\"skip\"",
      "APScheduler skips gap times as a policy (the docs' reading), not as CronTrigger walks", APS),
    M("aps-docs-fold-first", "calsim/presets/_apscheduler.py", "fold=\"scheduler\" if code else \"both\"",
      "fold=\"scheduler\" if code else \"first\"", "dst_gap='docs' runs a repeated time once", APS),
    M("aps-fallback-skip", "calsim/presets/_apscheduler.py", "fallback=(\"shift\", \"both\"),",
      "fallback=(\"skip\", \"both\"),", "a rule that is no CronTrigger skips its gap times (a set hour shifts them)",
      APS),
    M("aps-cron-not-crontrigger", "calsim/presets/_apscheduler.py", "dialect=\"apscheduler\", fallback",
      "dialect=None, fallback", "a cron rule is not read as the CronTrigger that fires it (so not walked)", APS),
    M("temporal-fold-first", "calsim/presets/_temporal.py", "gap=\"skip\", fold=\"both\", tick=\"1s\"",
      "gap=\"skip\", fold=\"first\", tick=\"1s\"", "Temporal runs a repeated time once", TEMPORAL),
    M("temporal-gap-shift", "calsim/presets/_temporal.py", "gap=\"skip\", fold=\"both\", tick=\"1s\"",
      "gap=\"shift\", fold=\"both\", tick=\"1s\"", "Temporal runs a gap time an hour later", TEMPORAL),
    M("eventbridge-fold-both", "calsim/presets/_eventbridge.py", "gap=\"skip\", fold=\"first\", tick=\"1min\"",
      "gap=\"skip\", fold=\"both\", tick=\"1min\"", "EventBridge runs a repeated time twice", EVENTBRIDGE),
    M("eventbridge-gap-next-valid", "calsim/presets/_eventbridge.py",
      "gap=\"skip\", fold=\"first\", tick=\"1min\"", "gap=\"next_valid\", fold=\"first\", tick=\"1min\"",
      "EventBridge runs a gap time at the change", EVENTBRIDGE),
    # --- rules/quartz_walk.py: Quartz 2.3.2's getTimeAfter on a lenient GregorianCalendar (the real jar) ----
    M("qwalk-wall-key-old-offset", "calsim/rules/quartz_walk.py",
      "got = (n, [u + off[i + 1] for i, u in enumerate(utc)], off,",
      "got = (n, [u + off[i] for i, u in enumerate(utc)], off,",
      "the JDK's wall rule keys each transition by its wall time before it: a repeated time read in its first pass",
      QWALK),
    M("qwalk-wall-at-transition", "calsim/rules/quartz_walk.py", "return wall - off[bisect.bisect_right(walls, wall)]",
      "return wall - off[bisect.bisect_left(walls, wall)]",
      "a wall time exactly at a transition's new wall time takes the offset before it", QWALK),
    M("qwalk-set-hour-no-bump", "calsim/rules/quartz_walk.py", "if cal.get(\"hour\") != hour and hour != 24:",
      "if False:", "setCalendarHour without its hour + 1 (Chatham's 0 50 3 fires on the change day)", QWALK),
    M("qwalk-second-set-if-changed", "calsim/rules/quartz_walk.py",
      "        cl.set(\"second\", sec)\n\n        minute = cl.get(\"minute\")  # L1208",
      "        if sec != cl.get(\"second\"):\n            cl.set(\"second\", sec)\n\n"
      "        minute = cl.get(\"minute\")  # L1208",
      "the second is set only when it changes, so a walk inside a fold's first pass stays there (fires it)", QWALK,
      equivalent="every path on sets the minute (or the hour) next, which re-reads the wall time as the second's "
                 "set would: no difference over 84,350 next_after calls, every minute within 2 h of each 2026 "
                 "transition of 11 zones (New York, Dublin, Lord Howe, Chatham, Beirut, Santiago, Troll, ...) "
                 "x 25 expressions"),
    M("qwalk-after-not-plus-one", "calsim/rules/quartz_walk.py", "after_time = after_time + 1  # L1177",
      "after_time = after_time  # L1177", "getTimeAfter(t) may give t itself", QWALK),
    M("qwalk-lw-before-inclusive", "calsim/rules/quartz_walk.py", "if n_time < after_time:  # L1309",
      "if n_time <= after_time:  # L1309", "LW: a weekday time exactly at the search's start is already past", QWALK),
    M("qwalk-nw-before-inclusive", "calsim/rules/quartz_walk.py", "if n_time < after_time:  # L1346",
      "if n_time <= after_time:  # L1346", "nW: a weekday time exactly at the search's start is already past", QWALK),
    M("qwalk-nl-last-day-missed", "calsim/rules/quartz_walk.py", "while day + days_to_add + 7 <= l_day:",
      "while day + days_to_add + 7 < l_day:", "nL misses a last weekday on the month's last day", QWALK),
    M("qwalk-nth-week-floor", "calsim/rules/quartz_walk.py",
      "                if day % 7 > 0:\n                    week_of_month += 1",
      "                if False:\n                    week_of_month += 1", "n#k counts weeks by day // 7", QWALK),
    M("qwalk-l-offset-ignored", "calsim/rules/quartz_walk.py",
      "day = _last_day_of_month(mon, cl.get(\"year\")) - q.lastday_offset\n                    if t > day:",
      "day = _last_day_of_month(mon, cl.get(\"year\"))\n                    if t > day:", "L-n walked as L", QWALK),
    M("qwalk-list-with-l-walked", "calsim/rules/quartz_walk.py",
      "        if sum(kinds) != 1 or sizes > 1:\n            return None",
      "        if sizes > 1:\n            return None",
      "a day list mixing days and L is walked, though 2.3.2 refuses L in a list (two calendars mixed)", QUARTZ),
    # --- rules/quartz.py: Quartz's grammar (the real CronExpression the oracle) ---------------------------
    M("quartz-dow-monday-one", "calsim/rules/quartz.py", "q = (wd + 1) % 7 + 1  # Quartz's", "q = wd + 1  # Quartz's",
      "day-of-week 1 = Monday (cron's habit), not Sunday", QUARTZ),
    M("quartz-range-no-wrap", "calsim/rules/quartz.py", "    if f is YEAR:  # addToSet", "    if True:  # addToSet",
      "a range that wraps (22-2, FRI-MON) is refused instead of wrapped", QUARTZ),
    M("quartz-a-n-single", "calsim/rules/quartz.py", "        end = f.hi  # a/n", "        end = start  # a/n",
      "a/n read as {a}", QUARTZ),
    M("quartz-dow-l-sunday", "calsim/rules/quartz.py", "days |= {7} if item == \"L\" else _field(DOW, item)",
      "days |= {1} if item == \"L\" else _field(DOW, item)", "day-of-week L read as Sunday, not Saturday (7)", QUARTZ),
    M("quartz-nth-week-floor", "calsim/rules/quartz.py", "day_ok = (q == w) & ((dom + 6) // 7 == k)",
      "day_ok = (q == w) & (dom // 7 + 1 == k)", "n#k counts weeks from day 0 (the 7th in week 2)", QUARTZ),
    M("quartz-nl-one-week-early", "calsim/rules/quartz.py", "day_ok = (q == self.last_of_weekday) & (dom + 7 > mlen)",
      "day_ok = (q == self.last_of_weekday) & (dom + 7 >= mlen)", "nL also fires a week before the last", QUARTZ),
    M("quartz-w-first-saturday-back", "calsim/rules/quartz.py", "np.where(target == 1, 2, -1)", "-1",
      "1W on a Saturday moves back into the month before", QUARTZ),
    M("quartz-both-days-accepted", "calsim/rules/quartz.py", "        if (dom == \"?\") == (dow == \"?\"):",
      "        if dom == \"?\" and dow == \"?\":", "neither day field '?' accepted (Quartz refuses both)", QUARTZ),
    M("quartz-year-max-exclusive", "calsim/rules/quartz.py", "(year >= MIN_YEAR) & (year <= MAX_YEAR)",
      "(year >= MIN_YEAR) & (year < MAX_YEAR)", "the last year (2199) never fires", QUARTZ),
    M("quartz-emulates-every-rule", "calsim/rules/quartz.py",
      "return EMULATES if _walk_sets(self) is not None else None", "return EMULATES",
      "every quartz: rule is walked, also those 2.3.2 reads differently (no fallback)", QUARTZ),
    # --- presets/_quartz.py ---------------------------------------------------------------------------
    M("quartz-preset-fold-both", "calsim/presets/_quartz.py",
      "gap=\"scheduler\", fold=\"scheduler\", fallback=(\"skip\", \"second\")",
      "gap=\"skip\", fold=\"both\", fallback=(\"skip\", \"second\")",
      "a CronTrigger fires both passes of a repeated hour (issue 25's fold='both' claim)", QPRESET),
    M("quartz-preset-fallback-first", "calsim/presets/_quartz.py", "fallback=(\"skip\", \"second\"), tick=\"1s\"",
      "fallback=(\"skip\", \"first\"), tick=\"1s\"", "a rule Quartz's walk is not used for fires the first pass",
      QPRESET),
    # --- tz/glibc.py: glibc 2.36's mktime, what systemd's walk normalises with ---------------------------------
    M("glibc-gap-standard-side", "calsim/tz/glibc.py", "(dst2 <= (tm[6] != 0) if isdst < 0",
      "(dst2 >= (tm[6] != 0) if isdst < 0", "a gap's time moved to the standard side (forward in Dublin too)", GLIBC),
    M("glibc-no-remembered-offset", "calsim/tz/glibc.py", "        self.offset = t - t0 + off                   #",
      "        pass                   #", "mktime forgets the offset its previous call found (a repeated time's pass)",
      GLIBC),
    M("glibc-isdst-request-ignored", "calsim/tz/glibc.py", "        if dt == 0 and _isdst_differ(isdst, tm[6]):",
      "        if False:", "an isdst of 0 or 1 is not looked for at a neighbouring instant", GLIBC),
    M("glibc-period-left", "calsim/tz/glibc.py", "        i = bisect.bisect_right(self._utc, t)\n        return",
      "        i = bisect.bisect_left(self._utc, t)\n        return",
      "the period at a transition instant is the one before it", GLIBC),
    # --- rules/calendarspec.py: systemd 252's calendar walk (systemd-analyze the oracle) --------------------
    M("calspec-backward-accepted", "calsim/rules/calendarspec.py",
      "    if cmp < 0:\n        return _EDEADLK", "    if False:\n        return _EDEADLK",
      "a time mktime moved back is accepted (Dublin's 02:30 and 03:30 IST not lost)", CALSPEC),
    M("calspec-forward-not-followed", "calsim/rules/calendarspec.py", "    if cmp > 0:\n        tm[:] = t\n",
      "    if False:\n        tm[:] = t\n",
      "a time mktime moved forward is not taken up (the walk goes on from the gap)", CALSPEC),
    M("calspec-no-negative-dst-fix", "calsim/rules/calendarspec.py",
      "        if (c[Y], c[MON], c[MDAY], c[H], c[MIN], c[SEC], tm_usec) < (*tm[:6], usec):",
      "        if False:", "v252.31 without PR #36897: a match mktime moved before the start is taken", CALSPEC),
    M("calspec-from-usec", "calsim/rules/calendarspec.py", "    usec += 1\n    t = usec // US", "    t = usec // US",
      "the next elapse may be the base itself", CALSPEC),
    M("calspec-hour-refused-next-hour", "calsim/rules/calendarspec.py",
      "            c[MDAY] += 1\n            c[H], c[MIN], c[SEC], tm_usec = 0, 0, 0, 0\n            continue\n"
      "        if r == 0:  # \"The next hour",
      "            c[H] += 1\n            c[MIN], c[SEC], tm_usec = 0, 0, 0\n            continue\n"
      "        if r == 0:  # \"The next hour",
      "a refused hour moves the walk to the next hour, not the next day", CALSPEC),
    M("calspec-repeat-round-down", "calsim/rules/calendarspec.py",
      "k2 = start + repeat * (-(-(val - start) // repeat))", "k2 = start + repeat * ((val - start) // repeat)",
      "a repetition rounds down to a value below the current one", CALSPEC),
    M("calspec-stop-exclusive", "calsim/rules/calendarspec.py", "(stop < 0 or k2 <= stop)", "(stop < 0 or k2 < stop)",
      "a repetition's last value (its stop) is never taken", CALSPEC),
    M("calspec-eom-off-by-one", "calsim/rules/calendarspec.py", "    t[MDAY] = 1 - day\n", "    t[MDAY] = -day\n",
      "~n counts from the day before the month's last", CALSPEC),
    M("calspec-weekday-sunday-first", "calsim/rules/calendarspec.py", "k = 6 if t[7] == 0 else t[7] - 1", "k = t[7]",
      "weekday bits counted from Sunday (systemd's Mon = 1)", CALSPEC),
    M("calspec-isdst-kept", "calsim/rules/calendarspec.py",
      "        if not invalidate_dst:\n            c[ISDST] = -1", "        if False:\n            c[ISDST] = -1",
      "the walk keeps the base's tm_isdst instead of asking mktime to decide (-1)", CALSPEC),
    # --- presets/_systemd.py ----------------------------------------------------------------------------
    M("systemd-preset-policy", "calsim/presets/_systemd.py",
      "gap=\"scheduler\", fold=\"scheduler\", fallback=(\"skip\", \"first\"),",
      "gap=\"skip\", fold=\"first\", fallback=(\"skip\", \"first\"),",
      "OnCalendar= resolved as skip/first, not as systemd's walk (Dublin's lost 02:30, 03:30)", SPRESET),
    M("systemd-preset-fallback-both", "calsim/presets/_systemd.py",
      "gap=\"scheduler\", fold=\"scheduler\", fallback=(\"skip\", \"first\"),",
      "gap=\"scheduler\", fold=\"scheduler\", fallback=(\"skip\", \"both\"),",
      "a rule systemd's walk is not ported for runs both passes of a repeated hour", SPRESET),
]


def repo_files(root: Path) -> list[str]:
    """Tracked files plus untracked ones git does not ignore (the lead's new modules), never .venv."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         check=True, capture_output=True).stdout.decode()
    return sorted({p for p in out.split("\0") if p and not p.startswith(".venv/") and (root / p).is_file()})


def make_copy(root: Path, files: list[str], parent: Path) -> Path:
    dest = Path(tempfile.mkdtemp(prefix="calsim-mutant-", dir=parent))
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    return dest


def apply(copy: Path, mutant: dict) -> None:
    path = copy / mutant["file"]
    text = path.read_text()
    n = text.count(mutant["old"])
    if n != 1:
        raise ValueError(f"mutant {mutant['id']}: snippet occurs {n} times in {mutant['file']} (needs exactly 1): "
                         f"{mutant['old']!r}")
    path.write_text(text.replace(mutant["old"], mutant["new"]))


def check(root: Path, mutant: dict) -> str | None:
    """None when the mutant applies to the checkout, else why not."""
    path = root / mutant["file"]
    if not path.is_file():
        return f"no file {mutant['file']}"
    n = path.read_text().count(mutant["old"])
    if n != 1:
        return f"snippet occurs {n} times in {mutant['file']}"
    missing = [t for t in mutant["tests"] if not (root / t.split("::")[0]).exists()]
    return f"missing test files {missing}" if missing else None


def _env(copy: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy)
    env.pop("PYTEST_ADDOPTS", None)
    return env


def run_tests(copy: Path, tests: list[str], timeout: float) -> tuple[str, int | None, float, list[str], str]:
    """(status, exit code, seconds, failed test lines, output tail) of pytest over ``tests`` in ``copy``."""
    probe = subprocess.run([str(PYTHON), "-c", "import calsim; print(calsim.__file__)"], cwd=copy, env=_env(copy),
                           capture_output=True, text=True)
    loaded = probe.stdout.strip()
    if probe.returncode == 0 and not Path(loaded).resolve().is_relative_to(copy.resolve()):
        return "error", None, 0.0, [], f"calsim was imported from {loaded}, not from the copy {copy}"
    cmd = [str(PYTHON), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=copy, env=_env(copy), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None, time.monotonic() - t0, [], ""
    seconds = time.monotonic() - t0
    out = proc.stdout + proc.stderr
    failed = [line for line in out.splitlines() if line.startswith(("FAILED ", "ERROR "))][:5]
    status = {0: "survived", 1: "killed", 2: "killed"}.get(proc.returncode, "error")
    return status, proc.returncode, seconds, failed, "\n".join(out.splitlines()[-15:])


def run_one(mutant: dict, source: Path, files: list[str], parent: Path, timeout: float) -> dict:
    copy = make_copy(source, files, parent)
    try:
        apply(copy, mutant)
        status, rc, seconds, failed, tail = run_tests(copy, mutant["tests"], timeout)
    except ValueError as exc:
        status, rc, seconds, failed, tail = "error", None, 0.0, [], str(exc)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    out = {"id": mutant["id"], "file": mutant["file"], "status": status, "exit": rc, "seconds": round(seconds, 1),
           "killed_by": failed, "why": mutant["why"], "tests": mutant["tests"]}
    if "equivalent" in mutant:
        out["equivalent"] = mutant["equivalent"]
    if status in ("error", "timeout"):
        out["tail"] = tail
    return out


def baseline(tests: tuple[str, ...], source: Path, files: list[str], parent: Path,
             timeout: float) -> tuple[bool, str]:
    copy = make_copy(source, files, parent)
    try:
        status, rc, _, failed, tail = run_tests(copy, list(tests), timeout)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return status == "survived", "\n".join(failed) or tail


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="run the mutants whose id or file contains this text")
    ap.add_argument("--skip", action="append", default=[],
                    help="leave out the mutants whose id or file contains this text (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1; the machine is shared)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per pytest run (default 900)")
    ap.add_argument("--without", action="append", default=[],
                    help="drop test files containing this text from every mutant (repeatable)")
    ap.add_argument("--mutants", action="append", default=[], help="a Python file defining MUTANTS (repeatable)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run of each test list")
    ap.add_argument("--list", action="store_true", help="check and list the mutants, run nothing")
    ap.add_argument("--json", help="also write the summary to this file")
    args = ap.parse_args(argv)

    mutants = list(MUTANTS)
    for extra in args.mutants:
        mutants += runpy.run_path(extra)["MUTANTS"]
    ids = [m["id"] for m in mutants]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        print(f"duplicate mutant ids: {dup}", file=sys.stderr)
        return 2
    if args.only:
        mutants = [m for m in mutants if args.only in m["id"] or args.only in m["file"]]
    mutants = [m for m in mutants if not any(x in m["id"] or x in m["file"] for x in args.skip)]
    for m in mutants:
        m["tests"] = [t for t in m["tests"] if not any(w in t for w in args.without)]
    problems = {m["id"]: p for m in mutants if (p := check(ROOT, m))}
    problems.update({m["id"]: "no test left to run" for m in mutants if not m["tests"]})
    if args.list or problems:
        for m in mutants:
            mark = problems.get(m["id"], "ok")
            print(f"{m['id']:28} {m['file']:32} {mark}: {m['why']}", file=sys.stderr)
        return 2 if problems else 0

    files = repo_files(ROOT)
    parent = Path(tempfile.mkdtemp(prefix="calsim-mutants-", dir="/tmp"))
    results: list[dict] = []
    try:
        snapshot = make_copy(ROOT, files, parent)  # the tree every mutant and baseline starts from
        problems = {m["id"]: p for m in mutants if (p := check(snapshot, m))}
        if problems:
            for mid, why in problems.items():
                print(f"{mid}: {why} (in the snapshot)", file=sys.stderr)
            return 2
        broken: dict[tuple[str, ...], str] = {}
        if not args.no_baseline:
            for tests in dict.fromkeys(tuple(m["tests"]) for m in mutants):
                ok, why = baseline(tests, snapshot, files, parent, args.timeout)
                print(f"baseline {'ok    ' if ok else 'FAILED'} {' '.join(tests)}", file=sys.stderr)
                if not ok:
                    broken[tests] = why
        todo = [m for m in mutants if tuple(m["tests"]) not in broken]
        for m in mutants:
            if tuple(m["tests"]) in broken:
                results.append({"id": m["id"], "file": m["file"], "status": "baseline_failed", "why": m["why"],
                                "tail": broken[tuple(m["tests"])]})
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = {pool.submit(run_one, m, snapshot, files, parent, args.timeout): m for m in todo}
            for fut in concurrent.futures.as_completed(futures):
                r = fut.result()
                results.append(r)
                extra = f" <- {r['killed_by'][0]}" if r.get("killed_by") else ""
                print(f"{r['status']:9} {r['seconds']:6.1f}s {r['id']}{extra}", file=sys.stderr)
    finally:
        shutil.rmtree(parent, ignore_errors=True)

    order = {m["id"]: i for i, m in enumerate(mutants)}
    results.sort(key=lambda r: order[r["id"]])
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = {"total": len(results), **counts,
               "survivors": [r["id"] for r in results if r["status"] == "survived"], "mutants": results}
    text = json.dumps(summary, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    unexplained = [r for r in results
                   if r["status"] != "killed" and not (r["status"] == "survived" and "equivalent" in r)]
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
