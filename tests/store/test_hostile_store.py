"""Hostile and careless targets for the ledger store and every file writer (issue 15, items 3 and 4).

Nothing is written, replaced or lost, and every refusal is one line naming the argument (or file) and the cause:
bad output targets (devices, FIFOs, sockets, directories, symlinks, long names, unwritable or read-only directories,
a full disk), store paths DuckDB would read as remote or as an extension, corrupt store files, a store locked by
another process, and writes that fail half way.

A full disk and a read-only file system cannot be made without privileges. They are made for real in a private mount
namespace (``unshare -m`` and a small tmpfs, so nothing outside the test process sees them) when the test runs as
root, as CI does, and skipped otherwise; a full disk is also simulated everywhere by a write callback that raises
``OSError(ENOSPC)`` or by monkeypatching only the OS call that fails, and made for real with ``RLIMIT_FSIZE``
(``EFBIG``), which needs no privilege. A directory that root may not write is made by dropping
``CAP_DAC_OVERRIDE`` with ``setpriv``.
"""

from __future__ import annotations

import errno
import json
import hashlib
import os
import re
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import duckdb
import polars as pl
import pytest

import calsim
import calsim.atomic
import calsim.store.writer
from calsim.atomic import check_writable, write_atomically
from calsim.errors import (
    CalsimError,
    DuplicateKeyError,
    InputError,
    LedgerLockedError,
    ScenarioExistsError,
    StoreError,
)
from calsim.store import LedgerStore

pytestmark = pytest.mark.hostile

PY = sys.executable

# -- helpers -----------------------------------------------------------------------------------------------------


def run_limited(code: str, timeout: float = 60, prefix: list[str] | None = None,
                cwd: str | None = None, args: list[str] | None = None,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with 4 GiB of address space and 20 s of CPU (polars 2 and DuckDB
    reserve address space for each thread of their pools: under 2 GiB a thread could fail to start)."""
    limits = ("import resource\n"
              "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
              "resource.setrlimit(resource.RLIMIT_CPU, (20, 20))\n")
    return subprocess.run([*(prefix or []), PY, "-c", limits + code, *(args or [])], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=None if env is None else {**os.environ, **env})


# Cases for a cross-cutting hostile module: (name, code run in a fresh interpreter, error class, text the message
# must hold). Each code raises the error; `run_case` prints its class and message.
CASES: list[tuple[str, str, type[CalsimError], str]] = [
    *[(f"store path {p!r}", f"from calsim.store import LedgerStore\nLedgerStore({p!r})", StoreError, "path:")
      for p in ("md:calsim", "motherduck:calsim", "s3://bucket/ledger.duckdb", "http://example.com/l.duckdb",
                "https://example.com/l.duckdb", "gcs://bucket/l.duckdb", "az://container/l.duckdb",
                "hf://datasets/x/l.duckdb", "sqlite:l.db", "anything:l.duckdb", ":memory:shared")],
    *[(f"store on {p}", f"from calsim.store import LedgerStore\nLedgerStore({p!r}{ro})", StoreError, p)
      for p in ("/dev/null", "/dev/zero", "/tmp") for ro in ("", ", read_only=True")],
    *[(f"output {p}", "from calsim.atomic import write_atomically\n"
                      f"write_atomically({p!r}, lambda tmp: open(tmp, 'w').write('x'), '--output')", InputError,
       f"--output: {p!r}") for p in ("/dev/null", "/dev/zero", "/dev/full", "/tmp")],
    ("output name too long", "from calsim.atomic import check_writable\nimport tempfile\n"
                             "check_writable(tempfile.gettempdir() + '/' + 'x' * 5000, '--out')", InputError,
     "File name too long"),
    ("output with a NUL", "from calsim.atomic import check_writable\ncheck_writable('a\\x00b', '--out')", InputError,
     "--out:"),
]


def run_case(code: str) -> tuple[list[str], str, float]:
    """Run one of :data:`CASES`: the class names of what it raised, its message and the CPU seconds it took."""
    wrapped = ("import sys, time\nt0 = time.process_time()\ntry:\n" + textwrap.indent(code, "    ")
               + "\nexcept BaseException as exc:\n"
                 "    print(' '.join(c.__name__ for c in type(exc).__mro__))\n    print(exc)\n"
                 "    print(time.process_time() - t0)\nelse:\n    print('no error')\n")
    proc = run_limited(wrapped, timeout=60)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 3, proc.stdout + proc.stderr
    return lines[0].split(), lines[1], float(lines[2])


def one_line(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and len(msg) < 400, msg
    return msg


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# What a store holds, read table by table (the scenarios rows carry each ledger's content digest). Also run in
# subprocesses (a namespace's tmpfs is gone when its process ends), hence code text.
SNAPSHOT = textwrap.dedent('''
    def snapshot(path):
        import duckdb
        con = duckdb.connect(str(path), read_only=True,
                             config={"autoload_known_extensions": False, "autoinstall_known_extensions": False})
        try:
            tables = sorted(r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall())
            out = {"tables": tables,
                   "views": sorted(list(r) for r in con.execute(
                       "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall()),
                   "types": sorted(r[0] for r in con.execute(
                       "SELECT type_name FROM duckdb_types() WHERE NOT internal").fetchall())}
            for t in tables:
                out["rows:" + t] = sorted(repr(r) for r in con.execute(f'SELECT * FROM "{t}"').fetchall())
            out["occurrences"] = sorted(repr(r) for r in con.execute("SELECT * FROM occurrences").fetchall())
            return out
        finally:
            con.close()
''')
_ns: dict = {}
exec(SNAPSHOT, _ns)
snapshot = _ns["snapshot"]


def ledger(name: str, schedules: int = 1, days: int = 2, freq: str = "HOURLY") -> calsim.Ledger:
    fleet = [calsim.Schedule(f"s{i}", "UTC", "2026-01-01T00:00", f"FREQ={freq}") for i in range(schedules)]
    return calsim.simulate(calsim.Scenario(name, fleet, "2026-01-01T00:00Z", f"2026-01-{1 + days:02d}T00:00Z"),
                           progress=False)


@pytest.fixture(scope="module")
def runs() -> dict[str, calsim.Ledger]:
    return {"a": ledger("a"), "b": ledger("b", schedules=2, freq="MINUTELY", days=1)}


@pytest.fixture
def store_file(tmp_path, runs) -> Path:
    path = tmp_path / "l.duckdb"
    with LedgerStore(path) as store:
        store.write(runs["a"])
        store.write_tzdiff("d", pl.DataFrame(schema=calsim.tzchanges.TZDIFF_SCHEMA))
    return path


def _can_unshare() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && umount $d && rmdir $d"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


CAN_UNSHARE = _can_unshare()
needs_unshare = pytest.mark.skipif(not CAN_UNSHARE, reason="needs root and unshare -m (a private mount namespace)")


def in_small_fs(code: str, mount: Path, size: str, readonly: bool = False,
                timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``code`` with a fresh tmpfs of ``size`` mounted on ``mount``, seen by that process only.

    ``code`` may prepare files there; ``readonly`` remounts it read-only first when ``code`` calls ``remount_ro()``.
    """
    mount.mkdir(exist_ok=True)
    prelude = textwrap.dedent(f'''
        import subprocess
        def remount_ro():
            subprocess.run(["mount", "-o", "remount,ro", {str(mount)!r}], check=True)
    ''')
    script = f"mount -t tmpfs -o size={size} tmpfs {mount} && exec {PY} -c \"$0\""
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, prelude + code],
                          capture_output=True, text=True, timeout=timeout)


def without_dac_override() -> list[str]:
    """A command prefix under which this user is refused writes that the permission bits refuse (root included)."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("not applicable here: running as root without setpriv, a directory root may not write "
                    "cannot be made")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]


def refusals(path: str) -> str:
    """Code that opens ``path`` read-write then read-only and prints each error's class, message and seconds."""
    return textwrap.dedent(f"""
        import time
        from calsim.store import LedgerStore
        for read_only in (False, True):
            t0 = time.monotonic()
            try:
                LedgerStore({path!r}, read_only=read_only).close()
                print("opened", 0)
            except Exception as exc:
                print(type(exc).__name__, exc, round(time.monotonic() - t0, 3))
    """)


def write_text(text: str):
    return lambda tmp: Path(tmp).write_text(text)


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# -- the cases list ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, code, error, field", CASES, ids=[c[0] for c in CASES])
def test_each_case_is_one_clear_error_in_bounded_time(name, code, error, field):
    classes, message, cpu = run_case(code)
    assert error.__name__ in classes, (classes, message)
    assert field in message
    assert cpu < 10.0  # CPU seconds, wide: a guarded case costs well under one, an unguarded one minutes


# -- write_atomically and check_writable: what may be replaced -----------------------------------------------------


