"""`elopipe compare A B [--list-date D] [--out DIR]`: two systems, a system and a scenario, or a
computed list and an imported official list, player by player (issue 18)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from elopipe.cli.app import DB_OPTION_HELP, app, check_out_folder, console, fail, print_table, say_set_aside
from elopipe.jobs.requests import CompareRequest
from elopipe.jobs.store import DEFAULT_DB

if TYPE_CHECKING:  # Polars is imported inside the command: the first line must come within a second
    import polars as pl

_MOVER_COLUMNS = ["name", "fide_id", "rating_a", "rating_b", "diff", "rank_a", "rank_b", "games_a", "games_b", "cause"]


def _date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    from elopipe.read.dates import parse_list_date

    return parse_list_date(value)


@app.command("compare")
def compare_command(
    a: str = typer.Argument(
        ..., metavar="A", help="Side A: a system (fide, ffe), a scenario (fide@v2017) or official[:SYSTEM]."
    ),
    b: str = typer.Argument(..., metavar="B", help="Side B, the same way; differences are B − A."),
    list_date: str = typer.Option(
        None, "--list-date", help="YYYY-MM-DD or YYYY-MM; default: the latest list both sides have."
    ),
    out: Path = typer.Option(None, "--out", help="Folder for the CSV (every player) and the HTML page."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """Compare two lists of one date: both ratings, the difference, both ranks, games counted on
    each side and the main cause of each difference; a summary and the ten largest movers each way."""
    from elopipe.jobs.lists import compare_sides
    from elopipe.publish.compare import blocked_output, write_outputs

    if out is not None:
        check_out_folder(out, "write the comparison to")
    request = CompareRequest(db, a, b, _date(list_date))

    # the sides and the date first: on a large store the comparison itself takes a while
    def on_sides(side_a: str, side_b: str, date: dt.date) -> None:
        console.print(f"{side_a} (A) against {side_b} (B), list of {date}")
        blocked = None if out is None else blocked_output(out, side_a, side_b, date)
        if blocked is not None:
            fail(f"cannot write the comparison to {blocked}: a folder of that name is there")

    cmp = compare_sides(request, on_sides)
    s = cmp.summary
    console.print(
        f"players compared: {s.compared:,}; changed: {s.changed:,}; mean |B − A|: {s.mean_abs_diff} points; "
        f"rated on A only: {s.only_a:,}; on B only: {s.only_b:,}"
    )
    if s.causes:
        console.print(
            f"main causes of the {s.changed:,} changed (each player once, by the first that applies): "
            + ", ".join(f"{c} {n:,}" for c, n in s.causes.items())
        )
    if s.one_side_causes:
        one_side = ", ".join(f"{c} {n:,}" for c, n in s.one_side_causes.items())
        console.print(f"rated on one side only, by cause: {one_side}")
    _movers("Largest rises of B against A", cmp.up)
    _movers("Largest falls of B against A", cmp.down)
    if out is not None:
        written = write_outputs(cmp, out)
        console.print("written: " + ", ".join(str(p) for p in written.paths))
        say_set_aside(written.set_aside)


def _movers(title: str, df: pl.DataFrame) -> None:
    from rich.table import Table

    if df.height == 0:
        console.print(f"{title}: none")
        return
    table = Table(title=title)
    for c in _MOVER_COLUMNS:
        table.add_column(c, justify="left" if c in ("name", "cause") else "right")
    for row in df.select(_MOVER_COLUMNS).iter_rows():
        table.add_row(*["" if v is None else str(v) for v in row])
    print_table(table)
