"""`elopipe sql "QUERY" [--db FILE] [--format table|csv|json]`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.table import Table

from elopipe.cli_app import DB_OPTION_HELP, app, console, err_console, plain_console
from elopipe.store import DEFAULT_DB, StoreBusyError


@app.command()
def sql(
    query: str = typer.Argument(..., help="One SQL statement (tables and v_* views of the store)."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    fmt: str = typer.Option("table", "--format", help="table, csv or json."),
) -> None:
    """Run a query on the store opened read-only and print the result."""
    from elopipe.publish.sqlcli import FORMATS, QueryError, run_query, to_csv, to_json

    if fmt not in FORMATS:
        err_console.print(f"--format must be one of {', '.join(FORMATS)}", style="red")
        raise typer.Exit(2)
    try:
        cols, rows = run_query(db, query)
    except (FileNotFoundError, StoreBusyError) as exc:
        err_console.print(f"{exc}", style="red")
        raise typer.Exit(1) from None
    except QueryError as exc:
        err_console.print(f"query failed: {exc}", style="red")
        raise typer.Exit(1) from None
    if fmt == "csv":
        sys.stdout.write(to_csv(cols, rows))
    elif fmt == "json":
        sys.stdout.write(to_json(cols, rows) + "\n")
    else:
        cells = [["" if v is None else str(v) for v in r] for r in rows]
        table = Table(show_lines=False)
        for c in cols:
            table.add_column(c, overflow="fold")  # never cut a value
        for r in cells:
            table.add_row(*r)
        # size the table to its content: a wide result wraps in the terminal, but no
        # column is squeezed to nothing
        widths = [len(c) for c in cols]
        for r in cells[:1000]:
            widths = [max(w, len(v)) for w, v in zip(widths, r, strict=True)]
        need = sum(min(w, 60) for w in widths) + 3 * len(cols) + 1
        plain_console(width=max(console.width, min(need, 2000))).print(table)
        console.print(f"{len(rows)} row(s)")
