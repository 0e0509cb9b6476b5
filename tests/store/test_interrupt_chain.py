"""A Ctrl-C met inside a DuckDB statement stays a Ctrl-C when a later statement of the aborted
transaction fails too (CI once saw an ingest load a whole batch again file by file after one)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from elopipe.ingest import segments
from elopipe.ingest.driver import ingest_paths
from elopipe.store.connect import is_interrupt
from elopipe.store.frames import registered
from tests.helpers.paths import REPO
from tests.helpers.store_rows import db_rows

PGN = REPO / "sample_pgn"


def _aborted(con: duckdb.DuckDBPyConnection) -> None:
    """Abort the open transaction as an interrupted statement does."""
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM no_such_table")


def test_an_interrupt_behind_a_later_error_is_still_an_interrupt() -> None:
    con = duckdb.connect()
    con.execute("BEGIN TRANSACTION")
    _aborted(con)
    try:
        try:
            raise RuntimeError("Query interrupted")  # what DuckDB raises for a Ctrl-C
        finally:
            con.execute("SELECT 1")  # cleanup in the aborted transaction
    except duckdb.Error as exc:
        assert "aborted" in str(exc) and is_interrupt(exc)
    assert not is_interrupt(duckdb.TransactionException("Current transaction is aborted (please ROLLBACK)"))


def test_registered_keeps_the_error_of_its_block_when_unregistering_fails_too() -> None:
    con = duckdb.connect()
    con.execute("BEGIN TRANSACTION")
    with pytest.raises(RuntimeError, match="Query interrupted"):
        with registered(con, "_rows", pl.DataFrame({"a": [1]})):
            _aborted(con)
            raise RuntimeError("Query interrupted")
    con.execute("ROLLBACK")
    with registered(con, "_rows", pl.DataFrame({"a": [2]})):  # the name is free again
        assert con.execute("SELECT a FROM _rows").fetchall() == [(2,)]
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT a FROM _rows")


def test_a_ctrl_c_hidden_by_a_failed_cleanup_stops_the_batch_instead_of_loading_it_file_by_file(
    tmp_path: Path, monkeypatch
) -> None:
    calls = []

    def interrupted(con, df):
        calls.append(df.height)
        _aborted(con)
        try:
            raise KeyboardInterrupt
        finally:
            con.execute("SELECT 1")  # fails: the transaction is aborted

    monkeypatch.setattr(segments, "_insert_games", interrupted)
    db = tmp_path / "s.duckdb"
    with pytest.raises(duckdb.Error) as caught:
        ingest_paths([PGN / "wchcand22.pgn", PGN / "wjun19.pgn"], db)
    assert is_interrupt(caught.value)
    assert len(calls) == 1  # the batch's one insert, then no file-by-file retry
    assert db_rows(db, "SELECT count(*) FROM source_files") == [(0,)]


def test_an_exit_raised_from_none_ends_the_chain() -> None:
    """`elopipe sql --timeout`: the timeout's DuckDB interrupt becomes a query error, then exit 1
    (`raise typer.Exit(1) from None`); that exit is no Ctrl-C."""
    try:
        try:
            try:
                raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
            except duckdb.Error as exc:
                raise ValueError("the query ran longer than the time limit") from exc
        except ValueError:
            raise SystemExit(1) from None
    except SystemExit as done:
        assert not is_interrupt(done)
