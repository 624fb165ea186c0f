"""Fuzzing every parser a user's text reaches: only a one-line ``CalsimError`` ever escapes.

Bounded to a few seconds per parser here; ``CALSIM_FUZZ_EXAMPLES=N`` runs N
examples per test (e.g. 20000 for a long soak). Inputs are real files of
``data/examples`` cut and spliced with junk, token soups of each grammar, and
random values where a field takes one. Other parsers are fuzzed beside their
own tests (importers: tests/importers/; TZif:
tests/tz/test_hostile_tzdata.py; Quartz: rules/test_quartz*.py).
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.durations import duration_us
from calsim.errors import CalsimError
from calsim.scenario_file import load, load_scenario
from calsim.times import instant_us, local_us
from messages import assert_clear

pytestmark = pytest.mark.fuzz

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "examples"
FUZZ = int(os.environ.get("CALSIM_FUZZ_EXAMPLES", "0") or 0)
SOME = settings(max_examples=FUZZ or 150, deadline=None, suppress_health_check=list(HealthCheck))
WORK = Path(tempfile.mkdtemp(prefix="calsim-fuzz-"))


def only_calsim_errors(call, *args, **kwargs) -> None:
    try:
        call(*args, **kwargs)
    except CalsimError as exc:
        assert_clear(exc)


def splice(data: str, cut: int, junk: str) -> str:
    cut = cut % (len(data) + 1)
    return data[:cut] + junk + data[cut:]


JUNK = st.text(st.characters(blacklist_categories=("Cs",)), max_size=25)


def tokens(words: list[str]) -> st.SearchStrategy[str]:
    """A soup of a grammar's tokens and random text, joined without spaces or with ``;``/`` ``."""
    return st.lists(st.sampled_from(words) | st.text(max_size=4) | st.integers(-99, 10**20).map(str), max_size=12
                    ).flatmap(lambda parts: st.sampled_from(["", " ", ";", ","]).map(lambda sep: sep.join(parts)))


RRULE_WORDS = ["FREQ=", "SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY", "INTERVAL=",
               "COUNT=", "UNTIL=", "20261231T000000Z", "BYDAY=", "MO", "-1FR", "+2SU", "BYMONTHDAY=", "-1", "31",
               "BYSETPOS=", "BYWEEKNO=", "53", "BYYEARDAY=", "366", "BYHOUR=", "BYMINUTE=", "BYSECOND=", "60",
               "WKST=", "SU", "BYMONTH=", "13", "RRULE:", "=", ";"]
CRON_WORDS = ["*", "*/5", "0", "59", "60", "1-5", "5-1", ",", "L", "W", "#", "?", "JAN", "MON-FRI", "@daily",
              "@reboot", "CRON_TZ=", "TZ=", "/", "-", "7", "32"]
ONCAL_WORDS = ["OnCalendar=", "Mon..Fri", "Sat,Sun", "*-*-*", "*-*~01", "2026-03-08", "..", "/", "~", ":", "*:0/15",
               "8..17:00", "00:00:00", "minutely", "weekly", "quarterly", "semiannually", "Europe/Berlin", "UTC",
               " ", "60", "-1", ".5", "1..31/2"]
DURATION_WORDS = ["P", "T", "1", "0.5", "D", "H", "M", "S", "W", "Y", "min", "d", "h", "s", "us", "ms", "week",
                  "-", ".", " ", "1e9", "9" * 30]


@SOME
@given(text=tokens(RRULE_WORDS))
def test_rrule_text(text):
    only_calsim_errors(lambda: calsim.expand(calsim.Schedule("f", "UTC", "2026-01-01T00:00", text),
                                             "2026-01-01", "2026-01-08"))


@SOME
@given(text=tokens(CRON_WORDS))
def test_cron_text(text):
    only_calsim_errors(lambda: calsim.expand(calsim.Schedule("f", "Europe/Berlin", "2026-03-01T00:00", text),
                                             "2026-03-27", "2026-04-01"))


