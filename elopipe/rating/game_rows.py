"""Per-player game rows for the national and generic engines (FFE, FFE rapid, Elo, Glicko-2).

Reads the canonical games through `elopipe.rating.store_io`, classifies the rate of play with
the shared `elopipe.read.rate_of_play`, places every game in a rating period with the shared
`elopipe.rating.periods`, and turns each game into two rows, one per player. Nothing is
dropped silently: a game that cannot be rated keeps its rows with a ``reason``:

=======================  ==================================================================
reason                   meaning
=======================  ==================================================================
``online``               played online (`rate_evidence.online_platform_expr`): federation systems
``not_rated``            a simul, blindfold, exhibition, odds or Chess960 event by its name
                         (`elopipe.read.rate_evidence`): federation systems
``variant``              not standard chess (Chess960 ...): out of scope of every system
``not_this_rate_class``  the rate of play is not the system's (e.g. blitz for 'ffe')
``no_dates``             neither the game nor its event has a date: no period
``in_progress``          the event is still in progress (a TRF whose last round is paired
                         without results, `elopipe.read.trf.progress`): rated once complete
``before_rating_from``   the event starts before the system's first rating (`refuse_before`)
``no_player``            a side is not identified
``forfeit``              not played over the board (forfeit, bye, default): never counts
``no_result``            result '*' (unfinished / unknown)
``not_rated_code``       TRF result code W / D / L: played but declared not rated
``no_moves``             the source shows no move (PGN without movetext, < 2 plies)
=======================  ==================================================================

The first seven are per-event scope decisions, stored in ``rating_skips`` (per tournament and
reason, with the number of games); the others go to ``rating_changes`` with counted = FALSE.

The period of a game is that of its **game date**, else its event's end date (spec
ffe-rating-rules.md A.1 [C]); ``by_event_end=True`` uses the event's end date for every
game (FIDE practice).
"""

from __future__ import annotations

import datetime as dt

import duckdb
import polars as pl

from elopipe.rating import store_io
from elopipe.rating.periods import PeriodScheme, per_event_calendar
from elopipe.read import rate_evidence

SCOPE_REASONS = (
    "online",
    "not_rated",
    "variant",
    "not_this_rate_class",
    "no_dates",
    "in_progress",
    "before_rating_from",
)


