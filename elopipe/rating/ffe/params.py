"""Parameters of the FFE performance engine (spec G.1 table) and the start of the national rating.

Source: the implementable specification ``ffe-rating-rules.md`` (Part G.1, the parameter
table; Part A for the classic values). Every [C] choice of spec Part A is a field of `FfeRules`;
`CLASSIC` is the classic standard rating (seed 000), `elopipe.rating.ffe.rapid.RAPID` the
national rapid (E02).

**When the national rating began** (`NATIONAL_RATING_FROM`, 1 September 1977): the FFE Elo
started in Normandy in 1971-73 and opened to all leagues from the 1977-78 season (spec §1
Timeline, source S9: C.-H. Rouah, FFE rating officer since 1982, echecs64.com, 11 March 2011).
Events starting before 1 September 1977, the first day of that season (spec A.1: a season runs
from 1 September), are refused (``rating_skips`` reason 'before_rating_from'), as the FIDE
systems refuse events before July 2009: no national list existed for them. Uncertain: S9 names
the season, not a day, and the first national list's date is not known; the regional Normandy
rating of 1971-77 is not a national one. The national rapid rating (`elopipe.rating.ffe.rapid`)
cannot be older; its own start is not known, so the same date bounds it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, replace
from typing import Any

# ---- parameters ----------------------------------------------------------------------

#: The first day of the 1977-78 season, when the FFE Elo opened to all leagues (spec §1, S9):
#: events starting earlier are not rated by the FFE systems (see the module docstring).
NATIONAL_RATING_FROM = dt.date(1977, 9, 1)


@dataclass(frozen=True)
class FfeRules:
    """Parameters of the FFE performance engine (spec G.1 table).

    Classic standard defaults (spec Part A): compatibility 350, threshold 8, floor 1000,
    brake up 8 (young) / 16 (adult), brake down 16, bonus clamp ±470, periods of four months.

    Attributes:
        system: the ``system`` key written to the store ('ffe').
        compat_limit: rating points; spec A.3.
        threshold: compatible games for a first rating; spec A.6.
        floor: P below it is raised to it (rating points); spec A.4.
        brake_up_young / brake_up_adult: N of the upward brake; spec A.5.
        brake_down: weight of R when P < R; spec A.5.
        clamp: bound on Z (rating points); spec A.4.
        z_mode: 'table' (FIDE 8.1.1, interpolated) or 'logistic'; spec A.4.
        strict_boundary: exclude |d| = compat_limit; spec A.3, V7.
        unrated_opponents: 'ignore' or 'iterative'; spec A.2.
        young_max_category: oldest "young" category, 'U20' (default) or e.g. 'U18'; spec A.5.
        archive_seasons: seasons an archive survives after the one it was made in; spec A.6.4.
        period_scheme: name of the `elopipe.rating.periods` scheme ('ffe': Jan/May/Sep).
        rate_class: the rate of play rated ('standard': more than 60 minutes, seed 000).
        credit_standard: count a player without a rating of this rate at their standard
            rating (E02, rapid only).
        max_loops: bound on the first-rating and iterative loops.
        rating_from: events starting before it are not rated (`NATIONAL_RATING_FROM`).
    """

    system: str = "ffe"
    compat_limit: int = 350
    threshold: int = 8
    floor: int = 1000
    brake_up_young: int = 8
    brake_up_adult: int = 16
    brake_down: int = 16
    clamp: int = 470
    z_mode: str = "table"
    strict_boundary: bool = False
    unrated_opponents: str = "ignore"
    young_max_category: str = "U20"
    archive_seasons: int = 1
    period_scheme: str = "ffe"
    rate_class: str = "standard"
    credit_standard: bool = False
    max_loops: int = 50
    rating_from: dt.date = NATIONAL_RATING_FROM

    def __post_init__(self) -> None:
        if self.z_mode not in ("table", "logistic"):
            raise ValueError(f"z_mode {self.z_mode!r}: expected 'table' or 'logistic'")
        if self.unrated_opponents not in ("ignore", "iterative"):
            raise ValueError(f"unrated_opponents {self.unrated_opponents!r}: expected 'ignore' or 'iterative'")

    def with_options(self, **kw: Any) -> FfeRules:
        """A copy with some parameters changed (unknown names raise TypeError)."""
        return replace(self, **kw)

    def as_params(self) -> dict[str, Any]:
        return asdict(self)


CLASSIC = FfeRules()
