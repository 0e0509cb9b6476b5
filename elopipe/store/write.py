"""The one way a package writes rows into the store: a Polars frame or a DuckDB relation inserted
into a table by column name (`insert`), or replacing the rows a key selects (`replace`).

Columns are matched by name (DuckDB's ``INSERT ... BY NAME``): a frame may hold any subset of
the table's columns, in any order; the table's columns it lacks take their default (NULL unless
`elopipe/store/schema.py` gives one). A column of the table that must be computed in SQL (a JSON
cast, a DECIMAL score, a sequence's next value) is given in `exprs` as an SQL expression over the
frame's columns. Values given once for every row (a run's system, a list's date) are `constants`,
bound as parameters, never pasted into the SQL.

A frame is lent to DuckDB as Arrow with string views (`pl.CompatLevel.newest()`), which DuckDB
scans as they are: the default Arrow export copies every string. One statement per call: the
caller owns the transaction. Conflicts are not handled here: a row that breaks a table's primary
key or a NOT NULL raises DuckDB's `duckdb.ConstraintException` and the caller's transaction is
aborted, as any failed statement aborts it.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import duckdb
import polars as pl

from elopipe.runtime.errors import ElopipeError
from elopipe.store.frames import registered

Rows = pl.DataFrame | duckdb.DuckDBPyRelation
_names = itertools.count()


class StoreWriteError(ElopipeError, ValueError):
    """Rows that do not fit the table they are written to: a column the table does not have.
    A ValueError too, which the writers raised before."""


# connections (by id) inside a `transaction` block, and how deep
_OPEN: dict[int, int] = {}


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The block's statements as one transaction: committed when the block ends, rolled back when
    it raises (a Ctrl-C too), and the error raised again. Inside another `transaction` block of
    the same connection, the block is part of that transaction (DuckDB has no nested ones): what
    must commit together (a window's lists, its checkpoint and its title norms) wraps writers
    that each open a transaction of their own."""
    key = id(con)
    if _OPEN.get(key):
        _OPEN[key] += 1
        try:
            yield
        finally:
            _OPEN[key] -= 1
        return
    con.execute("BEGIN TRANSACTION")
    _OPEN[key] = 1
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        # a COMMIT that failed (the store's folder not writable) has ended the transaction: its
        # error, not the ROLLBACK's, is the one to tell
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    finally:
        _OPEN.pop(key, None)


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    """The columns of `table` (or view), in the schema's order."""
    # a statement, not a relation (`con.table`): it also ends a result the caller left unfetched,
    # which DuckDB would otherwise refuse the `register` that follows over
    return [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]


def insert(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: Rows,
    *,
    exprs: Mapping[str, str] | None = None,
    constants: Mapping[str, Any] | None = None,
) -> None:
    """Insert every row of `rows` into `table`, columns by name, in one statement.

    `rows`: a Polars DataFrame or a DuckDB relation of the connection `con`, whose columns are
    columns of `table` (any subset, any order). `exprs` maps a column of `table` to the SQL
    expression that fills it (over `rows`' columns: ``{"extra": "CAST(extra AS JSON)"}``,
    ``{"error_id": "nextval('error_id_seq')"}``); it replaces a column of `rows` of that name.
    `constants` maps a column to one value for every row (a bound parameter; a `datetime.date`
    is stored as DATE). An empty frame writes nothing.
    Raises `StoreWriteError` when a column of `rows`, `exprs` or `constants` is not a column of
    `table`; DuckDB's errors (a constraint broken, a value that does not cast) as they are.
    """
    if isinstance(rows, pl.DataFrame) and rows.is_empty():
        return
    exprs, constants = dict(exprs or {}), dict(constants or {})
    given = rows.columns
    known = set(table_columns(con, table))
    unknown = [c for c in [*given, *exprs, *constants] if c not in known]
    if unknown:
        raise StoreWriteError(f"{table}: columns not in the schema: {unknown}")
    # computed columns first, then the frame's own (less those they replace)
    computed = [f"{e} AS {c}" for c, e in exprs.items()] + [f"? AS {c}" for c in constants]
    own = [c for c in given if c not in exprs and c not in constants]
    select = ", ".join([*computed, *own])
    view = f"__elopipe_rows_{next(_names)}"
    with registered(con, view, rows):
        con.execute(f"INSERT INTO {table} BY NAME SELECT {select} FROM {view}", list(constants.values()))


def delete_where(con: duckdb.DuckDBPyConnection, table: str, key: Mapping[str, Any]) -> None:
    """Delete the rows of `table` that `key` selects: each column equal to its value, or one of
    its values when the value is a list, tuple or set (an empty one selects nothing). Raises
    `StoreWriteError` for a column `table` does not have, and for an empty `key` (which would
    select every row)."""
    if not key:
        raise StoreWriteError(f"{table}: a delete needs a key")
    known = set(table_columns(con, table))
    unknown = [c for c in key if c not in known]
    if unknown:
        raise StoreWriteError(f"{table}: columns not in the schema: {unknown}")
    conds, params = [], []
    for col, value in key.items():
        if isinstance(value, list | tuple | set | frozenset):
            conds.append(f"{col} IN (SELECT UNNEST(?))")
            params.append(sorted(value) if isinstance(value, set | frozenset) else list(value))
        else:
            conds.append(f"{col} = ?")
            params.append(value)
    con.execute(f"DELETE FROM {table} WHERE {' AND '.join(conds)}", params)


def replace(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: Rows,
    key: Mapping[str, Any],
    *,
    exprs: Mapping[str, str] | None = None,
    constants: Mapping[str, Any] | None = None,
) -> None:
    """Replace the rows of `table` that `key` selects (`delete_where`) by `rows` (`insert`): the
    stored rows are deleted even when `rows` is empty. Two statements; the caller's transaction
    makes them one change. Raises what `delete_where` and `insert` raise."""
    delete_where(con, table, key)
    insert(con, table, rows, exprs=exprs, constants=constants)
