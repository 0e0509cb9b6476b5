"""The rate of play a schedule shows: the days, rounds and boards of an event's games, where no
time control or name says it (`elopipe.read.rate_evidence`, source ``rounds_per_day``).

* **Rounds per day** (`fast_games`): FIDE B.02 allows standard play of no more than three
  rounds a day and 12 hours of play (spec fide-rating-rules.md 6.1): a day with
  `ROUNDS_PER_DAY_NOT_STANDARD` rounds of the event, or that many games of one player, is not
  standard, nor are `SAME_PAIR_PER_DAY_NOT_STANDARD` games of one pair in a day (a rapid or
  blitz match), nor a knockout match's tie-break day (`tie_breaks`).
* **A simul** (`simul_games`): one player against `SIMUL_OPPONENTS` opponents or more in one
  round, each of whom plays no other game of it: simultaneous play, never rated.

Pure Polars over the games frame; never raises on content.
"""

from __future__ import annotations

import polars as pl

#: Games of one player on one day from which his games that day are not standard. B.02 allows
#: three rounds a day, but real files show four (irl_galway_major_2011: rounds 2-5 on 1 October
#: 2011 at 90 minutes + 10 s), so the bar is five: no real standard game is read as fast.
ROUNDS_PER_DAY_NOT_STANDARD = 5
#: Games between the same two players on one day from which they are a rapid or blitz match.
SAME_PAIR_PER_DAY_NOT_STANDARD = 3
#: Opponents of one player in one round, each playing no other game of it: a simul.
SIMUL_OPPONENTS = 3


def simul_games(games: pl.DataFrame) -> pl.DataFrame:
    """The games (game_id, ``__simul_ev`` Utf8 saying why) of a simultaneous exhibition: one
    player against `SIMUL_OPPONENTS` (3) opponents or more in one round of the event, all on
    one day (or no day known), each opponent playing no other game of that round. A source that
    writes one round on every game of a round-robin is no simul: there every player plays many
    games of that "round". Played games with a round only; empty when the frame lacks the
    columns."""
    empty = pl.DataFrame(schema={"game_id": pl.Int64, "__simul_ev": pl.Utf8})
    if not {"game_id", "tournament_id", "round", "white_id", "black_id"} <= set(games.columns):
        return empty
    played = pl.col("played").fill_null(False) if "played" in games.columns else pl.lit(True)
    day = pl.col("game_day") if "game_day" in games.columns else pl.lit(None, pl.Date)
    g = games.filter(
        played & pl.col("round").is_not_null() & (pl.col("white_id") != pl.col("black_id")).fill_null(False)
    ).select(
        pl.col("game_id").cast(pl.Int64),
        pl.col("tournament_id").cast(pl.Int64),
        pl.col("round").cast(pl.Int64),
        day.alias("__day"),
        "white_id",
        "black_id",
    )
    if g.height == 0:
        return empty
    rnd = ["tournament_id", "round"]
    sides = pl.concat(
        [
            g.select("game_id", *rnd, "__day", pl.col(a).alias("__p"), pl.col(b).alias("__o"))
            for a, b in (("white_id", "black_id"), ("black_id", "white_id"))
        ]
    ).with_columns(pl.len().over(*rnd, "__p").alias("__n"))
    # each opponent's games in that round: his count as a player
    once = sides.select(*rnd, pl.col("__p").alias("__o"), (pl.col("__n") == 1).alias("__once")).unique()
    givers = (
        sides.join(once, on=[*rnd, "__o"], how="left")
        .group_by(*rnd, "__p")
        .agg(
            pl.col("__o").n_unique().alias("__opp"),
            pl.col("__once").all().alias("__all_once"),
            pl.col("__day").drop_nulls().n_unique().alias("__days"),
            pl.col("__day").min().alias("__on"),
        )
        .filter((pl.col("__opp") >= SIMUL_OPPONENTS) & pl.col("__all_once") & (pl.col("__days") <= 1))
    )
    if givers.height == 0:
        return empty
    return (
        sides.join(givers, on=[*rnd, "__p"])
        .select(
            "game_id",
            pl.format(
                "one player against {} opponents in round {}{}, each of whom plays no other game of that round:"
                " a simultaneous exhibition",
                "__opp",
                "round",
                pl.when(pl.col("__on").is_not_null()).then(pl.format(" on {}", "__on")).otherwise(pl.lit("")),
            ).alias("__simul_ev"),
        )
        .unique("game_id", keep="first")
    )