@SOME
@given(text=tokens(ONCAL_WORDS))
def test_oncalendar_text(text):
    rule = text if text.startswith("OnCalendar=") else "OnCalendar=" + text
    only_calsim_errors(lambda: calsim.expand(calsim.Schedule("f", "America/New_York", "2026-03-01T00:00", rule),
                                             "2026-03-07", "2026-03-10"))


@SOME
@given(text=tokens(DURATION_WORDS) | JUNK | st.floats() | st.integers() | st.timedeltas())
def test_durations(text):
    only_calsim_errors(duration_us, text, "max_lateness")


ISO = st.one_of(JUNK, st.datetimes().map(lambda d: d.isoformat()), st.datetimes().map(str),
                st.datetimes(timezones=st.just(dt.timezone.utc)).map(lambda d: d.isoformat().replace("+00:00", "Z")),
                tokens(["2026", "-", "03", "T", ":", "Z", "+", "24", "60", ".", "999999999", "W", "1", " "]),
                st.integers(), st.floats())


@SOME
@given(value=ISO)
def test_iso_instants(value):
    only_calsim_errors(instant_us, value, "start")


@SOME
@given(values=ISO | st.lists(ISO, max_size=3))
def test_iso_local_times(values):
    only_calsim_errors(local_us, values)


def _file(name: str, text: str) -> Path:
    path = WORK / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


FLEET = (EXAMPLES / "fleet.toml").read_text()
INCIDENT = (EXAMPLES / "incident.toml").read_text()


@SOME
@given(cut=st.integers(0, 10**6), junk=JUNK)
def test_toml_fleet_files(cut, junk):
    only_calsim_errors(load, _file("fleet.toml", splice(FLEET, cut, junk)))


@SOME
@given(cut=st.integers(0, 10**6), junk=JUNK)
def test_toml_scenario_files(cut, junk):
    (WORK / "fleet.toml").write_text(FLEET)
    only_calsim_errors(load_scenario, _file("incident.toml", splice(INCIDENT, cut, junk)))


@SOME
@given(key=st.sampled_from(["id", "zone", "start", "rule", "gap", "fold", "revision", "effective_from", "policy",
                            "exclude", "max_lateness", "catchup", "jitter", "tick", "seed", "release"]),
       value=st.one_of(st.integers(-10**20, 10**20), st.floats(), st.booleans(), JUNK.map(repr).map(
           lambda r: '"' + r[1:-1].replace('"', "") + '"'), st.just("[1, [2, [3]]]"), st.just("{a = 1}")))
def test_toml_fleet_field_values(key, value):
    text = FLEET.replace("[[schedule]]", f"[[schedule]]\n{key} = {value}", 1)
    only_calsim_errors(load, _file("fleet-field.toml", text))


@SOME
@given(cut=st.integers(0, 10**6), junk=JUNK)
def test_crontab(cut, junk):
    only_calsim_errors(calsim.from_crontab, splice((EXAMPLES / "crontab").read_text(), cut, junk) + "\n")


@SOME
@given(cut=st.integers(0, 10**6), junk=JUNK)
def test_kubernetes_yaml(cut, junk):
    only_calsim_errors(calsim.from_kubernetes, splice((EXAMPLES / "cronjobs.yaml").read_text(), cut, junk) + "\n")


@SOME
@given(cut=st.integers(0, 10**6), junk=JUNK)
def test_icalendar(cut, junk):
    only_calsim_errors(calsim.from_ical, splice((EXAMPLES / "calendar.ics").read_text(), cut, junk) + "\n")


@SOME
@given(name=st.sampled_from(sorted(p.name for p in EXAMPLES.iterdir() if p.is_file())),
       cut=st.integers(0, 10**6), junk=JUNK)
def test_load_detects_any_spliced_example(name, cut, junk):
    only_calsim_errors(calsim.load, _file(f"any-{name}", splice((EXAMPLES / name).read_text(), cut, junk)))


