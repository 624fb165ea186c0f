"""A typo gets the closest name, in Python as on the command line (issue 30): every choice checked by
``calsim.errors.check_choice``, every keyword of the public dataclasses, and the CLI's choice options."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

import calsim
from calsim.cli import main
from calsim.errors import (CalsimError, InputError, PolicyError, UnknownKeywordError, UnknownPolicyKeywordError,
                           check_choice, closest)

T0, T1 = "2026-01-01T00:00Z", "2026-01-02T00:00Z"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# -- values ----------------------------------------------------------------------------------------------------------


def test_a_mistyped_choice_names_the_closest_after_the_allowed_ones():
    with pytest.raises(PolicyError) as err:
        calsim.Policy(catchup="lastest")
    assert str(err.value) == ("catchup: unknown policy 'lastest' (allowed: 'all', 'latest', 'earliest', 'skip', "
                              "'bounded' or 'earliest_and_latest') (did you mean 'latest'?)")


@pytest.mark.parametrize(("make", "hint"), [
    (lambda: calsim.Policy(overlap="buffer-one"), "(did you mean 'buffer_one'?)"),
    (lambda: calsim.Policy(on_budget="Wait"), "(did you mean 'wait'?)"),
    (lambda: calsim.Schedule("a", "UTC", "2026-01-01T00:00", "0 9 * * *", gap="shfit"), "(did you mean 'shift'?)"),
    (lambda: calsim.Budget("t", 10, "dya"), "(did you mean 'day'?)"),
    (lambda: calsim.Outage(T0, T1, kind="sleep"), ""),
    (lambda: calsim.Failures(0.1, classes={"transeint": 1.0}), "(did you mean 'transient'?)"),
    (lambda: calsim.presets.quartz(misfire_instruction="SMART"), "(did you mean 'SMART_POLICY'?)"),
    (lambda: calsim.from_kubernetes("a: 1\n", tz_in_schedule="legasy"), "(did you mean 'legacy'?)"),
    # choices checked by their own messages (a value list of their own), suggesting all the same
    (lambda: calsim.simulate(calsim.Scenario("x", [], T0, T1), engine="dsak"), "(did you mean 'dask'?)"),
    (lambda: calsim.read_history("schedule_id,started_utc\n", kind="airflw"), "(did you mean 'airflow'?)"),
    (lambda: calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY", exclude="holidays:US-CAL"),
     "(did you mean 'CA'?)"),
])
def test_every_checked_choice_suggests_when_one_is_close(make, hint):
    with pytest.raises(CalsimError) as err:
        make()
    assert "(allowed: " in str(err.value)
    if hint:
        assert str(err.value).endswith(hint)
    else:
        assert "did you mean" not in str(err.value)


def test_closest_is_case_and_dash_blind_and_says_nothing_when_nothing_is_close():
    assert closest("LATEST", ("all", "latest")) == "latest"
    assert closest("earliest-and-latest", ("earliest", "earliest_and_latest")) == "earliest_and_latest"
    assert closest("xyz", ("all", "latest")) is None
    assert closest(None, ("all",)) is None and closest("a" * 10_000, ("a",)) is None
    with pytest.raises(PolicyError, match=r"unknown policy 3 \(allowed: 'a' or 'b'\)$"):
        check_choice("x", 3, ("a", "b"), noun="policy")


# -- keywords --------------------------------------------------------------------------------------------------------


def test_an_unknown_keyword_of_policy_names_it_the_closest_and_every_allowed_one():
    with pytest.raises(UnknownPolicyKeywordError) as err:
        calsim.Policy(catch_up="latest")
    exc = err.value
    allowed = [f.name for f in dataclasses.fields(calsim.Policy) if f.init]
    assert str(exc) == (f"Policy: unexpected keyword argument 'catch_up' (did you mean 'catchup'?; "
                        f"allowed: {', '.join(allowed)})")
    assert (exc.keyword, exc.suggestion, list(exc.allowed)) == ("catch_up", "catchup", allowed)
    # A PolicyError (a CalsimError: the CLI's one line), and still the TypeError Python raised before.
    assert isinstance(exc, PolicyError) and isinstance(exc, InputError) and isinstance(exc, TypeError)
    assert isinstance(exc, UnknownKeywordError)


@pytest.mark.parametrize(("make", "owner", "bad", "near", "policy"), [
    (lambda: calsim.Scenario("x", [], T0, T1, outage=[]), "Scenario", "outage", "outages", False),
    (lambda: calsim.Outage(T0, T1, knd="down"), "Outage", "knd", "kind", False),
    (lambda: calsim.Budget("t", 10, perod="day"), "Budget", "perod", "period", False),
    (lambda: calsim.Pause(T0, schedule="a"), "Pause", "schedule", "schedule_id", False),
    (lambda: calsim.TzUpgrade(T0, "2026f", mod="keep"), "TzUpgrade", "mod", "mode", False),
    (lambda: calsim.Failures(0.1, max_attempt=3), "Failures", "max_attempt", "max_attempts", True),
    (lambda: calsim.LogNormal("1min", "5min", sigma=1.0), "LogNormal", "sigma", None, True),
    (lambda: dataclasses.replace(calsim.Policy(), overlp="skip"), "Policy", "overlp", "overlap", True),
    (lambda: calsim.with_policy([], catch_up="latest"), "with_policy", "catch_up", "catchup", True),
    (lambda: calsim.with_policy([], max_lateness_us=5), "with_policy", "max_lateness_us", "max_lateness", True),
])
def test_every_public_dataclass_refuses_an_unknown_keyword_with_a_suggestion(make, owner, bad, near, policy):
    with pytest.raises(UnknownKeywordError) as err:
        make()
    hint = f"did you mean {near!r}?; " if near else ""
    assert str(err.value).startswith(f"{owner}: unexpected keyword argument {bad!r} ({hint}allowed: ")
    assert isinstance(err.value, PolicyError) is policy and isinstance(err.value, TypeError)


def test_the_keyword_check_keeps_signatures_valid_calls_replace_and_pickling():
    assert list(inspect.signature(calsim.Policy).parameters) == [
        f.name for f in dataclasses.fields(calsim.Policy) if f.init]
    assert list(inspect.signature(calsim.Outage).parameters) == ["start", "end", "kind"]
    p = dataclasses.replace(calsim.Policy(catchup="latest"), overlap="skip")
    assert (p.catchup, p.overlap) == ("latest", "skip")
    assert pickle.loads(pickle.dumps(p)) == p
    sc = calsim.Scenario("x", [], T0, T1, outages=[calsim.Outage(T0, "2026-01-01T01:00Z")])
    assert pickle.loads(pickle.dumps(sc)) == sc
    with pytest.raises(TypeError, match="positional"):  # not a keyword: Python's own error, untouched
        calsim.Outage(T0, T1, "down")


def test_a_scenario_file_still_reads_an_unknown_key_as_before(tmp_path):
    p = tmp_path / "sc.toml"
    p.write_text('[scenario]\nname = "x"\nstart = "2026-01-01T00:00Z"\nend = "2026-01-02T00:00Z"\n\n'
                 '[[schedule]]\nid = "a"\nzone = "UTC"\nstart = "2026-01-01T09:00"\ncron = "0 9 * * *"\n\n'
                 '[[outage]]\nstart = "2026-01-01T01:00Z"\nedn = "2026-01-01T02:00Z"\n')
    with pytest.raises(calsim.ScheduleError, match=r"^sc.toml:12 outage #1: unknown key 'edn'"):
        calsim.load_scenario(p)


# -- the command line ------------------------------------------------------------------------------------------------


def test_cli_catchup_typo_is_one_line_with_the_suggestion_and_exit_2(capsys):
    code, out, err = cli(capsys, "simulate", "example:3", "--catchup", "all,lastest")
    assert (code, out) == (2, "")
    assert err == ("calsim simulate: error: argument --catchup: unknown mode 'lastest' (allowed: 'all', 'latest', "
                   "'earliest', 'skip', 'bounded' or 'earliest_and_latest') (did you mean 'latest'?) "
                   "(see `calsim simulate --help`)\n")


@pytest.mark.parametrize(("argv", "hint"), [
    (("preview", "0 3 * * *", "--format", "jsn"), "(did you mean 'json'?)"),
    (("simulat", "x"), "(did you mean 'simulate'?)"),
    (("resolve", "UTC", "2026-01-01T00:00", "--gap", "Shift"), "(did you mean 'shift'?)"),
    (("reconcile", "a", "b", "--db", "x", "--kind", "sylog"), "(did you mean 'syslog'?)"),
    (("preview", "0 3 * * *", "--formt", "csv"), "(did you mean --format?)"),
])
def test_cli_choice_options_and_subcommands_suggest_on_one_line(capsys, argv, hint):
    code, _, err = cli(capsys, *argv)
    assert code == 2 and len(err.splitlines()) == 1 and hint in err, err


def test_cli_unknown_preview_id_suggests_the_closest(capsys, tmp_path):
    p = tmp_path / "fleet.toml"
    p.write_text('[[schedule]]\nid = "billing/nightly"\nzone = "UTC"\nstart = "2026-01-01T09:00"\n'
                 'cron = "0 9 * * *"\n')
    code, _, err = cli(capsys, "preview", p, "--id", "billing/nigthly")
    assert code == 2 and len(err.splitlines()) == 1 and err.rstrip().endswith("(did you mean 'billing/nightly'?)")


@pytest.mark.parametrize("make,typo,closest", [
    (lambda **kw: calsim.Schedule("a", "UTC", "2026-01-01T00:00", "0 * * * *", **kw), "gapp", "gap"),
    (lambda **kw: calsim.Every("1h", **kw), "anchr", "anchor"),
    (lambda **kw: calsim.Workers(2, **kw), "leas", "lease"),
    (lambda **kw: calsim.RateLimit("a", **kw), "burts", "burst"),
    (lambda **kw: calsim.ByLocalHour((1, 2, 3), inside="next_valid", **kw), "outsid", "outside"),
])
def test_an_unknown_keyword_of_any_public_dataclass_names_the_closest(make, typo, closest):
    with pytest.raises(UnknownKeywordError, match=rf"unexpected keyword argument '{typo}' \(did you mean "
                                                  rf"'{closest}'\?"):
        make(**{typo: 1})
