"""The store's frames turned into player-sides assigned to rating periods (FIDE B.02 7.1.3: an
event is rated on the first list whose closing date is on or after its end, against the list in
force at its start), with the reason a game is not rated and the events left out (`rating_skips`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import cast

import polars as pl

from elopipe.rating import faults
from elopipe.rating.fide.params import SYSTEM_CLASS, EngineInputs, FideParams, Prepared, pair_key, version_expr
from elopipe.rating.periods import PeriodScheme, get_scheme
from elopipe.read.rate_evidence import classify_games


def prepare(inputs: EngineInputs, params: FideParams, scheme: PeriodScheme | None = None) -> Prepared:
    """Turn the store's frames into player-sides assigned to periods.

    The rate of play comes from all the evidence (`elopipe.read.rate_evidence`: time
    control, name, site, rounds per day, else `params.unknown_tc`, assumed), recorded per
    event in `Prepared.rate_of_play`.  Events never on a FIDE list go to `skips`: online play
    (a lichess TRF export, a PGN Site naming lichess.org, chess.com, chess24, ICC, a URL or
    ending in 'INT'; reason 'online:<platform>', 'online:name'), simultaneous exhibitions,
    blindfold, exhibition, odds and Chess960 events ('not_rated:<kind>'). Events still in
    progress (a TRF whose last round is paired without results, `elopipe.read.trf.progress`)
    are not rated until a complete file replaces them: reason 'in_progress: <the unfinished round>'.

    sides columns: game_id, tournament_id, player_id, opponent_id, score_x100 Int64,
    list_date, in_force, eff_start Date, version Utf8, reason Utf8 (null = can be rated;
    else 'forfeit', 'not_rated_code', 'result_conflict', 'no_result', 'no_moves', 'variant',
    'no_player'),
    tc_minutes Float64, tc_assumed Boolean.  Games of another rate class and events with
    no date at all are left out and counted in `skips`.
    """
    scheme = scheme or get_scheme("fide")
    games = inputs.games
    tours = inputs.tournaments
    rate_class = SYSTEM_CLASS[params.system]
    # (event, player) pairs are one Int64 key (`pair_key`): ids come from the store's
    # sequences, so never negative; a hand-edited store must not be rated wrongly in silence
    for col in ("tournament_id", "white_id", "black_id"):
        low = cast("int | None", games.get_column(col).min())  # an id column: int, or None if empty
        if low is not None and low < 0:
            raise ValueError(f"games.{col} holds negative ids ({low}); the store's ids are never negative")

    # an event still in progress (`elopipe.read.trf.progress`) waits for its complete file
    unfinished = tours.select("tournament_id", "in_progress") if "in_progress" in tours.columns else None
    unfinished = unfinished.filter(pl.col("in_progress").is_not_null()) if unfinished is not None else None
    tours = scheme.assign(
        tours.select("tournament_id", "eff_start", "eff_end", "date_source", "n_games"),
        end_col="eff_end",
        start_col="eff_start",
    ).with_columns(version_expr("eff_start", params.rules).alias("version"))

    # the rate of play of every game and where it came from (`rate_evidence.classify_games`)
    games = classify_games(games, inputs.tournaments, default=params.unknown_tc)
    rate_of_play = _rate_of_play(games)
    games = games.join(
        tours.select("tournament_id", "list_date", "in_force", "eff_start", "version"),
        on="tournament_id",
        how="left",
    )

    # online play, simuls, blindfold, exhibition, odds and Chess960 events: never on a list
    on_line = games.filter(pl.col("never_rated").is_not_null())
    games = games.filter(pl.col("never_rated").is_null())
    if unfinished is not None and unfinished.height:
        games = games.join(unfinished, on="tournament_id", how="left")
        waiting = games.filter(pl.col("in_progress").is_not_null())
        games = games.filter(pl.col("in_progress").is_null()).drop("in_progress")
    else:
        waiting = games.clear().with_columns(pl.lit(None, pl.Utf8).alias("in_progress"))
    too_old = games.filter(pl.col("eff_start") < params.rating_from)
    games = games.filter(pl.col("eff_start").is_null() | (pl.col("eff_start") >= params.rating_from))
    no_dates = games.filter(pl.col("list_date").is_null())
    other = games.filter(pl.col("list_date").is_not_null() & (pl.col("rate_class") != rate_class))
    skips = _skips(on_line, too_old, no_dates, other, tours)
    if waiting.height:
        skips = pl.concat([skips, in_progress_skips(waiting)]).sort("tournament_id", "reason")

    g = games.filter(pl.col("list_date").is_not_null() & (pl.col("rate_class") == rate_class))
    g = g.with_columns(_unrated_reason().alias("reason"))
    sides = _sides(g)

    file_ratings = _file_ratings(sides, inputs)
    sides = sides.drop("game_file_rating")

    # birth years as the store believes them (`store_io.load_players`: from the files, order-free)
    birth_years = inputs.players.select("player_id", "birth_year").filter(pl.col("birth_year").is_not_null())
    # full birth dates (players.birth_date) for the V2017 junior wording, "until the 18th birthday"
    birth_dates = None
    if "birth_date" in inputs.players.columns:
        birth_dates = inputs.players.select("player_id", "birth_date").filter(pl.col("birth_date").is_not_null())

    periods = sides.get_column("list_date").unique().sort().to_list()
    list_dates: list[dt.date] = []
    if periods:
        list_dates = scheme.lists_between(periods[0], periods[-1])
    return Prepared(
        sides=sides,
        tournaments=tours,
        skips=skips,
        file_ratings=file_ratings,
        birth_years=birth_years,
        birth_dates=birth_dates,
        list_dates=list_dates,
        official=inputs.official,
        standard_lists=inputs.standard_lists,
        fide_ids=_fide_ids(inputs.players) if params.ro_from == "file" else None,
        rate_of_play=rate_of_play,
    )


def _rate_of_play(games: pl.DataFrame) -> pl.DataFrame:
    """Per event, its games' rate of play and where it came from (the store's ``rate_of_play``):
    tournament_id Int64, rate_class Utf8 (null for an event never rated: online, simul ...),
    source Utf8 ('time_control' | 'name' | 'site' | 'rounds_per_day' | 'assumed'), evidence
    Utf8 (the first in order of what was read), n_games Int64."""
    return (
        games.group_by(
            "tournament_id",
            pl.when(pl.col("never_rated").is_null()).then(pl.col("rate_class")).alias("rate_class"),
            pl.col("rate_source").alias("source"),
        )
        .agg(pl.col("rate_evidence").min().alias("evidence"), pl.len().cast(pl.Int64).alias("n_games"))
        .sort("tournament_id", "rate_class", "source", nulls_last=True)
    )


def _fide_ids(players: pl.DataFrame) -> pl.Series:
    """The player_id of the players with a FIDE ID, whom the 'file' Ro policy concerns."""
    return players.filter(pl.col("fide_id").is_not_null()).get_column("player_id").cast(pl.Int64).unique().sort()


def _skips(
    on_line: pl.DataFrame, too_old: pl.DataFrame, no_dates: pl.DataFrame, other: pl.DataFrame, tours: pl.DataFrame
) -> pl.DataFrame:
    """The events left out and why (`rating_skips`: tournament_id, reason, n_games): online
    play, before `rating_from`, no dates, another rate class; events with neither games nor
    dates too."""
    skips = pl.concat(
        [
            on_line.group_by("tournament_id").agg(
                pl.col("never_rated").first().alias("reason"),
                pl.len().cast(pl.Int64).alias("n_games"),
            ),
            too_old.group_by("tournament_id").agg(
                pl.lit("before_rating_from").alias("reason"),
                pl.len().cast(pl.Int64).alias("n_games"),
            ),
            no_dates.group_by("tournament_id").agg(
                pl.lit("no_dates").alias("reason"), pl.len().cast(pl.Int64).alias("n_games")
            ),
            other.group_by("tournament_id", "rate_class")
            .agg(pl.len().cast(pl.Int64).alias("n_games"))
            .select(
                "tournament_id",
                (pl.lit("rate_class:") + pl.col("rate_class")).alias("reason"),
                "n_games",
            ),
        ]
    )
    # events without any game and without dates are also recorded
    empty_nodate = tours.filter(pl.col("list_date").is_null() & (pl.col("n_games") == 0)).select(
        "tournament_id", pl.lit("no_dates").alias("reason"), pl.lit(0, pl.Int64).alias("n_games")
    )
    skips = pl.concat([skips, empty_nodate]).sort("tournament_id", "reason")

    return skips


def in_progress_skips(games: pl.DataFrame) -> pl.DataFrame:
    """`rating_skips` rows (tournament_id, reason, n_games) of the events still in progress:
    `games` has one row per game and ``in_progress`` (the unfinished round, in words); the reason
    is 'in_progress: round 2 of 3 is paired with no result on 6 of 6 boards'."""
    return games.group_by("tournament_id").agg(
        (pl.lit("in_progress: ") + pl.col("in_progress").first()).alias("reason"),
        pl.len().cast(pl.Int64).alias("n_games"),
    )


def _unrated_reason() -> pl.Expr:
    """Why a game of the rate class is not rated (null: it can be): 'no_player' (a bye or the
    same player twice), 'not_rated_code' (TRF W/D/L), 'forfeit' (B.02 5.x: unplayed games are
    not rated), 'result_conflict' (the Result tag and the movetext's marker disagree:
    pgn-faults.md 8), 'no_result', 'no_moves' (fewer than two plies or a moveless game rated as
    unplayed), 'variant'."""
    code = pl.col("unplayed_code").fill_null("").str.to_uppercase()
    variant = pl.col("variant").fill_null("").str.to_lowercase()
    reason = (
        pl.when(pl.col("white_id").is_null() | pl.col("black_id").is_null())
        .then(pl.lit("no_player"))
        .when(pl.col("white_id") == pl.col("black_id"))
        .then(pl.lit("no_player"))
        .when(code.is_in(["W", "D", "L"]))
        .then(pl.lit("not_rated_code"))
        .when(~pl.col("played").fill_null(False))
        .then(pl.lit("forfeit"))
        # pgn-faults.md 8: the file says two results; neither is taken until a file resolves it
        .when(pl.col("result_conflict").fill_null(False))
        .then(pl.lit("result_conflict"))
        .when(pl.col("white_score").is_null() | pl.col("black_score").is_null())
        .then(pl.lit("no_result"))
        .when(pl.col("has_moves").fill_null(True).not_() | (pl.col("ply_count").fill_null(2) < 2))
        .then(pl.lit("no_moves"))
        .when(~variant.is_in(["", "standard", "chess"]))
        .then(pl.lit("variant"))
        .otherwise(None)
    )
    return reason


def _sides(g: pl.DataFrame) -> pl.DataFrame:
    """Two rows per game, one per player-side: the side's player and opponent, score in
    hundredths, the rating the game's tags give, and the (event, player) and (event,
    opponent) keys."""
    common = [
        "game_id",
        "round",
        "tournament_id",
        "list_date",
        "in_force",
        "eff_start",
        "version",
        "reason",
        "tc_minutes",
        "tc_assumed",
        "rate_source",
    ]
    white = g.select(
        *common,
        pl.col("white_id").alias("player_id"),
        pl.col("black_id").alias("opponent_id"),
        (pl.col("white_score") * 100).round(0).cast(pl.Int64).alias("score_x100"),
        pl.col("white_rating_in_file").alias("game_file_rating"),
    )
    black = g.select(
        *common,
        pl.col("black_id").alias("player_id"),
        pl.col("white_id").alias("opponent_id"),
        (pl.col("black_score") * 100).round(0).cast(pl.Int64).alias("score_x100"),
        pl.col("black_rating_in_file").alias("game_file_rating"),
    )
    sides = (
        pl.concat([white, black])
        .filter(pl.col("player_id").is_not_null())
        .with_columns(
            pair_key("tournament_id", "player_id").alias("tp_key"),
            pair_key("tournament_id", "opponent_id").alias("to_key"),
        )
    )

    return sides


def _file_ratings(sides: pl.DataFrame, inputs: EngineInputs) -> pl.DataFrame:
    """The rating written in the files per (event, player): tournament_id, player_id, tp_key,
    file_rating, file_id."""
    # the rating written in the file for (event, player): the event's player row, else the
    # lowest per-game value (deterministic whatever the order of the games)
    tp = inputs.tournament_players
    from_games = (
        sides.filter(pl.col("game_file_rating").fill_null(0) > 0)
        .group_by("tournament_id", "player_id")
        .agg(pl.col("game_file_rating").min().alias("g_rating"))
    )
    file_ratings = (
        tp.select("tournament_id", "player_id", "rating_in_file", "file_id")
        .join(from_games, on=["tournament_id", "player_id"], how="full", coalesce=True)
        .select(
            "tournament_id",
            "player_id",
            pl.coalesce(
                pl.when(pl.col("rating_in_file") > 0).then(pl.col("rating_in_file")),
                pl.col("g_rating"),
            ).alias("file_rating"),
            "file_id",
        )
    )
    file_ratings = file_ratings.join(
        inputs.tournaments.select("tournament_id", pl.col("file_id").alias("t_file")),
        on="tournament_id",
        how="left",
    ).select(
        "tournament_id",
        "player_id",
        pair_key("tournament_id", "player_id").alias("tp_key"),
        "file_rating",
        pl.coalesce("file_id", "t_file").alias("file_id"),
    )
    return file_ratings


def prepare_without(
    inputs: EngineInputs, params: FideParams, excluded: Mapping[int, str], scheme: PeriodScheme | None = None
) -> Prepared:
    """`prepare` without the tournaments of `excluded` ({tournament_id: reason}: those the engine
    failed on, `faults.isolate`), which are added to its skips with their reasons."""
    if not excluded:
        return prepare(inputs, params, scheme)
    keep = ~pl.col("tournament_id").is_in(list(excluded))
    left_out = faults.failed_skips(inputs.games, excluded)
    inputs = dataclasses.replace(
        inputs,
        games=inputs.games.filter(keep),
        tournaments=inputs.tournaments.filter(keep),
        tournament_players=inputs.tournament_players.filter(keep),
    )
    prep = prepare(inputs, params, scheme)
    prep.skips = pl.concat([prep.skips, left_out.select(prep.skips.columns).cast(prep.skips.schema)])
    return prep