class TestOutputTargets:
    @pytest.mark.parametrize("device", ["/dev/null", "/dev/zero", "/dev/full"])
    def test_a_device_node_is_refused_and_stays_a_device(self, device):
        before = os.stat(device)
        for call in (lambda: write_atomically(device, write_text("x"), "--output"),
                     lambda: check_writable(device, "--output")):
            with pytest.raises(InputError, match=f"--output: '{device}' is a character device, not a regular file"):
                call()
        after = os.stat(device)
        assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev

    def test_a_directory_is_refused_and_keeps_its_files(self, tmp_path):
        (tmp_path / "d").mkdir()
        (tmp_path / "d" / "keep").write_text("k")
        with pytest.raises(InputError, match="'.*d' is a directory, not a regular file") as exc:
            write_atomically(tmp_path / "d", write_text("x"), "--out")
        assert one_line(exc).startswith("--out: ")
        assert (tmp_path / "d" / "keep").read_text() == "k" and leftovers(tmp_path) == []

    def test_a_path_ending_in_a_slash_is_refused(self, tmp_path):
        with pytest.raises(InputError, match="names a directory"):
            write_atomically(f"{tmp_path}/new/", write_text("x"))
        assert not (tmp_path / "new").exists()

    def test_a_fifo_is_refused_without_blocking(self, tmp_path):
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        # Opening a FIFO with no reader blocks; a refusal that never opens it returns. The
        # thread's join timeout only keeps a regression from hanging the suite.
        outcome: list[BaseException] = []

        def attempt():
            try:
                write_atomically(fifo, write_text("x"))
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                outcome.append(exc)

        worker = threading.Thread(target=attempt, daemon=True)
        worker.start()
        worker.join(600)
        if worker.is_alive():  # unblock it, then fail
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
            pytest.fail("write_atomically opened the FIFO and blocked")
        assert len(outcome) == 1 and isinstance(outcome[0], InputError) and "is a FIFO" in str(outcome[0])
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)

    def test_a_socket_is_refused(self):
        d = Path(tempfile.mkdtemp())  # short: a socket's path is limited to ~100 bytes
        try:
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(str(d / "s"))
            with pytest.raises(InputError, match="is a socket"):
                write_atomically(d / "s", write_text("x"))
            assert stat.S_ISSOCK(os.lstat(d / "s").st_mode)
            sock.close()
        finally:
            shutil.rmtree(d)

    def test_a_symlink_to_a_regular_file_writes_that_file_and_stays_a_link(self, tmp_path):
        real_dir = tmp_path / "real"
        real_dir.mkdir()
        (real_dir / "report.html").write_text("old")
        link = tmp_path / "latest.html"
        link.symlink_to(real_dir / "report.html")
        assert check_writable(link) == real_dir / "report.html"
        write_atomically(link, write_text("new"))
        assert link.is_symlink() and os.readlink(link) == str(real_dir / "report.html")
        assert (real_dir / "report.html").read_text() == "new"
        assert leftovers(tmp_path) == [] and leftovers(real_dir) == []

    def test_a_chain_of_symlinks_is_followed_to_the_file(self, tmp_path):
        (tmp_path / "f").write_text("old")
        (tmp_path / "l1").symlink_to("f")
        (tmp_path / "l2").symlink_to("l1")
        write_atomically(tmp_path / "l2", write_text("new"))
        assert (tmp_path / "f").read_text() == "new"
        assert (tmp_path / "l2").is_symlink() and (tmp_path / "l1").is_symlink()

    @pytest.mark.parametrize("points_to, why", [("/dev/null", "a symlink to a character device"),
                                                ("DIR", "a symlink to a directory"),
                                                ("missing", "a symlink to a missing or unreachable path"),
                                                ("LOOP", "a symlink to a missing or unreachable path")])
    def test_a_symlink_to_anything_but_a_file_is_refused_and_kept(self, tmp_path, points_to, why):
        link = tmp_path / "out.csv"
        special = {"DIR": str(tmp_path), "LOOP": str(link), "missing": str(tmp_path / "missing")}
        target = special.get(points_to, points_to)
        link.symlink_to(target)
        with pytest.raises(InputError, match=why) as exc:
            write_atomically(link, write_text("x"), "--output")
        one_line(exc)
        assert link.is_symlink() and os.readlink(link) == target
        assert not (tmp_path / "missing").exists() and leftovers(tmp_path) == []

    def test_a_name_too_long_is_one_line_that_cuts_the_path(self, tmp_path):
        with pytest.raises(InputError, match="--output: cannot write '\\.\\.\\.x+': File name too long") as exc:
            write_atomically(tmp_path / ("x" * 300), write_text("x"))
        assert len(one_line(exc)) < 200

    def test_a_name_near_the_limit_still_gets_a_temporary_file_beside_it(self, tmp_path):
        target = tmp_path / ("y" * 250)
        write_atomically(target, write_text("ok"))
        assert target.read_text() == "ok" and leftovers(tmp_path) == []

    def test_a_missing_directory_or_a_file_as_directory_is_refused(self, tmp_path):
        with pytest.raises(InputError, match="directory '.*nope' does not exist"):
            write_atomically(tmp_path / "nope" / "out.csv", write_text("x"))
        (tmp_path / "file").write_text("f")
        with pytest.raises(InputError, match="cannot write '.*file/out.csv': Not a directory"):
            write_atomically(tmp_path / "file" / "out.csv", write_text("x"))
        assert (tmp_path / "file").read_text() == "f"

    def test_a_file_without_write_bits_is_not_replaced(self, tmp_path):
        target = tmp_path / "frozen.csv"
        target.write_text("keep")
        target.chmod(0o444)
        with pytest.raises(InputError, match="is read-only \\(mode 0444\\)"):
            write_atomically(target, write_text("x"))
        assert target.read_text() == "keep"

    def test_a_replaced_file_keeps_its_mode_and_a_new_file_gets_the_umask(self, tmp_path):
        private = tmp_path / "private.csv"
        private.write_text("old")
        private.chmod(0o600)
        write_atomically(private, write_text("new"))
        assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_text() == "new"
        umask = os.umask(0o022)
        try:
            write_atomically(tmp_path / "fresh.csv", write_text("x"))
        finally:
            os.umask(umask)
        assert stat.S_IMODE((tmp_path / "fresh.csv").stat().st_mode) == 0o644

    def test_check_writable_writes_nothing(self, tmp_path):
        (tmp_path / "old.csv").write_text("old")
        before = sorted(os.listdir(tmp_path))
        assert check_writable(tmp_path / "new.csv") == tmp_path / "new.csv"
        assert check_writable(tmp_path / "old.csv") == tmp_path / "old.csv"
        assert sorted(os.listdir(tmp_path)) == before and (tmp_path / "old.csv").read_text() == "old"

    @pytest.mark.parametrize("value", [None, 3, b"bytes", "", "a\x00b"])
    def test_a_value_that_is_not_a_path_is_refused(self, value):
        with pytest.raises(InputError, match="--output: "):
            check_writable(value, "--output")


