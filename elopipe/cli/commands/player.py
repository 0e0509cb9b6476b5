"""`elopipe player ID|NAME [--system S] [--out DIR] [--chart png|svg] [--all-months]`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from elopipe.cli.app import DB_OPTION_HELP, app, console, err_console, print_table
from elopipe.store.connect import DEFAULT_DB, open_reader


@app.command()
def player(
    ref: str = typer.Argument(..., help="FIDE ID, national ID, player id or name."),
    system: str = typer.Option("fide", "--system", help="Rating system: fide, ffe, ..."),
    out: Path = typer.Option(Path("out"), "--out", help="Output folder (players/<system>/ inside)."),
    chart: str = typer.Option("png", "--chart", help="Chart format: png or svg."),
    all_months: bool = typer.Option(
        False, "--all-months", help="Show every list, also those without a rated game where the rating did not move."
    ),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """A player's rating history: per list rating, games, K, change, tournaments; chart + HTML."""
    from elopipe.cli.commands.report import check_system
    from elopipe.publish.history import (
        find_player,
        history_frame,
        player_info,
        tournaments_frame,
        write_player_page,
    )

    if chart not in ("png", "svg"):
        err_console.print("--chart must be png or svg", style="red")
        raise typer.Exit(2)
    check_system(system)
    con = open_reader(db)
    try:
        pid = find_player(con, ref)
        info = player_info(con, pid)
        hist = history_frame(con, pid, system, all_months=all_months)
        table = Table(title=f"{info['name']} ({system})")
        for col in ("list", "rating", "games", "K", "change", "flags", "tournaments rated"):
            table.add_column(col, justify="left" if col in ("list", "flags", "tournaments rated") else "right")
        for h in hist.iter_rows(named=True):
            if h["kind"] == "adjustment":
                adj = f"{h['change']:+d}"
                table.add_row(str(h["list_date"]), str(h["rating"]), "", "", adj, f"1 March 2024 adjustment {adj}", "")
                continue
            table.add_row(
                str(h["list_date"]),
                "unrated" if h["rating"] is None else str(h["rating"]),
                str(h["games"]),
                "" if h["k"] is None else str(h["k"]),
                "" if h["change"] is None else f"{h['change']:+d}",
                h["flags"] or "",
                "; ".join(h["tournaments"] or []),
            )
        print_table(table)
        if hist.height == 0:
            console.print(f"no rating and no rated game under {system!r}")
        tours = tournaments_frame(con, pid)
        console.print(f"{tours.height} tournament(s) played: " + "; ".join(str(n) for n in tours["name"]))
        paths = write_player_page(con, pid, system, out / "players" / system, chart_format=chart, all_months=all_months)
    except LookupError as exc:
        err_console.print(f"{exc}", style="red")
        raise typer.Exit(1) from None
    finally:
        con.close()
    for p in paths:
        console.print(f"written {p}")
