"""What an event's title norms are decided from, read from the store in sets (FIDE B.01; the
rules: `elopipe.rating.fide.norms`; what is read and why: `elopipe.rating.fide.norms_store`).

`load` reads, for the events asked, the frames 'events', 'games', 'entries' and 'unplayed', one
query per kind; `prepare` derives the facts the clauses need (round-robin shape, 1.4.2a/b
exclusions, 1.4.3a/b national championship, 1.4.3d Swiss exemption, byes) from them alone.
"""

from __future__ import annotations

from collections.abc import Collection

import duckdb
import polars as pl

from elopipe.rating.fide import norms
from elopipe.store.frames import registered, to_polars

STANDARD = "fide"

# the files (parts) of the events asked for: their games and byes are read by tournament_id first,
# not over the whole store and then filtered by event (issue 27: an incremental run's norms)
_PARTS = (
    "SELECT tournament_id FROM tournaments"
    " WHERE COALESCE(event_id, tournament_id) IN (SELECT tournament_id FROM _norm_events)"
)

_GAMES_SQL = f"""
WITH parts AS ({_PARTS}),
ev AS (
    SELECT t.tournament_id, t.first_day, t.last_day,
           COALESCE(date_diff('day', t.first_day, t.last_day) + 1 > 30, FALSE) AS long_event
    FROM tournaments t WHERE t.tournament_id IN (SELECT tournament_id FROM _norm_events)
),
sides AS (
    SELECT c.list_date, c.tournament_id, c.player_id, c.opponent_id, g.round, g.game_date,
           CAST(2 * c.score AS INTEGER) AS points_x2, c.ro, c.rc, e.long_event, e.first_day,
           COALESCE(CASE WHEN e.long_event THEN g.game_date END, e.first_day) AS asof_day
    FROM rating_changes c
    JOIN (SELECT * FROM games WHERE tournament_id IN (SELECT tournament_id FROM parts)) g USING (game_id)
    JOIN ev e ON e.tournament_id = c.tournament_id
    WHERE c.system = $system AND g.played AND c.score IS NOT NULL AND c.opponent_id IS NOT NULL
),
official AS (SELECT * FROM official_lists WHERE system = 'fide' AND player_id IS NOT NULL),
-- read for the opponents of a long event only (the others take rc): the join then sorts their rows, not every list's
computed AS (SELECT player_id, list_date, rating FROM rating_lists WHERE system = $system
             AND player_id IN (SELECT opponent_id FROM sides WHERE long_event))
SELECT s.list_date, s.tournament_id, s.player_id, s.opponent_id, s.round, s.points_x2, s.ro,
       CASE WHEN s.long_event THEN COALESCE(o.rating, cl.rating, s.rc) ELSE s.rc END AS rating,
       o.player_id IS NOT NULL AS on_list, o.title AS list_title, o.federation AS list_fed
FROM sides s
ASOF LEFT JOIN official o ON o.player_id = s.opponent_id AND o.list_date <= s.asof_day
ASOF LEFT JOIN computed cl ON cl.player_id = s.opponent_id AND cl.list_date <= s.asof_day
"""

