"""`elopipe export --parquet DIR` writes only into a folder of its own and never removes what it
did not write (issue 26, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.export import EXPORT_MARKER, ExportFolderError, export_parquet
from tests.helpers.publish_store import build_store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


def _export(db: Path, out: Path) -> list[Path]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return export_parquet(con, out)
    finally:
        con.close()


def test_a_folder_of_the_users_is_refused_and_left_as_it_was(db: Path, tmp_path: Path) -> None:
    # `export --parquet ~` must not delete ~/games: the folder holds the user's files and no marker
    out = tmp_path / "data"
    (out / "games").mkdir(parents=True)
    (out / "games" / "keep.txt").write_text("mine\n")
    (out / "players.parquet").write_text("not ours\n")
    res = CliRunner().invoke(app, ["export", "--parquet", str(out), "--db", str(db)])
    assert res.exit_code == 2, res.output  # a usage error, as a --parquet that is a file
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(out) in " ".join(res.output.split()), res.output
    assert "not an elopipe export" in " ".join(res.output.split())
    assert (out / "games" / "keep.txt").read_text() == "mine\n"
    assert (out / "players.parquet").read_text() == "not ours\n"
    assert sorted(p.name for p in out.iterdir()) == ["games", "players.parquet"]


def test_a_new_or_empty_folder_is_marked_and_a_marked_one_is_exported_again(db: Path, tmp_path: Path) -> None:
    new = tmp_path / "new" / "pq"
    _export(db, new)
    assert (new / EXPORT_MARKER).is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    _export(db, empty)
    assert (empty / EXPORT_MARKER).is_file()
    # a second export into a marked folder replaces its own output and keeps a file of the user's
    (new / "notes.txt").write_text("mine\n")
    paths = _export(db, new)
    assert new / "players.parquet" in paths
    assert pl.read_parquet(new / "players.parquet").height == 7
    assert pl.read_parquet(new / "rating_lists" / "**" / "*.parquet", hive_partitioning=True).height == 11
    assert (new / "notes.txt").read_text() == "mine\n"


def test_in_a_marked_folder_only_what_elopipe_wrote_is_removed(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "pq"
    _export(db, out)
    # a table's output that holds a file of the user's is not elopipe's alone: refused, kept
    (out / "rating_lists" / "mine.txt").write_text("mine\n")
    with pytest.raises(ExportFolderError, match="rating_lists"):
        _export(db, out)
    assert (out / "rating_lists" / "mine.txt").read_text() == "mine\n"
    (out / "rating_lists" / "mine.txt").unlink()
    # a table's name the marker does not list (made by the user after the export) is refused too
    (out / "players.parquet").unlink()
    (out / "players.parquet").mkdir()
    (out / "players.parquet" / "keep.txt").write_text("mine\n")
    with pytest.raises(ExportFolderError, match=r"players\.parquet"):
        _export(db, out)
    assert (out / "players.parquet" / "keep.txt").read_text() == "mine\n"


@pytest.mark.parametrize(
    "mine",
    [
        "mine.parquet",
        "system=fide/mine.parquet",
        "system=fide/list_date=2023-01-01/mine.parquet",
        "notes/data_0.parquet",
    ],
)
def test_a_parquet_file_of_the_users_in_a_partitioned_output_is_kept(db: Path, tmp_path: Path, mine: str) -> None:
    # COPY writes only system=<s>/list_date=<d>/data_<n>.parquet: a .parquet file anywhere else in
    # the folder (or named otherwise) is the user's, and the folder with it
    out = tmp_path / "pq"
    _export(db, out)
    path = out / "rating_lists" / mine
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("mine\n")
    with pytest.raises(ExportFolderError, match="rating_lists"):
        _export(db, out)
    assert path.read_text() == "mine\n"


def test_a_marker_that_names_another_path_removes_nothing_outside(db: Path, tmp_path: Path) -> None:
    # the marker is a file anyone can edit: only a table's own output names are ever removed
    out = tmp_path / "pq"
    _export(db, out)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine\n")
    marker = json.loads((out / EXPORT_MARKER).read_text())
    marker["written"] += ["../victim", str(victim), "/etc"]
    (out / EXPORT_MARKER).write_text(json.dumps(marker))
    _export(db, out)
    assert pl.read_parquet(out / "players.parquet").height == 7
    assert (victim / "keep.txt").read_text() == "mine\n"


@pytest.mark.parametrize("name", ["pq?", "pq*", "pq[1]", "pq{1,2}", "pq'1"])
def test_a_folder_name_is_a_name_not_a_pattern(db: Path, tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    _export(db, out)
    assert pl.read_parquet(out / "players.parquet", glob=False).height == 7
    parts = [p for p in (out / "rating_lists").rglob("*.parquet")]
    assert sum(pl.read_parquet(p, glob=False).height for p in parts) == 11
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "s.duckdb"])
