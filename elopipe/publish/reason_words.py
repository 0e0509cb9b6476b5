"""Why a game did not count, in a rating officer's words: the codes of ``rating_changes.reason``
(`elopipe.rating.game_rows.scope`, `elopipe.rating.fide.changes.sides_plan`, the FFE engine)
that a report's games.csv and HTML show, worded for its legend and for a player's note; and in a
few words (`SHORT_WORDS`) each code `elopipe rate` counts, of a game side not counted or of an
event left out (``rating_skips.reason``).

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


#: A few words for every code `elopipe rate` counts: a game side not counted (``rating_changes.reason``:
#: `elopipe.rating.game_rows`, `elopipe.rating.fide.prepare._unrated_reason`,
#: `elopipe.rating.fide.changes.sides_plan`, the FFE engine) or an event left out (``rating_skips.reason``:
#: `elopipe.rating.game_rows.SCOPE_REASONS`, `elopipe.rating.fide.prepare`, `elopipe.rating.faults`), keyed
#: by the code up to its ':' ('online:lichess.org', 'rate_class:rapid'); each reads after a count ('6 forfeit
#: or not played', '2 still in progress'). The long words are `REASON_WORDS`.
SHORT_WORDS: dict[str, str] = {
    # a game side not counted
    "forfeit": "forfeit or not played",
    "unrated_opponent": "against an unrated opponent",
    "both_unrated": "with both players unrated",
    "pooled_unrated": "pooled toward a first rating",
    "below_time_minimum": "under FIDE's minimum time",
    "rb_600_points": "with players 600 points or more apart",
    "incompatible": "incompatible: an expected result, too far apart",
    "no_player": "with no player on a side",
    "result_conflict": "with two results given",
    "no_result": "with no result",
    "not_rated_code": "marked not rated (TRF W, D, L)",
    "no_moves": "with no move recorded",
    # a game side not counted (FIDE) or an event left out (the other systems)
    "variant": "in a chess variant",
    # an event left out
    "online": "played online",
    "not_rated": "of a kind never rated",
    "not_this_rate_class": "of another rate of play",
    "rate_class": "of another rate of play",
    "no_dates": "with no date",
    "in_progress": "still in progress",
    "before_rating_from": "before the system's first list",
    "rating_failed": "whose rating failed",
}


def short_words(code: str) -> str:
    """A few words for a code `elopipe rate` counts (`SHORT_WORDS`), what follows its ':' in
    parentheses ('online:lichess.org' -> 'played online (lichess.org)'); an unknown code as it is,
    with spaces for its underscores."""
    head, _, tail = code.partition(":")
    words = SHORT_WORDS.get(head)
    if words is None:
        return code.replace("_", " ")
    return f"{words} ({tail.strip()})" if tail.strip() else words


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
