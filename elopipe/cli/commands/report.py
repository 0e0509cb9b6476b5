"""`elopipe report --tournament ID|NAME [--system S] [--out DIR] [--all] [--no-legend]`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from elopipe.cli.app import DB_OPTION_HELP, app, console, err_console, print_table
from elopipe.runtime.words import plural
from elopipe.store.connect import DEFAULT_DB, open_reader

if TYPE_CHECKING:  # imported inside the commands: the first line must come within a second
    import duckdb


@app.command()
def report(
    tournament: str | None = typer.Option(None, "--tournament", "-t", help="Tournament id or name."),
    system: str = typer.Option("fide", "--system", help="Rating system: fide, ffe, ..."),
    out: Path = typer.Option(Path("out"), "--out", help="Output folder (reports/<system>/ inside)."),
    all_rated: bool = typer.Option(False, "--all", help="Every tournament rated under the system."),
    show_legend: bool = typer.Option(
        True,
        "--legend/--no-legend",
        help="Explain the columns after the table in the terminal (the HTML report always has its legend).",
    ),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """Performance report of a tournament: rich table here, CSV and HTML files in --out."""
    import polars as pl

    from elopipe.identity.events import event_of
    from elopipe.publish.legend import legend
    from elopipe.publish.norms_report import norm_section, section_lines
    from elopipe.publish.report_header import HEADER_FIELDS, report_header
    from elopipe.publish.report_tables import rich_ffe_table, rich_table
    from elopipe.publish.reports import (
        canonical_event,
        ffe_frame,
        match_tournament,
        nothing_rated_reason,
        performance_frame,
        rated_tournaments,
        tournament_info,
        write_report,
    )

    if (tournament is None) == (not all_rated):
        err_console.print("give --tournament ID|NAME or --all", style="red")
        raise typer.Exit(2)
    check_system(system)
    con = open_reader(db)
    target = out / "reports" / system
    try:
        if all_rated:
            ids = rated_tournaments(con, system)
        else:
            assert tournament is not None  # checked above: --tournament is given without --all
            asked = match_tournament(con, tournament)
            canonical = canonical_event(con, asked) or asked
            ids = [event_of(con, canonical)]
            if canonical != asked:
                err_console.print(
                    f"tournament {asked} is a duplicate export of tournament {canonical}: reporting {canonical}",
                    style="yellow",
                )
            if ids[0] != canonical:
                err_console.print(
                    f"tournament {canonical} is a part of event {ids[0]}, held in several files: reporting the event",
                    style="yellow",
                )
        if not ids:
            err_console.print(
                f"nothing is rated under {system!r} in {db}: run `elopipe rate --system {system}` first", style="red"
            )
            raise typer.Exit(1)
        written = []
        for tid in ids:
            if not all_rated:
                name = str(tournament_info(con, tid).get("name") or f"Tournament {tid}")
                why = nothing_rated_reason(con, tid, system)
                if why is not None:
                    if why.participants:
                        print_table(rich_table(performance_frame(con, tid, system), f"{name} – participants"))
                    err_console.print(Text(f"{why.text}; no report written"), style="yellow")
                    raise typer.Exit(1)
                header = report_header(con, tid, system)
                console.print(Text(name, style="bold"))
                fields = [f"{label}: {header[key]}" for key, label in HEADER_FIELDS if key in header]
                console.print(Text("  ".join(fields)))
                # numbers and names are never cut: the table may be wider than a narrow terminal
                ffe = ffe_frame(con, tid, system)
                perf = performance_frame(con, tid, system)
                if ffe.height:  # FFE systems: X, p, Z, P, method (no We/K/Chg/Rp)
                    print_table(rich_ffe_table(ffe, f"{name} – {system}"))
                    # the FFE working has rated players only: the others and why, as in the FIDE table
                    for r in perf.filter(pl.col("no_rating_reason").is_not_null()).iter_rows(named=True):
                        console.print(Text(f"  SNo {r['start_rank']} {r['name']}: {r['no_rating_reason']}"))
                else:
                    print_table(rich_table(perf, f"{name} – {system}"))
                norm_lines = section_lines(norm_section(con, tid, system))
                if norm_lines:
                    console.print(Text("Norms (FIDE B.01): made, missed by one clause or half a point, or undecided"))
                for line in norm_lines:
                    console.print(Text(line))
                if show_legend:
                    for term, meaning in legend(system):
                        console.print(Text(f"  {term}: {meaning}", style="dim"))
            written.extend(write_report(con, tid, system, target))
    except LookupError as exc:
        err_console.print(f"{exc}", style="red")
        raise typer.Exit(1) from None
    finally:
        con.close()
    console.print(f"{plural(len(ids), 'report')}, {plural(len(written), 'file')} written under {target}")


def check_system(system: str) -> None:
    """Refuse a rating system the registry does not know: one line listing the known ones, exit 2.
    A scenario 'BASE@NAME' is taken when BASE is known and NAME is a valid scenario name (it
    names folders under --out); whether the store holds it is `check_held`'s question. Raises
    `ScenarioError` (exit 2) for a bad name."""
    from elopipe.rating import scenarios, systems

    base, _ = scenarios.split_system(system)
    if base not in systems.names():
        err_console.print(f"unknown rating system {system!r}: use one of {', '.join(systems.names())}", style="red")
        raise typer.Exit(2)


def check_held(con: duckdb.DuckDBPyConnection, system: str) -> None:
    """Refuse a system (or scenario) of which the store holds no list: one line naming the ones it
    holds, exit 2."""
    held = [r[0] for r in con.execute("SELECT DISTINCT system FROM rating_lists ORDER BY system").fetchall()]
    if system not in held:
        has = f"systems it has: {', '.join(held)}" if held else "it holds no list yet: run `elopipe rate` first"
        err_console.print(f"the store has no list for {system!r}; {has}", style="red")
        raise typer.Exit(2)
