"""Hostile and careless input, end to end: each case in a subprocess with memory and CPU limits.

The contract (issue "Hostile and careless input"): every bad input gives one
``CalsimError`` (library) or exit 2 with one line (CLI); nothing is written,
replaced or lost; no input of a few kilobytes costs more than bounded memory
and time. Each case runs in a fresh interpreter limited to 2 GiB of address
space and 30 s of CPU, so a guard that fails shows as a killed process, not
as a machine taken down. After each case every file of the workspace (an
existing output, a ledger store with a scenario, the inputs) must be
byte-identical to before.

Cases are grouped by class: bounded work, hostile files, outputs that must
not be destroyed, store errors, the CLI's one line.
"""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.hostile

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "data" / "examples"
MEMORY = 4 << 30  # polars and DuckDB reserve address space for their thread pools
CPU_SECONDS = 30
# The bound on a case's work is the child's CPU limit (RLIMIT_CPU, checked by the
# kill signals below): far below what an unguarded case costs (minutes, or the
# memory limit), far above interpreter start-up and `import calsim`. No wall-clock
# bound: a loaded machine may take any time to run a bounded case.


@dataclass(frozen=True)
class Case:
    """One hostile input: CLI arguments (``cli``) or Python code (``code``, run with ``W`` the workspace)."""

    name: str
    group: str
    expect: str            # the error class name (library) or "exit 2" (CLI)
    field: str             # a substring the one-line message must contain (the field or file it names)
    cli: tuple[str, ...] = ()
    code: str = ""


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


LIB = """
import sys, calsim
from calsim.errors import CalsimError
W = sys.argv[1]
try:
{body}
except CalsimError as exc:
    print(type(exc).__name__)
    print(str(exc))
    sys.exit(0)
print("NO ERROR")
sys.exit(3)
"""

