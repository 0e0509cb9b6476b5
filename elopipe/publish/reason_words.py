"""Why a game did not count, in a rating officer's words: the codes of ``rating_changes.reason``
(`elopipe.rating.game_rows.scope`, `elopipe.rating.fide.changes.sides_plan`, the FFE engine)
that a report's games.csv and HTML show, worded for its legend and for a player's note.

The FIDE minimum time (B.02 1.3 of each version; spec `fide-rating-rules.md` §1 and §6.1) is worded
from the rule set's own thresholds (`b02.RuleSet.time_thresholds`), never a second copy: 60 moves in
120 minutes when either player is rated the first threshold or more (2200 until 2021, 2400 from
2022), 90 minutes from the second (1600, then 1800), else 60; an increment counts 60 times.
"""

from __future__ import annotations

import polars as pl

from elopipe.rating.fide import b02

#: every reason a report can show for a game not counted in the change, in words
REASON_WORDS: dict[str, str] = {
    "forfeit": "forfeit, or not played (B.02: unplayed games are not rated)",
    "unrated_opponent": "the opponent has no rating in force (B.02 7.1.4: a rated player's game against an unrated "
    "one does not count in his change)",
    "both_unrated": "both players unrated (B.02 7.1.4: an unrated player's games count only against rated opponents)",
    "pooled_unrated": "the player is unrated: the game is pooled toward his first rating Ru (B.02 7.1.4, 8.2), "
    "not a change",
    "below_time_minimum": "the rate of play gives less time than FIDE's minimum for the players' ratings "
    "(B.02 1.3: 60 moves in 120 minutes when either player is rated 2200 or more until 2021, 2400 from 2022; "
    "90 minutes from 1600, then 1800; else 60; an increment counts 60 times)",
    "rb_600_points": "rapid and blitz: a game between players 600 points or more apart, one of them over 2600, "
    "is not rated",
    "incompatible": "FFE: an incompatible game, an expected result against an opponent too far apart",
    "no_player": "a side names no player (or the same player twice)",
    "result_conflict": "the file gives two results for the game: neither is taken until a file resolves it",
    "no_result": "no result recorded",
    "not_rated_code": "the TRF result code says the game is not rated (W, D, L)",
    "no_moves": "no move recorded, rated as not played (--no-moves)",
}


def reason_words(code: str) -> str:
    """The words of one reason code; an unknown code as it is."""
    return REASON_WORDS.get(code, code.replace("_", " "))


def time_minimum_rule(rs: b02.RuleSet) -> str:
    """B.02 1.3 of `rs`: the minimum time for 60 moves by the higher rating of the two players."""
    hi, mid = rs.time_thresholds
    if not hi:
        return "no minimum time applies"
    return (
        f"60 moves in at least 120 minutes when either player is rated {hi} or more, 90 minutes when either is "
        f"{mid} or more, else 60 (an increment counts 60 times)"
    )


def legend_text(rule_sets: tuple[b02.RuleSet, ...] | None = None) -> str:
    """The legend's 'reason' line: every code, the time minimum worded for `rule_sets` (the event's,
    with their names; None: every version, by era)."""
    words = dict(REASON_WORDS)
    if rule_sets:
        named = "; ".join(f"{rs.name}: {time_minimum_rule(rs)}" for rs in rule_sets)
        words["below_time_minimum"] = f"the rate of play gives less time than FIDE's minimum (B.02 1.3, {named})"
    return (
        "per game (games.csv, and a player's note when none of his games was rated): why a game did not count "
        "in the change: " + "; ".join(f"{code} = {text}" for code, text in words.items())
    )


def time_minimum_expr(first_day: pl.Expr, top: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """(version, minutes, threshold) of B.02 1.3 for events starting on `first_day` whose games'
    higher rating is `top`, as Polars expressions: the version in force that day (`b02.ERAS`), the
    minimum for 60 moves (120, 90 or 60 minutes) and the rating that asks it (null for 60)."""
    version = pl.lit(b02.ERAS[0][1])
    t_hi, t_mid = (pl.lit(v) for v in b02.RULES[b02.ERAS[0][1]].time_thresholds)
    for start, name in b02.ERAS[1:]:
        hi, mid = b02.RULES[name].time_thresholds
        on = first_day >= pl.lit(start)
        version = pl.when(on).then(pl.lit(name)).otherwise(version)
        t_hi = pl.when(on).then(pl.lit(hi)).otherwise(t_hi)
        t_mid = pl.when(on).then(pl.lit(mid)).otherwise(t_mid)
    minutes = pl.when(top >= t_hi).then(120).when(top >= t_mid).then(90).otherwise(60)
    threshold = pl.when(top >= t_hi).then(t_hi).when(top >= t_mid).then(t_mid)
    return version, minutes, threshold
