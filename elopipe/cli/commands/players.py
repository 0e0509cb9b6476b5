"""`elopipe players merge|split|suspects`: an officer's identity decisions (issue 7)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from elopipe.cli.app import DB_OPTION_HELP, console, err_console, fail, print_table, sub_app
from elopipe.jobs.requests import MergeRequest, SplitRequest, SuspectsRequest
from elopipe.jobs.store import DEFAULT_DB

players_app = sub_app("players", "Player identity: merge, split, review likely duplicates.")


def _on_wait(message: str) -> None:
    err_console.print(f"{message}", style="yellow")


def _refuse(message: str) -> None:
    """A usage error before the store is opened: one line, exit 2."""
    fail(message)


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
    from elopipe.jobs.players import merge as merge_job

    _check_reason(reason)
    if kept_id == merged_id:
        _refuse(f"cannot merge player {kept_id} into itself: give two player ids")
    mid, rerate = merge_job(MergeRequest(db, kept_id, merged_id, reason, by), _on_wait)
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
    from elopipe.jobs.players import split as split_job

    _check_reason(reason)
    if (name is None or not name.strip()) and not tournament:  # `--name ""` names no entry either
        _refuse("split needs --name or --tournament: which entries move to the new player")
    tids = tuple(tournament or []) or None
    new_id, rerate = split_job(SplitRequest(db, player_id, reason, name, tids, by), _on_wait)
    console.print(f"split from player {player_id}: new player {new_id}")
    for line in rerate:
        console.print(line)


def _not_nan(value: float) -> float:
    if value != value:  # NaN: no confidence is below it, nor above
        raise typer.BadParameter("must be a number from 0 to 1")
    return value


@players_app.command("suspects")
def suspects_cmd(
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    min_confidence: float = typer.Option(
        0.6,
        "--weaker-than",
        "--min-confidence",
        min=0.0,
        max=1.0,
        callback=_not_nan,
        help="Also list the identity links whose confidence is below this (0..1; higher lists more).",
    ),
    limit: int = typer.Option(200, "--limit", min=0, help="Rows shown (0 = all)."),
) -> None:
    """List likely duplicate players and weak identity links, with the evidence."""
    from elopipe.jobs.players import suspects

    rows = suspects(SuspectsRequest(db, min_confidence))
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
