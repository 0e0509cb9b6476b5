"""FFE national rapid rating: FFE E02 "Le classement rapide" (January 2018, still in force).

Source: spec ``ffe-rating-rules.md`` Part B.2 (S4, the E02 text) and the parameter table of
Part G.1. It is the classic FFE performance engine (`elopipe.rating.ffe.classic`, spec Part A) with
other parameters:

* scope: games with **more than 10 and less than 60 minutes** per player (E02; the time for
  60 moves, base + 60 x increment, as FIDE counts it [C]). Unknown time control: policy
  ``unknown_tc`` ('exclude' by default, or 'include');
* compatibility **±320** (E02), applied as A.3 (draws always compatible [I]);
* entry threshold **7** compatible games; archives as in A.6;
* floor **800** on P;
* brake **7 in both directions, no age distinction**: P > R and n >= 7 -> P; P > R and n < 7
  -> (n P + (7 - n) R) / 7; P < R -> (n P + 7 R) / (n + 7); rounded to 10;
* monthly lists;
* a player with a standard rating but no rapid rating is credited with the standard rating
  (E02) and counts as rapid-rated for everyone's performance;
* the bonus clamp ±470 is carried over from the classic system [I] (E02 does not mention it).
"""

from __future__ import annotations

import polars as pl

from elopipe.rating.ffe.params import FfeRules
from elopipe.read import rate_of_play as timecontrol

#: E02 parameters (spec G.1, right column).
RAPID = FfeRules(
    system="ffe-rapid",
    compat_limit=320,
    threshold=7,
    floor=800,
    brake_up_young=7,
    brake_up_adult=7,
    brake_down=7,
    clamp=470,
    period_scheme="monthly",
    rate_class="rapid",
    credit_standard=True,
)

#: E02 scope: strictly more than 10 and strictly less than 60 minutes per player. These are
#: the FIDE rapid bounds, so the shared classifier `elopipe.read.rate_of_play` decides.
RAPID_MIN_EXCLUSIVE = 10.0
RAPID_MAX_EXCLUSIVE = 60.0


def is_rapid_minutes(minutes: float | None) -> bool | None:
    """E02 scope test on the minutes for 60 moves; None when unknown."""
    if minutes is None:
        return None
    return RAPID_MIN_EXCLUSIVE < minutes < RAPID_MAX_EXCLUSIVE


def is_rapid_time_control(tc: str | None) -> bool | None:
    """E02 scope test on a PGN TimeControl value ('900+10') or a free text such as the TRF
    122 record ('15 min + 5 sec'); None when it cannot be read."""
    return is_rapid_minutes(timecontrol.tag_minutes(tc))


def credit_standard_rating(rapid: pl.Expr, standard: pl.Expr) -> pl.Expr:
    """E02: a player with a standard rating but no rapid rating counts at the standard one.

    Both expressions are Int64 rating points (null = none); returns the rating in force.
    """
    return pl.coalesce(rapid, standard)
