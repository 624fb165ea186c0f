"""Fuzzing every parser a user's text reaches: only a one-line ``CalsimError`` ever escapes.

Bounded to a few seconds per parser here; ``CALSIM_FUZZ_EXAMPLES=N`` runs N
examples per test (e.g. 20000 for a long soak). Inputs are real files of
``data/examples`` cut and spliced with junk, token soups of each grammar, and
random values where a field takes one. Other parsers are fuzzed beside their
own tests (importers: test_import_*.py and test_history.py; TZif:
test_hostile_tzdata.py; Quartz: rules/test_quartz*.py).
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.durations import duration_us
from calsim.errors import CalsimError
from calsim.fleetfile import load, load_scenario
from calsim.times import instant_us, local_us
from messages import assert_clear

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
