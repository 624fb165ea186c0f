#!/usr/bin/env python3
"""Hand-made mutation testing: does the test suite fail when one line of calsim is wrong?

Usage (from the repository root)::

    .venv/bin/python tools/mutants.py                       # every mutant, one at a time
    .venv/bin/python tools/mutants.py --only tzif           # mutants whose id or file contains "tzif"
    .venv/bin/python tools/mutants.py --jobs 2 --json /tmp/mutants.json
    .venv/bin/python tools/mutants.py --list                # check every snippet, run nothing
    .venv/bin/python tools/mutants.py --without test_boundaries   # drop matching test files (the older suite)
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
        "tests": ["tests/test_boundaries.py"], # pytest arguments: files or node ids, fastest killer first
        "equivalent": "...",                   # optional: why no test can kill it (reported, still run)
    }

How a mutant runs
-----------------
1. The repository's files (``git ls-files``, plus untracked files git does not
   ignore; never ``.venv``) are copied to a new directory under /tmp. The
   checkout itself is never written.
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

B = "tests/test_boundaries.py"
RESOLVE = [B, "tests/test_resolve_pinned.py", "tests/test_resolve_synthetic.py",
           "tests/test_resolve_properties.py", "tests/test_resolve_oracle.py"]
TZIF = [B, "tests/test_resolve_synthetic.py", "tests/test_releases.py", "tests/test_tzchanges.py",
        "tests/test_resolve_oracle.py"]
EXPAND = [B, "tests/test_expand_pinned.py", "tests/test_expand.py", "tests/test_expand_fast_paths.py",
          "tests/rules/test_rrule.py"]
STORE = [B, "tests/test_store.py", "tests/test_store_layout.py"]


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
      "has_due = None if not (any_gap and gap == \"skip\") else ~is_gap",
      "has_due = None if not any_gap else ~is_gap",
      "every gap policy drops the instant, not only skip", RESOLVE),
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
      "day = np.where(day > first + length, day - 7, day)", "Mm.5.d: a fifth weekday on the next month's 1st is kept", TZIF),
    M("tzif-end-in-std", "calsim/tz/posix.py",
      "end = self.end.days(years) * 86400 + (self.end_time - self.dst_offset)",
      "end = self.end.days(years) * 86400 + (self.end_time - self.std_offset)",
      "the end time read in standard time, not in DST", TZIF),
    M("tzif-start-in-dst", "calsim/tz/posix.py",
      "start = self.start.days(years) * 86400 + (self.start_time - self.std_offset)",
      "start = self.start.days(years) * 86400 + (self.start_time - self.dst_offset)",
      "the start time read in DST, not in standard time", TZIF),
    M("tzif-no-sort", "calsim/tz/tzif.py", "order = np.argsort(gen_utc, kind=\"stable\")", "order = np.arange(len(gen_utc))",
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
    M("exp-utc-until-strict", "calsim/expansion.py", "keep &= place <= self.until[sched]",
      "keep &= place < self.until[sched]", "a Z UNTIL equal to an instance's instant excludes it", EXPAND),
    M("exp-count-off-by-one", "calsim/expansion.py",
      "return walls[: last + 1], inv[: last + 1]", "return walls[: last], inv[: last]",
      "COUNT keeps one instance too few", EXPAND),
    M("exp-count-folds", "calsim/expansion.py",
      "counted = resolve_wall(walls, table, gap=\"skip\", fold=\"first\").kind != 1",
      "counted = resolve_wall(walls, table, gap=\"skip\", fold=\"first\").kind == 0",
      "COUNT does not count an instance in a fold", EXPAND),
    M("exp-count-shifted", "calsim/expansion.py", "            if s.gap == \"skip\":\n                # Folds",
      "            if s.gap != \"reject\":\n                # Folds",
      "COUNT does not count a gap instance that the policy shifts", EXPAND),
    M("exp-window-closed", "calsim/expansion.py",
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
    M("store-digest-ordered", "calsim/store/records.py",
      "h.update(np.sort(frame.hash_rows(seed=7).to_numpy()).tobytes())",
      "h.update(frame.hash_rows(seed=7).to_numpy().tobytes())",
      "the digest depends on row order (same rows reordered = 'a different ledger')", STORE),
    M("store-digest-key-only", "calsim/store/records.py",
      "h.update(np.sort(frame.hash_rows(seed=7).to_numpy()).tobytes())",
      "h.update(np.sort(frame.select(list(KEY)).hash_rows(seed=7).to_numpy()).tobytes())",
      "the digest covers the key only (a changed value goes unnoticed)", STORE),
    M("store-index-no-kind", "calsim/store/records.py",
      "fields = [codes, frame[\"revision\"], frame[\"kind\"].to_physical(), frame[\"fold\"]]",
      "fields = [codes, frame[\"revision\"], frame[\"fold\"]]",
      "the write's key check forgets kind (a manual run at a scheduled nominal time is refused)", STORE),
    M("store-key-no-fold", "calsim/store/schema.py",
      "KEY = (\"scenario\", \"schedule_id\", \"revision\", \"nominal_local\", \"fold\", \"kind\")",
      "KEY = (\"scenario\", \"schedule_id\", \"revision\", \"nominal_local\", \"kind\")",
      "the key forgets fold (the two passes of a fold collide)", STORE),
    M("store-no-fallback", "calsim/store/writer.py",
      "return old == new or (not old.startswith(digest_prefix()) and same_rows(stored_ledger(db, name), frame))",
      "return old == new",
      "a digest from another polars version is never compared by content", STORE),
    M("store-fallback-ordered", "calsim/store/records.py",
      "return a.height == b.height and a.sort(key, maintain_order=True).equals(b.sort(key, maintain_order=True))",
      "return a.equals(b)",
      "the content fallback compares row order too", STORE),
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


def run_one(mutant: dict, files: list[str], parent: Path, timeout: float) -> dict:
    copy = make_copy(ROOT, files, parent)
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


def baseline(tests: tuple[str, ...], files: list[str], parent: Path, timeout: float) -> tuple[bool, str]:
    copy = make_copy(ROOT, files, parent)
    try:
        status, rc, _, failed, tail = run_tests(copy, list(tests), timeout)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return status == "survived", "\n".join(failed) or tail


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="run the mutants whose id or file contains this text")
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
        broken: dict[tuple[str, ...], str] = {}
        if not args.no_baseline:
            for tests in dict.fromkeys(tuple(m["tests"]) for m in mutants):
                ok, why = baseline(tests, files, parent, args.timeout)
                print(f"baseline {'ok    ' if ok else 'FAILED'} {' '.join(tests)}", file=sys.stderr)
                if not ok:
                    broken[tests] = why
        todo = [m for m in mutants if tuple(m["tests"]) not in broken]
        for m in mutants:
            if tuple(m["tests"]) in broken:
                results.append({"id": m["id"], "file": m["file"], "status": "baseline_failed", "why": m["why"],
                                "tail": broken[tuple(m["tests"])]})
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = {pool.submit(run_one, m, files, parent, args.timeout): m for m in todo}
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
    unexplained = [r for r in results if r["status"] != "killed" and not (r["status"] == "survived" and "equivalent" in r)]
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
