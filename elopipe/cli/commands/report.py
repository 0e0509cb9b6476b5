"""`elopipe report --tournament ID|NAME [--system S] [--out DIR] [--all] [--no-legend]`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from elopipe.cli.app import (
    DB_OPTION_HELP,
    app,
    check_out_folder,
    check_text,
    console,
    err_console,
    fail,
    print_table,
    say_set_aside,
)
from elopipe.jobs.requests import ReportRequest
from elopipe.jobs.store import DEFAULT_DB
from elopipe.runtime.words import plural

if TYPE_CHECKING:  # imported inside the commands: the first line must come within a second
    from elopipe.jobs.report import TournamentView


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
    from elopipe.cli.commands.live_status import LiveStatus
    from elopipe.jobs.report import NothingRated
    from elopipe.jobs.report import report as report_job
    from elopipe.publish.report_tables import rich_table

    check_text(tournament, "--tournament")
    if tournament is not None and all_rated:
        fail("give --tournament ID|NAME or --all, not both")
    if (tournament is None) == (not all_rated) or (tournament is not None and not tournament.strip()):
        fail("give --tournament ID|NAME or --all")
    check_system(system)
    check_out_folder(out, "write reports to", ["reports", f"reports/{system}"])
    request = ReportRequest(db, system, None if all_rated else tournament, out)
    on_note = functools.partial(err_console.print, style="yellow")
    try:
        if all_rated:  # hundreds of reports: progress lines as a publish gives them
            with LiveStatus(err_console) as live:
                done = report_job(
                    request, on_note, _show(system, show_legend), live.counter(f"report {system}", "reports")
                )
        else:
            done = report_job(request, on_note, _show(system, show_legend))
    except NothingRated as exc:
        if exc.participants is not None:
            print_table(rich_table(exc.participants, f"{exc.name} – participants"))
        fail(f"{exc}; no report written", 1)
    except LookupError as exc:
        fail(f"{exc}", 1)
    console.print(f"{plural(len(done.ids), 'report')}, {plural(len(done.written), 'file')} written under {done.target}")
    say_set_aside(done.set_aside)


def _show(system: str, show_legend: bool) -> Callable[[TournamentView], None]:
    """How `report` prints one tournament: its name, header, table (numbers and names are never
    cut: the table may be wider than a narrow terminal), Norms section and legend."""

    def show(view: TournamentView) -> None:
        import polars as pl

        from elopipe.publish.legend import legend
        from elopipe.publish.report_header import HEADER_FIELDS
        from elopipe.publish.report_tables import rich_ffe_table, rich_table

        console.print(Text(view.name, style="bold"))
        fields = [f"{label}: {view.header[key]}" for key, label in HEADER_FIELDS if key in view.header]
        console.print(Text("  ".join(fields)))
        if view.ffe.height:  # FFE systems: X, p, Z, P, method (no We/K/Chg/Rp)
            print_table(rich_ffe_table(view.ffe, f"{view.name} – {system}"))
            # the FFE working has rated players only: the others and why, as in the FIDE table
            for r in view.perf.filter(pl.col("no_rating_reason").is_not_null()).iter_rows(named=True):
                console.print(Text(f"  SNo {r['start_rank']} {r['name']}: {r['no_rating_reason']}"))
        else:
            print_table(rich_table(view.perf, f"{view.name} – {system}"))
        if view.norm_lines:
            console.print(Text("Norms (FIDE B.01): made, missed by one clause or half a point, or undecided"))
        for line in view.norm_lines:
            console.print(Text(line))
        if show_legend:
            for term, meaning in legend(system, view.rules):
                console.print(Text(f"  {term}: {meaning}", style="dim"))

    return show


def check_system(system: str) -> None:
    """Refuse a rating system the registry does not know: one line listing the known ones, exit 2.
    A scenario 'BASE@NAME' is taken when BASE is known and NAME is a valid scenario name (it
    names folders under --out); whether the store holds it is `check_held`'s question. Raises
    `ScenarioError` (exit 2) for a bad name."""
    from elopipe.rating import scenarios, systems

    base, _ = scenarios.split_system(system)
    if base not in systems.names():
        fail(f"unknown rating system {system!r}: use one of {', '.join(systems.names())}")
