"""Schedules tables (calsim.write_schedules, calsim.load): a fleet as Parquet rows that read back as the fleet."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import calsim
from calsim import examples
from calsim.errors import InputError, ScheduleError
from calsim.importers import detect_format, import_any
from calsim.importers.schedule_table import COLUMNS, meaning, read, row_groups


def meanings(schedules) -> list[tuple]:
    """What each schedule means (a calendar given as an object reads back as its name: the same days)."""
    return [meaning(s) for s in schedules]


def varied_fleet(n: int = 240) -> list[calsim.Schedule]:
    """examples.fleet (every rule kind: RRULE, cron, Every, Window, a business calendar) with policies of
    every shape a fleet file writes: a LogNormal duration, accounts, none at all."""
    out = []
    for i, s in enumerate(examples.fleet(n, seed=9)):
        if i % 4 == 0:
            out.append(s)  # no policy
        elif i % 4 == 1:
            out.append(dataclasses.replace(s, policy=calsim.Policy(
                catchup="latest", overlap="skip", duration=calsim.LogNormal("5min", "20min"), cost=2.5,
                account=f"tenant-{i % 3}")))
        else:
            out.append(dataclasses.replace(s, policy=calsim.Policy(catchup="all", max_lateness="6h", overlap="skip",
                                                                   max_active=2, jitter="30s")))
    return out


def test_a_fleet_written_as_a_table_loads_back_as_the_same_schedules(tmp_path):
    fleet = varied_fleet()
    path = tmp_path / "fleet.parquet"
    assert calsim.write_schedules(fleet, path) == len(fleet)
    assert meanings(calsim.load(path)) == meanings(fleet)
    plain = [s for s in fleet if not s.exclude]  # (no calendar object: equal as given, too)
    calsim.write_schedules(plain, path)
    assert calsim.load(path) == plain
    assert detect_format(path) == "schedules"


def test_row_groups_read_alone_are_the_matching_slices_of_the_fleet(tmp_path):
    fleet = varied_fleet(100)
    path = tmp_path / "fleet.parquet"
    calsim.write_schedules(iter(fleet), path, row_group_size=30)  # (a generator: written a group at a time)
    assert row_groups(path) == [30, 30, 30, 10]
    assert meanings(read(path, groups=[2])) == meanings(fleet[60:90])
    assert meanings(read(path, groups=[0, 3])) == meanings(fleet[:30] + fleet[90:])
    assert [s.source.item for s in read(path, groups=[3])] == list(range(91, 101))  # rows numbered in the file


def test_a_share_of_the_example_fleet_is_the_same_schedules_as_that_slice_of_the_whole():
    whole = examples.fleet(2_000, seed=4)
    for lo, hi in ((0, 1), (777, 1_234), (1_999, 2_000)):
        assert examples.fleet(2_000, seed=4, rows=range(lo, hi)) == whole[lo:hi]
    with pytest.raises(InputError, match=r"fleet: rows range\(5, 30\) is not a range within 0\.\.10"):
        examples.fleet(10, rows=range(5, 30))


def test_a_schedule_the_table_cannot_give_back_is_refused_by_name_and_nothing_is_written(tmp_path):
    odd = calsim.Schedule("ops/odd", "UTC", "2026-01-01T00:00", "FREQ=DAILY",
                          policy=calsim.Policy(duration=dt.timedelta(minutes=5)))
    path = tmp_path / "fleet.parquet"
    with pytest.raises(InputError, match=r"write_schedules: schedule 'ops/odd': policy: .* has no table form"):
        calsim.write_schedules([*examples.fleet(5), odd], path)
    assert not path.exists()


def test_a_datetime_start_is_written_as_its_text_and_means_the_same(tmp_path):
    s = calsim.Schedule("a", "Europe/Berlin", dt.datetime(2026, 3, 29, 2, 30), "FREQ=DAILY", gap="shift")
    path = tmp_path / "t.parquet"
    calsim.write_schedules([s], path)
    back = calsim.load(path)[0]
    assert back.start == "2026-03-29T02:30:00" and back.start_wall == s.start_wall


def raw_table(path, rows: list[dict], **types) -> None:
    schema = pa.schema([(c, types.get(c, pa.int64() if c == "revision" else pa.string())) for c in rows[0]])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def test_a_bad_row_is_refused_by_its_row_and_the_other_rows_still_load(tmp_path):
    path = tmp_path / "t.parquet"
    good = {"id": "a", "zone": "UTC", "start": "2026-01-01T00:00", "rule": "FREQ=DAILY"}
    raw_table(path, [good, {**good, "id": "b", "zone": "Mars/Olympus"}, {**good, "id": "c"}])
    with pytest.warns(UserWarning, match=r"refused: t\.parquet row 2 \('b'\): .*Mars/Olympus"):
        assert [s.id for s in calsim.load(path)] == ["a", "c"]  # (as a fleet file's bad table is refused)
    assert [r.source.item for r in import_any(path).refused] == [2]
    with pytest.raises(calsim.CalsimError, match=r"t\.parquet row 2 \('b'\): .*Mars/Olympus"):
        read(path, strict=True)  # (what a Dask worker reads: a bad row stops the run)



def test_a_policy_that_is_not_json_is_refused_naming_the_row_and_column(tmp_path):
    path = tmp_path / "t.parquet"
    raw_table(path, [{"id": "a", "zone": "UTC", "start": "2026-01-01T00:00", "rule": "FREQ=DAILY",
                      "policy": "{catchup: latest"}])
    with pytest.raises(ScheduleError, match=r"t\.parquet row 1: policy: '\{catchup: latest' is not JSON"):
        calsim.load(path)


def test_a_column_of_the_wrong_type_is_refused_before_any_row_is_read(tmp_path):
    path = tmp_path / "t.parquet"
    raw_table(path, [{"id": "a", "zone": "UTC", "revision": "two"}], revision=pa.string())
    with pytest.raises(InputError, match=r"schedules: t\.parquet: column 'revision' is string; allowed: integers"):
        calsim.load(path)


def test_a_table_without_an_id_column_says_which_columns_a_schedules_table_has(tmp_path):
    path = tmp_path / "t.parquet"
    raw_table(path, [{"zone": "UTC"}])
    with pytest.raises(InputError, match=r"no column 'id' \(a schedules table has columns id, zone, start"):
        calsim.load(path)


def test_a_file_that_only_starts_like_parquet_is_refused_as_not_parquet(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 64)
    with pytest.raises(InputError, match=r"schedules: t\.parquet: not a Parquet file"):
        calsim.load(path)


def test_the_columns_are_the_fleet_files_keys():
    from calsim.importers.fleet import _KNOWN

    assert set(COLUMNS) == _KNOWN - {"rrule", "cron"}  # (rule holds either text, as a fleet file's rule = does)


def test_policy_fields_as_columns_of_their_own_are_the_rows_policy(tmp_path):
    path = tmp_path / "export.parquet"
    raw_table(path, [{"id": "a", "zone": "UTC", "start": "2026-01-01T00:00", "rule": "FREQ=DAILY", "account": "t1",
                      "cost": 2.5, "max_active": 2, "overlap": "skip", "policy": None},
                     {"id": "b", "zone": "UTC", "start": "2026-01-01T00:00", "rule": "0 * * * *", "account": None,
                      "cost": 1.0, "max_active": None, "overlap": None, "policy": '{"catchup": "latest"}'}],
              cost=pa.float64(), max_active=pa.int64())
    a, b = calsim.load(path)
    assert a.policy == calsim.Policy(account="t1", cost=2.5, max_active=2, overlap="skip")
    assert b.policy == calsim.Policy(catchup="latest", cost=1.0)  # (a JSON policy and columns together)


def test_a_policy_field_given_as_a_column_and_in_the_policy_is_refused(tmp_path):
    path = tmp_path / "t.parquet"
    raw_table(path, [{"id": "a", "zone": "UTC", "start": "2026-01-01T00:00", "rule": "FREQ=DAILY",
                      "catchup": "all", "policy": '{"catchup": "latest"}'}])
    with pytest.raises(ScheduleError, match=r"t\.parquet row 1: policy field 'catchup' is given twice"):
        read(path, strict=True)
