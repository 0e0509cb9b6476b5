"""The run policies `rate` and `run` share (`watch` and `serve` read their variables): each an
option, a default from its environment variable (a federation's standing choice), else elopipe's
default, recorded with the run and in the period digests so that a change recomputes the lists.

- `--no-moves played|forfeit|unrated`: what the games of a results export (a PGN in which no game
  shows a move) are to the rating (`store_io.load_games`);
- `--ro-from list|file`: where a player's Ro comes from in the FIDE systems
  (`elopipe.rating.fide.ro`; FIDE B.02 7.1.3, the list in force at the event's start);
- `--unknown-tc standard|rapid|blitz`: the list an event goes to when nothing says its rate of
  play (`elopipe.read.rate_evidence.classify_games`: no time control, name, online site or rounds
  per day).

A bad value, given or from the variable, is one line naming where it came from, exit 2
(`checked_policy`).
"""

from __future__ import annotations

import typer

from elopipe.cli.app import checked_policy

NO_MOVES_HELP = (
    "Games of a results export (a PGN where no game shows a move): 'played' (rated as played games), "
    "'forfeit' (a decisive one is a forfeit, a draw not rated) or 'unrated' (kept, not rated). "
    "Default: ELOPIPE_NO_MOVES, else played."
)
RO_FROM_HELP = (
    "FIDE systems: where Ro comes from. 'list': the list in force at the event's start as the store knows it "
    "(an imported official list, else the store's computed list; B.02 7.1.3); 'file': a player with a FIDE ID "
    "whom no imported official list of that date lists starts each event from the rating the organiser's file "
    "gives (for a store that lacks the players' other games). Default: ELOPIPE_RO_FROM, else list."
)
UNKNOWN_TC_HELP = (
    "Rate class assumed for the events whose rate of play nothing says (no time control, name, online site or "
    "rounds per day): standard, rapid or blitz. Their games are flagged, their events named by rate and run. "
    "Default: ELOPIPE_UNKNOWN_TC, else standard."
)

no_moves_option = typer.Option(None, "--no-moves", help=NO_MOVES_HELP, metavar="played|forfeit|unrated")
ro_from_option = typer.Option(None, "--ro-from", help=RO_FROM_HELP, metavar="list|file")
unknown_tc_option = typer.Option(None, "--unknown-tc", help=UNKNOWN_TC_HELP, metavar="standard|rapid|blitz")

# the systems whose engine takes the Ro policy (`elopipe.rating.fide.params.FideParams.ro_from`)
FIDE_SYSTEMS = ("fide", "fide-rapid", "fide-blitz")


def checked_no_moves(value: str | None) -> str:
    """The policy (`store_io.no_moves_policy`: `value`, else ELOPIPE_NO_MOVES, else played)."""
    from elopipe.rating.store_io import no_moves_policy

    return checked_policy("--no-moves", value, no_moves_policy)


def checked_ro_from(value: str | None) -> str:
    """The policy (`fide.params.ro_from_policy`: `value`, else ELOPIPE_RO_FROM, else list)."""
    from elopipe.rating.fide.params import ro_from_policy

    return checked_policy("--ro-from", value, ro_from_policy)


def checked_unknown_tc(value: str | None) -> str:
    """The policy (`param_checks.unknown_tc_policy`: `value`, else ELOPIPE_UNKNOWN_TC, else standard)."""
    from elopipe.rating.param_checks import unknown_tc_policy

    return checked_policy("--unknown-tc", value, unknown_tc_policy)


def takes_ro_from(system: str) -> bool:
    """Whether `system` (a scenario 'BASE@NAME' too) is a FIDE system, rated under the Ro policy."""
    return system.partition("@")[0] in FIDE_SYSTEMS


def check_policies() -> None:
    """Every policy's environment variable, for the commands that take none as an option (`watch`,
    `serve`): a bad value is a usage error before anything starts, not after a file is stored."""
    checked_no_moves(None)
    checked_ro_from(None)
    checked_unknown_tc(None)
