"""A `--db` naming a DuckDB database that is not an elopipe store is refused, and left as it was:
a writer used to add elopipe's tables to it, and elopipe's columns to a user's own `games` or
`players` table."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.store.connect import StorePathError, open_reader, open_writer
from tests.helpers.paths import SAMPLE_PGN


def _foreign(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE games (note VARCHAR)")
    con.execute("INSERT INTO games VALUES ('keep me')")
    con.close()
    return path


def _as_written(path: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            "SELECT table_name, string_agg(column_name, ',' ORDER BY column_index) FROM duckdb_columns() "
            "WHERE NOT internal GROUP BY table_name ORDER BY table_name"
        ).fetchall()
    finally:
        con.close()


def test_a_writer_refuses_a_foreign_database_and_changes_nothing(tmp_path: Path) -> None:
    db = _foreign(tmp_path / "theirs.duckdb")
    before = _as_written(db)
    with pytest.raises(StorePathError, match="not an elopipe store \\(its tables: games\\)"):
        with open_writer(db):
            pass
    assert _as_written(db) == before == [("games", "note")]


def test_a_reader_refuses_a_foreign_or_empty_database(tmp_path: Path) -> None:
    with pytest.raises(StorePathError, match="not an elopipe store"):
        open_reader(_foreign(tmp_path / "theirs.duckdb"))
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with pytest.raises(StorePathError, match="holds no elopipe store yet"):
        open_reader(empty)


def test_an_empty_database_becomes_a_store(tmp_path: Path) -> None:
    db = tmp_path / "new.duckdb"
    duckdb.connect(str(db)).close()
    with open_writer(db) as con:
        assert con.execute("SELECT count(*) FROM source_files").fetchone() == (0,)


@pytest.mark.parametrize("command", [["ingest", str(SAMPLE_PGN / "wjun19.pgn")], ["publish", "--system", "fide"]])
def test_the_commands_say_so_in_one_sentence(tmp_path: Path, command: list[str]) -> None:
    db = _foreign(tmp_path / "theirs.duckdb")
    res = CliRunner().invoke(app, [*command, "--db", str(db)])
    assert res.exit_code == 2, res.output
    assert "is a DuckDB database but not an elopipe store" in " ".join(res.output.split())
    assert _as_written(db) == [("games", "note")]


def test_watch_refuses_a_foreign_database_before_it_starts(tmp_path: Path) -> None:
    # it used to start Prefect and watch, and refuse only when a file landed
    db = _foreign(tmp_path / "theirs.duckdb")
    inbox = tmp_path / "inbox"
    res = CliRunner().invoke(app, ["watch", str(inbox), "--db", str(db)])
    assert res.exit_code == 2, res.output
    assert "is a DuckDB database but not an elopipe store" in " ".join(res.output.split())
    assert not inbox.exists() and _as_written(db) == [("games", "note")]