def fast_games(games: pl.DataFrame, tournaments: pl.DataFrame) -> pl.DataFrame:
    """The games (game_id, ``__day_ev`` Utf8 saying why) played on a day that cannot be a
    standard day: the event played `ROUNDS_PER_DAY_NOT_STANDARD` (5) rounds or more that day
    (every game of the day, forfeits too), one of the players played that many games of the
    event that day, the same two players met `SAME_PAIR_PER_DAY_NOT_STANDARD` (3) times (a
    rapid or blitz match; a standard match plays one game a day), or the day is a knockout
    match's tie-break (`tie_breaks`).

    Counts played games with a day-precise date (``game_day``); a PGN event's dates count only
    when its games fall on two days or more (see the module docstring).  Empty when the frames
    lack the columns (callers that build their own frames)."""
    empty = pl.DataFrame(schema={"game_id": pl.Int64, "__day_ev": pl.Utf8})
    if not {"game_id", "game_day", "white_id", "black_id"} <= set(games.columns) or games.height == 0:
        return empty
    day = ["tournament_id", "game_day"]
    rnd = pl.col("round") if "round" in games.columns else pl.lit(None, pl.Int64)
    played = pl.col("played").fill_null(False) if "played" in games.columns else pl.lit(True)
    dated = games.filter(pl.col("game_day").is_not_null()).select(
        pl.col("game_id").cast(pl.Int64),
        pl.col("tournament_id").cast(pl.Int64),
        "game_day",
        rnd.cast(pl.Int64).alias("__round"),
        played.alias("__played"),
        pl.min_horizontal("white_id", "black_id").alias("__lo"),
        pl.max_horizontal("white_id", "black_id").alias("__hi"),
    )
    dated = dated.with_columns(pl.col("game_day").n_unique().over("tournament_id").alias("__days"))
    if "source_format" in tournaments.columns:
        fmt = tournaments.select(pl.col("tournament_id").cast(pl.Int64), "source_format")
        dated = dated.join(fmt, on="tournament_id", how="left")
        dated = dated.filter((pl.col("source_format").fill_null("") == "trf") | (pl.col("__days") >= 2))
    else:
        dated = dated.filter(pl.col("__days") >= 2)
    g = dated.filter(pl.col("__played") & pl.col("__lo").is_not_null() & (pl.col("__lo") != pl.col("__hi")))
    if g.height == 0:
        return empty
    rounds = pl.col("__round").drop_nulls()
    by_day = (
        g.group_by(day)
        .agg(rounds.n_unique().alias("__n"), rounds.min().alias("__a"), rounds.max().alias("__b"))
        .filter(pl.col("__n") >= ROUNDS_PER_DAY_NOT_STANDARD)
    )
    by_day = dated.join(by_day, on=day).select(
        "game_id", pl.format("rounds {} to {} on {}", "__a", "__b", "game_day").alias("__ev_d")
    )
    sides = pl.concat([g.select("game_id", *day, pl.col(c).alias("__p")) for c in ("__lo", "__hi")])
    by_player = (
        sides.with_columns(pl.len().over(*day, "__p").alias("__n"))
        .filter(pl.col("__n") >= ROUNDS_PER_DAY_NOT_STANDARD)
        .group_by("game_id")
        .agg(pl.col("__n").max(), pl.col("game_day").first())
        .select("game_id", pl.format("{} games by one player on {}", "__n", "game_day").alias("__ev_p"))
    )
    by_pair = g.with_columns(pl.len().over(*day, "__lo", "__hi").alias("__n")).filter(
        pl.col("__n") >= SAME_PAIR_PER_DAY_NOT_STANDARD
    )
    by_pair = by_pair.select(
        "game_id", pl.format("{} games between the same two players on {}", "__n", "game_day").alias("__ev_m")
    )
    return (
        by_day.join(by_player, on="game_id", how="full", coalesce=True)
        .join(by_pair, on="game_id", how="full", coalesce=True)
        .join(tie_breaks(g), on="game_id", how="full", coalesce=True)
        .select("game_id", pl.coalesce("__ev_d", "__ev_p", "__ev_m", "__ev_t").alias("__day_ev"))
    )


def tie_breaks(g: pl.DataFrame) -> pl.DataFrame:
    """The games (game_id, ``__ev_t``) of a knockout match's tie-break day: two games or more of
    one pair in one round on a day after that round's first day (the FIDE World Cup 2023 final:
    8.1 and 8.2 on two days, the rapid 8.3 and 8.4 on the third). A standard match plays a game
    a day, and a round of a Swiss or round-robin pairs two players once: no standard game meets
    this. Games without a round say nothing."""
    match = ["tournament_id", "__round", "__lo", "__hi"]
    return (
        g.filter(pl.col("__round").is_not_null())
        .with_columns(
            pl.len().over(*match, "game_day").alias("__n"), pl.col("game_day").min().over(match).alias("__first")
        )
        .filter((pl.col("__n") >= 2) & (pl.col("game_day") > pl.col("__first")))
        .select(
            "game_id",
            pl.format(
                "{} games between the same two players on {}, after their games of round {} on {}: a tie-break",
                "__n",
                "game_day",
                "__round",
                "__first",
            ).alias("__ev_t"),
        )
    )