def load_player_event_info(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per (tournament, player): what the file says about the player.

    Columns: tournament_id Int64, player_id Int64, rating_in_file Int64 (FIDE rating written
    in the file, 0 -> null), national_rating Int64 (TRF-26 NRS / national, 0 -> null),
    national_rating_flag Utf8 ('F' | 'N' | 'E' | null), birth_year Int64 (event row, else
    the player's birth year or birth date).
    """
    return store_io._pl(
        con,
        f"""
        SELECT tp.tournament_id::BIGINT AS tournament_id, tp.player_id::BIGINT AS player_id,
               nullif(tp.rating_in_file, 0)::BIGINT AS rating_in_file,
               nullif(tp.national_rating, 0)::BIGINT AS national_rating,
               upper(trim(tp.national_rating_flag)) AS national_rating_flag,
               coalesce(tp.birth_year, year(tp.birth_date), p.birth_year,
                        year(p.birth_date))::BIGINT AS birth_year
        FROM {store_io.EVENT_PLAYERS} tp LEFT JOIN players p USING (player_id)
        """,
    )


def load_game_rows(
    con: duckdb.DuckDBPyConnection,
    *,
    scheme: PeriodScheme | None,
    rate_class: str | None = "standard",
    unknown_tc: str = "standard",
    by_event_end: bool = False,
    no_moves: str = "played",
    skip_online: bool = True,
) -> pl.DataFrame:
    """Two rows per canonical game (one per player), placed in periods.

    Args:
        scheme: period scheme; None = one period per event end date (`per_event_calendar`).
        rate_class: the system's rate of play ('standard' | 'rapid' | 'blitz'), None = all.
        unknown_tc: the rate class assumed when the time control is unknown (rows flagged
            ``tc_assumed``).
        by_event_end: place games by their event's end date instead of the game date.
        no_moves: the `--no-moves` policy for the games of a results export (moves unknown),
            see `store_io.load_games`. A game shown with fewer than 2 plies is not counted
            ('no_moves'), as the FIDE engine does: unplayed games never count (spec A.3). TRF
            games (move count unknown) count.
        skip_online: events played online (`rate_evidence.online_platform_expr`: a lichess TRF
            export, a chess.com/lichess Site, ...) are out of scope ('online'), and simuls, blindfold,
            exhibition, odds and Chess960 events by their name ('not_rated'): federations rate
            over-the-board play only. The generic Elo and Glicko-2 systems pass False (analysts rate
            online games).

    Returns columns: game_id, tournament_id, player_id, opponent_id Int64, score2 Int64
    (2 / 1 / 0, null without result), score Float64, game_date Date, eff_date Date (date that
    placed the game), event_start Date, list_date Date (null when no date), rate_class Utf8,
    tc_assumed Boolean, reason Utf8 (null = ratable), file_id, line Int64, in_progress Utf8 (the
    unfinished round of an event still in progress, else null), plus the file's
    rating_in_file, national_rating, national_rating_flag, birth_year for the player and
    opp_rating_in_file for the opponent.
    """
    games = store_io.load_games(con, no_moves)
    events = store_io.load_tournaments(con)
    # the rate of play from all the evidence; `never_rated`: online, simul, ... (`rate_evidence`)
    games = rate_evidence.classify_games(games, events, default=unknown_tc)
    ev = events.select(
        "tournament_id",
        pl.col("eff_end").alias("event_end"),
        pl.col("eff_start").alias("event_start"),
        "in_progress",
    )
    g = games.join(ev, on="tournament_id", how="left").with_columns(
        (pl.col("event_end") if by_event_end else pl.coalesce(pl.col("game_date"), pl.col("event_end"))).alias(
            "eff_date"
        )
    )
    if scheme is not None:
        g = scheme.assign(g, end_col="eff_date", start_col=None, rated_on_col="list_date")
    else:
        cal = per_event_calendar(g.get_column("eff_date").drop_nulls().unique().to_list())
        g = g.with_columns((pl.col("eff_date") + dt.timedelta(days=1)).alias("list_date"))
        g = g.with_columns(pl.when(pl.col("list_date").is_in(cal)).then(pl.col("list_date")).alias("list_date"))
    g = g.with_columns(_reason(rate_class, skip_online).alias("reason"))
    return _sides(con, g)


def _sides(con: duckdb.DuckDBPyConnection, g: pl.DataFrame) -> pl.DataFrame:
    """`load_game_rows`'s two rows per game of `g` (one per player), with the file's facts of the
    player and of the opponent in the event."""
    common = [
        "game_id",
        "tournament_id",
        "game_date",
        "eff_date",
        "event_start",
        "list_date",
        "rate_class",
        "tc_assumed",
        "reason",
        "file_id",
        "line",
        "in_progress",
    ]
    sides = []
    for me, opp in (("white", "black"), ("black", "white")):
        sides.append(
            g.select(
                *common,
                pl.col(f"{me}_id").alias("player_id"),
                pl.col(f"{opp}_id").alias("opponent_id"),
                pl.col(f"{me}_score").alias("score"),
                (pl.col(f"{me}_score") * 2).round(0).cast(pl.Int64).alias("score2"),
                pl.lit(me).alias("colour"),
            )
        )
    rows = pl.concat(sides).filter(pl.col("player_id").is_not_null())
    info = load_player_event_info(con)
    rows = rows.join(info, on=["tournament_id", "player_id"], how="left")
    rows = rows.join(
        info.select(
            "tournament_id",
            pl.col("player_id").alias("opponent_id"),
            pl.col("rating_in_file").alias("opp_rating_in_file"),
        ),
        on=["tournament_id", "opponent_id"],
        how="left",
    )
    return rows.sort("game_id", "colour", descending=[False, True])


def _reason(rate_class: str | None, skip_online: bool) -> pl.Expr:
    """Why a game is not rated in this system (`load_game_rows`' `reason`), null when it is: the
    first that applies, in the order of the branches."""
    class_ok = pl.lit(True) if rate_class is None else pl.col("rate_class") == rate_class
    return (
        pl.when(pl.lit(skip_online) & pl.col("never_rated").str.starts_with("online:"))
        .then(pl.lit("online"))
        .when(pl.lit(skip_online) & pl.col("never_rated").is_not_null())
        .then(pl.lit("not_rated"))
        .when(pl.col("variant").is_not_null() & (pl.col("variant").str.to_lowercase() != "standard"))
        .then(pl.lit("variant"))
        .when(~class_ok)
        .then(pl.lit("not_this_rate_class"))
        # an event in progress first: its unplayed round has no dates, and every system says the same
        .when(pl.col("in_progress").is_not_null())
        .then(pl.lit("in_progress"))
        .when(pl.col("list_date").is_null())
        .then(pl.lit("no_dates"))
        .when(pl.col("white_id").is_null() | pl.col("black_id").is_null())
        .then(pl.lit("no_player"))
        .when(~pl.col("played").fill_null(False))
        .then(pl.lit("forfeit"))
        # pgn-faults.md 8: the file says two results; neither is taken until a file resolves it
        .when(pl.col("result_conflict").fill_null(False))
        .then(pl.lit("result_conflict"))
        .when(pl.col("white_score").is_null() | pl.col("black_score").is_null())
        .then(pl.lit("no_result"))
        .when(pl.col("white_id") == pl.col("black_id"))
        .then(pl.lit("no_player"))
        .when(pl.col("unplayed_code").fill_null("").str.to_uppercase().is_in(["W", "D", "L"]))
        .then(pl.lit("not_rated_code"))
        .when(pl.col("has_moves").fill_null(True).not_() | (pl.col("ply_count").fill_null(2) < 2))
        .then(pl.lit("no_moves"))
    )


def scope_skips(rows: pl.DataFrame) -> pl.DataFrame:
    """Per (tournament, scope reason): games left unrated (for ``rating_skips``).

    Columns: tournament_id Int64, reason Utf8 ('in_progress: <the unfinished round>' for an event
    still in progress), n_games Int64 (games, not player rows).
    """
    return (
        rows.filter(pl.col("reason").is_in(list(SCOPE_REASONS)))
        .with_columns(
            pl.when(pl.col("reason") == "in_progress")
            .then(pl.lit("in_progress: ") + pl.col("in_progress"))
            .otherwise(pl.col("reason"))
            .alias("reason")
        )
        .group_by("tournament_id", "reason")
        .agg(pl.col("game_id").n_unique().cast(pl.Int64).alias("n_games"))
        .sort("tournament_id", "reason")
    )


def refuse_before(rows: pl.DataFrame, rating_from: dt.date) -> pl.DataFrame:
    """`rows` (`load_game_rows`) with reason 'before_rating_from' for every game of an event that
    starts before `rating_from` (its start, else the game's date): the system did not exist yet.
    That reason wins over the others, as the FIDE engine leaves such events out first."""
    start = pl.coalesce("event_start", "eff_date")
    return rows.with_columns(
        pl.when(start < rating_from).then(pl.lit("before_rating_from")).otherwise(pl.col("reason")).alias("reason")
    )
