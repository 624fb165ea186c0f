"""Fuzzing the schedule readers added since the first fuzzing round, and the values a user types.

Each reader gets its example file from ``data/examples`` cut and spliced with
junk, and — for the structured formats — the example with one field's value
replaced by an arbitrary JSON/YAML value (nested lists and maps, huge or
negative numbers, odd strings); report parameters get token soups of YAML.
Only a one-line ``CalsimError`` may escape (``messages.assert_clear``). A few
seconds per reader by default; ``CALSIM_FUZZ_EXAMPLES=N`` runs N examples per
test. The history readers and the store's attach are fuzzed beside their own
tests (tests/importers/test_history.py, tests/store/test_hostile_store.py).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.report import parse_parameter
from test_fuzz_parsers import JUNK, field_paths, only_calsim_errors, replaced, splice
import pytest

pytestmark = pytest.mark.fuzz

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "examples"
FUZZ = int(os.environ.get("CALSIM_FUZZ_EXAMPLES", "0") or 0)
SOME = settings(max_examples=FUZZ or 100, deadline=None, suppress_health_check=list(HealthCheck), derandomize=not FUZZ)
WORK = Path(tempfile.mkdtemp(prefix="calsim-fuzz-readers-"))
SCALARS = (st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=True)
           | st.text(max_size=30) | st.sampled_from(["0 3 * * *", "rate(5 minutes)", "cron(0 12 * * ? *)", "P1D",
                                                     "2026-03-08T02:30:00", "Europe/Dublin", "Mars/Olympus",
                                                     "*-*-* 1..3:30"]))
VALUES = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids,
                                                                                          max_size=4), max_leaves=12)


def _file(name: str, text: str) -> Path:
    path = WORK / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


SPLICED = {  # reader, example file
    "github": (calsim.from_github_actions, "nightly.workflow.yml"),
    "eventbridge_json": (calsim.from_eventbridge, "schedule.eventbridge.json"),
    "cloudformation": (calsim.from_eventbridge, "schedules.cloudformation.yaml"),
    "terraform": (calsim.from_eventbridge, "schedules.tf"),
    "temporal": (calsim.from_temporal, "schedule.temporal.json"),
    "systemd": (calsim.from_systemd, "backup.timer"),
    "quartz_jobs": (calsim.load, "quartz-jobs.toml"),
}


def _spliced_test(name):
    reader, example = SPLICED[name]
    text = (EXAMPLES / example).read_text()

    @SOME
    @given(cut=st.integers(0, 10**6), junk=JUNK)
    def test(cut, junk):
        spliced = splice(text, cut, junk)
        if reader is calsim.load:
            only_calsim_errors(reader, _file(example, spliced))
        else:
            only_calsim_errors(reader, spliced)

    test.__name__ = f"test_a_spliced_{name}_file_gives_only_calsim_errors"
    return test


for _name in SPLICED:
    globals()[f"test_a_spliced_{_name}_file_gives_only_calsim_errors"] = _spliced_test(_name)


STRUCTURED = {  # reader, example, how to read and write it
    "github": (calsim.from_github_actions, "nightly.workflow.yml", yaml.safe_load, yaml.safe_dump),
    "eventbridge_json": (calsim.from_eventbridge, "schedule.eventbridge.json", json.loads, json.dumps),
    "temporal": (calsim.from_temporal, "schedule.temporal.json", json.loads, json.dumps),
    "cloudformation": (calsim.from_eventbridge, "schedules.cloudformation.yaml", None, yaml.safe_dump),
}


def _structured_test(name):
    reader, example, read, write = STRUCTURED[name]
    text = (EXAMPLES / example).read_text()
    if read is None:  # CloudFormation's !Ref and !Sub tags: read them as plain scalars
        class _Tags(yaml.SafeLoader):
            pass

        _Tags.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node)
                                    if isinstance(node, yaml.ScalarNode) else None)
        data = yaml.load(text, Loader=_Tags)  # noqa: S506 - SafeLoader subclass
    else:
        data = read(text)
    paths = list(field_paths(data, items=None))

    @SOME
    @given(where=st.sampled_from(paths), value=VALUES)
    def test(where, value):
        try:
            doc = write(replaced(data, where, value))
        except (ValueError, TypeError, OverflowError, yaml.YAMLError):  # not writable as JSON/YAML: nothing to test
            return
        only_calsim_errors(reader, doc)

    test.__name__ = f"test_any_value_in_any_field_of_a_{name}_document_gives_only_calsim_errors"
    return test


for _name in STRUCTURED:
    globals()[f"test_any_value_in_any_field_of_a_{_name}_document_gives_only_calsim_errors"] = _structured_test(_name)


YAML_WORDS = ["[", "]", "{", "}", ",", ":", "&a", "*a", "!!python/object", "!!binary", "- ", "'", '"', "\n",
              "2026a", "example:300", "1e400", "9" * 50, "~", "null", "yes", "<<: *a", "? ", "|", ">"]


@SOME
@given(parts=st.lists(st.sampled_from(YAML_WORDS) | st.text(max_size=5), max_size=20))
def test_any_report_parameter_value_gives_only_calsim_errors(parts):
    only_calsim_errors(parse_parameter, "old=" + "".join(parts))
