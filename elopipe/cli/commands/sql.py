"""`elopipe sql "QUERY" [--db FILE] [--format table|csv|json]`."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import typer
from rich.table import Table

from elopipe.cli.app import DB_OPTION_HELP, app, check_text, console, err_console, fail, plain_console
from elopipe.jobs.requests import SqlRequest
from elopipe.jobs.store import DEFAULT_DB
from elopipe.runtime.words import plural


@app.command()
def sql(
    query: str = typer.Argument(..., help="One SQL statement (tables and v_* views of the store)."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    fmt: str = typer.Option("table", "--format", help="table, csv or json."),
    limit: int = typer.Option(
        1000, "--limit", min=1, help="Rows shown by --format table (the rest are counted); csv and json give every row."
    ),
    timeout: float = typer.Option(0, "--timeout", min=0, help="Stop the query after this many seconds (0: no limit)."),
    wait: float = typer.Option(
        60, "--wait", min=0, help="While another process writes the store, wait this many seconds for it (0: fail)."
    ),
) -> None:
    """Run one query on the store opened read-only and print the result.

    The store is opened read-only and sandboxed: no file is read or written (COPY ... TO,
    EXPORT DATABASE, read_csv/read_text, ATTACH are refused). One statement per call. DuckDB
    lets one process write a file or several read it, not both: while an ingest or run writes,
    the query waits (`--wait`).
    """
    from elopipe.jobs.sql import query as run_query
    from elopipe.publish.sqlcli import (
        FORMATS,
        QueryError,
        QueryInterrupted,
        check_query,
        fetch_batches,
        write_csv,
        write_json,
    )

    check_text(query, "the query")
    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}")
    check_query(query)  # before waiting: a query refused is refused at once
    on_wait = functools.partial(err_console.print, style="yellow")
    try:
        with run_query(SqlRequest(db, query, timeout or None, wait), on_wait) as (cols, cur):
            if fmt == "csv":
                write_csv(sys.stdout, cols, fetch_batches(cur) if cols else [])
            elif fmt == "json":
                write_json(sys.stdout, cols, fetch_batches(cur) if cols else [])
            else:
                rows, more = _table_rows(cols, cur, limit)
        if fmt == "table":
            # drawn once the query is closed: a Ctrl-C while a large table is drawn is an
            # ordinary one (one line, exit 130), no longer the query's, which has ended
            _print_table(cols, rows, more)
    except QueryInterrupted as exc:
        err_console.print(f"{exc}", style="yellow")
        raise typer.Exit(130) from None
    except QueryError as exc:
        fail(f"the query failed: {exc}", 1)


def _table_rows(cols: list[str], cur: object, limit: int) -> tuple[list[tuple[object, ...]], int]:
    """The first `limit` rows of `cur` and how many more it has."""
    from elopipe.publish.sqlcli import fetch_batches

    rows: list[tuple[object, ...]] = []
    more = 0
    if cols:
        for batch in fetch_batches(cur):  # type: ignore[arg-type]
            room = limit - len(rows)
            rows.extend(batch[:room])
            more += max(0, len(batch) - room)
    return rows, more


def _print_table(cols: list[str], rows: list[tuple[object, ...]], more: int) -> None:
    from elopipe.publish.sqlcli import text_cell

    cells = [[text_cell(v) for v in r] for r in rows]  # LIST/STRUCT as JSON, never a Python repr
    cols = [text_cell(c) for c in cols]  # a column named with an escape code ('AS "x\x1b[31m"') too
    table = Table(show_lines=False)
    for c in cols:
        table.add_column(c, overflow="fold")  # never cut a value
    for r in cells:
        table.add_row(*r)
    # size the table to its content: a wide result wraps in the terminal, but no
    # column is squeezed to nothing
    widths = [len(c) for c in cols]
    for r in cells:
        widths = [max(w, len(v)) for w, v in zip(widths, r, strict=True)]
    need = sum(min(w, 60) for w in widths) + 3 * len(cols) + 1
    plain_console(width=max(console.width, min(need, 2000))).print(table)
    if more:
        console.print(
            f"{plural(len(rows) + more, 'row')}; the first {len(rows)} shown, {more} more"
            " (raise --limit, or use --format csv|json for every row)",
            soft_wrap=True,
        )
    else:
        console.print(plural(len(rows), "row"))
