"""`--no-moves played|forfeit|unrated`, shared by `rate` and `run`: what the games of a results
export (a PGN in which no game shows a move) are to the rating (`store_io.load_games`)."""

from __future__ import annotations

import typer

from elopipe.cli_app import err_console

NO_MOVES_HELP = (
    "Games of a results export (a PGN where no game shows a move): 'played' (default: rated as played games), "
    "'forfeit' (a decisive one is a forfeit, a draw not rated) or 'unrated' (kept, not rated). "
    "Default from ELOPIPE_NO_MOVES."
)

# a federation's standing choice: ELOPIPE_NO_MOVES in the environment, for every rate and run
no_moves_option = typer.Option(
    "played", "--no-moves", help=NO_MOVES_HELP, metavar="played|forfeit|unrated", envvar="ELOPIPE_NO_MOVES"
)


def checked_no_moves(value: str) -> str:
    """`value` if it is a policy (`store_io.NO_MOVES_POLICIES`); else a usage error, exit 2."""
    from elopipe.rating.store_io import check_no_moves

    try:
        return check_no_moves(value)
    except ValueError as exc:
        err_console.print(f"error: --no-moves: {str(exc).removeprefix('no_moves ')}", style="red")
        raise typer.Exit(2) from None
