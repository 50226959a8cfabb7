"""The results store refuses what it must not touch: folders, non-SQLite, damaged, foreign and newer stores,
and a second tuning process; copies of a measurement keep their time."""

import sqlite3
from pathlib import Path

import pytest

from perfcast.tune.store import STORE_VERSION, Measurement, ResultsStore, StoreError


def test_a_new_store_records_its_version(tmp_path):
    ResultsStore(tmp_path / "r.sqlite").close()
    version = sqlite3.connect(tmp_path / "r.sqlite").execute("PRAGMA user_version").fetchone()[0]
    assert version == STORE_VERSION == 2


def test_a_version_1_store_is_read_as_it_is_and_upgraded_when_written(tmp_path):
    path = tmp_path / "old.sqlite"
    store = ResultsStore(path)
    run_id, _ = store.open_run("k", "exhaustive", {"device": "d"}, {"n": 1}, 1)
    store.record(run_id, Measurement("s", {"a": 1}, {"n": 1}, 1.0, 0.0, (1.0,), 1.0))
    store.close()
    db = sqlite3.connect(path)  # what version 1 wrote: no failures table
    db.execute("DROP TABLE failures")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    reader = ResultsStore(path, create=False)
    assert reader.failures(run_id) == [] and reader.distinct_measurements(run_id) == 1
    reader.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 1  # reading changed nothing
    writer = ResultsStore(path)
    writer.record_failure(run_id, {"a": 2}, {"n": 1}, "compile", "no")
    assert writer.distinct_measurements(run_id) == 2 and writer.find_failure(run_id, {"a": 2}) == ("compile", "no")
    writer.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2


@pytest.mark.parametrize("content, message", [
    (b"not a database at all", "not a readable results store"),
    (b"SQLite format 3\x00" + b"\x00" * 50, "not a readable results store|damaged"),
])
def test_non_sqlite_and_truncated_files_are_refused(tmp_path, content, message):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(content)
    with pytest.raises(StoreError, match=message):
        ResultsStore(path)
    assert path.read_bytes() == content  # untouched


def test_a_foreign_database_is_refused_and_not_written(tmp_path):
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    before = path.read_bytes()
    for create in (True, False):
        with pytest.raises(StoreError, match="not a perfcast results store .it holds users."):
            ResultsStore(path, create=create)
    assert path.read_bytes() == before


def test_a_newer_store_and_folders_and_missing_stores(tmp_path):
    path = tmp_path / "new.sqlite"
    ResultsStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="newer perfcast"):
        ResultsStore(path)
    with pytest.raises(StoreError, match="is a folder"):
        ResultsStore(tmp_path)
    with pytest.raises(StoreError, match="no results store here"):
        ResultsStore(tmp_path / "absent.sqlite", create=False)
    assert not (tmp_path / "absent.sqlite").exists()


def test_a_second_tuning_process_is_refused(tmp_path):
    first = ResultsStore(tmp_path / "r.sqlite")
    first.lock()
    second = ResultsStore(tmp_path / "r.sqlite")
    with pytest.raises(StoreError, match="another perfcast process"):
        second.lock()
    first.close()
    second.lock()  # free again
    second.close()


@pytest.mark.parametrize("spelling", ["symlink", "dotdot"])  # a hard link under another name is not caught
def test_a_second_process_through_another_spelling_of_the_store_is_refused(tmp_path, spelling):
    (tmp_path / "sub").mkdir()
    first = ResultsStore(tmp_path / "r.sqlite")
    first.lock()
    other = {"symlink": tmp_path / "link.sqlite", "dotdot": tmp_path / "sub" / ".." / "r.sqlite"}[spelling]
    if spelling == "symlink":
        other.symlink_to(tmp_path / "r.sqlite")
    second = ResultsStore(other)
    with pytest.raises(StoreError, match="another perfcast process"):
        second.lock()
    first.close()
    second.close()


def test_an_export_onto_the_store_or_a_conversion_onto_its_source_is_refused(tmp_path):
    from typer.testing import CliRunner

    from perfcast.cli import app

    store = ResultsStore(tmp_path / "r.sqlite")
    run, _ = store.open_run("k", "hierarchical", {"device": "d"}, {"n": 1}, 2)
    store.close()
    (tmp_path / "alias.csv").symlink_to(tmp_path / "r.sqlite")
    before = (tmp_path / "r.sqlite").read_bytes()
    result = CliRunner().invoke(app, ["tune", "report", str(run), "--store", str(tmp_path / "r.sqlite"),
                                      "--csv", str(tmp_path / "alias.csv")])
    assert result.exit_code == 2 and "which this command reads" in result.output
    assert (tmp_path / "r.sqlite").read_bytes() == before
    source = Path(__file__).parents[1] / "data" / "tune" / "convolution-a100-subset.json"
    copy = tmp_path / "c.json"
    copy.write_bytes(source.read_bytes())
    result = CliRunner().invoke(app, ["tune", "convert", str(copy), str(tmp_path / "." / "c.json")])
    assert result.exit_code == 2 and "which this command reads" in result.output
    assert copy.read_bytes() == source.read_bytes()


def test_filing_a_measurement_under_another_step_keeps_its_time(tmp_path):
    store = ResultsStore(tmp_path / "r.sqlite")
    run, _ = store.open_run("k", "hierarchical", {"device": "d"}, {"n": 1}, 2)
    m = Measurement("1-work-item", {"a": 1}, {"n": 1}, 1.0, 0.1, (1.0, 1.1), 5.0)
    store.record(run, m)
    store.db.execute("UPDATE measurements SET measured = '2000-01-01T00:00:00'")
    store.file_under(run, m, "4-review")
    store.file_under(run, m, "4-review")  # twice: still one copy, still the old time
    rows = store.db.execute("SELECT step, measured FROM measurements ORDER BY step").fetchall()
    assert rows == [("1-work-item", "2000-01-01T00:00:00"), ("4-review", "2000-01-01T00:00:00")]
    store.close()
