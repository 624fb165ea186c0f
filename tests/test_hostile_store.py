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
import time
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

PY = sys.executable

# -- helpers -----------------------------------------------------------------------------------------------------


def run_limited(code: str, timeout: float = 60, prefix: list[str] | None = None,
                cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with 2 GiB of address space and 20 s of CPU."""
    limits = ("import resource\n"
              "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
              "resource.setrlimit(resource.RLIMIT_CPU, (20, 20))\n")
    return subprocess.run([*(prefix or []), PY, "-c", limits + code], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


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
        with LedgerStore(store_file) as store:
            for call in (lambda: store.ledger("a"), lambda: store.compare(["a"]),
                         lambda: store.write(ledger("a", days=3), replace=True)):
                with pytest.raises(StoreError, match="table name 'occ_1; DROP TABLE .*' is not one calsim makes"):
                    call()
            assert store.sql("SELECT count(*) AS n FROM scenarios")["n"][0] == 1


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
