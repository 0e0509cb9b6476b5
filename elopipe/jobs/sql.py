"""The `sql` job: one query on the store opened read-only and sandboxed (`elopipe.publish.sqlcli`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from elopipe.jobs.requests import SqlRequest
from elopipe.jobs.store import wait_for_writer

if TYPE_CHECKING:
    import duckdb


@contextlib.contextmanager
def query(request: SqlRequest, on_wait: Callable[[str], None]) -> Iterator[tuple[list[str], duckdb.DuckDBPyConnection]]:
    """Run `request.query` once no process writes the store (or after `request.wait` seconds,
    `on_wait` told once); yield its column names and the cursor to fetch rows from (closed on
    exit). Raises what `elopipe.publish.sqlcli.open_query` raises: UsageError, FileNotFoundError,
    StoreBusyError, QueryError, QueryInterrupted."""
    from elopipe.publish.sqlcli import check_query, open_query

    check_query(request.query)
    wait_for_writer(request.db, request.wait, on_wait)
    with open_query(request.db, request.query, timeout=request.timeout) as result:
        yield result
