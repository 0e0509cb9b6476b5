"""DuckDB's cache of the store's blocks, released between the steps of a long run (issue 27, item 2).

DuckDB keeps every block of the store it read (``duckdb_memory()``: ``BASE_TABLE``) until its memory
limit (80 % of the machine's memory by default) makes it drop some. A run that reads the store part
by part (a FIDE history in windows of periods, `elopipe.rating.fide.windows`) thus keeps the blocks
of every part it read: 72 MB after the first window of a 12-month federation store, 166 MB after
the last, none of them read again. `released` lets such a run checkpoint what it committed and drop
them after each part (all but at most `_RELEASE_LIMIT`, 16 MiB, of them).

A block of the store is dropped, not written anywhere: DuckDB reads it again from the store when a
query needs it. Lowering the memory limit is DuckDB's one way to make it drop its cache; with a
temporary directory, it would also write the blocks of temporary tables there, by default beside
the user's store (``<store>.tmp``). So, while `released` holds, DuckDB has no temporary directory
(the setting ``temp_directory`` is empty: a query larger than the memory limit then fails instead
of spilling, as it does on an in-memory database), and the blocks it cannot drop stay in memory.
When DuckDB has already written temporary files (its temporary directory can then no longer
change), nothing is released.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import duckdb

#: the memory limit set for an instant to make DuckDB drop the blocks it can (it then says it could
#: not free the rest: what it cannot drop without a temporary directory, and the limit is left as it
#: was). Not 0 B: a statement that pins a block while the limit is 0 B fails (``failed to pin block
#: of size 256.0 KiB (0 bytes/0 bytes used)``, seen once in a `rate`), and nothing guarantees that
#: DuckDB pins none in that instant. 16 MiB holds 64 blocks of 256 KiB: a scan pins one block a
#: column a thread; what stays cached is bounded by it, whatever the size of the store.
_RELEASE_LIMIT = "16MiB"


def _setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    return str(con.execute("SELECT current_setting(?)", [name]).fetchall()[0][0])


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@contextlib.contextmanager
def released(con: duckdb.DuckDBPyConnection) -> Iterator[Callable[[], None]]:
    """A block in which the returned function drops the store's blocks DuckDB cached (see the module
    docstring; a function that does nothing when DuckDB's temporary directory is already in use).
    Call it between statements, outside a transaction. The settings it changes (``temp_directory``,
    ``memory_limit``) are those of before the block after it."""
    temp = _setting(con, "temp_directory")
    try:
        con.execute("SET temp_directory = ''")
    except duckdb.Error:  # DuckDB wrote temporary files there already: it cannot switch
        yield lambda: None
        return
    try:
        yield lambda: _release(con)
    finally:
        con.execute(f"SET temp_directory = {_quoted(temp)}")


def _release(con: duckdb.DuckDBPyConnection) -> None:
    # the changes committed since the last checkpoint are held in memory (``IN_MEMORY_TABLE``, up to
    # 90 MB in a 12-month run) until DuckDB writes them to the store, at a commit that brings its
    # log over ``wal_autocheckpoint`` or at the close: written now, their blocks are the store's and
    # can be dropped with the others (and the commits after it have less to write)
    con.execute("CHECKPOINT")
    limit = _setting(con, "memory_limit")
    try:
        con.execute(f"SET memory_limit = {_quoted(_RELEASE_LIMIT)}")
    except duckdb.OutOfMemoryException:
        pass  # what DuckDB could drop is dropped; the rest (temporary tables, say) stays
    finally:
        # the default is a share of the machine's memory, which the setting shows rounded: reset it
        con.execute("RESET memory_limit")
        if _setting(con, "memory_limit") != limit:
            con.execute(f"SET memory_limit = {_quoted(limit)}")
