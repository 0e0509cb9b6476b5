"""What each event gives a rating run, digested in DuckDB (issue 27).

`digests` reads the store's games once per run: each event's stored rows (its games, the
``game_sources`` rows that hide one of them, its parts and their entries) and the dates and count
of its canonical games. The run's inputs fingerprint takes them (`elopipe.rating.inputs`: the
players' rows are digested there with the other tables), and so do, when something changed, the
FIDE plan's period digests and its events' dates (`elopipe.rating.fide.checkpoint.inputs_by_period`,
`elopipe.rating.fide.resume.plan`), which add the facts the engine reads of each event's players
(`facts`). A run after new data thus reads the games twice, once for each, not three times; a run
with nothing new once, without joining a player to a game.

`shared` lends the frame one `rate` read to the engine it runs on the same connection (`reused`),
for that call only: a rating run writes results, never the tables digested here, so the frame is
that of the store the engine reads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

import duckdb
import polars as pl

from elopipe.rating import store_io
from elopipe.store.frames import registered, to_polars

# The stored columns of ``games`` that `store_io.games_sql` reads, raw: what it derives from them
# (plausible dates, the no-moves policy, has_moves) is a function of them and of what the global
# digest holds (the options, `latest_plausible`). Whether a game has moves or tags is all it reads
# of its movetext hash and headers.
GAME_COLUMNS = (
    "g.game_id, g.tournament_id, g.white_id, g.black_id, g.white_score, g.black_score, g.result, g.played,"
    " g.unplayed_code, g.game_date, g.date_precision, g.round, g.ply_count, g.flags, g.movetext_hash IS NULL,"
    " g.headers IS NULL, g.time_control, g.variant, g.white_rating_in_file, g.black_rating_in_file, g.file_id, g.line"
)

# the tables whose rows `digests` hashes, each row under its event: the fingerprint reads them here
TABLES = ("games", "tournaments", "tournament_players")

# an event's id: its own, or that of the event it is a part of (`elopipe.identity.events`)
_EVENTS = "ev AS (SELECT tournament_id, coalesce(event_id, tournament_id) AS event_id FROM tournaments)"
# 'rows:sum:xor' of the hashes `h` of a group (order-independent; the sum keeps two equal rows from cancelling)
_DIGEST = "count(*)::VARCHAR || ':' || sum(h::HUGEINT)::VARCHAR || ':' || bit_xor(h)::VARCHAR"


def digests(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per event: tournament_id Int64; digest Utf8 (count, sum and XOR of its rows' hashes) of its
    games (the columns a rating reads, `GAME_COLUMNS`) and what makes one of them no canonical
    game (the ``game_sources`` rows that hide it: `store_io.games_sql` reads the view
    ``canonical_games``), and of the stored rows of its parts (``tournaments``) and of their
    entries (``tournament_players``); first_game, last_game Date and n_games Int64 over its
    canonical games, as `store_io.load_tournaments` counts them (`store_io.event_games_sql`).
    A game or entry whose tournament is not stored counts under its own tournament_id."""
    # Rows hashed as stored: the view's anti-join over game_sources and the derived columns cost
    # more than the hashing (0.14 -> 0.06 CPU-s on 375k games, issue 27). The dates and count of
    # an event's canonical games come from the same pass (a second one in `load_tournaments` cost
    # 0.016 CPU-s on 375k games).
    day = store_io.plausible_sql("g.game_date")
    sql = f"""
        WITH {_EVENTS},
        hidden AS (SELECT DISTINCT source_game_id FROM game_sources WHERE game_id <> source_game_id),
        parts AS (
            SELECT coalesce(e.event_id, g.tournament_id) AS event_id, hash('g', {GAME_COLUMNS}) AS h,
                   x.source_game_id IS NULL AS canonical, {day} AS day
            FROM games g LEFT JOIN ev e USING (tournament_id) LEFT JOIN hidden x ON x.source_game_id = g.game_id
            UNION ALL SELECT coalesce(e.event_id, g.tournament_id), hash('s', s.game_id, s.source_game_id), FALSE, NULL
            FROM game_sources s JOIN games g ON g.game_id = s.source_game_id LEFT JOIN ev e USING (tournament_id)
            WHERE s.game_id <> s.source_game_id
            UNION ALL SELECT coalesce(t.event_id, tp.tournament_id), hash('e', tp), FALSE, NULL
            FROM tournament_players tp LEFT JOIN tournaments t USING (tournament_id)
            UNION ALL SELECT coalesce(t.event_id, t.tournament_id), hash('t', t), FALSE, NULL FROM tournaments t)
        SELECT event_id::BIGINT AS tournament_id, {_DIGEST} AS digest,
               min(day) FILTER (WHERE canonical) AS first_game, max(day) FILTER (WHERE canonical) AS last_game,
               count(*) FILTER (WHERE canonical)::BIGINT AS n_games
        FROM parts GROUP BY 1
    """
    frame = to_polars(con.sql(sql))
    return frame


def facts(con: duckdb.DuckDBPyConnection, players: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per event (tournament_id Int64, facts Utf8: count, sum and XOR of hashes): the facts the
    engine reads (`store_io.load_players`: FIDE ID, birth year and date) of the players of each of
    its games and entries, game by game and entry by entry, as `digests` counts them. `players`:
    `store_io.load_players` as read already (the same digests; None: read here)."""
    if players is not None:
        with registered(con, "_digest_players", players.select("player_id", "fide_id", "birth_year", "birth_date")):
            return _facts(con, "_digest_players")
    return _facts(con, f"({store_io.PLAYERS_SQL})")


def _facts(con: duckdb.DuckDBPyConnection, players: str) -> pl.DataFrame:
    # each game and entry with its players' facts: no set of (event, player) pairs to build
    sql = f"""
        WITH pf AS (SELECT player_id, hash(fide_id, birth_year, birth_date) AS h FROM {players}), {_EVENTS},
        parts AS (
            SELECT coalesce(e.event_id, g.tournament_id) AS event_id, hash('g', g.game_id, w.h, b.h) AS h
            FROM games g LEFT JOIN ev e USING (tournament_id)
            LEFT JOIN pf w ON w.player_id = g.white_id LEFT JOIN pf b ON b.player_id = g.black_id
            UNION ALL SELECT coalesce(t.event_id, tp.tournament_id), hash('e', tp.tournament_id, tp.player_id, f.h)
            FROM tournament_players tp LEFT JOIN tournaments t USING (tournament_id)
            LEFT JOIN pf f ON f.player_id = tp.player_id)
        SELECT event_id::BIGINT AS tournament_id, {_DIGEST} AS facts FROM parts GROUP BY 1
    """
    frame = to_polars(con.sql(sql))
    return frame


_SHARED: ContextVar[tuple[duckdb.DuckDBPyConnection, pl.DataFrame] | None] = ContextVar("event_digests", default=None)


@contextlib.contextmanager
def shared(con: duckdb.DuckDBPyConnection, frame: pl.DataFrame) -> Iterator[None]:
    """Within the block, `reused(con)` is `frame` (`digests` of the store behind `con`)."""
    token = _SHARED.set((con, frame))
    try:
        yield
    finally:
        _SHARED.reset(token)


def reused(con: duckdb.DuckDBPyConnection) -> pl.DataFrame | None:
    """The `digests` lent by `shared` for `con`; None outside such a block or for another connection."""
    kept = _SHARED.get()
    return kept[1] if kept is not None and kept[0] is con else None
