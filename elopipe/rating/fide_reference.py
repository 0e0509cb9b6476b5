"""A straightforward per-game pure-Python FIDE period, the baseline of ``bench/rate.py``.

Deliberately simple: one loop over the games, dicts for the ratings, the scalar rules of
`elopipe.rating.fide`.  It covers one rating period in which every player is rated, every
game is played and every event uses the same list in force (the benchmark month), and is
also used by the tests to cross-check the Polars engine on random months.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

from elopipe.rating import fide
from elopipe.rating.rounding import round_x100
from elopipe.rating.tables import pd_x100


def rate_period_python(
    games: Iterable[tuple[int, int, int, dt.date]],
    ratings: Mapping[int, int],
    k_before_cap: Mapping[int, int],
    system: str = "fide",
    floor: int = 1400,
) -> dict[int, tuple[int, int, int, int | None]]:
    """Rate one period game by game.

    games: (white_id, black_id, white_score_x100, tournament start) for games between rated
    players; ratings: the list in force {player_id: rating}; k_before_cap: {player_id: K}
    from the start of the period.  Returns {player_id: (n, K used, change, new rating)}.
    The V2022 one-upgrade rule needs a per-event pass and is not covered here (the
    benchmark month is in 2025).
    """
    sums: dict[int, int] = {}
    counts: dict[int, int] = {}
    for white, black, ws, start in games:
        rules = fide.rules_for_system(system, start)
        if rules.cap_mode == "one_upgrade":
            raise ValueError("the reference loop does not implement the V2022 rule")
        rw, rb = ratings[white], ratings[black]
        for me, own, opp, score in ((white, rw, rb, ws), (black, rb, rw, 100 - ws)):
            d = fide.d_used(own - opp, own, rules)
            sums[me] = sums.get(me, 0) + score - pd_x100(d)
            counts[me] = counts.get(me, 0) + 1
    out: dict[int, tuple[int, int, int, int | None]] = {}
    for p, total in sums.items():
        n = counts[p]
        k = fide.cap_k(k_before_cap[p], n)
        change = round_x100(k * total)
        new = ratings[p] + change
        # below the floor of the list's version the player becomes unrated (7.2.1)
        out[p] = (n, k, change, new if new >= floor else None)
    return out