# -- run histories (issue 26): one target per format, only a one-line CalsimError escapes -------------------
# The examples of data/examples/histories cut and spliced with junk, and one field's value replaced by an
# arbitrary JSON value; Parquet files with their bytes overwritten and with what their footer and page headers
# declare changed (tests/parquet_craft.py), so the checks before pyarrow reads a page are what is fuzzed.

import io as _io  # noqa: E402
import json as _json  # noqa: E402

import polars as _pl  # noqa: E402

import parquet_craft  # noqa: E402
from calsim.importers.history import read_history  # noqa: E402

HISTORIES = EXAMPLES / "histories"
HISTORY_CRONTAB = (EXAMPLES / "crontab").read_text()
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=False)
                           | st.text(max_size=20) | st.sampled_from(["2026-03-09T06:30:00Z",
                                                                     "9999-12-31T23:59:59-01:00",
                                                                     "0001-01-01T00:00:00+01:00", "Complete", "True",
                                                                     "1772841602486000", "9" * 40, "a.service"]),
                           lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids,
                                                                                      max_size=3), max_leaves=8)
JOBS = _json.loads((HISTORIES / "jobs.json").read_text())
JOURNAL_LINES = (HISTORIES / "journal.json").read_text().splitlines()[:40]
BYTES_JUNK = st.binary(max_size=24) | JUNK.map(lambda t: t.encode("utf-8", "surrogatepass"))


def _history(data, kind, **kw) -> None:
    only_calsim_errors(read_history, data, kind, **kw)


def field_paths(data, prefix=(), items=3):
    """Every path (keys and indices) of a nested JSON value, for replacing one field; the first ``items`` entries
    of each list (None: all)."""
    yield prefix
    if isinstance(data, dict):
        for k, v in data.items():
            yield from field_paths(v, prefix + (k,), items)
    elif isinstance(data, list):
        for i, v in enumerate(data[:items]):
            yield from field_paths(v, prefix + (i,), items)


def replaced(data, path, value):
    """A deep copy of ``data`` with the field at ``path`` set to ``value``."""
    import copy

    out = copy.deepcopy(data)
    if not path:
        return value
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


JOB_PATHS = list(field_paths({"kind": "List", "items": JOBS["items"][:2]}))


@SOME
@given(cut=st.integers(0, 10**6), junk=BYTES_JUNK)
def test_history_kubernetes_spliced(cut, junk):
    data = (HISTORIES / "jobs.json").read_bytes()[:6000]
    cut %= len(data) + 1
    _history(data[:cut] + junk + data[cut:], "kubernetes")


@SOME
@given(path=st.sampled_from(JOB_PATHS), value=JSON_VALUES)
def test_history_kubernetes_field_values(path, value):
    doc = replaced({"kind": "List", "items": JOBS["items"][:2]}, path, value)
    _history(_json.dumps(doc) + "\n", "kubernetes")


@SOME
@given(cut=st.integers(0, 10**6), junk=BYTES_JUNK)
def test_history_journal_spliced(cut, junk):
    data = "\n".join(JOURNAL_LINES).encode() + b"\n"
    cut %= len(data) + 1
    _history(data[:cut] + junk + data[cut:], "journal", ids=["etl/every-6h", "billing/nightly"])


@SOME
@given(line=st.integers(0, len(JOURNAL_LINES) - 1),
       key=st.sampled_from(["__REALTIME_TIMESTAMP", "UNIT", "USER_UNIT", "MESSAGE_ID", "MESSAGE", "JOB_TYPE"]),
       value=JSON_VALUES)
def test_history_journal_field_values(line, key, value):
    entries = [_json.loads(x) for x in JOURNAL_LINES]
    entries[line][key] = value
    _history("\n".join(_json.dumps(e) for e in entries) + "\n", "journal", ids=["etl/every-6h"])


SYSLOG_WORDS = ["2026-03-09T00:00:01.119181+00:00", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
                "Mar  9 00:00:01", "Dec 31 23:59:59", "Jan  1 00:00:00", "Feb 30 12:00:00", "app1", "CRON[4132]:",
                "CROND[1]:", "(ops)", "CMD", "(/usr/local/bin/heartbeat)", "(", ")", " ", "\t", "\n", "9" * 30]


