"""`--unknown-tc standard|rapid|blitz`, shared by `rate` and `run`: the list an event goes to when
nothing says its rate of play (`elopipe.read.rate_evidence.classify_games`: no time control, name,
online site or rounds per day)."""

from __future__ import annotations

import typer

from elopipe.cli.app import checked_policy

UNKNOWN_TC_HELP = (
    "Rate class assumed for the events whose rate of play nothing says (no time control, name, online site or "
    "rounds per day): standard, rapid or blitz. Their games are flagged, their events named by rate and run. "
    "Default: ELOPIPE_UNKNOWN_TC, else standard."
)

unknown_tc_option = typer.Option(None, "--unknown-tc", help=UNKNOWN_TC_HELP, metavar="standard|rapid|blitz")


def checked_unknown_tc(value: str | None) -> str:
    """The policy (`param_checks.unknown_tc_policy`: `value`, else ELOPIPE_UNKNOWN_TC, else
    standard); a usage error, exit 2, for another value."""
    from elopipe.rating.param_checks import unknown_tc_policy

    return checked_policy("--unknown-tc", value, unknown_tc_policy)
