"""`--ro-from list|file`, shared by `rate` and `run`: where a player's Ro comes from in the FIDE
systems (`elopipe.rating.fide.ro`; FIDE B.02 7.1.3, the list in force at the event's start)."""

from __future__ import annotations

import typer

from elopipe.cli.app import checked_policy

RO_FROM_HELP = (
    "FIDE systems: where Ro comes from. 'list': the list in force at the event's start as the store knows it "
    "(an imported official list, else the store's computed list; B.02 7.1.3); 'file': a player with a FIDE ID "
    "whom no imported official list of that date lists starts each event from the rating the organiser's file "
    "gives (for a store that lacks the players' other games). Default: ELOPIPE_RO_FROM, else list."
)

ro_from_option = typer.Option(None, "--ro-from", help=RO_FROM_HELP, metavar="list|file")

# the systems whose engine takes the policy (`elopipe.rating.fide.params.FideParams.ro_from`)
FIDE_SYSTEMS = ("fide", "fide-rapid", "fide-blitz")


def checked_ro_from(value: str | None) -> str:
    """The policy (`fide.params.ro_from_policy`: `value`, else ELOPIPE_RO_FROM, else list); a
    usage error, exit 2, for another value."""
    from elopipe.rating.fide.params import ro_from_policy

    return checked_policy("--ro-from", value, ro_from_policy)


def takes_ro_from(system: str) -> bool:
    """Whether `system` (a scenario 'BASE@NAME' too) is a FIDE system, rated under the policy."""
    return system.partition("@")[0] in FIDE_SYSTEMS