@SOME
@given(cut=st.integers(0, 10**6), junk=BYTES_JUNK,
       year=st.none() | st.integers(-2, 10001) | st.sampled_from([1, 9999]),
       zone=st.sampled_from(["UTC", "Asia/Tokyo", "Pacific/Kiritimati", "America/New_York"]))
def test_history_syslog_spliced(cut, junk, year, zone):
    data = (HISTORIES / "cron.log").read_bytes()[:5000]
    cut %= len(data) + 1
    _history(data[:cut] + junk + data[cut:], "syslog", crontab=HISTORY_CRONTAB, year=year, zone=zone)


@SOME
@given(lines=st.lists(tokens(SYSLOG_WORDS), min_size=1, max_size=6),
       year=st.none() | st.integers(-2, 10001), zone=st.sampled_from(["UTC", "Asia/Tokyo", "Etc/GMT+12"]))
def test_history_syslog_token_soup(lines, year, zone):
    _history("\n".join(lines) + "\n", "syslog", crontab=HISTORY_CRONTAB, year=year, zone=zone)


RUNS_CSV = (HISTORIES / "runs.csv").read_text().splitlines()
CSV_CELLS = (JUNK | st.sampled_from(["", "0", "1", "7", "-1", "9" * 5000, "2026-10-18T02:30:00",
                                    "+12026-01-01T00:00:00Z", "2026-10-18T06:30:00Z", "0000-01-01T00:00:00", "\x1b[2J",
                                    "a\x00b", '"', "\u2028"]))


@SOME
@given(cut=st.integers(0, 10**6), junk=BYTES_JUNK)
def test_history_csv_spliced(cut, junk):
    data = (HISTORIES / "runs.csv").read_bytes()
    cut %= len(data) + 1
    _history(data[:cut] + junk + data[cut:], "csv")


@SOME
@given(row=st.integers(1, len(RUNS_CSV) - 1), col=st.integers(0, 5), cell=CSV_CELLS,
       header=st.sampled_from(RUNS_CSV[0].split(",") + ["scheduled", "started", "fold", "status", "x"]))
def test_history_csv_cell_values(row, col, cell, header):
    lines = [line.split(",") for line in RUNS_CSV]
    lines[row][col] = cell
    lines[0][col % len(lines[0])] = header if row % 3 == 0 else lines[0][col % len(lines[0])]
    text = "\n".join(",".join(x) for x in lines) + "\n"
    _history(text.encode("utf-8", "surrogatepass"), "csv")


def _parquet_seed() -> bytes:
    buf = _io.BytesIO()
    read_history(HISTORIES / "runs.csv").drop("origin").head(12).with_columns(
        _pl.lit(0, _pl.Int8).alias("fold")).write_parquet(buf, row_group_size=6)
    return buf.getvalue()


PARQUET = _parquet_seed()
PAGES = parquet_craft.pages(PARQUET)


@SOME
@given(at=st.integers(0, len(PARQUET) - 1), junk=st.binary(min_size=1, max_size=16))
def test_history_parquet_bytes_overwritten(at, junk):
    data = PARQUET[:at] + junk + PARQUET[at + len(junk):]
    _history(data[:len(PARQUET)], "parquet")


@SOME
@given(rows=st.integers(-2, 10**12), page=st.integers(0, len(PAGES) - 1),
       size=st.none() | st.integers(-1, 2**31 - 1), values=st.none() | st.integers(-1, 2**31 - 1))
def test_history_parquet_declared_sizes(rows, page, size, values):
    data = PARQUET
    fields = {k: v for k, v in (("uncompressed", size), ("values", values)) if v is not None}
    if fields:
        data = parquet_craft.set_page(data, page, **fields)
    if rows % 5 == 0:
        data = parquet_craft.set_rows(data, rows)
    _history(data, "parquet")
