"""Hostile and careless run histories, end to end (issue 26: "every history reader is bounded").

Each case runs in a fresh interpreter limited to 3 GiB of address space and
30 s of CPU (far above the second a case takes, far below what an unguarded
reader costs: the 800-byte Parquet that declares 10^8 rows took 16 GB and
three minutes), so a guard that fails shows as a killed process. A case is
library code (``read_history``, ``read_actual``, ``LedgerStore.reconcile``)
that must raise one ``CalsimError`` of the class named, or a ``calsim
reconcile`` command line that must exit 2 with one line; either way the
message names the field or file given. After each case every file of the
workspace (the inputs, a store holding a scenario, an existing history) must
be byte-identical to before.

Bounded work is asserted by counting, never by the clock: a library case may
give ``read_at_most`` bytes, checked against the bytes the process read
(``rchar`` of ``/proc/self/io``) while the case ran, e.g. a 1 GiB file of
zeros is refused after its first MiB.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import parquet_craft

pytestmark = pytest.mark.hostile

ROOT = Path(__file__).resolve().parents[2]
HIST = ROOT / "data" / "examples" / "histories"
MEMORY = 3 << 30
CPU_SECONDS = 30
MIB = 1 << 20


@dataclass(frozen=True)
class Case:
    """One hostile history: library code (``code``, with ``W`` the workspace) or ``calsim`` arguments (``cli``)."""

    name: str
    group: str
    expect: str               # the error class name (library) or "exit 2" (CLI)
    field: str                # a substring the one-line message must contain
    cli: tuple[str, ...] = ()
    code: str = ""
    env: tuple[tuple[str, str], ...] = ()
    read_at_most: int | None = None  # bytes the case may read (library cases)


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


# Everything a case may load is imported before counting, so the count is the history's bytes.
LIB = """
import os, sys
import calsim, polars, pyarrow.parquet, yaml
import calsim.importers.history, calsim.importers._parquet, calsim.importers.crontab, calsim.store
from calsim.errors import CalsimError
from calsim.importers.history import read_history, read_actual
from calsim.store import LedgerStore
W = sys.argv[1]
calsim.release().zone("Asia/Tokyo")

def rchar():
    try:
        with open("/proc/self/io") as fh:
            return int(fh.readline().split()[1])
    except OSError:
        return -1

r0 = rchar()
try:
{body}
except CalsimError as exc:
    r1 = rchar()
    print(type(exc).__name__)
    print(str(exc))
    print(r1 - r0 if r0 >= 0 else -1)
    sys.exit(0)
