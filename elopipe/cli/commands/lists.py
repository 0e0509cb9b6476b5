"""`elopipe lists import|compare`: official rating lists as the base, and reconciliation (issue 7)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import overload

import typer
from rich.table import Table

from elopipe.cli.app import DB_OPTION_HELP, app, console, err_console, print_table
from elopipe.publish.csvsafe import write_csv
from elopipe.store.connect import DEFAULT_DB, open_reader, open_writer

lists_app = typer.Typer(help="Official rating lists: import, compare with the computed list.", no_args_is_help=True)
app.add_typer(lists_app, name="lists")


@overload
def _date(value: str) -> dt.date: ...
@overload
def _date(value: None) -> None: ...
def _date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date YYYY-MM-DD") from None


@lists_app.command("import")
def import_cmd(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="FIDE TXT/XML or FFE CSV list"),
    system: str = typer.Option(..., "--system", help="fide | ffe (or an exact system: fide-rapid, ...)"),
    list_date: str = typer.Option(None, "--list-date", help="YYYY-MM-DD; default: from the file name or header"),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """Import an official list as the list in force on its date (replaces that date's rows)."""
    from elopipe.official.list_import import import_list

    with open_writer(db, on_wait=lambda m: err_console.print(f"{m}", style="yellow")) as con:
        res = import_list(con, file, system, _date(list_date))
    rows = ", ".join(f"{s}: {n:,}" for s, n in res.rows.items()) or "no rated players"
    console.print(
        f"{file.name} ({res.file_format}) as the list of {res.list_date}: {rows}; "
        f"{res.players_linked:,} players linked, {res.players_created:,} created -> {db}"
    )


@lists_app.command("compare")
def compare_cmd(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="official list for the date"),
    system: str = typer.Option(..., "--system", help="system compared: fide, fide-rapid, fide-blitz, ffe, ..."),
    list_date: str = typer.Option(..., "--list-date", help="YYYY-MM-DD"),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    out: Path = typer.Option(None, "--out", help="Write the full report (CSV) here."),
    limit: int = typer.Option(50, "--limit", help="Differences shown."),
) -> None:
    """Compare the store's computed list for a date with an official list: matches, differences
    with their causes, players on one side only."""
    from elopipe.official.list_compare import compare_lists
    from elopipe.official.list_import import ListFormatError

    con = open_reader(db)
    try:
        cmp = compare_lists(con, system, _date(list_date), file)
    except (ListFormatError, ValueError) as exc:
        err_console.print(f"{exc}", style="red")
        raise typer.Exit(1) from None
    finally:
        con.close()
    counts = cmp.counts()
    console.print(f"{system} {cmp.list_date}: " + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))
    diffs = cmp.report.filter(cmp.report["status"] != "match").head(limit)
    if diffs.height:
        table = Table(title="Differences")
        cols = ["fide_id", "name", "official_rating", "computed_rating", "diff", "official_k", "computed_k",
                "official_games", "computed_games", "status", "cause"]  # fmt: skip
        for c in cols:
            table.add_column(c)
        for row in diffs.select(cols).iter_rows():
            table.add_row(*["" if v is None else str(v) for v in row])
        print_table(table)
    if out is not None:
        write_csv(cmp.report, out)
        console.print(f"report -> {out}")