class TestOutputFailures:
    def test_enospc_from_the_writer_is_one_line_and_the_target_is_untouched(self, tmp_path):
        target = tmp_path / "out.parquet"
        target.write_text("previous")

        def full(tmp):
            Path(tmp).write_text("half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), tmp)

        with pytest.raises(InputError, match="^--output: cannot write '.*out.parquet': No space left on device$"):
            write_atomically(target, full, "--output")
        assert target.read_text() == "previous" and leftovers(tmp_path) == []

    def test_a_polars_error_that_wraps_enospc_is_one_line_too(self, tmp_path):
        def full(tmp):
            raise pl.exceptions.ComputeError("parquet: File out of specification: underlying IO error: "
                                             "No space left on device (os error 28)")

        with pytest.raises(InputError, match="cannot write '.*o.parquet': No space left on device$"):
            write_atomically(tmp_path / "o.parquet", full)
        assert list(tmp_path.iterdir()) == []

    @pytest.mark.parametrize("exc", [KeyboardInterrupt(), ValueError("bug in the writer"),
                                     FileNotFoundError(errno.ENOENT, "No such file or directory", "/some/input.csv")])
    def test_any_other_error_from_the_writer_propagates_unchanged_and_removes_the_temporary_file(self, tmp_path, exc):
        target = tmp_path / "out.csv"
        target.write_text("previous")

        def boom(tmp):
            Path(tmp).write_text("partial")
            raise exc

        with pytest.raises(type(exc)) as info:
            write_atomically(target, boom)
        assert info.value is exc
        assert target.read_text() == "previous" and leftovers(tmp_path) == []

    def test_a_read_only_file_system_is_one_line_naming_the_path(self, tmp_path, monkeypatch):
        """Only the OS call that fails is simulated (creating the temporary file); see the module docstring."""
        real_open = os.open

        def erofs(path, flags, *args, **kwargs):
            if str(path).startswith(str(tmp_path)) and flags & os.O_CREAT:
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", erofs)
        with pytest.raises(InputError, match="^--out: cannot write '.*x.csv': Read-only file system$"):
            write_atomically(tmp_path / "x.csv", write_text("x"), "--out")
        monkeypatch.undo()
        assert list(tmp_path.iterdir()) == []

    def test_a_directory_this_user_may_not_write_is_refused_before_writing(self, tmp_path):
        d = Path(tempfile.mkdtemp())
        try:
            (d / "old.csv").write_text("old")
            d.chmod(0o555)
            code = textwrap.dedent(f"""
                from calsim.atomic import write_atomically, check_writable
                from calsim.errors import InputError
                for call in (lambda: check_writable({str(d / 'new.csv')!r}, '--output'),
                             lambda: write_atomically({str(d / 'old.csv')!r}, lambda t: open(t, 'w').write('x'))):
                    try:
                        call()
                    except InputError as exc:
                        print(exc)
            """)
            proc = run_limited(code, prefix=without_dac_override())
            lines = proc.stdout.splitlines()
            assert len(lines) == 2, proc.stdout + proc.stderr
            assert all(f"cannot write in directory '{d}': Permission denied" in line for line in lines)
            assert (d / "old.csv").read_text() == "old" and sorted(os.listdir(d)) == ["old.csv"]
        finally:
            d.chmod(0o755)
            shutil.rmtree(d)

    @needs_unshare
    def test_a_real_full_disk_leaves_the_previous_file_and_no_temporary_file(self, tmp_path):
        mnt = tmp_path / "mnt"
        code = textwrap.dedent(f"""
            import os, polars as pl
            from calsim.atomic import write_atomically
            from calsim.errors import InputError
            target = {str(mnt / 'out.parquet')!r}
            open(target, 'w').write('previous')
            frame = pl.DataFrame({{'x': list(range(400_000))}})
            for fmt in ('parquet', 'csv'):
                try:
                    write_atomically(target, lambda tmp: getattr(frame, 'write_' + fmt)(tmp), '--output')
                except InputError as exc:
                    print(exc)
            print(open(target).read(), sorted(os.listdir({str(mnt)!r})))
        """)
        proc = in_small_fs(code, mnt, "256k")
        lines = proc.stdout.splitlines()
        assert len(lines) == 3, proc.stdout + proc.stderr
        assert all(line == f"--output: cannot write '{mnt}/out.parquet': No space left on device" for line in lines[:2])
        assert lines[2] == "previous ['out.parquet']"

    @needs_unshare
    def test_a_real_read_only_file_system_is_refused_before_writing(self, tmp_path):
        mnt = tmp_path / "mnt"
        code = textwrap.dedent(f"""
            from calsim.atomic import check_writable
            from calsim.errors import InputError
            open({str(mnt / 'old.csv')!r}, 'w').write('old')
            remount_ro()
            try:
                check_writable({str(mnt / 'old.csv')!r}, '--output')
            except InputError as exc:
                print(exc)
        """)
        proc = in_small_fs(code, mnt, "64k")
        assert proc.stdout.strip() == f"--output: cannot write in directory '{mnt}': Read-only file system", proc.stderr


# -- LedgerStore: what is opened -----------------------------------------------------------------------------------


class TestStorePaths:
    @pytest.mark.parametrize("path, what", [
        ("md:calsim", "an extension prefix"), ("motherduck:calsim", "an extension prefix"),
        ("sqlite:ledger.db", "an extension prefix"), ("calsim:ledger.duckdb", "an extension prefix"),
        ("s3://bucket/l.duckdb", "a remote location"), ("http://example.com/l.duckdb", "a remote location"),
        ("https://example.com/l.duckdb", "a remote location"), ("gcs://bucket/l.duckdb", "a remote location"),
        ("az://container/l.duckdb", "a remote location"), ("hf://datasets/x/l.duckdb", "a remote location"),
        ("abfss://c@a.dfs.core.windows.net/l.duckdb", "a remote location"),
        (":memory:shared", "a named in-memory database")])
    def test_a_path_duckdb_would_not_read_as_a_local_file_is_refused(self, path, what, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        with pytest.raises(StoreError, match=f"^path: '.*' would be read by DuckDB as {what}") as exc:
            LedgerStore(path)
        one_line(exc)
        assert list(tmp_path.iterdir()) == []

    def test_a_path_object_with_a_colon_is_a_local_file(self, tmp_path, monkeypatch, runs):
        monkeypatch.chdir(tmp_path)
        with LedgerStore(Path("md:calsim")) as store:
            store.write(runs["a"])
        assert (tmp_path / "md:calsim").is_file()
        with LedgerStore("./md:calsim", read_only=True) as store:
            assert store.ledger("a").equals(runs["a"].frame)

    @pytest.mark.parametrize("value", ["", "   ", None, 42, b"l.duckdb"])
    def test_a_value_that_is_not_a_path_is_refused(self, value):
        with pytest.raises(StoreError, match="^path: expected a file path or ':memory:'"):
            LedgerStore(value)

    def test_the_connection_never_installs_or_loads_an_extension(self, tmp_path):
        with LedgerStore() as store:
            flags = store.sql("SELECT current_setting('autoinstall_known_extensions') AS i, "
                              "current_setting('autoload_known_extensions') AS l").row(0)
            assert flags == (False, False)
            for query in ("SELECT * FROM read_parquet('https://example.com/x.parquet')",
                          "SELECT * FROM read_parquet('s3://bucket/x.parquet')",
                          f"SELECT * FROM sqlite_scan('{tmp_path}/x.db', 't')"):
                with pytest.raises(StoreError, match="^query: ") as exc:
                    store.sql(query)
                one_line(exc)
            loaded = store.sql("SELECT extension_name FROM duckdb_extensions() WHERE loaded")["extension_name"]
            assert not {"httpfs", "sqlite_scanner", "azure", "motherduck"} & set(loaded)

    def test_the_stores_own_parquet_and_arrow_use_still_works(self, tmp_path, runs):
        # enable_external_access stays on for this: export and attached datasets read and write local files.
        with LedgerStore(tmp_path / "l.duckdb") as store:
            store.write(runs["a"])
            paths = store.export_parquet(tmp_path / "export")
        assert pl.read_parquet(paths[2]).height == runs["a"].frame.height


class TestCorruptStores:
    @staticmethod
    def make(kind: str, path: Path, good: Path) -> None:
        data = good.read_bytes()
        if kind == "random bytes":
            path.write_bytes(os.urandom(64 * 1024))
        elif kind == "text file":
            path.write_text("schedule_id,due\nbackup,2026-01-01\n" * 100)
        elif kind == "parquet file":
            pl.DataFrame({"x": [1, 2, 3]}).write_parquet(path)
        elif kind == "sqlite file":
            con = sqlite3.connect(path)
            con.execute("CREATE TABLE t (x)")
            con.commit()
            con.close()
        elif kind == "gzip file":
            path.write_bytes(b"\x1f\x8b\x08\x00" + os.urandom(200))
        elif kind == "truncated header":
            path.write_bytes(data[:100])
        elif kind == "truncated after the headers":
            path.write_bytes(data[:12288])
        elif kind == "headers overwritten":
            path.write_bytes(data[:4096] + os.urandom(8192) + data[12288:])
        elif kind == "DUCK magic then noise":
            path.write_bytes(data[:16] + os.urandom(64 * 1024))

    KINDS = ["random bytes", "text file", "parquet file", "sqlite file", "gzip file", "truncated header",
             "truncated after the headers", "headers overwritten", "DUCK magic then noise"]

    @pytest.mark.parametrize("read_only", [False, True])
    @pytest.mark.parametrize("kind", KINDS)
    def test_a_corrupt_file_is_one_line_naming_it_and_is_left_as_it_was(self, kind, read_only, tmp_path, store_file):
        path = tmp_path / "bad.duckdb"
        self.make(kind, path, store_file)
        before = digest(path)
        with pytest.raises(StoreError, match=f"^path: cannot open '{path}' as a DuckDB database: ") as exc:
            LedgerStore(path, read_only=read_only)
        one_line(exc)
        assert digest(path) == before and sorted(p.name for p in tmp_path.iterdir()) == ["bad.duckdb", "l.duckdb"]

    @pytest.mark.parametrize("kind, said", [("text file", "it is a text file"),
                                            ("parquet file", "it is a Parquet file"),
                                            ("sqlite file", "it is a SQLite database")])
    def test_a_foreign_file_is_named_for_what_it_is(self, kind, said, tmp_path, store_file):
        self.make(kind, tmp_path / "x", store_file)
        with pytest.raises(StoreError, match=said):
            LedgerStore(tmp_path / "x")

    def test_an_empty_file_is_refused_not_taken_over(self, tmp_path):
        """DuckDB refuses an empty file too; an existing file is never made a store (it may be someone's)."""
        path = tmp_path / "placeholder.duckdb"
        path.touch()
        with pytest.raises(StoreError, match="it is an empty file .*remove it to create a new store"):
            LedgerStore(path)
        assert path.stat().st_size == 0

    @pytest.mark.parametrize("target", ["/dev/zero", "/dev/null", "DIR", "FIFO"])
    def test_a_store_path_that_is_not_a_file_is_refused_without_blocking(self, target, tmp_path):
        if target == "DIR":
            target = str(tmp_path)
        elif target == "FIFO":
            target = str(tmp_path / "pipe")
            os.mkfifo(target)
        # In a subprocess with a timeout: DuckDB reading a FIFO would block for ever if the guard failed.
        proc = run_limited(refusals(target), timeout=30)
        lines = proc.stdout.splitlines()
        assert len(lines) == 2, proc.stdout + proc.stderr
        assert all(re.match(r"StoreError .*it is a (character device|directory|FIFO)", line) for line in lines), lines
        assert all(float(line.rsplit(" ", 1)[1]) < 30 for line in lines)  # returned, not blocked (timeout=30 above)

    def test_a_symlink_to_a_store_opens_that_store_and_logs_beside_it(self, tmp_path, store_file, runs):
        link = tmp_path / "elsewhere" / "link.duckdb"
        link.parent.mkdir()
        link.symlink_to(store_file)
        with LedgerStore(link) as store:
            store.write(runs["b"])
            assert not (link.parent / "link.duckdb.wal").exists()  # the log goes with the file it belongs to
        assert link.is_symlink()
        with LedgerStore(store_file, read_only=True) as store:
            assert store.ledger("b").equals(runs["b"].frame)

    @pytest.mark.parametrize("kind", ["dangling", "to a device"])
    def test_a_symlink_to_anything_but_a_file_is_refused_and_creates_nothing(self, kind, tmp_path):
        link = tmp_path / "l.duckdb"
        link.symlink_to(tmp_path / "missing.duckdb" if kind == "dangling" else "/dev/zero")
        with pytest.raises(StoreError, match="it is a (symlink to a missing|character device)"):
            LedgerStore(link)
        assert sorted(os.listdir(tmp_path)) == ["l.duckdb"]

    @pytest.mark.parametrize("wal", ["symlink", "fifo", "directory"])
    def test_a_write_ahead_log_that_is_not_a_regular_file_is_refused(self, wal, tmp_path, store_file):
        victim = tmp_path / "victim.txt"
        victim.write_text("precious")
        log = Path(str(store_file) + ".wal")
        {"symlink": lambda: log.symlink_to(victim), "fifo": lambda: os.mkfifo(log),
         "directory": lambda: log.mkdir()}[wal]()
        proc = run_limited(refusals(str(store_file)), timeout=30)
        lines = proc.stdout.splitlines()
        assert len(lines) == 2, proc.stdout + proc.stderr
        assert all(re.match(r"StoreError .*its write-ahead log .* is not a regular file", line) for line in lines)
        assert victim.read_text() == "precious"

    def test_a_missing_file_read_only_or_in_a_missing_directory_creates_nothing(self, tmp_path):
        with pytest.raises(StoreError, match="it does not exist"):
            LedgerStore(tmp_path / "new.duckdb", read_only=True)
        with pytest.raises(StoreError, match="its directory does not exist"):
            LedgerStore(tmp_path / "nope" / "new.duckdb")
        assert list(tmp_path.iterdir()) == []

    def test_a_store_without_write_bits_is_opened_read_only_only(self, store_file, runs):
        store_file.chmod(0o444)
        try:
            with pytest.raises(StoreError, match=r"it is read-only \(mode 0444\); open it with read_only=True"):
                LedgerStore(store_file)
            with LedgerStore(store_file, read_only=True) as store:
                assert store.ledger("a").equals(runs["a"].frame)
        finally:
            store_file.chmod(0o644)

    def test_a_store_in_a_directory_this_user_may_not_write(self, runs):
        d = Path(tempfile.mkdtemp())
        try:
            with LedgerStore(d / "l.duckdb") as store:
                store.write(runs["a"])
            d.chmod(0o555)
            code = textwrap.dedent(f"""
                from calsim.store import LedgerStore
                from calsim.errors import StoreError
                for path in ({str(d / 'l.duckdb')!r}, {str(d / 'new.duckdb')!r}):
                    try:
                        LedgerStore(path)
                    except StoreError as exc:
                        print(exc)
                with LedgerStore({str(d / 'l.duckdb')!r}, read_only=True) as store:
                    print(store.ledger('a').height)
            """)
            proc = run_limited(code, prefix=without_dac_override())
            lines = proc.stdout.splitlines()
            assert len(lines) == 3, proc.stdout + proc.stderr
            for line in lines[:2]:
                assert f"its directory '{d}' is not writable (permission denied)" in line
            assert lines[2] == str(runs["a"].frame.height)
            assert sorted(os.listdir(d)) == ["l.duckdb"]
        finally:
            d.chmod(0o755)
            shutil.rmtree(d)

    def test_a_table_name_that_calsim_did_not_make_is_refused_not_run(self, store_file):
        with duckdb.connect(str(store_file)) as con:
            con.execute("UPDATE occurrence_tables SET table_name = 'occ_1; DROP TABLE scenarios; --'")
        before = digest(store_file)
        for read_only in (False, True):  # refused when the store is opened, before anything is read or written
            with pytest.raises(StoreError, match="table name 'occ_1; DROP TABLE .*' is not one calsim makes") as exc:
                LedgerStore(store_file, read_only=read_only)
            one_line(exc)
        assert digest(store_file) == before
        with duckdb.connect(str(store_file), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM scenarios").fetchall() == [(1,)]


# -- LedgerStore: another process holds the file -------------------------------------------------------------------


HOLDER = textwrap.dedent("""
    import sys, time
    from calsim.store import LedgerStore
    store = LedgerStore(sys.argv[1], read_only=sys.argv[2] == "ro")
    print("ready", flush=True)
    time.sleep(60)
""")


@pytest.fixture
def holder(store_file):
    procs = []

    def start(mode: str) -> subprocess.Popen:
        proc = subprocess.Popen([PY, "-c", HOLDER, str(store_file), mode], stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "ready"
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


class TestLocks:
    def test_a_writer_in_another_process_is_named_with_its_pid(self, store_file, holder):
        proc = holder("rw")
        for read_only in (False, True):
            with pytest.raises(LedgerLockedError,
                               match=f"is open for writing in another process \\(PID {proc.pid}\\)") as exc:
                LedgerStore(store_file, read_only=read_only)
            one_line(exc)

    def test_readers_in_another_process_block_a_writer_and_say_it_can_read(self, store_file, holder, runs):
        proc = holder("ro")
        with pytest.raises(LedgerLockedError, match=f"is open read-only in another process \\(PID {proc.pid}\\); "
                                                    "it can be read meanwhile") as exc:
            LedgerStore(store_file)
        one_line(exc)
        with LedgerStore(store_file, read_only=True) as store:
            assert store.ledger("a").equals(runs["a"].frame)

    def test_a_locked_file_is_not_touched(self, store_file, holder):
        before = digest(store_file)
        holder("rw")
        with pytest.raises(LedgerLockedError):
            LedgerStore(store_file)
        assert digest(store_file) == before


# -- LedgerStore: nothing is overwritten, a failed write changes nothing -------------------------------------------


class TestFailedWrites:
    def test_an_existing_scenario_is_never_overwritten_without_replace(self, store_file):
        """What `simulate --db` relies on: a different ledger under a stored name is refused unless replace=True."""
        before = snapshot(store_file)
        other = ledger("a", days=3)
        with LedgerStore(store_file) as store:
            with pytest.raises(ScenarioExistsError, match="a different ledger is already stored as 'a'.*replace=True"):
                store.write(other)
            assert store.write(ledger("a")) is False  # the same ledger again: nothing to do
        assert snapshot(store_file) == before
        with LedgerStore(store_file) as store:
            assert store.write(other, replace=True) is True
            assert store.ledger("a").equals(other.frame)

    def test_a_duplicate_row_in_the_middle_of_a_replace_keeps_the_stored_ledger(self, store_file):
        frame = ledger("a", days=3).frame
        bad = pl.concat([frame[: frame.height // 2], frame[10:11], frame[frame.height // 2:]])
        before = snapshot(store_file)
        with LedgerStore(store_file) as store:
            with pytest.raises(DuplicateKeyError, match="nothing written"):
                store.write(bad, name="a", replace=True)
        assert snapshot(store_file) == before

    @pytest.mark.parametrize("where", ["fill", "publish"])
    def test_an_interrupt_during_a_write_leaves_the_store_as_it_was(self, where, store_file, runs, monkeypatch):
        before = snapshot(store_file)
        if where == "fill":
            real = calsim.store.writer.fill_scenario_table

            def interrupted(con, *args, **kwargs):
                real(con, *args, **kwargs)  # the rows are in, then ^C
                raise KeyboardInterrupt

            monkeypatch.setattr(calsim.store.writer, "fill_scenario_table", interrupted)
        else:
            def interrupted(*args, **kwargs):
                raise KeyboardInterrupt

            monkeypatch.setattr(calsim.store.writer, "schedules_frame", interrupted)
        with LedgerStore(store_file) as store:
            with pytest.raises(KeyboardInterrupt):
                store.write(ledger("a", days=3), replace=True)
            with pytest.raises(KeyboardInterrupt):
                store.write(runs["b"])
        assert snapshot(store_file) == before
        monkeypatch.undo()
        with LedgerStore(store_file) as store:  # and it takes writes afterwards
            assert store.write(runs["b"]) is True

    FILL = textwrap.dedent("""
        import json, os, resource, signal, sys
        from calsim.store import LedgerStore
        from calsim.errors import StoreError
        import calsim
        path, extra, threshold = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        fleet = [calsim.Schedule(f"m{i}", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY") for i in range(10)]
        big = calsim.simulate(calsim.Scenario("big", fleet, "2026-01-01T00:00Z", "2026-01-15T00:00Z"), progress=False)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
        store = LedgerStore(path)
        if threshold != "default":  # checkpoint right after the commit, so the failure comes from the checkpoint
            store._con.execute(f"SET checkpoint_threshold = '{threshold}'")
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        limit = os.path.getsize(path) + extra
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
        try:
            store.write(big)
            print("written")
        except StoreError as exc:
            print(exc)
        resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
        print(store.sql("SELECT name FROM scenarios ORDER BY name")["name"].to_list())
        store.close()
    """)

    # The big ledger grows the file by ~1.3 MB as its rows are written and by ~3.1 MB once checkpointed.
    @pytest.mark.parametrize("extra, threshold, where", [(100_000, "default", "the log or the file"),
                                                         (2_000_000, "1MB", "the checkpoint")])
    def test_a_file_size_limit_during_a_write_is_one_line_and_changes_nothing(self, extra, threshold, where,
                                                                              store_file, runs):
        """A real I/O failure without privileges: RLIMIT_FSIZE makes DuckDB's writes fail with EFBIG.

        At the checkpoint DuckDB invalidates the database; the store reopens it and drops the unpublished table.
        """
        before = snapshot(store_file)
        proc = subprocess.run([PY, "-c", self.FILL, str(store_file), str(extra), threshold],
                              capture_output=True, text=True, timeout=120)
        lines = proc.stdout.splitlines()
        assert len(lines) == 2, proc.stdout + proc.stderr
        assert lines[0].startswith(f"path: cannot write ledger 'big' to '{store_file}': ")
        assert "File too large" in lines[0] and lines[0].endswith("the store keeps what it held before")
        if where == "the checkpoint":
            assert "checkpoint" in lines[0]
        assert lines[1] == "['a']"
        assert snapshot(store_file) == before
        with LedgerStore(store_file) as store:
            assert store.write(runs["b"]) is True

    @needs_unshare
    def test_a_full_disk_during_a_write_is_one_line_and_changes_nothing(self, tmp_path):
        mnt = tmp_path / "mnt"
        code = SNAPSHOT + textwrap.dedent(f"""
            import json, calsim
            from calsim.store import LedgerStore
            from calsim.errors import StoreError
            path = {str(mnt / 'l.duckdb')!r}
            fleet = [calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")]
            with LedgerStore(path) as store:
                store.write(calsim.simulate(calsim.Scenario("a", fleet, "2026-01-01T00:00Z", "2026-01-03T00:00Z"),
                                            progress=False))
            before = snapshot(path)
            fleet = [calsim.Schedule(f"m{{i}}", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY") for i in range(10)]
            big = calsim.simulate(calsim.Scenario("big", fleet, "2026-01-01T00:00Z", "2026-01-15T00:00Z"),
                                  progress=False)
            store = LedgerStore(path)
            try:
                store.write(big)
                print("written")
            except StoreError as exc:
                print(exc)
            print(store.sql("SELECT name FROM scenarios")["name"].to_list())
            store.close()
            print(snapshot(path) == before)
        """)
        proc = in_small_fs(code, mnt, "4m")  # the store holding "a" takes ~2.9 MB, "big" ~3.1 MB more
        lines = proc.stdout.splitlines()
        assert len(lines) == 3, proc.stdout + proc.stderr
        assert lines[0].startswith(f"path: cannot write ledger 'big' to '{mnt}/l.duckdb': ")
        assert "No space left on device" in lines[0]
        assert lines[1] == "['a']" and lines[2] == "True"

    @needs_unshare
    @pytest.mark.parametrize("size", ["8k", "16k"])  # too small for DuckDB's headers / for the store's tables
    def test_a_store_that_cannot_be_created_leaves_no_file(self, tmp_path, size):
        mnt = tmp_path / "mnt"
        code = textwrap.dedent(f"""
            import os
            from calsim.store import LedgerStore
            from calsim.errors import StoreError
            try:
                LedgerStore({str(mnt / 'new.duckdb')!r})
                print("created")
            except StoreError as exc:
                print(exc)
            print(os.listdir({str(mnt)!r}))
        """)
        proc = in_small_fs(code, mnt, size)
        lines = proc.stdout.splitlines()
        assert len(lines) == 2, proc.stdout + proc.stderr
        assert lines[0].startswith(f"path: cannot open '{mnt}/new.duckdb' as ")
        assert "No space left on device" in lines[0]
        assert lines[1] == "[]"


# -- a store file from elsewhere: opening it runs nothing calsim did not write (issue 26) ---------------------------
#
# Each case is a store calsim wrote (one ledger 'a' and one attached dataset 'ds'), changed by hand with DuckDB to
# hold what a file from someone else might: views that read a local file, recurse for ever or read a FIFO (which
# would block the process for good if anything read it), macros standing in for functions calsim's queries call,
# layouts calsim does not know. One interpreter under the address-space and CPU limits opens every case read-only,
# for writing, and through `calsim compare`; each must be refused in one line naming the object, the canary files
# the views read must never be read (their content in no output; the FIFO never opened), and every file of every
# case must be byte-identical afterwards (write-ahead logs included).

CANARY = "calsim-canary-5b1f0e"


def write_dataset(directory: Path, name: str = "ds") -> Path:
    """A Parquet ledger dataset as the Dask engine writes one (one part, ``_scenario.json``)."""
    from calsim.distributed.metadata import metadata

    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    scenario = calsim.Scenario(name, [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z")
    frame = calsim.simulate(scenario, progress=False).frame
    d = directory / f"scenario={name}"
    d.mkdir(parents=True)
    frame.write_parquet(d / "part-00000.parquet")
    parts = [{"partition": 0, "path": "part-00000.parquet", "rows": frame.height, "schedules": 1, "bytes": 0,
              "states": {}, "releases": []}]
    (d / "_scenario.json").write_text(json.dumps(metadata(scenario, parts, "0", 0.0)))
    return d


def _dataset_view(files: list[str]) -> str:
    from calsim.store.tables import dataset_sql

    return dataset_sql(files)


# name -> (statements run on a copy of the good store, what the refusal says). {canary}: a text file; {fifo}: a
# path that is a FIFO once the statements have run; {part}: the attached dataset's Parquet file; {parquet}: a
# copy of it, outside the dataset, that becomes a FIFO.
CATALOG_CASES: dict[str, tuple[list[str], str]] = {
    "scenarios is a view reading a local file": (
        ["ALTER TABLE scenarios RENAME TO scenarios_0",
         "CREATE VIEW scenarios AS SELECT s.* REPLACE (t.content AS name) FROM scenarios_0 s, read_text('{canary}') t"],
        r"table 'scenarios' is a view, expected calsim's table \(layout 5\)"),
    "occurrences is a view reading a local CSV": (
        ["CREATE OR REPLACE VIEW occurrences AS SELECT o.*, c.* FROM occ_1 o, read_csv('{canary}') c"],
        r"view 'occurrences' is not the definition calsim writes for it \(layout 5; a view runs its query when read\)"),
    "a ledger table is a view reading a local file": (
        ["DROP TABLE occ_1", "CREATE VIEW occ_1 AS SELECT * FROM read_text('{canary}')"],
        r"view occ_1 \(the rows of scenario 'a'\) is not the definition calsim writes for an attached dataset"),
    "occurrences recurses for ever": (
        ["CREATE OR REPLACE VIEW occurrences AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
         "SELECT o.* FROM occ_1 o, r"],
        r"view 'occurrences' is not the definition calsim writes for it"),
    "lateness recurses for ever": (
        ["CREATE OR REPLACE VIEW lateness AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
         "SELECT count(*) AS runs FROM r"],
        r"view 'lateness' is not the definition calsim writes for it"),
    "daily_cost reads a FIFO": (
        ["CREATE OR REPLACE VIEW daily_cost AS SELECT * FROM read_text('{fifo}')"],
        r"view 'daily_cost' is not the definition calsim writes for it"),
    "an attached dataset's view reads a FIFO": (
        ["CREATE OR REPLACE VIEW occ_2 AS " + _dataset_view(["{parquet}"])],
        r"view occ_2 \(scenario 'ds'\) reads '.*fifo.parquet', which is not a regular file"),
    "an attached dataset's view passes an option": (
        ["CREATE OR REPLACE VIEW occ_2 AS " + "], filename = true)".join(_dataset_view(["{part}"]).rsplit("])", 1))],
        r"view occ_2 \(the rows of scenario 'ds'\) is not the definition calsim writes for an attached dataset"),
    "a macro stands in for count(*)": (
        ["CREATE MACRO count_star() AS (SELECT length(content) FROM read_text('{canary}'))"],
        r"it holds macro 'count_star' \(a store holds no macros: one stands in for the built-in function"),
    "a macro stands in for epoch_us": (
        ["CREATE MACRO epoch_us(t) AS (SELECT length(content) FROM read_text('{canary}'))"],
        r"it holds macro 'epoch_us'"),
    "a table macro stands in for duckdb_tables()": (
        ["CREATE MACRO duckdb_tables() AS TABLE SELECT content AS table_name FROM read_text('{canary}')"],
        r"it holds table macro 'duckdb_tables'"),
    "a macro in another schema": (
        ["CREATE SCHEMA other", "CREATE MACRO other.m() AS TABLE SELECT * FROM read_text('{canary}')"],
        r"it holds table macro 'other.m'"),
    "a view in another schema": (
        ["CREATE SCHEMA other", "CREATE VIEW other.v AS SELECT * FROM read_text('{canary}')"],
        r"it holds view 'other.v', which calsim does not write"),
    "a view calsim does not write": (
        ["CREATE VIEW summary AS SELECT * FROM read_text('{canary}')"],
        r"it holds view 'summary', which calsim does not write \(a view runs its query when read\)"),
    "calsim_meta is a view": (
        ["ALTER TABLE calsim_meta RENAME TO meta_0", "CREATE VIEW calsim_meta AS SELECT * FROM meta_0"],
        r"table 'calsim_meta' is a view, expected calsim's table"),
    "schema_version 'x'": (["UPDATE calsim_meta SET value = 'x'"],
                           r"calsim_meta.schema_version is 'x', expected a layout version, "
                           r"a whole number from 1 to 5$"),
    "schema_version -1": (["UPDATE calsim_meta SET value = '-1'"], r"calsim_meta.schema_version is '-1', expected"),
    "schema_version 10**30": ([f"UPDATE calsim_meta SET value = '{10**30}'"],
                              r"calsim_meta.schema_version is '1000000000000000000000000000000', expected"),
    "schema_version NULL": (["UPDATE calsim_meta SET value = NULL"], r"calsim_meta.schema_version is NULL, expected"),
    "no schema_version": (["DELETE FROM calsim_meta"], r"calsim_meta holds no schema_version$"),
    "a future schema_version": (["UPDATE calsim_meta SET value = '6'"],
                                r"has store schema version 6, newer than 5 \(the newest this calsim knows\)"),
    "a column of another type": (["ALTER TABLE scenarios ALTER \"rows\" TYPE VARCHAR"],
                                 r"column scenarios.rows is 'VARCHAR', expected BIGINT$"),
    "a ledger table's extra column": (["ALTER TABLE occ_1 ADD COLUMN extra VARCHAR"],
                                      r"table occ_1 has a column 'extra' that calsim does not write$"),
    "a missing column": (["ALTER TABLE schedules DROP COLUMN account"],
                         r"table schedules has no column account \(VARCHAR\)$"),
    "a computed column": (
        ["ALTER TABLE tz_diffs RENAME TO tz_0",
         "CREATE TABLE tz_diffs (\"name\" VARCHAR, seq BIGINT, schedule_id VARCHAR, revision BIGINT, "
         "nominal_local TIMESTAMP, fold TINYINT, \"zone\" VARCHAR, old_utc TIMESTAMPTZ, new_utc TIMESTAMPTZ, "
         "shift_s BIGINT, change VARCHAR GENERATED ALWAYS AS (repeat('x', 100000000)), old_notes VARCHAR[], "
         "new_notes VARCHAR[])", "DROP TABLE tz_0"],
        r"column tz_diffs.'change' is computed \(GENERATED or DEFAULT\), expected a stored column$"),
    "a default that runs on a write": (
        ["ALTER TABLE calsim_meta ALTER \"value\" SET DEFAULT repeat('x', 100000000)"],
        r"column calsim_meta.'value' is computed \(GENERATED or DEFAULT\), expected a stored column$"),
    "a check that runs on a write": (
        ["ALTER TABLE scenarios RENAME TO s_0",
         "CREATE TABLE scenarios (\"name\" VARCHAR PRIMARY KEY, created TIMESTAMPTZ NOT NULL, horizon_start "
         "TIMESTAMPTZ, horizon_end TIMESTAMPTZ, \"release\" VARCHAR, parameters JSON, calsim_version VARCHAR, "
         "schema_version INTEGER NOT NULL, \"rows\" BIGINT NOT NULL, digest VARCHAR NOT NULL "
         "CHECK (length(repeat(digest, 1000000)) > 0))", "INSERT INTO scenarios SELECT * FROM s_0", "DROP TABLE s_0"],
        r"table scenarios has a CHECK constraint, which calsim does not write$"),
    "an index that runs on a write": (
        ["CREATE INDEX bomb ON schedules ((repeat(\"rule\", 1000000)))"],
        r"table schedules has an index 'bomb', which calsim does not make$"),
    "occurrence_tables lists 100,001 scenarios": (
        ["INSERT INTO occurrence_tables SELECT 's' || range, 'occ_' || (range + 10) FROM range(100001)"],
        r"occurrence_tables lists more than 100,000 scenarios$"),
    "occurrence_tables names a table the file does not hold": (
        ["INSERT INTO occurrence_tables VALUES ('ghost', 'occ_99')"],
        r"occurrence_tables names occ_99 for scenario 'ghost', and the file holds no such table$"),
    "a type calsim does not make": (["CREATE TYPE mood AS ENUM ('calm', 'angry')"],
                                    r"it holds type 'mood' \(ENUM\), which calsim does not make$"),
    "another program's DuckDB file": (
        ["CREATE SCHEMA app", "CREATE TABLE app.users (id INTEGER)", "CREATE TABLE main.users (id INTEGER)",
         "CREATE VIEW app.report AS SELECT * FROM read_text('{canary}')"],
        r"is a DuckDB file but not a calsim ledger store \(it has 'users', 'app.report' and no calsim_meta table\)"),
}
# Cases whose statements are left in a write-ahead log (the process that ran them was killed before a checkpoint):
# a store opened for writing replays its log, so these are checked through a read-only connection first.
WAL_CASES = {"a macro in the write-ahead log": "a macro stands in for count(*)",
             "another program's file with a log": "another program's DuckDB file"}
ALLOWED_CASES = {"an extra table is left alone": ["CREATE TABLE notes (note VARCHAR)",
                                                  "INSERT INTO notes VALUES ('mine')"],
                 "an index and a sequence are left alone": ["CREATE SEQUENCE ids", "CREATE TABLE notes (note VARCHAR)",
                                                            "CREATE INDEX by_note ON notes ((upper(note)))"]}

OPEN_EACH = textwrap.dedent("""
    import contextlib, io, json, sys
    from calsim.store import LedgerStore
    from calsim.cli import main
    for name, path in json.loads(sys.argv[1]):
        for mode in ("read_only", "write", "cli"):
            row = {"case": name, "mode": mode}
            if mode == "cli":
                err, out = io.StringIO(), io.StringIO()
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                    row["code"] = main(["compare", path])
                row["message"], row["stdout"] = err.getvalue(), out.getvalue()
            else:
                try:
                    with LedgerStore(path, read_only=mode == "read_only") as store:
                        names = store.scenarios()["name"].to_list()
                        row["compared"] = store.compare(names)["scenario"].to_list()
                except Exception as exc:
                    row["classes"] = [c.__name__ for c in type(exc).__mro__]
                    row["message"] = str(exc)
            print(json.dumps(row), flush=True)
""")


def _files(directory: Path) -> dict[str, str]:
    """Every file under ``directory`` (a FIFO as such, never opened) and its content's digest."""
    out = {}
    for p in sorted(directory.rglob("*")):
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode):
            out[str(p.relative_to(directory))] = digest(p)
        elif not stat.S_ISDIR(st.st_mode):
            out[str(p.relative_to(directory))] = f"mode {stat.S_IFMT(st.st_mode):o}"
    return out


def _leave_in_log(path: Path, statements: list[str]) -> None:
    """Run ``statements`` on ``path`` in a process killed before DuckDB checkpoints them: they stay in its log."""
    code = textwrap.dedent(f"""
        import os, duckdb
        con = duckdb.connect({str(path)!r})
        con.execute("SET checkpoint_threshold = '1GB'")
        for stmt in {statements!r}:
            con.execute(stmt)
        os._exit(0)
    """)
    subprocess.run([PY, "-c", code], check=True, timeout=120)
    assert Path(str(path) + ".wal").exists()


@pytest.fixture(scope="module")
def hostile_stores(tmp_path_factory) -> dict:
    """Build every case, open each in one limited interpreter; what it printed, and the files before and after."""
    root = tmp_path_factory.mktemp("hostile-stores")
    (root / "canary.txt").write_text(f"{CANARY}\nsecret,{CANARY}\n")
    part = write_dataset(root / "data") / "part-00000.parquet"
    good = root / "good.duckdb"
    with LedgerStore(good) as store:
        store.write(ledger("a"))
        store.attach(part.parent)
    cases = {}
    for name, (statements, _) in {**CATALOG_CASES, **{n: (s, "") for n, s in ALLOWED_CASES.items()}}.items():
        d = root / re.sub(r"\W+", "-", name).strip("-")
        d.mkdir()
        fmt = {"canary": str(root / "canary.txt"), "fifo": str(d / "fifo.txt"), "part": str(part),
               "parquet": str(d / "fifo.parquet")}
        (d / "fifo.txt").write_text("not yet a FIFO")
        shutil.copy(part, d / "fifo.parquet")
        path = d / "store.duckdb"
        if name == "another program's DuckDB file":
            pass  # a new file: not made by calsim
        else:
            shutil.copy(good, path)
        with duckdb.connect(str(path)) as con:
            for stmt in statements:
                con.execute(stmt.format(**fmt))
        for f in ("fifo.txt", "fifo.parquet"):  # a FIFO now: reading it would block for good
            os.unlink(d / f)
            os.mkfifo(d / f)
        cases[name] = path
    for name, like in WAL_CASES.items():
        d = root / re.sub(r"\W+", "-", name).strip("-")
        d.mkdir()
        path = d / "store.duckdb"
        if like != "another program's DuckDB file":
            shutil.copy(good, path)
        _leave_in_log(path, [s.format(canary=str(root / "canary.txt")) for s in CATALOG_CASES[like][0]])
        cases[name] = path
    before = _files(root)
    proc = run_limited(OPEN_EACH, timeout=300, args=[json.dumps([[n, str(p)] for n, p in cases.items()])])
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    return {"rows": {(r["case"], r["mode"]): r for r in rows}, "proc": proc, "before": before,
            "after": _files(root), "cases": cases}


def _expected(name: str) -> str:
    return CATALOG_CASES[WAL_CASES.get(name, name)][1]


@pytest.mark.parametrize("name", [*CATALOG_CASES, *WAL_CASES])
@pytest.mark.parametrize("mode", ["read_only", "write", "cli"])
def test_a_store_file_that_is_not_calsims_is_refused_in_one_line_naming_the_object(hostile_stores, name, mode):
    row = hostile_stores["rows"].get((name, mode))
    assert row is not None, hostile_stores["proc"].stdout[-2000:] + hostile_stores["proc"].stderr[-4000:]
    shown = calsim.atomic.show_path(hostile_stores["cases"][name])
    if mode == "cli":
        assert row["code"] == 2 and row["stdout"] == "", row
        message = row["message"].removeprefix("calsim: error: ").removesuffix("\n")
        assert row["message"].startswith("calsim: error: path: ") and "\n" not in message, row
    else:
        future = name == "a future schema_version"
        assert ("SchemaVersionError" if future else "StoreError") in row.get("classes", []), row
        message = row["message"]
        assert "\n" not in message and len(message) < 400, message
    if "another program" in name:
        assert message.startswith(f"path: {shown} is a DuckDB file but not a calsim ledger store"), message
    elif name != "a future schema_version":
        assert message.startswith(f"path: {shown} is not a ledger store as calsim writes it: "), message
    assert re.search(_expected(name), message), message


def test_nothing_a_refused_store_names_is_read_and_no_file_changes(hostile_stores):
    proc = hostile_stores["proc"]
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert CANARY not in proc.stdout + proc.stderr  # no view, macro or column read the canary file
    # Every FIFO is still there, never opened for writing (a reader would have blocked the run: it finished).
    assert hostile_stores["after"] == hostile_stores["before"]


@pytest.mark.parametrize("name", list(ALLOWED_CASES))
def test_what_runs_nothing_is_left_alone(hostile_stores, name):
    for mode in ("read_only", "write"):
        row = hostile_stores["rows"][(name, mode)]
        assert row.get("compared") == ["a", "ds"], row
    assert hostile_stores["rows"][(name, "cli")]["code"] == 0


# -- a store opened to read reaches no other file; every query has a time bound ------------------------------------


def test_a_read_only_store_reads_no_file_but_its_own_and_its_datasets(tmp_path, runs):
    (tmp_path / "canary.txt").write_text(CANARY)
    part = write_dataset(tmp_path / "data") / "part-00000.parquet"
    other = tmp_path / "other.parquet"
    shutil.copy(part, other)
    path = tmp_path / "l.duckdb"
    with LedgerStore(path) as store:
        store.write(runs["a"])
        store.attach(part.parent)
        assert store.sql(f"SELECT count(*) AS n FROM read_parquet('{other}')")["n"][0] == 24  # writable: files open
    before = _files(tmp_path)
    with LedgerStore(path, read_only=True) as store:
        assert store.compare(["a", "ds"])["occurrences"].to_list() == [48, 24]  # the attached dataset is read
        assert store.ledger("ds").height == 24
        for query in (f"SELECT * FROM read_text('{tmp_path}/canary.txt')",
                      f"SELECT * FROM read_csv('{tmp_path}/canary.txt')",
                      f"SELECT * FROM read_parquet('{other}')",
                      f"COPY (SELECT 1) TO '{tmp_path}/out.csv'",
                      f"ATTACH '{tmp_path}/elsewhere.duckdb' AS elsewhere",
                      "INSTALL httpfs", "LOAD httpfs",
                      "SET enable_external_access = true", "SET allowed_directories = ['/']",
                      "SET lock_configuration = false", "SET autoload_known_extensions = true"):
            with pytest.raises(StoreError, match="^query: ") as exc:
                store.sql(query)
            assert CANARY not in one_line(exc)
        # A second store of the file in this process shares DuckDB's database, confined already.
        with LedgerStore(path, read_only=True, timeout=2) as again:
            assert again.ledger("ds").height == 24
            with pytest.raises(StoreError, match="^query: "):
                again.sql(f"SELECT * FROM read_text('{tmp_path}/canary.txt')")
    assert _files(tmp_path) == before


TIMED = textwrap.dedent("""
    import os, sys
    from calsim.store import LedgerStore
    from calsim.errors import StoreError
    runaway = ["WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
               "SELECT count(*) FROM range(1000000000000) a"]
    path = sys.argv[1]
    with LedgerStore(path, read_only=True, timeout=None if os.environ.get("CALSIM_STORE_TIMEOUT") else 0.5) as store:
        for query in runaway:
            try:
                store.sql(query)
                print("finished")
            except StoreError as exc:
                print(exc)
        print(store.compare(["a"])["occurrences"][0])  # the store answers on after a stopped query
""")


@pytest.mark.parametrize("how", ["timeout=0.5", "CALSIM_STORE_TIMEOUT=0.5"])
def test_a_runaway_query_stops_at_the_time_bound_naming_it(tmp_path, store_file, how):
    """A query that would run for ever: the test can fail only by hanging (the CPU limit and timeout end it)."""
    env = {"CALSIM_STORE_TIMEOUT": "0.5"} if how.startswith("CALSIM") else {"CALSIM_STORE_TIMEOUT": ""}
    proc = run_limited(TIMED, timeout=120, args=[str(store_file)], env=env)
    lines = proc.stdout.splitlines()
    assert len(lines) == 3, proc.stdout + proc.stderr
    bound = ("query: stopped after 0.5 s, the time bound of one query on a store (raise it with "
             "LedgerStore(..., timeout=SECONDS) or CALSIM_STORE_TIMEOUT=SECONDS)")
    assert lines[:2] == [bound, bound]
    assert lines[2] == "48"


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), 10**30, True, "5"])
def test_a_time_bound_that_is_not_a_number_of_seconds_is_refused(value):
    with pytest.raises(calsim.errors.InputError, match="^timeout: expected a number of seconds above 0"):
        LedgerStore(timeout=value)


@pytest.mark.parametrize("raw", ["0", "soon", "1e400", "-3"])
def test_a_time_bound_setting_that_is_not_a_number_of_seconds_is_refused(raw, monkeypatch):
    monkeypatch.setenv("CALSIM_STORE_TIMEOUT", raw)
    with pytest.raises(calsim.errors.InputError, match="^CALSIM_STORE_TIMEOUT: expected a number of seconds"):
        LedgerStore()


def test_a_write_is_not_cut_short_by_the_time_bound_of_reads(tmp_path):
    """The bound is for queries; a write's own statements (here 350,000 rows) have none, and the bound comes back."""
    fleet = [calsim.Schedule(f"m{i}", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY") for i in range(5)]
    big = calsim.simulate(calsim.Scenario("big", fleet, "2026-01-01T00:00Z", "2026-02-19T00:00Z"), progress=False)
    with LedgerStore(tmp_path / "l.duckdb", timeout=0.001) as store:
        assert store.write(big) is True
        with pytest.raises(StoreError, match="stopped after 0.001 s"):
            store.sql("SELECT count(*) FROM range(1000000000000)")
    with LedgerStore(tmp_path / "l.duckdb", read_only=True) as store:
        assert store.sql("SELECT count(*) AS n FROM occ_1")["n"][0] == big.frame.height


# -- attach: a dataset from elsewhere ------------------------------------------------------------------------------

ATTACH = textwrap.dedent("""
    import json, sys
    from calsim.store import LedgerStore
    store_path, cases = sys.argv[1], json.loads(sys.argv[2])
    with LedgerStore(store_path) as store:
        for name, target in cases:
            try:
                store.attach(target)
                print(json.dumps([name, "attached", ""]))
            except Exception as exc:
                print(json.dumps([name, [c.__name__ for c in type(exc).__mro__], str(exc)]), flush=True)
""")


@pytest.fixture(scope="module")
def hostile_datasets(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hostile-datasets")
    good = write_dataset(root / "good", "good")
    meta = json.loads((good / "_scenario.json").read_text())

    def variant(name: str, text: str | None = None, **fields) -> str:
        d = root / re.sub(r"\W+", "-", name).strip("-") / f"scenario={meta['name']}"
        d.mkdir(parents=True)
        shutil.copy(good / "part-00000.parquet", d / "part-00000.parquet")
        if text is None:
            text = json.dumps({**meta, **fields})
        (d / "_scenario.json").write_text(text)
        return str(d)

    (root / "outside.parquet").write_bytes((good / "part-00000.parquet").read_bytes())
    cases = {
        "nested 100,000 deep": variant("deep", "[" * 100_000 + "]" * 100_000),
        "nested 300 deep in the parameters": variant("deep-parameters", json.dumps({**meta, "parameters": 0})
                                                     .replace('"parameters": 0', '"parameters": ' + "[" * 300
                                                              + "]" * 300)),
        "a part outside the dataset": variant("outside", files=[{**meta["files"][0], "path": "../../outside.parquet"}]),
        "an absolute part": variant("absolute", files=[{**meta["files"][0], "path": str(root / "outside.parquet")}]),
        "a date level that climbs out": variant("climbs", files=[{**meta["files"][0],
                                                                  "path": "date=../../part-00000.parquet"}]),
        "schedule records outside the dataset": variant("records", schedule_files=["../../part-00000.parquet"]),
        "rows as text": variant("rows", rows="24"),
        "a schedule without its id": variant("schedule", schedules=[{"revision": 1}]),
        "an instant that is not one": variant("instant", created="yesterday"),
        "not JSON": variant("junk", '{"format": "calsim.ledger-dataset/1", "name": '),
    }
    fifo = Path(variant("metadata FIFO")) / "_scenario.json"
    fifo.unlink()
    os.mkfifo(fifo)
    cases["_scenario.json is a FIFO"] = str(fifo.parent)
    part = Path(variant("part FIFO")) / "part-00000.parquet"
    part.unlink()
    os.mkfifo(part)
    cases["a part that is a FIFO"] = str(part.parent)
    cases["a directory name of 300 characters"] = str(root / ("d" * 300))
    cases["a directory name of 100 three-byte characters"] = str(root / ("\u20ac" * 100))
    store = root / "store.duckdb"
    with LedgerStore(store) as s:
        s.write(ledger("a"))
    before = _files(root)
    proc = run_limited(ATTACH, timeout=120, args=[str(store), json.dumps(list(cases.items()))])
    rows = {r[0]: r for r in map(json.loads, proc.stdout.splitlines())}
    return {"rows": rows, "proc": proc, "before": before, "after": _files(root)}


ATTACH_CASES = {
    "nested 100,000 deep": ("InputError", r"_scenario.json': JSON nested too deeply \(at most 200 levels\)$"),
    "nested 300 deep in the parameters": ("InputError", r"JSON nested too deeply \(at most 200 levels\)$"),
    "a part outside the dataset": ("StoreError", r"files\[0\].path is '\.\./\.\./outside.parquet', expected a "
                                                 r"partition file name \(part-NNNNN.parquet, or "
                                                 r"date=YYYY-MM-DD/part-NNNNN.parquet\)$"),
    "a date level that climbs out": ("StoreError", r"files\[0\].path is 'date=\.\./\.\./part-00000.parquet', "
                                                   r"expected a partition file name"),
    "schedule records outside the dataset": ("StoreError", r"schedule_files\[0\] is '\.\./\.\./part-00000.parquet', "
                                                           r"expected a file of the dataset"),
    "an absolute part": ("StoreError", r"files\[0\].path is '/.*'\.\.\., expected a partition file name"),
    "rows as text": ("StoreError", r"rows is '24', expected a whole number$"),
    "a schedule without its id": ("StoreError", r"schedules\[0\].schedule_id is None, expected text$"),
    "an instant that is not one": ("StoreError", r"created is 'yesterday', expected an ISO 8601 instant$"),
    "not JSON": ("InputError", r"not valid JSON \(Expecting value at line 1 column \d+\)$"),
    "_scenario.json is a FIFO": ("InputError", r"_scenario.json' is a FIFO \(named pipe\); expected a regular file$"),
    "a part that is a FIFO": ("InputError", r"part-00000.parquet' is not a regular file"),
    "a directory name of 300 characters": ("InputError",
                                           r"^path: cannot read '.*_scenario.json' \(File name too long\)$"),
    "a directory name of 100 three-byte characters": ("InputError", r"\(File name too long\)$"),
}


@pytest.mark.parametrize("name", list(ATTACH_CASES))
def test_a_dataset_that_is_not_one_calsim_wrote_is_refused_in_one_line(hostile_datasets, name):
    row = hostile_datasets["rows"].get(name)
    assert row is not None, hostile_datasets["proc"].stdout[-2000:] + hostile_datasets["proc"].stderr[-4000:]
    error, pattern = ATTACH_CASES[name]
    assert error in row[1] and "CalsimError" in row[1], row
    assert "\n" not in row[2] and len(row[2]) < 400 and re.search(pattern, row[2]), row[2]


def test_a_refused_dataset_changes_no_file(hostile_datasets):
    assert hostile_datasets["proc"].returncode == 0, hostile_datasets["proc"].stderr[-4000:]
    assert hostile_datasets["after"] == hostile_datasets["before"]


@pytest.mark.parametrize("name", ["x" * 300, "\u20ac" * 100])
def test_a_store_path_longer_than_the_os_allows_is_one_line(tmp_path, name):
    path = tmp_path / name
    for read_only in (False, True):
        with pytest.raises(StoreError,
                           match=r"^path: cannot open '.*' as a DuckDB database: File name too long$") as exc:
            LedgerStore(path, read_only=read_only)
        one_line(exc)
        with pytest.raises(StoreError, match="File name too long"):
            calsim.store.check_store_path(path, read_only=read_only)
    with LedgerStore() as store:
        with pytest.raises(InputError, match=r"^directory: cannot create '.*': File name too long$") as exc:
            store.export_parquet(path)
        one_line(exc)
    assert list(tmp_path.iterdir()) == []


# -- attach, fuzzed: only CalsimError escapes ----------------------------------------------------------------------

FUZZ = int(os.environ.get("CALSIM_FUZZ_EXAMPLES", "0") or 0)


@pytest.fixture(scope="module")
def fuzz_dataset(tmp_path_factory):
    d = write_dataset(tmp_path_factory.mktemp("fuzz-attach"), "fz")
    meta = json.loads((d / "_scenario.json").read_text())
    with LedgerStore() as store:
        yield d, meta, store


def _attach_text(fuzz_dataset, text: str) -> None:
    from messages import assert_clear

    d, _, store = fuzz_dataset
    (d / "_scenario.json").write_text(text)
    try:
        store.attach(d, replace=True)
    except CalsimError as exc:
        assert_clear(exc)


def _fuzz_settings():
    from hypothesis import HealthCheck, settings

    return settings(max_examples=FUZZ or 60, deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=not FUZZ)


def _fields(meta: dict) -> list[tuple]:
    return ([(k,) for k in meta] + [("files", 0, k) for k in meta["files"][0]]
            + [("schedules", 0, k) for k in meta["schedules"][0]] + [("files", 0), ("schedules", 0)])


def test_fuzz_attach_any_value_in_any_field_gives_only_calsim_errors(fuzz_dataset):
    from hypothesis import given
    from hypothesis import strategies as st

    from test_fuzz_readers import VALUES

    _, meta, _ = fuzz_dataset

    @_fuzz_settings()
    @given(st.sampled_from(_fields(meta)), VALUES)
    def run(path, value):
        changed = json.loads(json.dumps(meta))
        node = changed
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        _attach_text(fuzz_dataset, json.dumps(changed))

    run()


def test_fuzz_attach_spliced_metadata_gives_only_calsim_errors(fuzz_dataset):
    from hypothesis import given
    from hypothesis import strategies as st

    from test_fuzz_parsers import JUNK, splice

    _, meta, _ = fuzz_dataset
    text = json.dumps(meta)

    @_fuzz_settings()
    @given(st.integers(0, len(text)), JUNK, st.sampled_from(["", "[" * 5000, '{"a":' * 3000]))
    def run(cut, junk, nest):
        _attach_text(fuzz_dataset, splice(text, cut, nest + junk))

    run()


def test_a_dataset_whose_path_holds_quotes_and_brackets_is_still_calsims_own(tmp_path, runs):
    """The view's file list is read back from DuckDB's text of it: quotes, commas and brackets in a path too."""
    d = write_dataset(tmp_path / "it's [a], 'b'")
    path = tmp_path / "l.duckdb"
    with LedgerStore(path) as store:
        store.write(runs["a"])
        store.attach(d)
    for read_only in (True, False):
        with LedgerStore(path, read_only=read_only) as store:
            assert store.ledger("ds").height == 24


def test_a_child_forked_after_a_store_check_keeps_the_parents_scratch_database_unclosed():
    # The catalog check parses view texts on a private in-memory DuckDB. A child made by fork (subprocess with a
    # preexec_fn runs Python in it) must not close that database: its threads do not exist in the child, and
    # closing it there was a segmentation fault before the child could exec.
    from calsim.store import catalog

    assert catalog._render("SELECT 1 AS one") is not None  # the scratch database exists now
    p = subprocess.run([sys.executable, "-c", "print('child ran')"], capture_output=True, text=True,
                       preexec_fn=lambda: None, timeout=120)
    assert (p.returncode, p.stdout.strip()) == (0, "child ran"), p.stderr[-600:]
