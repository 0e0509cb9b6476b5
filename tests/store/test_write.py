"""The store's write API (`elopipe.store.write`): columns by name, computed columns, constants,
replace by key, and the errors it raises."""

from __future__ import annotations

import datetime as dt

import duckdb
import polars as pl
import pytest

from elopipe.runtime.errors import ElopipeError
from elopipe.store import write
from tests.helpers.schema_store import schema_connect


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    c = schema_connect()
    return c


def _skips(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute(
        "SELECT system, tournament_id, reason, n_games, run_id FROM rating_skips ORDER BY system, tournament_id"
    ).fetchall()


def test_insert_by_name_any_order_with_constants(con: duckdb.DuckDBPyConnection) -> None:
    rows = pl.DataFrame({"n_games": [3, 0], "reason": ["no rated game", "team event"], "tournament_id": [2, 1]})
    write.insert(con, "rating_skips", rows, constants={"system": "fide", "run_id": 7})
    assert _skips(con) == [("fide", 1, "team event", 0, 7), ("fide", 2, "no rated game", 3, 7)]


def test_insert_computed_columns(con: duckdb.DuckDBPyConnection) -> None:
    rows = pl.DataFrame({"file_id": [4], "severity": ["error"], "code": ["x"], "message": ["bad"]})
    write.insert(con, "ingest_errors", rows, exprs={"error_id": "nextval('error_id_seq')"})
    write.insert(con, "ingest_errors", rows, exprs={"error_id": "nextval('error_id_seq')"})
    got = con.execute("SELECT error_id, file_id, message FROM ingest_errors ORDER BY 1").fetchall()
    assert [r[1:] for r in got] == [(4, "bad"), (4, "bad")]
    assert got[0][0] < got[1][0]


def test_insert_relation_and_empty_frame(con: duckdb.DuckDBPyConnection) -> None:
    write.insert(con, "rating_skips", pl.DataFrame({"tournament_id": []}, schema={"tournament_id": pl.Int32}))
    assert _skips(con) == []
    rel = con.sql("SELECT 'elo' AS system, 9 AS tournament_id, 'x' AS reason, 1 AS n_games")
    write.insert(con, "rating_skips", rel)
    assert _skips(con) == [("elo", 9, "x", 1, None)]


def test_replace_deletes_the_key_even_when_rows_are_empty(con: duckdb.DuckDBPyConnection) -> None:
    rows = pl.DataFrame({"system": ["fide", "fide", "elo"], "tournament_id": [1, 2, 1], "reason": ["a", "b", "c"]})
    write.insert(con, "rating_skips", rows)
    write.replace(con, "rating_skips", rows.head(0).drop("system"), {"system": "fide"})
    assert _skips(con) == [("elo", 1, "c", None, None)]
    new = pl.DataFrame({"tournament_id": [5], "reason": ["d"]})
    write.replace(con, "rating_skips", new, {"system": ["elo", "fide"]}, constants={"system": "fide"})
    assert _skips(con) == [("fide", 5, "d", None, None)]


def test_replace_by_date_key(con: duckdb.DuckDBPyConnection) -> None:
    key = {"source_file": "a.txt", "list_date": dt.date(2024, 1, 1)}
    rows = pl.DataFrame({"line": [3], "reason": ["no ID"]})
    write.replace(con, "list_import_skips", rows, key, constants=key)
    write.replace(con, "list_import_skips", rows.with_columns(pl.lit(4).alias("line")), key, constants=key)
    other = {"source_file": "a.txt", "list_date": dt.date(2024, 2, 1)}
    write.replace(con, "list_import_skips", rows, other, constants=other)
    got = con.execute("SELECT list_date, line FROM list_import_skips ORDER BY 1").fetchall()
    assert got == [(dt.date(2024, 1, 1), 4), (dt.date(2024, 2, 1), 3)]


def test_unknown_column_is_an_elopipe_error_and_a_value_error(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(write.StoreWriteError, match=r"rating_skips: columns not in the schema: \['colour'\]"):
        write.insert(con, "rating_skips", pl.DataFrame({"tournament_id": [1], "colour": ["w"]}))
    assert issubclass(write.StoreWriteError, ElopipeError)
    assert issubclass(write.StoreWriteError, ValueError)
    with pytest.raises(write.StoreWriteError, match="needs a key"):
        write.delete_where(con, "rating_skips", {})
    with pytest.raises(write.StoreWriteError, match="not in the schema"):
        write.delete_where(con, "rating_skips", {"colour": "w"})
    assert _skips(con) == []


def test_constraint_errors_are_duckdbs(con: duckdb.DuckDBPyConnection) -> None:
    rows = pl.DataFrame({"error_id": [1], "file_id": [4], "severity": ["error"], "code": ["x"], "message": ["bad"]})
    write.insert(con, "ingest_errors", rows)
    with pytest.raises(duckdb.ConstraintException):
        write.insert(con, "ingest_errors", rows)
    with pytest.raises(duckdb.ConstraintException):
        write.insert(con, "ingest_errors", rows.drop("code").with_columns(pl.lit(2).alias("error_id")))
