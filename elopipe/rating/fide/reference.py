"""A straightforward per-game pure-Python FIDE period, the baseline of ``bench/rate.py``.

Deliberately simple: one loop over the games, dicts for the ratings, the scalar rules of
`elopipe.rating.fide.b02`.  It covers one rating period in which every player is rated, every
game is played and every event uses the same list in force (the benchmark month).  It
produces what the engine produces for such a month: one record per player-side (the
``rating_changes`` contract), per-event sums (``tournament_ratings``) and the new list of
every player of the base list (``rating_lists``).  The tests also use it to cross-check the
Polars engine on random months.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import cast

from elopipe.rating.fide import b02
from elopipe.rating.rounding import div_round, round_x100
from elopipe.rating.tables import dp, pd_x100


def rate_month_python(
    games: Iterable[tuple[int, int, int, int, int, dt.date]],
    ratings: Mapping[int, int],
    k_before_cap: Mapping[int, int],
    system: str = "fide",
    floor: int = 1400,
) -> tuple[
    list[tuple[int, ...]],
    dict[tuple[int, int], list[int]],
    list[tuple[int, int | None, int, int | None, int]],
]:
    """Rate one period game by game.

    games: (game_id, tournament_id, white_id, black_id, white_score_x100, tournament start)
    for games between rated players; ratings: the list in force {player_id: rating} (every
    player of the base list); k_before_cap: {player_id: K} from the start of the period;
    floor: the publication minimum of the list.

    Returns (changes, events, new_list):
    changes: (game_id, tournament_id, player_id, opponent_id, ro, rc, d_raw, d_used,
    pd_x100, score_x100, w_minus_pd_x100, k); events: {(tournament_id, player_id):
    [n, score_x100, sum_rc, we_x100, w_we_x100, k, change_x100, ra, rp]}; new_list:
    (player_id, rating or None below the floor, games, k or None, change) for every player
    of `ratings`.  The V2022 one-upgrade rule needs a per-event pass and is not covered.
    """
    changes: list[list[int]] = []
    sums: dict[int, int] = {}
    counts: dict[int, int] = {}
    for gid, tid, white, black, ws, start in games:
        rules = b02.rules_for_system(system, start)
        if rules.cap_mode == "one_upgrade":
            raise ValueError("the reference loop does not implement the V2022 rule")
        rw, rb = ratings[white], ratings[black]
        for me, opp_id, own, opp, score in ((white, black, rw, rb, ws), (black, white, rb, rw, 100 - ws)):
            d = b02.d_used(own - opp, own, rules)
            pd = pd_x100(d)
            sums[me] = sums.get(me, 0) + score - pd
            counts[me] = counts.get(me, 0) + 1
            changes.append([gid, tid, me, opp_id, own, opp, own - opp, d, pd, score, score - pd, 0])
    ks: dict[int, int] = {p: b02.cap_k(k_before_cap[p], n) for p, n in counts.items()}
    events: dict[tuple[int, int], list[int]] = {}
    for c in changes:
        k = c[11] = ks[c[2]]
        e = events.setdefault((c[1], c[2]), [0, 0, 0, 0, 0, k, 0, 0, 0])
        e[0] += 1
        e[1] += c[9]
        e[2] += c[5]
        e[3] += c[8]
        e[4] += c[10]
    for e in events.values():
        e[6] = e[5] * e[4]
        e[7] = div_round(e[2], e[0])
        e[8] = e[7] + dp(div_round(e[1], e[0]))
    new_list: list[tuple[int, int | None, int, int | None, int]] = []
    for p, r in ratings.items():
        n = counts.get(p, 0)
        if n:
            change = round_x100(ks[p] * sums[p])
            new = r + change
            # below the floor of the list's version the player becomes unrated (7.2.1)
            new_list.append((p, new if new >= floor else None, n, ks[p], change))
        else:
            new_list.append((p, r, 0, None, 0))
    return [tuple(c) for c in changes], events, new_list


def rate_period_python(
    games: Iterable[tuple[int, int, int, dt.date]],
    ratings: Mapping[int, int],
    k_before_cap: Mapping[int, int],
    system: str = "fide",
    floor: int = 1400,
) -> dict[int, tuple[int, int, int, int | None]]:
    """`rate_month_python` for (white, black, white_score_x100, start) games; returns
    {player_id: (n, K used, change, new rating)} for the players who played."""
    numbered = ((i, 1, w, b, s, d) for i, (w, b, s, d) in enumerate(games))
    _, _, new_list = rate_month_python(numbered, ratings, k_before_cap, system, floor)
    # K is None only for players without games (n == 0), which are left out
    return {p: (n, cast(int, k), c, r) for p, r, n, k, c in new_list if n}