BOMB = "\n".join(["a: &a [x,x,x,x,x,x,x,x,x]"] + [
    f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]" for p, n in zip("abcdefgh", "bcdefghi")])

CASES: list[Case] = [
    # -- bounded work, refused early ------------------------------------------------------------------
    Case("secondly_over_100_years", "bounded", "InputError", "CALSIM_MAX_OCCURRENCES", code=(
        "calsim.expand([calsim.Schedule('a', 'UTC', '2000-01-01T00:00', 'FREQ=SECONDLY')], "
        "'2000-01-01', '2100-01-01')")),
    Case("count_10_12_on_one_day", "bounded", "InputError", "max_occurrences", code=(
        "calsim.expand([calsim.Schedule('a', 'UTC', '2000-01-01T00:00', 'FREQ=SECONDLY;COUNT=1000000000000')], "
        "'2026-01-01', '2026-01-02')")),
    Case("every_second_over_10_years", "bounded", "InputError", "max_occurrences", code=(
        "calsim.expand([calsim.Schedule('a', 'UTC', '2026-01-01T00:00', calsim.Every('1s'))], "
        "'2026-01-01', '2036-01-01')")),
    Case("simulate_every_second_over_10_years", "bounded", "InputError", "max_occurrences", code=(
        "calsim.simulate(calsim.Scenario('s', [calsim.Schedule('a', 'UTC', '2026-01-01T00:00', calsim.Every('1s'))], "
        "'2026-01-01T00:00Z', '2036-01-01T00:00Z'))")),
    Case("tzdiff_minutely_over_1000_years", "bounded", "InputError", "max_occurrences", code=(
        "calsim.tzdiff([calsim.Schedule('a', 'America/Vancouver', '2026-01-01T00:00', '* * * * *')], '2026a', '2026f', "
        "'2026-01-01T00:00Z', '3026-01-01T00:00Z')")),
    Case("preview_n_99999999999", "bounded", "exit 2", "99,999,999,999", cli=(
        "preview", str(EXAMPLES / "crontab"), "-n", "99999999999", "--release", "2026f")),
    Case("cli_expand_secondly_century", "bounded", "exit 2", "--max-occurrences", cli=(
        "expand", "{W}/secondly.toml", "--from", "2000-01-01T00:00Z", "--to", "2100-01-01T00:00Z")),
    # -- hostile files ---------------------------------------------------------------------------------
    Case("yaml_alias_bomb_kubernetes", "files", "InputError", "alias", code=(
        "calsim.from_kubernetes("
        + repr(BOMB + chr(10) + 'apiVersion: batch/v1' + chr(10) + 'kind: CronJob' + chr(10) + 'spec: *i' + chr(10))
        + ")")),
    Case("yaml_alias_bomb_github", "files", "InputError", "alias", code=(
        f"calsim.from_github_actions({BOMB + chr(10) + 'on: {{schedule: *i}}' + chr(10) + 'jobs: {{}}' + chr(10)!r})")),
    Case("github_schedule_key_twice", "files", "InputError", "'schedule' is given twice", code=(
        "calsim.from_github_actions('on:\\n  schedule:\\n    - cron: \"0 3 * * *\"\\n  schedule:\\n"
        "    - cron: \"0 4 * * *\"\\njobs: {}\\n')")),
    Case("yaml_alias_bomb_eventbridge", "files", "InputError", "alias", code=(
        f"calsim.from_eventbridge({BOMB + chr(10) + 'ScheduleExpression: *i' + chr(10)!r})")),
    Case("yaml_alias_bomb_job_history", "files", "InputError", "alias", code=(
        "from calsim.importers.history import read_history\n"
        f"    read_history({BOMB + chr(10) + 'items: *i' + chr(10)!r}, kind='kubernetes')")),
    Case("yaml_recursive_alias", "files", "InputError", "recursive", code=(
        "calsim.from_kubernetes('a: &a [*a]\\nkind: CronJob\\n')")),
    Case("yaml_nested_100k", "files", "InputError", "nested too deeply", code=(
        "calsim.from_kubernetes('a: ' + '[' * 100000 + ']' * 100000 + '\\n')")),
    Case("json_nested_100k_temporal", "files", "InputError", "nested too deeply", code=(
        "calsim.from_temporal('{\"spec\": ' + '[' * 100000 + ']' * 100000 + '}')")),
    Case("json_nested_100k_eventbridge", "files", "InputError", "nested too deeply", code=(
        "calsim.from_eventbridge('[' * 100000 + ']' * 100000)")),
    Case("toml_nested_100k", "files", "exit 2", "nested too deeply", cli=("expand", "{W}/deep.toml")),
    Case("duration_400_digits", "files", "PolicyError", "max_lateness", code=(
        "calsim.Policy(max_lateness='1' * 400 + 'd')")),
    Case("duration_iso_20_digits", "files", "PolicyError", "max_lateness", code=(
        "calsim.Policy(max_lateness='P99999999999999999999D')")),
    Case("every_20_digit_days", "files", "RuleError", "Every.period", code="calsim.Every('99999999999999999999d')"),
    Case("revision_20_digits_in_toml", "files", "exit 2", "revision", cli=("expand", "{W}/revision.toml")),
    Case("policy_priority_5000_digits", "files", "PolicyError", "priority", code="calsim.Policy(priority=10**5000)"),
    Case("scenario_seed_5000_digits", "files", "InputError", "scenario.seed", code=(
        "calsim.Scenario('s', [calsim.Schedule('a', 'UTC', '2026-01-01T00:00', 'FREQ=DAILY')], '2026-01-01T00:00Z', "
        "'2026-01-02T00:00Z', seed=10**5000)")),
    Case("yaml_int_5000_digits", "files", "InputError", "YAML value", code=(
        "calsim.from_kubernetes('apiVersion: batch/v1\\nkind: CronJob\\nmetadata: {name: a}\\nspec: "
        "{schedule: \"0 3 * * *\", startingDeadlineSeconds: ' + '9' * 5000 + '}\\n')")),
    Case("nul_in_crontab", "files", "InputError", "NUL", code="calsim.from_crontab('0 3 * * * /bin/a\\x00b\\n')"),
    Case("nul_in_schedule_id", "files", "ScheduleError", "id", code=(
        "calsim.Schedule('a\\x00b', 'UTC', '2026-01-01T00:00', 'FREQ=DAILY')")),
    Case("nul_in_fleet_file", "files", "exit 2", "control character", cli=("expand", "{W}/nul.toml")),
    Case("nul_byte_in_fleet_file", "files", "exit 2", "NUL byte at line 2", cli=("expand", "{W}/nul-byte.toml")),
    Case("one_gigabyte_line", "files", "exit 2", "over the limit", cli=("expand", "{W}/huge.crontab")),
    Case("fifo_as_input", "files", "exit 2", "FIFO", cli=("expand", "{W}/fifo")),
    Case("dev_zero_as_input", "files", "exit 2", "character device", cli=("expand", "/dev/zero")),
    Case("directory_as_input", "files", "exit 2", "directory", cli=("expand", "{W}")),
    Case("latin1_file", "files", "exit 2", "not UTF-8", cli=("expand", "{W}/latin1.crontab")),
    Case("hcl_nested", "files", "InputError", "HCL", code=(
        "calsim.from_eventbridge('resource \"aws_scheduler_schedule\" \"x\" {\\n a = ' + '[' * 50000 + ']' * 50000 + "
        "'\\n}\\n')")),
    Case("megabyte_schedule_in_manifest", "files", "RuleError", "spec.schedule", code=(
        "calsim.from_kubernetes('apiVersion: batch/v1\\nkind: CronJob\\nmetadata: {name: a}\\nspec: {schedule: \"' "
        "+ 'x' * 1000000 + '\", jobTemplate: {}}\\n', strict=True)")),
    Case("megabyte_oncalendar_line", "files", "RuleError", "OnCalendar", code=(
        "calsim.from_systemd('[Timer]\\nOnCalendar=' + '1' * 1000000 + '\\n', strict=True)")),
    Case("history_fifo", "files", "InputError", "FIFO", code=(
        "from calsim.importers.history import read_history\n    read_history(W + '/fifo')")),
    # -- outputs never destroy -------------------------------------------------------------------------
    Case("output_dev_null", "outputs", "exit 2", "--output", cli=(
        "expand", "{W}/daily.toml", "--format", "csv", "--output", "/dev/null")),
    Case("output_fifo", "outputs", "exit 2", "--output", cli=(
        "expand", "{W}/daily.toml", "--format", "csv", "--output", "{W}/fifo")),
    Case("output_directory", "outputs", "exit 2", "--output", cli=(
        "expand", "{W}/daily.toml", "--format", "csv", "--output", "{W}")),
    Case("output_symlink_to_directory", "outputs", "exit 2", "--output", cli=(
        "expand", "{W}/daily.toml", "--format", "csv", "--output", "{W}/link-to-dir")),
    Case("output_missing_directory", "outputs", "exit 2", "--output", cli=(
        "expand", "{W}/daily.toml", "--format", "csv", "--output", "{W}/nowhere/out.csv")),
    Case("output_name_too_long", "outputs", "exit 2", "--output", cli=(
        "expand", "{W}/daily.toml", "--format", "csv", "--output", "{W}/" + "x" * 300)),
    Case("simulate_over_existing_scenario", "outputs", "exit 2", "--replace", cli=(
        "simulate", "{W}/daily.toml", "--from", "2026-01-01T00:00Z", "--to", "2026-01-03T00:00Z", "--db",
        "{W}/store.duckdb", "--name", "kept", "--quiet")),
    Case("bad_output_checked_before_store_write", "outputs", "exit 2", "--output", cli=(
        "simulate", "{W}/daily.toml", "--from", "2026-01-01T00:00Z", "--to", "2026-01-05T00:00Z", "--db",
        "{W}/store.duckdb", "--name", "new-one", "--format", "csv", "--output", "/dev/null", "--quiet")),
    Case("scenario_name_with_escape_sequence", "outputs", "exit 2", "--name", cli=(
        "simulate", "{W}/daily.toml", "--from", "2026-01-01T00:00Z", "--to", "2026-01-02T00:00Z", "--db",
        "{W}/store.duckdb", "--name", "\x1b[2Jowned", "--format", "csv", "--output", "{W}/new.csv", "--quiet")),
    # -- store errors ----------------------------------------------------------------------------------
    Case("store_motherduck_prefix", "store", "StoreError", "md:", code="calsim.LedgerStore('md:calsim')"),
    Case("store_s3_url", "store", "StoreError", "s3://", code="calsim.LedgerStore('s3://bucket/x.duckdb')"),
    Case("store_http_url", "store", "StoreError", "http://", code="calsim.LedgerStore('http://example.com/x')"),
    Case("store_corrupt_file", "store", "StoreError", "garbage.duckdb",
         code="calsim.LedgerStore(W + '/garbage.duckdb')"),
    Case("store_is_a_directory", "store", "exit 2", "W/", cli=(
        "simulate", "{W}/daily.toml", "--from", "2026-01-01T00:00Z", "--to", "2026-01-02T00:00Z", "--db", "{W}",
        "--quiet")),
    Case("cli_store_remote_prefix", "store", "exit 2", "md:", cli=(
        "simulate", "{W}/daily.toml", "--from", "2026-01-01T00:00Z", "--to", "2026-01-02T00:00Z", "--db",
        "md:calsim", "--quiet")),
    # -- the CLI speaks one line -----------------------------------------------------------------------
    Case("unknown_flag_suggests", "cli", "exit 2", "did you mean --fail-on-change?", cli=(
        "tzdiff", "example:5", "--old", "2026f", "--new", "2026f", "--fail-on-chnage")),
    Case("unknown_command_suggests", "cli", "exit 2", "did you mean 'simulate'?", cli=("simulat",)),
    Case("unknown_choice_suggests", "cli", "exit 2", "did you mean 'parquet'?", cli=(
        "expand", "{W}/daily.toml", "--format", "parquett")),
    Case("missing_argument", "cli", "exit 2", "fleet", cli=("preview",)),
    # -- round three (issue 26): values typed by a user, numbers checked where they are used ----------
    Case("report_parameter_alias_bomb", "bounded", "InputError", "-p old", code=(
        "from calsim.report import parse_parameter\n"
        f"    parse_parameter('old=' + {BOMB!r})")),
    Case("report_parameter_nested_100k", "bounded", "InputError", "nested too deeply", code=(
        "from calsim.report import parse_parameter\n"
        "    parse_parameter('old=' + '[' * 100000 + ']' * 100000)")),
    Case("cli_report_parameter_alias_bomb", "cli", "exit 2", "-p old", cli=(
        "report", str(ROOT / "notebooks" / "04_tzdata_upgrade.ipynb"), "--out", "{W}/r.html", "-p", "old=" + BOMB)),
    Case("cli_report_parameter_nested", "cli", "exit 2", "nested too deeply", cli=(
        "report", str(ROOT / "notebooks" / "04_tzdata_upgrade.ipynb"), "--out", "{W}/r.html",
        "-p", "old=" + "[" * 5000 + "]" * 5000)),
    Case("kubernetes_every_99999999999h", "files", "RuleError", "@every", code=(
        "calsim.from_kubernetes('apiVersion: batch/v1\\nkind: CronJob\\nmetadata: {name: a}\\nspec: "
        "{schedule: \"@every 99999999999h\", jobTemplate: {}}\\n', strict=True)")),
    Case("example_negative_count", "cli", "exit 2", "fleet: n -5", cli=("expand", "example:-5")),
    Case("example_negative_seed", "cli", "exit 2", "fleet: seed -1", cli=("expand", "example:5:-1")),
    Case("expand_end_in_year_10000_somewhere", "cli", "exit 2", "end:", cli=(
        "expand", "example:5", "--from", "9999-12-31T00:00Z", "--to", "9999-12-31T23:00Z")),
    Case("fetch_release_of_an_int", "files", "UnknownReleaseError", "version", code="calsim.fetch_release(2024)"),
    Case("crontab_48_mb_field", "bounded", "exit 2", "longer than 4,096", cli=("expand", "{W}/bigfield.crontab")),
    Case("quartz_4_mb_expression", "bounded", "RuleError", "longer than 4,096", code=(
        "calsim.Schedule('a', 'UTC', '2026-01-01T00:00', 'quartz:0 ' + '1,' * 2000000 + '1 * * * ?')")),
    Case("zone_of_100_three_byte_characters", "files", "UnknownZoneError", "zone", code=(
        "calsim.Schedule('a', '\\u20ac' * 100, '2026-01-01T00:00', '0 3 * * *')")),
    Case("fleet_duration_without_p95", "files", "exit 2", "duration.p95", cli=("expand", "{W}/nop95.toml")),
]


def _workspace(root: Path) -> Path:
    """Inputs and outputs the cases aim at, and a store with one scenario that must survive them all."""
    w = root / "w"
    w.mkdir()
    daily = ('[[schedule]]\nid = "daily"\nzone = "Europe/Berlin"\nstart = "2026-01-01T02:30"\n'
             'rule = "FREQ=DAILY"\n')
    (w / "daily.toml").write_text(daily)
    (w / "secondly.toml").write_text(daily.replace("FREQ=DAILY", "FREQ=SECONDLY"))
    (w / "revision.toml").write_text(daily + "revision = 99999999999999999999\n")
    (w / "nul.toml").write_text(daily.replace('"daily"', '"dai\\u0000ly"'))
    (w / "nul-byte.toml").write_text(daily.replace('"daily"', '"dai\x00ly"'))
    (w / "deep.toml").write_text('[[schedule]]\nid = "x"\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n")
    (w / "latin1.crontab").write_bytes("0 3 * * * /bin/caf\xe9\n".encode("latin-1"))
    (w / "bigfield.crontab").write_text("0 " + "1," * 24_000_000 + "1 * * * * /bin/x\n")  # a 48 MB field
    (w / "nop95.toml").write_text(daily + 'policy = { duration = { median = "50min" } }\n')
    with open(w / "huge.crontab", "wb") as fh:  # a 1 GB line, sparse: costs no disk
        fh.write(b"0 3 * * * ")
        fh.truncate(1 << 30)
    (w / "garbage.duckdb").write_bytes(os.urandom(4096))
    os.mkfifo(w / "fifo")
    (w / "dir").mkdir()
    os.symlink(w / "dir", w / "link-to-dir")
    (w / "out.csv").write_text("an existing output\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "calsim", "simulate", str(w / "daily.toml"), "--from",
                        "2026-01-01T00:00Z", "--to", "2026-01-02T00:00Z", "--db", str(w / "store.duckdb"), "--name",
                        "kept", "--quiet"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    return w


def _state(w: Path) -> dict[str, str]:
    """Digest of every regular file in the workspace (the sparse 1 GB file by size and head only)."""
    out = {}
    for p in sorted(w.rglob("*")):
        if p.is_symlink():
            out[str(p)] = "link:" + os.readlink(p)
        elif p.is_file():
            if p.stat().st_size > 64 << 20:
                with open(p, "rb") as fh:
                    out[str(p)] = f"{p.stat().st_size}:" + hashlib.blake2b(fh.read(1 << 16)).hexdigest()
            else:
                out[str(p)] = hashlib.blake2b(p.read_bytes()).hexdigest()
        elif p.is_dir():
            out[str(p)] = "dir"
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return _workspace(tmp_path_factory.mktemp("hostile"))


def _run(case: Case, w: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if case.cli:
        argv = [sys.executable, "-m", "calsim", *(a.replace("{W}", str(w)) for a in case.cli)]
    else:
        body = "\n".join("    " + line.lstrip() if i else "    " + line
                         for i, line in enumerate(case.code.splitlines()))
        argv = [sys.executable, "-c", LIB.format(body=body), str(w)]
    # timeout: only a hang guard (a case blocked on a FIFO uses no CPU), not a speed bound.
    return subprocess.run(argv, capture_output=True, text=True, env=env, preexec_fn=_limits, timeout=600, cwd=w)


def test_there_are_at_least_40_cases_covering_every_class():
    assert len(CASES) >= 40
    assert {c.group for c in CASES} == {"bounded", "files", "outputs", "store", "cli"}
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input_gives_one_clear_error_quickly_and_changes_nothing(case: Case, workspace: Path):
    before = _state(workspace)
    p = _run(case, workspace)
    after = _state(workspace)
    leftovers = sorted(set(after) - set(before))
    assert after == before, f"files changed: {leftovers or [k for k in before if before[k] != after.get(k)]}"
    assert p.returncode != -9 and p.returncode != -24, f"killed by the limits: {p.stderr[-400:]}"
    if case.cli:
        assert p.returncode == 2, (p.returncode, p.stdout[-300:], p.stderr[-600:])
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1, p.stderr[-800:]
        message = lines[0]
        assert message.startswith("calsim"), message
    else:
        assert p.returncode == 0, (p.returncode, p.stdout[-300:], p.stderr[-800:])
        kind, message = p.stdout.strip().split("\n", 1)
        assert kind == case.expect, (kind, message)
        assert "\n" not in message
    assert case.field.replace("W/", str(workspace)) in message, message
    assert len(message) < 600, f"message of {len(message)} characters"
