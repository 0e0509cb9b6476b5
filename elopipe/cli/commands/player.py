"""`elopipe player ID|NAME [--system S] [--compare B] [--out DIR] [--chart png|svg] [--all-months]`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from elopipe.cli.app import (
    DB_OPTION_HELP,
    app,
    check_out_folder,
    check_text,
    console,
    fail,
    print_table,
    say_set_aside,
)
from elopipe.jobs.requests import PlayerRequest
from elopipe.jobs.store import DEFAULT_DB
from elopipe.runtime.words import plural

if TYPE_CHECKING:  # imported inside the command: the first line must come within a second
    import polars as pl

    from elopipe.jobs.player import PlayerView
    from elopipe.publish.history_compare import PlayerComparison


@app.command()
def player(
    ref: str = typer.Argument(..., help="FIDE ID, national ID, player id or name."),
    system: str = typer.Option("fide", "--system", help="Rating system: fide, ffe, ..."),
    compare: str | None = typer.Option(
        None,
        "--compare",
        metavar="B",
        help="Draw and tabulate the history under B too: a system, a scenario (fide@v2017) or official[:SYSTEM].",
    ),
    out: Path = typer.Option(Path("out"), "--out", help="Output folder (players/<system>/ inside)."),
    chart: str = typer.Option("svg", "--chart", help="Chart format: svg (as published pages have) or png."),
    all_months: bool = typer.Option(
        False, "--all-months", help="Show every list, also those without a rated game where the rating did not move."
    ),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """A player's rating history: per list rating, games, K, change, tournaments; chart + HTML.
    With --compare B: both sides' ratings, B − A and games on each side per list, two lines on the chart."""
    from elopipe.cli.commands.report import check_system
    from elopipe.jobs.player import player as player_job

    check_text(ref, "the player")
    if chart not in ("png", "svg"):
        fail("--chart must be png or svg")
    check_system(system)
    check_out_folder(out, "write player pages to", ["players", f"players/{system}"])
    request = PlayerRequest(db, ref, system, compare, out, chart, all_months)
    try:
        page = player_job(request, lambda view: _show(view, system, all_months))
    except LookupError as exc:
        fail(f"{exc}", 1)
    for p in page.paths:
        console.print(f"written {p}")
    say_set_aside(page.set_aside)


def _show(view: PlayerView, system: str, all_months: bool) -> None:
    if view.comparison is None:
        assert view.history is not None  # the job gives one of the two
        _history_table(view.history, system, view.name)
    else:
        _compare_table(view.comparison, view.name, all_months)
    console.print(tournaments_line([str(n) for n in view.tournaments.get_column("name").to_list()]), soft_wrap=True)


#: the latest events `tournaments_line` names; the page written beside lists them all
LATEST_EVENTS = 10


def tournaments_line(names: list[str]) -> str:
    """'N tournaments played: a; b; ...' of the events `names` (by start date), the latest
    `LATEST_EVENTS` of them when there are more ('... the last 10: ...; and 468 earlier'): a
    federation player's whole history on one terminal line was 10,000 characters."""
    played = f"{plural(len(names), 'tournament')} played"
    if len(names) <= LATEST_EVENTS:
        return f"{played}: " + "; ".join(names)
    earlier = len(names) - LATEST_EVENTS
    return f"{played}, the last {LATEST_EVENTS}: " + "; ".join(names[-LATEST_EVENTS:]) + f"; and {earlier} earlier"


def _history_table(hist: pl.DataFrame, system: str, name: str) -> None:
    """The player's lists under `system` (`history.history_frame`): rating, games, K, change, flags, tournaments."""
    table = Table(title=f"{name} ({system})")
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


def _rating(value: int | None, listed: bool, delisted: bool, carried: bool = False) -> str:
    if value is not None:
        return f"({value})" if carried else str(value)
    return "delisted" if delisted else "unrated" if listed else ""


def _compare_table(cmp: PlayerComparison, name: str, all_months: bool) -> None:
    """Per list date: rating under A and under B (bracketed: carried from the side's earlier list), B − A
    where both sides have a list of the date, games on each side; then the summary line."""
    from elopipe.publish.html import signed

    rows = cmp.shown(all_months)
    table = Table(title=f"{name}: {cmp.side_a} (A) against {cmp.side_b} (B)")
    for col in ("list", "A", "B", "B − A", "games A", "games B"):
        table.add_column(col, justify="left" if col == "list" else "right")
    for r in rows.iter_rows(named=True):
        table.add_row(
            str(r["list_date"]),
            _rating(r["rating_a"], r["on_a"], r["delisted_a"], r["carried_a"]),
            _rating(r["rating_b"], r["on_b"], r["delisted_b"], r["carried_b"]),
            signed(r["diff"]),
            "" if r["games_a"] is None else str(r["games_a"]),
            "" if r["games_b"] is None else str(r["games_b"]),
        )
    print_table(table)
    for side, on in ((cmp.side_a, "on_a"), (cmp.side_b, "on_b")):
        if not cmp.rows[on].any():
            console.print(f"no list of {side!r} holds the player")
    console.print(cmp.summary(all_months))