_ENTRIES_SQL = """
WITH ev AS (
    SELECT tournament_id, first_day FROM tournaments
    WHERE tournament_id IN (SELECT tournament_id FROM _norm_events)
),
entry AS (
    SELECT e.tournament_id, tp.player_id,
           any_value(tp.title) FILTER (WHERE tp.title IS NOT NULL) AS tp_title,
           any_value(tp.federation) FILTER (WHERE tp.federation IS NOT NULL) AS tp_fed,
           any_value(tp.sex) FILTER (WHERE tp.sex IS NOT NULL) AS tp_sex,
           any_value(tp.start_rank) AS start_rank,
           any_value(tp.name_as_written) AS name_as_written,
           bool_or(t.source_format = 'trf') AS from_trf,
           min(e.first_day) AS first_day
    FROM ev e
    JOIN tournaments t ON COALESCE(t.event_id, t.tournament_id) = e.tournament_id
    JOIN tournament_players tp ON tp.tournament_id = t.tournament_id
    GROUP BY ALL
),
official AS (SELECT * FROM official_lists WHERE system = 'fide' AND player_id IS NOT NULL)
SELECT en.tournament_id, en.player_id, en.start_rank, COALESCE(en.name_as_written, p.name) AS name,
       p.fide_id, o.player_id IS NOT NULL AS on_list,
       CASE WHEN o.player_id IS NOT NULL THEN COALESCE(o.title, '') ELSE en.tp_title END AS title,
       COALESCE(o.federation, en.tp_fed, p.federation) AS federation,
       COALESCE(o.sex, en.tp_sex, p.sex) AS sex,
       en.from_trf, en.tp_title
FROM entry en
JOIN players p ON p.player_id = en.player_id
ASOF LEFT JOIN official o ON o.player_id = en.player_id AND o.list_date <= en.first_day
"""

_UNPLAYED_SQL = f"""
SELECT COALESCE(t.event_id, t.tournament_id) AS tournament_id, u.player_id, u.round, u.code, u.opponent_id
FROM (SELECT * FROM unplayed_rounds WHERE tournament_id IN ({_PARTS})) u JOIN tournaments t USING (tournament_id)
WHERE COALESCE(t.event_id, t.tournament_id) IN (SELECT tournament_id FROM _norm_events)
UNION ALL
SELECT COALESCE(t.event_id, t.tournament_id), p.player_id, g.round,
       CASE WHEN p.score = 1 THEN '+' ELSE '-' END, p.opponent_id
FROM (SELECT * FROM canonical_games WHERE NOT played AND tournament_id IN ({_PARTS})) g
JOIN tournaments t USING (tournament_id)
CROSS JOIN LATERAL (SELECT g.white_id AS player_id, g.white_score AS score, g.black_id AS opponent_id
                    UNION ALL SELECT g.black_id, g.black_score, g.white_id) p
WHERE NOT g.played AND COALESCE(t.event_id, t.tournament_id) IN (SELECT tournament_id FROM _norm_events)
"""


