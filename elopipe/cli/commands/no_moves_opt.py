"""`--no-moves played|forfeit|unrated`, shared by `rate` and `run`: what the games of a results
export (a PGN in which no game shows a move) are to the rating (`store_io.load_games`)."""

from __future__ import annotations

import typer

from elopipe.cli.app import checked_policy

NO_MOVES_HELP = (
    "Games of a results export (a PGN where no game shows a move): 'played' (rated as played games), "
    "'forfeit' (a decisive one is a forfeit, a draw not rated) or 'unrated' (kept, not rated). "
    "Default: ELOPIPE_NO_MOVES, else played."
)

no_moves_option = typer.Option(None, "--no-moves", help=NO_MOVES_HELP, metavar="played|forfeit|unrated")


def checked_no_moves(value: str | None) -> str:
    """The policy (`store_io.no_moves_policy`: `value`, else ELOPIPE_NO_MOVES, else played); a
    usage error, exit 2, for another value."""
    from elopipe.rating.store_io import no_moves_policy

    return checked_policy("--no-moves", value, no_moves_policy)
