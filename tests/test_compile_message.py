"""The first simulation says it is compiling (issue 30): with numba's cache empty for the ordered loop, one line
on stderr (and the progress bar's description) before the half minute of compiling, never with a warm cache or
``progress=False``.

The end-to-end case runs ``calsim simulate`` with a fresh ``NUMBA_CACHE_DIR`` and stops it as soon as the line is
printed (the compiling itself is not waited for); its work is bounded by the child's CPU limit (RLIMIT_CPU), never
by a clock.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap

import pytest

import calsim.simulation.engine as engine

CPU_SECONDS = 300  # far above start-up, expansion and the line (a few s); the compile it is stopped in costs ~30 s


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


SCENARIO = """\
[scenario]
name = "first"
start = "2026-03-01T00:00Z"
end = "2026-03-02T00:00Z"
release = "2026f"
capacity = 1                       # one slot: the ordered loop settles the runs

[[schedule]]
id = "a"
zone = "UTC"
start = "2026-01-01T00:00"
cron = "*/10 * * * *"
policy = { duration = "25min" }
"""


def test_a_cold_cache_says_so_on_stderr_before_compiling(tmp_path):
    (tmp_path / "sc.toml").write_text(SCENARIO)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    p = subprocess.Popen([sys.executable, "-m", "calsim", "simulate", str(tmp_path / "sc.toml")], cwd=tmp_path,
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=_limits)
    assert p.stderr is not None
    seen = []
    try:
        for line in p.stderr:
            seen.append(line.rstrip("\n"))
            if line.rstrip("\n") == engine.COMPILE_NOTICE:
                break
    finally:
        p.kill()
        p.wait()
    assert seen == [engine.COMPILE_NOTICE], seen  # the first and only line so far: said before the compile


CHILD = """
import sys
import numba
from calsim.simulation.engine import _must_compile
sys.path.insert(0, sys.argv[1])
import tiny
before = _must_compile(tiny.twice)
tiny.twice(2)
print(before, _must_compile(tiny.twice))
"""


def test_must_compile_reads_numbas_own_cache_index(tmp_path):
    """A tiny cached function stands for the kernel (compiling it takes a moment): cold in a fresh cache, warm in
    the next process (from the index numba wrote), cold again when its code changes."""
    (tmp_path / "tiny.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}

    def run() -> str:
        p = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], env=env, capture_output=True, text=True,
                           preexec_fn=_limits)
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout.strip()

    assert run() == "True False"   # nothing cached: compiles (then compiled in this process)
    assert run() == "False False"  # cached on disk by the first process
    (tmp_path / "tiny.py").write_text(textwrap.dedent("""\
        from numba import njit

        @njit(cache=True)
        def twice(x):
            return x + x
        """))
    for cached in (tmp_path / "__pycache__").glob("*.pyc"):
        cached.unlink()  # (the source's own bytecode cache: the same mtime second would keep the old code)
    assert run().startswith("True")  # other code: numba compiles again


class _Bar:
    """A stand-in for tqdm's bar (its ``desc``, ``set_description_str`` and ``write``)."""

    def __init__(self) -> None:
        self.desc = "simulate x"
        self.written: list[str] = []

    def set_description_str(self, desc: str) -> None:
        self.desc = desc

    def write(self, text: str, file=None) -> None:
        self.written.append(text)
        print(text, file=file)


@pytest.fixture
def cold(monkeypatch):
    monkeypatch.setattr(engine, "_noticed", False)
    monkeypatch.setattr(engine, "_must_compile", lambda dispatcher: True)


def test_no_bar_says_it_once_on_stderr_unless_quiet(cold, capsys):
    engine._notice_compile(engine._NoBar())  # progress=False (or a caller's own steps): nothing at all
    assert capsys.readouterr().err == ""
    engine._notice_compile(engine._NoBar(quiet=False))  # progress=None without a terminal: a CI log
    engine._notice_compile(engine._NoBar(quiet=False))
    assert capsys.readouterr().err == engine.COMPILE_NOTICE + "\n"


def test_a_bar_says_it_in_its_description_and_on_its_line(cold, monkeypatch, capsys):
    monkeypatch.setattr(engine, "_in_notebook", lambda: False)  # a terminal
    bar = _Bar()
    engine._notice_compile(bar)
    assert bar.desc == "simulate x: compiling (first use, ~30 s)" and bar.written == [engine.COMPILE_NOTICE]
    engine._notice_compiled(bar)
    assert bar.desc == "simulate x"


def test_a_notebook_bar_says_it_in_its_description_only(cold, monkeypatch, capsys):
    monkeypatch.setattr(engine, "_in_notebook", lambda: True)
    bar = _Bar()
    engine._notice_compile(bar)
    assert "compiling (first use, ~30 s)" in bar.desc and bar.written == [] and capsys.readouterr().err == ""


def test_a_warm_cache_says_nothing(monkeypatch, capsys):
    monkeypatch.setattr(engine, "_noticed", False)
    monkeypatch.setattr(engine, "_must_compile", lambda dispatcher: False)
    bar = _Bar()
    engine._notice_compile(bar)
    engine._notice_compile(engine._NoBar(quiet=False))
    assert bar.desc == "simulate x" and capsys.readouterr().err == ""


def test_progress_none_without_a_terminal_still_allows_the_line():
    assert engine._progress(False, 5, "x").quiet is True
    if not sys.stderr.isatty() and "ipykernel" not in sys.modules:
        assert engine._progress(None, 5, "x").quiet is False
    tqdm_bar = engine._progress(True, 5, "simulate x")
    try:
        assert tqdm_bar.desc == "simulate x"  # what _notice_compile extends, and _notice_compiled gives back
        engine._notice_compiled(tqdm_bar)
        tqdm_bar.set_description_str("simulate x" + engine._COMPILING)
        engine._notice_compiled(tqdm_bar)
        assert tqdm_bar.desc == "simulate x"
    finally:
        tqdm_bar.close()
