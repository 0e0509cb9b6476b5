"""`elopipe players merge|split|suspects`: an officer's identity decisions (issue 7)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer
from rich.table import Table

from elopipe.cli.app import DB_OPTION_HELP, app, console, err_console, print_table
from elopipe.store.connect import DEFAULT_DB, open_reader, open_writer

if TYPE_CHECKING:
    from collections.abc import Callable

    import duckdb

_T = TypeVar("_T")

players_app = typer.Typer(help="Player identity: merge, split, review likely duplicates.", no_args_is_help=True)
app.add_typer(players_app, name="players")


def _write(db: Path, players: list[int], action: Callable[[duckdb.DuckDBPyConnection], _T]) -> tuple[_T, list[str]]:
    """Run a decision on `players` in one transaction; (its result, the lines saying whether the
    lists must be re-rated: the rated games of `players` that moved, per system)."""
    from elopipe.identity import dedup
    from elopipe.identity.rerate import RatedSides

    with open_writer(db, on_wait=lambda m: err_console.print(f"{m}", style="yellow")) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            sides = RatedSides(con, players)
            out = action(con)
            dedup.relink_all(con)  # player ids changed: which rows are one game may change too
            moved = sides.moved()
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
    lines = [m.message() for m in moved] or ["no re-rate needed: no rated game of these players moved"]
    return out, lines


def _refuse(message: str) -> None:
    """A usage error before the store is opened: one line, exit 2."""
    err_console.print(f"error: {message}", style="red")
    raise typer.Exit(2)


def _check_reason(reason: str) -> None:
    if not reason.strip():
        _refuse("--reason must say why (it is kept with the decision in player_merges)")


@players_app.command("merge")
def merge(
    kept_id: int = typer.Argument(..., help="player_id that stays"),
    merged_id: int = typer.Argument(..., help="player_id merged into it"),
    reason: str = typer.Option(..., "--reason", help="Why (kept in player_merges)."),
    by: str = typer.Option("officer", "--by", help="Who decided."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """Merge two players. Refused when their FIDE IDs (or national IDs) differ. Survives re-ingest.
    Says whether the rating lists must be re-rated (a rated game of theirs moved)."""
    from elopipe.identity.decisions import merge_players

    _check_reason(reason)
    if kept_id == merged_id:
        _refuse(f"cannot merge player {kept_id} into itself: give two player ids")
    mid, rerate = _write(db, [kept_id, merged_id], lambda con: merge_players(con, kept_id, merged_id, reason, by))
    console.print(f"merged player {merged_id} into {kept_id} (decision {mid})")
    for line in rerate:
        console.print(line)


@players_app.command("split")
def split(
    player_id: int = typer.Argument(..., help="player_id holding entries of two people"),
    reason: str = typer.Option(..., "--reason", help="Why (kept in player_merges)."),
    name: str = typer.Option(None, "--name", help="Move the entries written this way (compared by name key)."),
    tournament: list[int] = typer.Option(None, "--tournament", help="Move the entries of this tournament_id."),
    by: str = typer.Option("officer", "--by", help="Who decided."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """Move some tournament entries of a player to a new player. Survives re-ingest. Says whether
    the rating lists must be re-rated (a rated game moved)."""
    from elopipe.identity.decisions import split_player

    _check_reason(reason)
    if name is None and not tournament:
        _refuse("split needs --name or --tournament: which entries move to the new player")
    tids = list(tournament or []) or None
    new_id, rerate = _write(db, [player_id], lambda con: split_player(con, player_id, reason, name, tids, by))
    console.print(f"split from player {player_id}: new player {new_id}")
    for line in rerate:
        console.print(line)


@players_app.command("suspects")
def suspects_cmd(
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    min_confidence: float = typer.Option(0.6, "--min-confidence", help="Also list links weaker than this."),
    limit: int = typer.Option(200, "--limit", help="Rows shown (0 = all)."),
) -> None:
    """List likely duplicate players and weak identity links, with the evidence."""
    from elopipe.identity.suspects import suspects

    con = open_reader(db)
    try:
        rows = suspects(con, min_confidence)
    finally:
        con.close()
    shown = rows if limit <= 0 else rows[:limit]
    table = Table(title=f"{len(rows)} suspects" + (f" ({len(shown)} shown)" if len(shown) < len(rows) else ""))
    for col in ("player_a", "name_a", "player_b", "name_b", "reason", "evidence"):
        table.add_column(col)
    for r in shown:
        table.add_row(
            str(r["player_a"]),
            r["name_a"] or "",
            str(r["player_b"]),
            r["name_b"] or "",
            r["reason"],
            r["evidence"],
        )
    print_table(table)
    if len(shown) < len(rows):
        console.print(f"… {len(rows) - len(shown)} more (--limit 0 shows them all)")
