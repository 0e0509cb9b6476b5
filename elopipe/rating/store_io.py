"""Store I/O for the rating engines: their inputs read as Polars frames.

Every engine (FIDE, FFE, Elo, Glicko-2) reads its inputs through the `load_*` functions (all
take an open DuckDB connection, read-only is enough); it writes its results through
`elopipe.rating.result_tables`, so the store contract of `elopipe.store.schema` is honoured in
one place.

* `load_games(con)` — the ``canonical_games`` view, one row per game.
* `load_tournaments(con)` — events with their effective dates (file dates, else game dates).
* `load_tournament_players(con)` — per-event player rows (rating written in the file, birth year).
* `load_players(con)` — the player table (FIDE id, birth year, sex).
* `load_official_lists(con, system)` — imported official lists (the base, when present).
* `load_lists(con, system, ...)` — lists already computed by a previous run.
* `load_digests(con, system)` — per-period input digests of the last run.

Ids are Int64, dates pl.Date, scores Float64 (0, 0.5, 1 are exact in binary; engines that
sum them convert to integer hundredths first).  Ratings are Int64 rating points.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import struct
from collections.abc import Collection
from typing import Any

import duckdb
import polars as pl

from elopipe.read.control_chars import shown_value
from elopipe.read.dates import DATE_MIN, latest_plausible
from elopipe.runtime.settings import given_or_env
from elopipe.store.frames import registered, to_polars


def _pl(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
    # a relation (con.sql) converts without the extra copy of a DB-API cursor (DuckDB 2.x)
    frame = to_polars(con.sql(sql, params=params or None))
    return frame


def query(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
    """The rows of `sql` (with its `params`) as a Polars frame."""
    return _pl(con, sql, params)


# ---- reading ---------------------------------------------------------------


def plausible_sql(col: str) -> str:
    """SQL: `col` when it lies in DATE_MIN..latest_plausible() (`elopipe.read.dates`), else NULL.

    The readers refuse other dates; a store written by an older version may still hold one
    (a mistyped 2923), which would stretch every calendar of lists over centuries.
    """
    lo, hi = DATE_MIN.isoformat(), latest_plausible().isoformat()
    return f"CASE WHEN {col} BETWEEN DATE '{lo}' AND DATE '{hi}' THEN {col} END"


_plausible = plausible_sql


def implausible_dates_digest(con: duckdb.DuckDBPyConnection) -> str:
    """sha1 hex of the stored dates that `plausible_sql` reads as NULL today (``games.game_date``,
    ``tournaments.start_date`` and ``end_date`` outside DATE_MIN..latest_plausible()), distinct
    and in order: all that the machine's date takes from a rating run's inputs.

    A run's digests take this, not the bound itself: the bound moves every day, while the dates
    it leaves out change only when a stored date crosses it (a file dated ahead of its event as
    the days pass, or a mistyped year an older version stored), so a `rate` on a new day with
    nothing new reads its checkpoints instead of computing every period again (issue 27).
    """
    lo, hi = DATE_MIN.isoformat(), latest_plausible().isoformat()
    rows = con.execute(f"""
        SELECT DISTINCT d FROM (
            SELECT game_date AS d FROM games
            UNION ALL SELECT start_date FROM tournaments UNION ALL SELECT end_date FROM tournaments)
        WHERE d < DATE '{lo}' OR d > DATE '{hi}' ORDER BY d
    """).fetchall()
    return hashlib.sha1(repr([r[0].isoformat() for r in rows]).encode()).hexdigest()


# The rating reads events, not files: a tournament that is a part of an event held in several
# files (`elopipe.identity.events`, `tournaments.event_id`) gives its games and entries to that event.
EVENT_GAMES = """(
    SELECT g.* REPLACE (coalesce(t.event_id, g.tournament_id) AS tournament_id)
    FROM canonical_games g LEFT JOIN tournaments t ON t.tournament_id = g.tournament_id
)"""
# one entry per event and player: the first part's
EVENT_PLAYERS = """(
    SELECT tp.* REPLACE (coalesce(t.event_id, tp.tournament_id) AS tournament_id)
    FROM tournament_players tp LEFT JOIN tournaments t ON t.tournament_id = tp.tournament_id
    QUALIFY row_number() OVER (PARTITION BY coalesce(t.event_id, tp.tournament_id), tp.player_id
                               ORDER BY tp.tournament_id) = 1
)"""
# one row per event: the first part's name, place and rate of play, the days of all its parts
EVENT_TOURNAMENTS = """(
    SELECT coalesce(event_id, tournament_id) AS tournament_id, arg_min(name, tournament_id) AS name,
           min(file_id) AS file_id, min(start_date) AS start_date, max(end_date) AS end_date,
           arg_min(time_control, tournament_id) AS time_control,
           arg_min(rate_class, tournament_id) FILTER (WHERE rate_class IS NOT NULL) AS rate_class,
           bool_or(is_team) AS is_team, arg_min(extra, tournament_id) AS extra,
           arg_min(city, tournament_id) AS city, arg_min(source_format, tournament_id) AS source_format
    FROM tournaments GROUP BY 1
)"""


# What a game of a results export (moves unknown: flag 'moves_unknown', see
# `elopipe.read.pgn.finish.settle_moveless`) is to the rating: the `--no-moves` policy.
NO_MOVES_POLICIES = ("played", "forfeit", "unrated")


def no_moves_policy(value: str | None = None) -> str:
    """The policy asked for: `value`, else ELOPIPE_NO_MOVES (a federation's standing choice, for
    every rate, run and watch), else 'played'. Raises ValueError for another policy."""
    return check_no_moves(given_or_env(value, "ELOPIPE_NO_MOVES", "played"))


def check_no_moves(policy: str) -> str:
    """`policy` in any case, without surrounding blanks, if it is one of `NO_MOVES_POLICIES`
    (returned lower case, as `--unknown-tc` reads its value); else ValueError naming them."""
    if (found := policy.strip().lower()) not in NO_MOVES_POLICIES:
        raise ValueError(f"no_moves must be {', '.join(NO_MOVES_POLICIES[:-1])} or {NO_MOVES_POLICIES[-1]}, "
                         f"not {shown_value(policy)}")  # fmt: skip
    return found


def load_games(
    con: duckdb.DuckDBPyConnection, no_moves: str = "played", events: Collection[int] | None = None
) -> pl.DataFrame:
    """The canonical games (view ``canonical_games``), one row per game; tournament_id is the
    event's (`EVENT_GAMES`).

    Columns: game_id Int64, tournament_id Int64, white_id Int64, black_id Int64,
    white_score Float64, black_score Float64 (null for '*'), result Utf8, played Boolean,
    result_conflict Boolean (the Result tag and the movetext's marker disagree: pgn-faults.md 8,
    never rated until a file resolves it), unplayed_code Utf8, game_date Date,
    game_day Date (game_date when day-precise, else null),
    round Int64, ply_count Int64 (null: unknown, e.g. TRF),
    has_moves Boolean (null when the source cannot tell: TRF), time_control Utf8,
    variant Utf8, white_rating_in_file Int64, black_rating_in_file Int64, file_id Int64,
    line Int64.  A game_date outside `elopipe.read.dates` DATE_MIN..latest_plausible() is NULL.

    `no_moves` (`NO_MOVES_POLICIES`): what a game of a results export is, whose moves are
    unknown: 'played' (has_moves null, as a TRF game: rated), 'forfeit' (a decisive one is not
    played, a draw has no moves: neither is rated) or 'unrated' (has_moves FALSE: kept, not
    rated). A PGN game shown with fewer than two plies in a file that shows moves is never rated
    (FIDE: both players must have made a move; pgn-faults.md 12 and 13). Raises ValueError
    for another policy. `events`: only the games of these events (None: all).
    """
    return _pl(con, f"SELECT * FROM ({games_sql(no_moves)}) {_only(events)} ORDER BY game_id", _ids(events))


def _only(events: Collection[int] | None) -> str:
    """SQL: a WHERE clause keeping the rows of `events` (event ids; None: every row)."""
    return "" if events is None else "WHERE tournament_id IN (SELECT unnest(?::BIGINT[]))"


def _ids(events: Collection[int] | None) -> list[Any] | None:
    return None if events is None else [sorted(events)]


def games_sql(no_moves: str = "played") -> str:
    """The query of `load_games` (its columns, no order): what a rating run reads of each game,
    also digested per event (`elopipe.rating.fide.checkpoint`). Raises ValueError for an
    unknown `no_moves` policy."""
    no_moves = check_no_moves(no_moves)
    unknown = "list_contains(flags, 'moves_unknown')"
    forfeit = f"{unknown} AND result IN ('1-0', '0-1')" if no_moves == "forfeit" else "FALSE"
    return f"""
        SELECT game_id::BIGINT AS game_id, tournament_id::BIGINT AS tournament_id,
               white_id::BIGINT AS white_id, black_id::BIGINT AS black_id,
               white_score::DOUBLE AS white_score, black_score::DOUBLE AS black_score,
               result, played AND NOT COALESCE({forfeit}, FALSE) AS played,
               COALESCE(list_contains(flags, 'result_conflict'), FALSE) AS result_conflict,
               CASE WHEN {forfeit} THEN 'forfeit' ELSE unplayed_code END AS unplayed_code,
               {_plausible("game_date")} AS game_date,
               CASE WHEN date_precision = 'day' THEN {_plausible("game_date")} END AS game_day,
               round::BIGINT AS round, ply_count::BIGINT AS ply_count,
               CASE WHEN COALESCE({unknown}, FALSE) THEN {"NULL" if no_moves == "played" else "FALSE"}
                    WHEN ply_count IS NOT NULL THEN ply_count > 0
                    WHEN movetext_hash IS NOT NULL THEN TRUE
                    WHEN headers IS NOT NULL THEN FALSE   -- a PGN game with no movetext
                    ELSE NULL END AS has_moves,
               time_control, variant,
               white_rating_in_file::BIGINT AS white_rating_in_file,
               black_rating_in_file::BIGINT AS black_rating_in_file,
               file_id::BIGINT AS file_id, line::BIGINT AS line
        FROM {EVENT_GAMES}
        """


def event_games_sql() -> str:
    """The query, per event (tournament_id: `EVENT_GAMES`), of first_game, last_game (Date: the
    plausible dates of its canonical games, today's bounds) and n_games (their count)."""
    return f"""
        SELECT tournament_id, min({_plausible("game_date")}) AS first_game,
               max({_plausible("game_date")}) AS last_game, count(*) AS n_games
        FROM {EVENT_GAMES} GROUP BY tournament_id
        """


def tournaments_sql(games: str | None = None) -> str:
    """The query of `load_tournaments` before its computed dates (its stored columns, no order;
    the plausible dates are today's). `games`: a relation holding `event_games_sql`'s rows, to
    read in place of that query."""
    return f"""
        WITH g AS ({event_games_sql() if games is None else f"SELECT * FROM {games}"})
        SELECT t.tournament_id::BIGINT AS tournament_id, t.name, t.file_id::BIGINT AS file_id,
               {_plausible("t.start_date")} AS start_date, {_plausible("t.end_date")} AS end_date,
               g.first_game, g.last_game,
               t.time_control, t.rate_class, t.is_team,
               coalesce(g.n_games, 0)::BIGINT AS n_games,
               json_extract_string(t.extra, '$.platform') AS platform,
               json_extract_string(t.extra, '$.in_progress') AS in_progress,
               coalesce(json_extract_string(t.extra, '$.Site'), t.city) AS site,
               t.source_format
        FROM {EVENT_TOURNAMENTS} t LEFT JOIN g USING (tournament_id)
        """


def load_tournaments(con: duckdb.DuckDBPyConnection, games: pl.DataFrame | None = None) -> pl.DataFrame:
    """Events with effective dates: one row per event (`EVENT_TOURNAMENTS`), the parts of one
    event held in several files together. `games`: the rows of `event_games_sql` (tournament_id,
    first_game, last_game, n_games; extra columns ignored) as read already
    (`elopipe.rating.event_inputs.digests`), None: read here.

    Columns: tournament_id Int64, name Utf8, file_id Int64, start_date Date, end_date Date
    (as stored), first_game Date, last_game Date (over canonical games),
    eff_start Date = start_date, else first_game, else eff_end;
    eff_end Date = end_date, else last_game, else start_date (never before eff_start);
    date_source Utf8: 'file' (end_date written), 'games' (from game dates), 'start' (only a
    start date), 'none' (no date at all: the event cannot be placed in a period);
    time_control Utf8, rate_class Utf8, is_team Boolean, n_games Int64;
    platform Utf8 (``extra.platform`` written by a reader, e.g. 'lichess' for a lichess TRF
    export), site Utf8 (PGN Site tag as written, else the city), source_format Utf8 ('pgn' | 'trf');
    in_progress Utf8 (``extra.in_progress`` written by the TRF reader for an event still in
    progress: its unfinished round; null: complete).
    Dates outside `elopipe.read.dates` DATE_MIN..latest_plausible() count as unknown (NULL).
    """
    if games is None:
        df = _pl(con, tournaments_sql() + " ORDER BY t.tournament_id")
    else:
        cols = games.select("tournament_id", "first_game", "last_game", "n_games")
        with registered(con, "_event_games", cols):
            df = _pl(con, tournaments_sql("_event_games") + " ORDER BY t.tournament_id")
    return df.with_columns(
        pl.coalesce("end_date", "last_game", "start_date").alias("eff_end"),
        pl.when(pl.col("end_date").is_not_null())
        .then(pl.lit("file"))
        .when(pl.col("last_game").is_not_null())
        .then(pl.lit("games"))
        .when(pl.col("start_date").is_not_null())
        .then(pl.lit("start"))
        .otherwise(pl.lit("none"))
        .alias("date_source"),
    ).with_columns(
        pl.min_horizontal(pl.coalesce("start_date", "first_game", "eff_end"), pl.col("eff_end")).alias("eff_start"),
    )


def load_tournament_players(con: duckdb.DuckDBPyConnection, events: Collection[int] | None = None) -> pl.DataFrame:
    """Per-event player rows (`EVENT_PLAYERS`: one per event and player); `events`: only those of
    these events (None: all).

    Columns: tournament_id Int64, player_id Int64, start_rank Int64, rating_in_file Int64
    (null = unrated; 0 is turned into null), fide_id_in_file Int64, birth_year Int64,
    sex Utf8, federation Utf8, title Utf8, file_id Int64, line Int64.
    """
    sql = f"SELECT * FROM ({TOURNAMENT_PLAYERS_SQL}) {_only(events)} ORDER BY tournament_id, player_id"
    return _pl(con, sql, _ids(events))


# the query of `load_tournament_players` (its columns, no order)
TOURNAMENT_PLAYERS_SQL = f"""
    SELECT tournament_id::BIGINT AS tournament_id, player_id::BIGINT AS player_id,
           start_rank::BIGINT AS start_rank,
           nullif(rating_in_file, 0)::BIGINT AS rating_in_file,
           nullif(fide_id_in_file, 0)::BIGINT AS fide_id_in_file,
           birth_year::BIGINT AS birth_year, sex, federation, title,
           file_id::BIGINT AS file_id, line::BIGINT AS line
    FROM {EVENT_PLAYERS}
    """


# the query of `load_players` (its columns, no order)
PLAYERS_SQL = """
        SELECT p.player_id::BIGINT AS player_id, nullif(p.fide_id, 0)::BIGINT AS fide_id, p.name,
               p.federation, p.sex,
               coalesce(f.birth_year, p.birth_year, year(p.birth_date))::BIGINT AS birth_year,
               coalesce(f.birth_date, p.birth_date) AS birth_date, p.title
        FROM players p
        LEFT JOIN (SELECT tp.player_id,
                          max(tp.birth_year) FILTER (WHERE t.start_date IS NULL
                                                        OR tp.birth_year <= year(t.start_date)) AS birth_year,
                          max(tp.birth_date) FILTER (WHERE t.start_date IS NULL
                                                        OR tp.birth_date <= t.start_date) AS birth_date
                   FROM tournament_players tp LEFT JOIN tournaments t USING (tournament_id)
                   GROUP BY tp.player_id) f USING (player_id)
        WHERE p.merged_into IS NULL
    """


def load_players(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The players. Columns: player_id Int64, fide_id Int64, name Utf8, federation Utf8,
    sex Utf8, birth_year Int64, birth_date Date, title Utf8.

    Birth year and date are the largest year and latest date the player's tournament entries
    write, leaving out values after the entry's event (typos such as 2030 must not hide a valid
    one); else those of the player row (`identity.facts`: the entries' facts, else an official
    list's). The stored files decide, not which of them came first, and a corrected file
    replaces its entries.  The FIDE junior rule (B.02 8.3.3) reads them."""
    return _pl(con, PLAYERS_SQL + " ORDER BY p.player_id")


# the query of `load_official_lists` (its columns, no order; one parameter: the system)
OFFICIAL_LISTS_SQL = """
        SELECT o.list_date,
               coalesce(o.player_id, p.player_id)::BIGINT AS player_id,
               nullif(o.rating, 0)::BIGINT AS rating, o.games::BIGINT AS games,
               nullif(o.k, 0)::BIGINT AS k, o.birth_year::BIGINT AS birth_year,
               o.flag, o.sex, o.rating_flag, coalesce(o.ever_2400, false) AS ever_2400
        FROM official_lists o
        LEFT JOIN (SELECT fide_id, min(player_id) AS player_id FROM players
                   WHERE fide_id IS NOT NULL GROUP BY fide_id) p
          ON o.player_id IS NULL AND o.fide_id = p.fide_id
        WHERE o.system = ? AND coalesce(o.player_id, p.player_id) IS NOT NULL
        -- one row per player and list (a list imported twice, or two ids of one player)
        QUALIFY row_number() OVER (
            PARTITION BY o.list_date, coalesce(o.player_id, p.player_id)
            ORDER BY o.rating DESC NULLS LAST, o.k NULLS LAST) = 1
    """


def load_official_lists(con: duckdb.DuckDBPyConnection, system: str) -> pl.DataFrame:
    """Imported official lists of `system` resolved to store players.

    Columns: list_date Date, player_id Int64 (rows whose player is not in the store are
    matched by fide_id, else dropped here — they cannot play in stored games; one row per
    player and list: duplicates keep the highest rating),
    rating Int64, games Int64, k Int64 (null when 0/blank = unknown), birth_year Int64,
    flag Utf8, sex Utf8, rating_flag Utf8, ever_2400 Boolean (the list says the player reached
    2400 or has K 10: FIDE B.02 8.3.3 keeps K = 10 for ever).
    """
    return _pl(con, OFFICIAL_LISTS_SQL + " ORDER BY o.list_date, 2", [system])


def load_lists(
    con: duckdb.DuckDBPyConnection,
    system: str,
    *,
    before: dt.date | None = None,
    list_date: dt.date | None = None,
) -> pl.DataFrame:
    """Rows of ``rating_lists`` for `system` (all columns of the table).

    `list_date`: only that list.  `before`: only lists dated strictly before it.
    """
    where = ["system = ?"]
    params: list[str | dt.date] = [system]
    if list_date is not None:
        where.append("list_date = ?")
        params.append(list_date)
    if before is not None:
        where.append("list_date < ?")
        params.append(before)
    return _pl(
        con,
        f"SELECT * FROM rating_lists WHERE {' AND '.join(where)} ORDER BY list_date, player_id",
        params,
    )


def load_digests(con: duckdb.DuckDBPyConnection, system: str) -> dict[dt.date, str]:
    """{list_date: digest} stored by the last run of `system`."""
    rows = con.execute("SELECT list_date, digest FROM rating_period_digests WHERE system = ?", [system]).fetchall()
    return {d: h for d, h in rows}


# ---- digests ---------------------------------------------------------------


def period_digests(df: pl.DataFrame, by: str = "list_date") -> dict[dt.date, str]:
    """Order-independent digest of the rows of `df` per value of column `by`.

    Each row is hashed (Polars `hash_rows`, fixed seed, columns in name order so that the
    frame's column order does not matter); the sorted row hashes of a group are hashed with
    SHA-1.  Ingesting the same files in another order gives the same digests.
    """
    if df.height == 0:
        return {}
    cols = sorted(c for c in df.columns if c != by)
    hashed = df.select(
        pl.col(by),
        df.select(cols).hash_rows(seed=1).alias("__h"),
    )
    out: dict[dt.date, str] = {}
    for key, grp in hashed.sort(by, "__h").group_by(by, maintain_order=True):
        # the hashes' little-endian bytes, packed without NumPy (0.08 CPU-s to import in every run)
        h = grp.get_column("__h").to_list()
        out[key[0]] = hashlib.sha1(struct.pack(f"<{len(h)}Q", *h)).hexdigest()
    return out
