"""A list `rate` removed (no game is rated on it any more: a correction moved its event, or
`--unknown-tc rapid` moved it to another system) leaves the output folder with the next publish:
its files in every format, the report of the event it rated, and the index's links, and the
publish says so in one line. A file the user wrote or edited stays; a folder another store
publishes into loses nothing, the line naming what should go (issue #27, hx3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.manifest import recording
from elopipe.publish.plan import publish_changed, published_dates
from elopipe.store.connect import open_writer
from tests.helpers.publish_store import FEB, JAN, build_store, remove_feb

FORMATS = ("csv", "parquet", "txt", "html")


def _publish(db: Path, out: Path, *more: str) -> str:
    args = ["publish", "--system", "fide", "--db", str(db), "--out", str(out), "--all", *more]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


def _feb_files(out: Path) -> list[Path]:
    return [p for p in (out / "lists" / f"fide_{FEB}.{fmt}" for fmt in FORMATS) if p.exists()]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


def test_a_full_publish_removes_a_list_the_store_no_longer_holds(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(db, out, "--full")
    assert len(_feb_files(out)) == 4
    report = sorted((out / "reports" / "fide").glob("1_*"))
    assert report
    mine = out / "lists" / "my_notes.csv"
    mine.write_text("mine\n", encoding="utf-8")
    remove_feb(db)
    said = _publish(db, out, "--full")
    assert _feb_files(out) == []
    assert [p for p in report if p.exists()] == []  # the event no list rates any more
    assert (out / "lists" / f"fide_{JAN}.csv").exists()
    assert mine.read_text(encoding="utf-8") == "mine\n"
    assert f"fide: 1 list removed from {out} ({FEB}): no game is rated on it any more" in " ".join(said.split())
    index = (out / "index-fide.html").read_text(encoding="utf-8")
    assert f"fide_{FEB}" not in index and report[0].name not in index
    assert FEB not in published_dates(out, db, "fide")
    assert "removed" not in _publish(db, out, "--full")  # said once


def test_a_plain_csv_publish_removes_it_too_and_keeps_a_file_edited_since(db: Path, tmp_path: Path) -> None:
    """A `--format csv` list is recorded only among the manifest's files, not as a page."""
    out = tmp_path / "out"
    _publish(db, out, "--format", "csv")
    _publish(db, out, "--format", "csv,html")
    edited = out / "lists" / f"fide_{FEB}.csv"
    edited.write_text(edited.read_text(encoding="utf-8") + "# checked by the officer\n", encoding="utf-8")
    remove_feb(db)
    said = " ".join(_publish(db, out, "--format", "csv").split())
    assert not (out / "lists" / f"fide_{FEB}.html").exists()
    assert edited.read_text(encoding="utf-8").endswith("# checked by the officer\n")
    assert f"1 list removed from {out} ({FEB})" in said
    assert f"1 file kept, not as elopipe wrote it: lists/fide_{FEB}.csv" in said


def test_a_folder_another_store_publishes_into_loses_nothing(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(db, out, "--full")
    other = build_store(tmp_path / "other.duckdb")
    _publish(other, out, "--full")
    remove_feb(db)
    said = " ".join(_publish(db, out, "--full").split())
    assert len(_feb_files(out)) == 4
    assert f"1 list in {out} no longer in this store ({FEB}): not removed" in said


def test_the_run_publish_removes_it_when_no_list_changed(db: Path, tmp_path: Path) -> None:
    """The publish stage of `run` and `watch` (`publish_changed`), whose rating changed no list
    left in the store: the folder is looked at because its ledger names a list the store lost."""
    out = tmp_path / "out"
    with open_writer(db) as con:
        publish_changed(con, db, "fide", out, [JAN, FEB])
    assert len(_feb_files(out)) == 4
    remove_feb(db)
    with open_writer(db) as con:
        done = publish_changed(con, db, "fide", out, [])
    assert done.unchanged and done.gone is not None and done.gone.dates == [FEB]
    assert _feb_files(out) == []
    assert f"fide_{FEB}" not in (out / "index-fide.html").read_text(encoding="utf-8")
    with recording(out) as manifest:
        assert not [rel for rel in manifest.entries if str(FEB) in rel]
    with open_writer(db) as con:
        assert publish_changed(con, db, "fide", out, []).gone is None


def test_lists_held_back_by_max_lists_are_not_removed_lists(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with open_writer(db) as con:
        publish_changed(con, db, "fide", out, [FEB], max_lists=1)
        done = publish_changed(con, db, "fide", out, [JAN, FEB], max_lists=1)
    assert done.gone is None
    assert len(_feb_files(out)) == 4