def _events(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    frame = to_polars(
        con.sql(
            """
        SELECT tournament_id, name, first_day, last_day, rounds, federation AS host, is_team,
               COALESCE(date_diff('day', first_day, last_day) + 1 > 30, FALSE) AS long_event
        FROM tournaments WHERE tournament_id IN (SELECT tournament_id FROM _norm_events)
        """
        )
    )
    return frame


def load(
    con: duckdb.DuckDBPyConnection, tournament_ids: Collection[int], system: str = STANDARD
) -> dict[str, pl.DataFrame]:
    """The frames a norm needs for `tournament_ids` (events, rated under `system`): 'events',
    'games' (one row per applicant and counted game), 'entries' (title, federation, sex of each
    participant), 'unplayed' (byes and forfeits: round, TRF code)."""
    ids = pl.DataFrame({"tournament_id": sorted(set(tournament_ids))}, schema={"tournament_id": pl.Int32})
    with registered(con, "_norm_events", ids):
        return {
            "events": _events(con),
            "games": to_polars(con.sql(_GAMES_SQL, params={"system": system})),
            "entries": to_polars(con.sql(_ENTRIES_SQL)),
            "unplayed": to_polars(con.sql(_UNPLAYED_SQL)),
        }


def _shape(games: pl.DataFrame, unplayed: pl.DataFrame) -> pl.DataFrame:
    """Per event: round_robin / double_rr (every pair of its players met once / twice; a forfeit
    between two paired players is a meeting)."""
    cols = ["tournament_id", "player_id", "opponent_id", "round"]
    paired = pl.concat(
        [
            games.select(cols),
            unplayed.filter(pl.col("opponent_id").is_not_null()).select(cols).cast(games.select(cols).schema),
        ]
    )
    pairs = paired.select(
        "tournament_id",
        pl.min_horizontal("player_id", "opponent_id").alias("a"),
        pl.max_horizontal("player_id", "opponent_id").alias("b"),
        "round",
    ).unique()
    met = pairs.group_by("tournament_id", "a", "b").len()
    players = pl.concat(
        [pairs.select("tournament_id", pl.col("a").alias("p")), pairs.select("tournament_id", pl.col("b").alias("p"))]
    )
    n = players.unique().group_by("tournament_id").len("n")
    return (
        met.group_by("tournament_id")
        .agg(pl.len().alias("pairs"), pl.col("len").min().alias("lo"), pl.col("len").max().alias("hi"))
        .join(n, on="tournament_id")
        .with_columns(
            full=(pl.col("pairs") == pl.col("n") * (pl.col("n") - 1) // 2)
            & (pl.col("lo") == pl.col("hi"))
            & (pl.col("n") >= 3)
        )
        .select(
            "tournament_id",
            (pl.col("full") & (pl.col("hi") <= 2)).alias("round_robin"),
            (pl.col("full") & (pl.col("hi") == 2)).alias("double_rr"),
        )
    )


def _zero_vs_rated(games: pl.DataFrame) -> pl.DataFrame:
    """1.4.2b: (tournament_id, player_id) of unrated players who scored nothing against rated
    opponents (at least one such game)."""
    return (
        games.filter(pl.col("ro").is_null() & pl.col("rc_known"))
        .group_by("tournament_id", "player_id")
        .agg(pl.col("points_x2").sum().alias("pts"))
        .filter(pl.col("pts") == 0)
        .select("tournament_id", pl.col("player_id").alias("opponent_id"), pl.lit(True).alias("zero_vs_rated"))
    )


def _swiss_exemption(
    ev: pl.DataFrame, entries: pl.DataFrame, games: pl.DataFrame, unplayed: pl.DataFrame
) -> pl.DataFrame:
    """1.4.3d per event: True when every round has ≥ 20 FIDE-rated players not from the host
    federation (nor FID/NON), of ≥ 3 federations, ≥ 10 of them GM/IM/WGM/WIM, counting only those
    who missed at most one round (a pairing-allocated bye 'U' or a forfeit win is no miss)."""
    present = pl.concat(
        [
            games.select("tournament_id", "player_id", "round"),
            unplayed.filter(pl.col("code").is_in(["U", "+"])).select("tournament_id", "player_id", "round"),
        ]
    ).unique()
    rated = games.filter(pl.col("ro").is_not_null()).select("tournament_id", "player_id").unique()
    base = (
        present.join(rated, on=["tournament_id", "player_id"])
        .join(entries.select("tournament_id", "player_id", "federation", "title"), on=["tournament_id", "player_id"])
        .join(ev.select("tournament_id", "host", "rounds", "round_robin"), on="tournament_id")
        .filter(
            ~pl.col("round_robin")
            & pl.col("federation").is_not_null()
            & pl.col("host").is_not_null()
            & (pl.col("federation") != pl.col("host"))
            & ~pl.col("federation").is_in([norms.NO_FEDERATION, norms.NOT_FIDE])
        )
    )
    keep = base.group_by("tournament_id", "player_id").agg(pl.len().alias("here"), pl.col("rounds").first())
    keep = keep.filter(pl.col("here") >= pl.col("rounds") - 1).select("tournament_id", "player_id")
    per_round = (
        base.join(keep, on=["tournament_id", "player_id"])
        .group_by("tournament_id", "round")
        .agg(
            pl.len().alias("players"),
            pl.col("federation").n_unique().alias("feds"),
            pl.col("title").is_in(list(norms.MASTER_TITLES)).sum().alias("masters"),
        )
    )
    return (
        per_round.group_by("tournament_id")
        .agg(
            pl.len().alias("rounds_seen"),
            ((pl.col("players") >= 20) & (pl.col("feds") >= 3) & (pl.col("masters") >= 10)).all().alias("ok"),
        )
        .join(ev.select("tournament_id", "rounds"), on="tournament_id")
        .select("tournament_id", (pl.col("ok") & (pl.col("rounds_seen") >= pl.col("rounds"))).alias("swiss_143d"))
    )


def prepare(frames: dict[str, pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(events with their facts, games with the opponent's title/federation and 1.4.2 exclusion,
    per-applicant facts)."""
    ev, games, entries, unplayed = (frames[k] for k in ("events", "games", "entries", "unplayed"))
    games = games.with_columns(rc_known=pl.col("rating").is_not_null())
    shape = _shape(games, unplayed)
    ev = ev.join(shape, on="tournament_id", how="left").with_columns(
        pl.col("round_robin").fill_null(False),
        pl.col("double_rr").fill_null(False),
    )
    max_round = (
        pl.concat([games.select("tournament_id", "round"), unplayed.select("tournament_id", "round")])
        .group_by("tournament_id")
        .agg(pl.col("round").max().alias("max_round"))
    )
    ev = ev.join(max_round, on="tournament_id", how="left").with_columns(
        pl.max_horizontal(pl.col("rounds").cast(pl.Int64), pl.col("max_round").cast(pl.Int64)).alias("rounds")
    )
    titles_in_file = entries.group_by("tournament_id").agg(
        (pl.col("from_trf").any() | pl.col("tp_title").is_not_null().any()).alias("titles_in_file")
    )
    entries = entries.join(titles_in_file, on="tournament_id", how="left")
    # a title is known on an official list, or where the event's file gives titles (blank: none)
    entries = entries.with_columns(
        pl.when(pl.col("on_list") | pl.col("titles_in_file"))
        .then(pl.col("title").fill_null(""))
        .otherwise(None)
        .alias("title")
    )
    national = (
        entries.join(ev.select("tournament_id", "host"), on="tournament_id")
        .group_by("tournament_id")
        .agg(
            (
                pl.col("host").is_not_null().all()
                & (pl.col("federation").is_null() | (pl.col("federation") == pl.col("host"))).all()
            ).alias("maybe_national")
        )
    )
    ev = (
        ev.join(national, on="tournament_id", how="left")
        .join(_swiss_exemption(ev, entries, games, unplayed), on="tournament_id", how="left")
        .with_columns(pl.col("maybe_national").fill_null(False), pl.col("swiss_143d").fill_null(False))
    )
    opp = entries.select(
        "tournament_id",
        pl.col("player_id").alias("opponent_id"),
        pl.col("title").alias("opp_title"),
        pl.col("federation").alias("opp_fed"),
    )
    games = (
        games.join(opp, on=["tournament_id", "opponent_id"], how="left")
        .join(_zero_vs_rated(games), on=["tournament_id", "opponent_id"], how="left")
        .join(ev.select("tournament_id", "round_robin"), on="tournament_id")
        .with_columns(
            # an official list's title and federation (in force on the game's day) override the entry's
            pl.when(pl.col("on_list"))
            .then(pl.col("list_title").fill_null(""))
            .otherwise(pl.col("opp_title"))
            .alias("opp_title"),
            pl.coalesce("list_fed", "opp_fed").alias("opp_fed"),
            pl.when(pl.col("opp_fed") == norms.NOT_FIDE)
            .then(pl.lit("1.4.2a"))
            .when(pl.col("round_robin") & pl.col("zero_vs_rated").fill_null(False) & pl.col("rating").is_null())
            .then(pl.lit("1.4.2b"))
            .alias("excluded"),
        )
    )
    byes = (
        unplayed.filter(pl.col("code").is_in(["U", "+"]))
        .group_by("tournament_id", "player_id")
        .agg(pl.col("round").n_unique().alias("byes"))
    )
    applicants = entries.join(byes, on=["tournament_id", "player_id"], how="left").with_columns(
        pl.col("byes").fill_null(0)
    )
    return ev, games, applicants