print("NO ERROR")
sys.exit(3)
"""

STORE = "LedgerStore(W + '/store.duckdb', read_only=True).reconcile('kept', "
CRONTAB = "crontab='* * * * * /bin/x\\n'"
SYSLOG_BSD = "'Jan  1 00:00:01 h CRON[1]: (u) CMD (/bin/x)\\n'"


def _job(name: str = "backup-29546280", **status: object) -> str:
    return json.dumps({"kind": "Job", "metadata": {"name": name, "namespace": "ops",
                                                   "ownerReferences": [{"kind": "CronJob", "name": "backup"}]},
                       "status": {"startTime": "2026-03-06T06:00:03Z", **status}}) + "\n"


def _csv(*rows: str, header: str = "schedule_id,started_utc,scheduled_utc") -> str:
    return "\n".join([header, *rows]) + "\n"


OK_ROW = "a,2026-03-09T06:30:02Z,2026-03-09T06:30:00Z"

CASES: list[Case] = [
    # -- Parquet: what the footer and the page headers declare is checked before any page is read ------------
    Case("parquet_declaring_10_8_rows", "parquet", "InputError", "declares 100,000,000 rows",
         code="read_history(W + '/rows.parquet')", read_at_most=MIB),
    Case("parquet_page_declaring_2_gib", "parquet", "InputError", "page 2 declares 2,147,482,648 bytes",
         code="read_history(W + '/page.parquet')", read_at_most=MIB),
    Case("parquet_page_declaring_10_8_values", "parquet", "InputError", "more than the 3 values",
         code="read_history(W + '/values.parquet')", read_at_most=MIB),
    Case("parquet_10001_row_groups", "parquet", "InputError", "10,001 row groups",
         code="read_history(W + '/groups.parquet')", read_at_most=16 * MIB),
    Case("parquet_1001_columns", "parquet", "InputError", "1,001 columns",
         code="read_history(W + '/columns.parquet')", read_at_most=16 * MIB),
    Case("parquet_footer_of_2_gib", "parquet", "InputError", "the footer declares 2,147,483,647 bytes",
         code="read_history(W + '/footer.parquet')", read_at_most=MIB),
    Case("parquet_pages_in_another_file", "parquet", "InputError", "/etc/passwd",
         code="read_history(W + '/external.parquet')", read_at_most=MIB),
    Case("parquet_text_expanding_to_2_gib", "parquet", "InputError", "once expanded",
         code="read_history(W + '/textbomb.parquet')", read_at_most=8 * MIB),
    Case("parquet_list_column", "parquet", "InputError", "column 'schedule_id' is nested",
         code="read_history(W + '/nested.parquet')"),
    Case("parquet_binary_id_column", "parquet", "InputError", "column 'schedule_id' is binary",
         code="read_history(W + '/binary.parquet')"),
    Case("parquet_invalid_utf8_in_a_string_column", "parquet", "InputError", "not valid text",
         code="read_history(W + '/badtext.parquet')"),
    Case("parquet_timestamp_in_year_31_million", "parquet", "InputError",
         "row 1: started_utc: 1,000,000,000,000,000,000 ms since 1970-01-01 is out of range",
         code="read_history(W + '/seconds.parquet')"),
    Case("parquet_junk_between_magic_bytes", "parquet", "InputError", "junk.parquet: not a readable Parquet file",
         code="read_history(W + '/junk.parquet')"),
    Case("parquet_cut_in_half", "parquet", "InputError", "not a Parquet file",
         code="read_history(W + '/truncated.parquet')"),
    Case("parquet_without_schedule_id", "parquet", "LedgerSchemaError", "missing column 'schedule_id'",
         code="read_history(W + '/noid.parquet')", read_at_most=MIB),
    # -- CSV, journal, syslog: read in bounded pieces, every value checked -----------------------------------
    Case("csv_100_bytes_with_a_cap_of_8_gib", "text", "InputError", "line 2: started_utc: 'soon'",
         code="read_history(W + '/tiny.csv')", env=(("CALSIM_MAX_FILE_BYTES", str(8 << 30)),)),
    Case("csv_over_the_size_cap", "text", "InputError", "1,073,741,825 bytes, over the limit",
         code="read_history(W + '/huge.csv')", read_at_most=MIB),
    Case("csv_rows_over_the_row_cap", "text", "InputError", "2,000 lines after the header, over the limit of 1,000",
         code="read_history(W + '/many.csv')", env=(("CALSIM_MAX_HISTORY_ROWS", "1000"),)),
    Case("csv_year_12026", "text", "InputError", "line 2: started_utc: '+12026-03-09T06:30:02Z' is out of range",
         code=f"read_history({_csv('a,+12026-03-09T06:30:02Z,2026-03-09T06:30:00Z')!r})"),
    Case("csv_nul_byte", "text", "InputError", "line 3: NUL byte",
         code=f"read_history({_csv(OK_ROW, 'b' + chr(0) + OK_ROW[1:]).encode()!r}, kind='csv')"),
    Case("csv_latin1", "text", "InputError", "line 2: not UTF-8 text",
         code=f"read_history({_csv('caf' + chr(0xe9) + OK_ROW[1:]).encode('latin-1')!r}, kind='csv')"),
    Case("csv_escape_sequence_in_id", "text", "InputError", "line 2: schedule_id: '\\x1b[2J' holds a control",
         code=f"read_history({_csv(chr(27) + '[2J' + OK_ROW[1:])!r})"),
    Case("csv_fold_of_5000_digits", "text", "InputError", "line 2: fold:",
         code="read_history(" + repr(_csv('a,2026-03-09T06:30:02Z,2026-03-09T02:30:00,' + '9' * 5000,
                                          header='schedule_id,started_utc,nominal_local,fold')) + ")"),
    Case("csv_2000_columns", "text", "InputError", "line 1: more than 1,000 columns",
         code=f"read_history({_csv(OK_ROW, header='schedule_id,started_utc,scheduled_utc' + ',x' * 2000)!r})"),
    Case("csv_ragged_line", "text", "InputError", "line 3: not a readable CSV file",
         code=f"read_history({_csv(OK_ROW, OK_ROW + ',x,y')!r})"),
    Case("journal_line_of_20_mib", "text", "InputError", "line 1: longer than 16,777,216 bytes",
         code="read_history(W + '/long.journal', kind='journal')", read_at_most=24 * MIB),
    Case("journal_1_gib_of_zeros", "text", "InputError", "line 1: NUL byte",
         code="read_history(W + '/zeros.journal', kind='journal')", read_at_most=4 * MIB),
    Case("journal_lines_over_the_row_cap", "text", "InputError", "more than 1,000 lines",
         code="read_history(W + '/many.journal', kind='journal')", env=(("CALSIM_MAX_HISTORY_ROWS", "1000"),)),
    Case("journal_timestamp_of_40_digits", "text", "InputError", "line 1: __REALTIME_TIMESTAMP",
         code="read_history('{\"__REALTIME_TIMESTAMP\": \"' + '9' * 40 + '\", \"UNIT\": \"a.service\", "
              "\"MESSAGE\": \"Starting a\"}\\n')"),
    Case("journal_nested_100k", "text", "InputError", "line 1: not a JSON object",
         code="read_history('{\"__REALTIME_TIMESTAMP\": \"1\", \"x\": ' + '[' * 100000 + '}\\n', kind='journal')"),
    Case("journal_escaped_nul_in_unit", "text", "InputError", "schedule_id: 'a\\x00.service' holds a control",
         code="read_history('{\"__REALTIME_TIMESTAMP\": \"1\", \"UNIT\": \"a\\\\u0000.service\", "
              "\"MESSAGE\": \"Starting a\"}\\n')"),
    Case("journal_invalid_utf8", "text", "InputError", "line 2: not UTF-8 text",
         code="read_history(b'\\n{\"__REALTIME_TIMESTAMP\": \"1\", \"UNIT\": \"\\xe9.service\"}\\n', kind='journal')"),
    Case("syslog_year_1_in_tokyo", "text", "InputError", "in year 1 (zone Asia/Tokyo) is outside",
         code=f"read_history({SYSLOG_BSD}, {CRONTAB}, year=1, zone='Asia/Tokyo')"),
    Case("syslog_year_0", "text", "InputError", "year: 0 is not a year (allowed: a whole number from 1 to 9999)",
         code=f"read_history({SYSLOG_BSD}, {CRONTAB}, year=0)"),
    Case("syslog_year_10000", "text", "InputError", "year: 10000 is not a year",
         code=f"read_history({SYSLOG_BSD}, {CRONTAB}, year=10000)"),
    Case("syslog_year_as_text", "text", "InputError", "year: '2026' is not a year",
         code=f"read_history({SYSLOG_BSD}, {CRONTAB}, year='2026')"),
    Case("syslog_crossing_into_year_10000", "text", "InputError", "line 2: time stamp 'Jan  1 00:00:01': the log "
         "crosses into year 10000", code=f"read_history('Dec 31 23:59:01 h CRON[1]: (u) CMD (/bin/x)\\n' + "
                                         f"{SYSLOG_BSD}, {CRONTAB}, year=9999)"),
    Case("syslog_iso_stamp_before_year_1", "text", "InputError", "'0001-01-01T00:00:01+01:00' is out of range",
         code=f"read_history('0001-01-01T00:00:01+01:00 h CRON[1]: (u) CMD (/bin/x)\\n', {CRONTAB})"),
    Case("syslog_5_mb_of_cron_prefixes", "text", "InputError", "no cron 'CMD (...)' line",
         code=f"read_history(W + '/prefixes.log', kind='syslog', {CRONTAB})"),
    # -- kubectl get jobs: one document, a smaller cap; every field checked -----------------------------------
    Case("jobs_document_of_65_mib", "kubernetes", "InputError", "over the limit of 67,108,864 for a document",
         code="read_history(W + '/big.json')", read_at_most=4 * MIB),
    Case("jobs_name_suffix_of_5000_digits", "kubernetes", "InputError",
         "metadata.name: the minute suffix of 5,000 digits",
         code=f"read_history({_job('backup-' + '9' * 5000)!r})"),
    Case("jobs_name_suffix_past_year_9999", "kubernetes", "InputError", "minute suffix '999999999999' after 'backup-'",
         code=f"read_history({_job('backup-999999999999')!r})"),
    Case("jobs_condition_type_a_list", "kubernetes", "InputError", "status.conditions[0].type",
         code=f"read_history({_job(conditions=[{'type': ['Complete'], 'status': 'True'}])!r})"),
    Case("jobs_condition_type_a_dict", "kubernetes", "InputError", "status.conditions[1].type",
         code=f"read_history({_job(conditions=[{'type': 'x'}, {'type': {'a': 1}, 'status': 'True'}])!r})"),
    Case("jobs_completion_past_year_9999", "kubernetes", "InputError", "status.completionTime",
         code=f"read_history({_job(completionTime='9999-12-31T23:59:59-01:00')!r})"),
    Case("jobs_over_the_row_cap", "kubernetes", "InputError", "101 items, over the limit of 100",
         code="import json\n" + "read_history(json.dumps({'kind': 'List', 'items': [{}] * 101}) + '\\n')",
         env=(("CALSIM_MAX_HISTORY_ROWS", "100"),)),
    # -- every path through the one regular-file reader, library and CLI -------------------------------------
    # (a store case reads the store's own pages first: DuckDB, ~2.3 MB)
    Case("store_reconcile_of_a_fifo", "paths", "InputError", "is a FIFO", code=STORE + "W + '/fifo.csv')",
         read_at_most=8 * MIB),
    Case("store_reconcile_of_a_link_to_dev_zero", "paths", "InputError", "is a character device",
         code=STORE + "W + '/zero.parquet')", read_at_most=8 * MIB),
    Case("store_reconcile_of_a_directory", "paths", "InputError", "is a directory", code=STORE + "W + '/dir.csv')"),
    Case("store_reconcile_of_10_8_declared_rows", "paths", "InputError", "declares 100,000,000 rows",
         code=STORE + "W + '/rows.parquet')", read_at_most=8 * MIB),
    Case("store_reconcile_of_junk_parquet", "paths", "InputError", "not a readable Parquet file",
         code=STORE + "W + '/junk.parquet')"),
    Case("read_actual_of_a_fifo", "paths", "InputError", "is a FIFO", code="read_actual(W + '/fifo.parquet')"),
    Case("read_history_of_a_missing_file", "paths", "InputError", "No such file",
         code="read_history(W + '/nowhere.csv')"),
    Case("read_history_of_a_name_too_long", "paths", "InputError", "File name too long",
         code="read_history(W + '/' + 'x' * 300)"),
    Case("cli_fifo", "cli", "exit 2", "is a FIFO", cli=("reconcile", "kept", "{W}/fifo.csv", "--db",
                                                       "{W}/store.duckdb")),
    Case("cli_link_to_dev_zero", "cli", "exit 2", "is a character device", cli=(
        "reconcile", "kept", "{W}/zero.parquet", "--db", "{W}/store.duckdb")),
    Case("cli_10_8_declared_rows", "cli", "exit 2", "declares 100,000,000 rows", cli=(
        "reconcile", "kept", "{W}/rows.parquet", "--db", "{W}/store.duckdb")),
    Case("cli_page_of_2_gib", "cli", "exit 2", "2,147,482,648 bytes", cli=(
        "reconcile", "kept", "{W}/page.parquet", "--db", "{W}/store.duckdb")),
    Case("cli_junk_parquet", "cli", "exit 2", "not a readable Parquet file", cli=(
        "reconcile", "kept", "{W}/junk.parquet", "--db", "{W}/store.duckdb", "--kind", "parquet")),
    Case("cli_syslog_year_1_in_tokyo", "cli", "exit 2", "in year 1 (zone Asia/Tokyo)", cli=(
        "reconcile", "kept", "{W}/bsd.log", "--db", "{W}/store.duckdb", "--crontab", "{W}/crontab",
        "--year", "1", "--zone", "Asia/Tokyo")),
    Case("cli_syslog_year_0", "cli", "exit 2", "--year: expected a year from 1 to 9999, got '0'", cli=(
        "reconcile", "kept", "{W}/bsd.log", "--db", "{W}/store.duckdb", "--crontab", "{W}/crontab", "--year", "0")),
    Case("cli_syslog_year_of_5000_digits", "cli", "exit 2", "(5,000 characters)", cli=(
        "reconcile", "kept", "{W}/bsd.log", "--db", "{W}/store.duckdb", "--crontab", "{W}/crontab",
        "--year", "9" * 5000)),
    Case("cli_csv_100_bytes_with_a_cap_of_8_gib", "cli", "exit 2", "line 2: started_utc: 'soon'", cli=(
        "reconcile", "kept", "{W}/tiny.csv", "--db", "{W}/store.duckdb"),
        env=(("CALSIM_MAX_FILE_BYTES", str(8 << 30)),)),
    Case("cli_history_name_with_a_line_break", "cli", "exit 2", "No such file", cli=(
        "reconcile", "kept", "a,b\nc,d", "--db", "{W}/store.duckdb")),
]


def _small_parquet(**columns: object) -> bytes:
    import io

    buf = io.BytesIO()
    frame = pl.DataFrame(columns or {"schedule_id": ["a", "b", "c"], "started_utc": ["2026-03-09T06:30:02Z"] * 3,
                                     "scheduled_utc": ["2026-03-09T06:30:00Z"] * 3})
    frame.write_parquet(buf)
    return buf.getvalue()


def _sparse(path: Path, size: int, head: bytes = b"") -> None:
    with open(path, "wb") as fh:  # costs no disk: zeros past the head are a hole
        fh.write(head)
        fh.truncate(size)


def _workspace(root: Path) -> Path:
    """The hostile histories, and a store with one scenario and an existing history that must survive them all."""
    w = root / "w"
    w.mkdir()
    small = _small_parquet()
    (w / "rows.parquet").write_bytes(parquet_craft.set_rows(small, 10**8))
    assert len((w / "rows.parquet").read_bytes()) < 2000  # the "800-byte Parquet": 798 bytes of footer
    (w / "page.parquet").write_bytes(parquet_craft.set_page(small, 1, uncompressed=2**31 - 1000))
    (w / "values.parquet").write_bytes(parquet_craft.set_page(small, 1, values=10**8))
    (w / "groups.parquet").write_bytes(parquet_craft.repeat_row_groups(small, 10_001))
    (w / "footer.parquet").write_bytes(parquet_craft.set_footer_length(small, 2**31 - 1))
    (w / "external.parquet").write_bytes(parquet_craft.set_file_path(small, "/etc/passwd"))
    (w / "noid.parquet").write_bytes(_small_parquet(started_utc=["2026-03-09T06:30:02Z"],
                                                    scheduled_utc=["2026-03-09T06:30:00Z"]))
    wide = pl.DataFrame({f"c{i}": [1] for i in range(1001)})
    wide.write_parquet(w / "columns.parquet")
    # One 1 MiB string, 2,048 rows pointing at it: 1 MiB in the file, 2 GiB once expanded.
    ids = pa.DictionaryArray.from_arrays(pa.array([0] * 2048, pa.int32()), pa.array(["x" * MIB]))
    times = pa.array(["2026-03-09T06:30:02Z"] * 2048)
    pq.write_table(pa.table({"schedule_id": ids, "started_utc": times, "scheduled_utc": times}),
                   w / "textbomb.parquet", compression="zstd", dictionary_pagesize_limit=4 * MIB)
    assert (w / "textbomb.parquet").stat().st_size < 2 * MIB
    pq.write_table(pa.table({"schedule_id": pa.array([["a"]]), "started_utc": ["2026-03-09T06:30:02Z"],
                             "scheduled_utc": ["2026-03-09T06:30:00Z"]}), w / "nested.parquet")
    pq.write_table(pa.table({"schedule_id": pa.array([b"a"], pa.binary()), "started_utc": ["2026-03-09T06:30:02Z"],
                             "scheduled_utc": ["2026-03-09T06:30:00Z"]}), w / "binary.parquet")
    good = _small_parquet(schedule_id=["abcdefgh"], started_utc=["2026-03-09T06:30:02Z"],
                          scheduled_utc=["2026-03-09T06:30:00Z"])
    at = good.index(b"abcdefgh")
    (w / "badtext.parquet").write_bytes(good[:at] + b"\xff\xfe" + good[at + 2:])
    pq.write_table(pa.table({"schedule_id": ["a"], "started_utc": pa.array([10**15], pa.timestamp("s", "UTC")),
                             "scheduled_utc": pa.array([0], pa.timestamp("s", "UTC"))}), w / "seconds.parquet",
                   compression="none")
    junk = bytearray(os.urandom(4096))
    junk[:4] = junk[-4:] = b"PAR1"
    junk[-8:-4] = (1000).to_bytes(4, "little")
    (w / "junk.parquet").write_bytes(bytes(junk))
    (w / "truncated.parquet").write_bytes(small[: len(small) // 2])
    (w / "tiny.csv").write_text(_csv("a,soon,2026-03-09T06:30:00Z"))
    assert (w / "tiny.csv").stat().st_size < 100
    (w / "many.csv").write_text(_csv(*[OK_ROW] * 2000))
    (w / "many.journal").write_text('{"__REALTIME_TIMESTAMP": "1", "UNIT": "x.timer"}\n' * 2000)
    _sparse(w / "huge.csv", (1 << 30) + 1, b"schedule_id,started_utc,scheduled_utc\n")
    _sparse(w / "zeros.journal", (1 << 30) - 1)
    _sparse(w / "big.json", 65 * MIB, b"{\n")
    (w / "long.journal").write_bytes(b"a" * (20 * MIB))
    (w / "prefixes.log").write_text("2026-03-09T00:00:01Z h " + "CRON[1]: (" * 500_000 + "\n")
    (w / "bsd.log").write_text("Jan  1 00:00:01 h CRON[1]: (u) CMD (/bin/x)\n")
    (w / "crontab").write_text("* * * * * /bin/x\n")
    os.mkfifo(w / "fifo.csv")
    os.mkfifo(w / "fifo.parquet")
    os.symlink("/dev/zero", w / "zero.parquet")
    (w / "dir.csv").mkdir()
    (w / "runs.csv").write_bytes((HIST / "runs.csv").read_bytes())
    (w / "daily.toml").write_text('[[schedule]]\nid = "daily"\nzone = "Europe/Berlin"\nstart = "2026-01-01T02:30"\n'
                                  'rule = "FREQ=DAILY"\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "calsim", "simulate", str(w / "daily.toml"), "--from",
                        "2026-01-01T00:00Z", "--to", "2026-01-03T00:00Z", "--db", str(w / "store.duckdb"), "--name",
                        "kept", "--quiet"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    return w


def _state(w: Path) -> dict[str, str]:
    """Digest of every file in the workspace (a file over 64 MiB by its size and first 64 KiB)."""
    out = {}
    for p in sorted(w.rglob("*")):
        st = os.lstat(p)
        if p.is_symlink():
            out[str(p)] = "link:" + os.readlink(p)
        elif p.is_fifo():
            out[str(p)] = "fifo"
        elif p.is_dir():
            out[str(p)] = "dir"
        elif st.st_size > 64 * MIB:
            with open(p, "rb") as fh:
                out[str(p)] = f"{st.st_size}:" + hashlib.blake2b(fh.read(1 << 16)).hexdigest()
        else:
            out[str(p)] = f"{st.st_mtime_ns}:" + hashlib.blake2b(p.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return _workspace(tmp_path_factory.mktemp("hostile-history"))


def _run(case: Case, w: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CALSIM_MAX_HISTORY_ROWS", "CALSIM_MAX_FILE_BYTES")}
    env.update({"PYTHONPATH": str(ROOT), **dict(case.env)})
    if case.cli:
        argv = [sys.executable, "-m", "calsim", *(a.replace("{W}", str(w)) for a in case.cli)]
    else:
        body = "\n".join("    " + line for line in case.code.splitlines())
        argv = [sys.executable, "-c", LIB.format(body=body), str(w)]
    # timeout: only a hang guard (a case blocked on a FIFO uses no CPU), not a speed bound.
    return subprocess.run(argv, capture_output=True, text=True, env=env, preexec_fn=_limits, timeout=600, cwd=w)


def test_cases_cover_every_reader_and_every_path():
    assert len(CASES) >= 50
    assert {c.group for c in CASES} == {"parquet", "text", "kubernetes", "paths", "cli"}
    assert len({c.name for c in CASES}) == len(CASES)
    text = " ".join(c.code for c in CASES)
    for reader in ("kind='journal'", "kind='syslog'", "kind='csv'", ".parquet", "LedgerStore", "read_actual"):
        assert reader in text, reader


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_history_gives_one_clear_error_in_bounded_work_and_changes_nothing(case: Case, workspace: Path):
    before = _state(workspace)
    p = _run(case, workspace)
    after = _state(workspace)
    leftovers = sorted(set(after) - set(before))
    assert after == before, f"files changed: {leftovers or [k for k in before if before[k] != after.get(k)]}"
    assert p.returncode not in (-9, -24, -6), f"killed by the limits (signal {-p.returncode}): {p.stderr[-600:]}"
    if case.cli:
        assert p.returncode == 2, (p.returncode, p.stdout[-300:], p.stderr[-600:])
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1, p.stderr[-800:]
        message = lines[0]
        assert message.startswith("calsim"), message
    else:
        assert p.returncode == 0, (p.returncode, p.stdout[-300:], p.stderr[-800:])
        kind, message, read = p.stdout.strip().split("\n")
        assert kind == case.expect, (kind, message)
        if case.read_at_most is not None and int(read) >= 0:
            assert int(read) <= case.read_at_most, f"read {int(read):,} bytes, more than {case.read_at_most:,}"
    assert case.field in message, message
    assert len(message) < 600, f"message of {len(message)} characters"
