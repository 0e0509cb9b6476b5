"""Every participant of a tournament, with the reason a player has no rated game.

A report lists every entry of `tournament_players` (all parts of an event held in several files),
not only the players the rating wrote a `tournament_ratings` row for. For a player with no such
row, `no_rating_reason` says why, from the store alone:

- the event was left out by the rating (`rating_skips`: rate class, dates, online play ...);
- the player's rounds: forfeits ('+' / '-', unplayed games are never rated, B.02 5.x and the
  FIDE Handbook C.04 definition of a forfeit), byes by TRF code (H half-point bye, F full-point
  bye, U pairing-allocated bye (PAB), Z zero-point bye), rounds not paired;
- games played but not rated: the rating's own reason (`rating_changes.reason`: an unrated
  opponent, an FFE incompatible game, spec A.3), else the ratings in force (both players
  unrated: B.02 7.1.4, an unrated player's games count only against rated opponents).

For an unrated player the rating did rate, `ru_note` says where the initial rating stands
(B.02 7.1.4 and 8.2): the games pooled so far and Ru, or why there is none (a zero score in a
first event is disregarded, 8.2.1; too few games, or Ru below the floor).
"""

from __future__ import annotations

import duckdb
import polars as pl

from elopipe.publish.reason_words import REASON_WORDS, time_minimum_expr
from elopipe.rating.fide.b02 import RULES
from elopipe.store.frames import to_polars

# per report (`rid`: the event asked for, its parts elopipe.identity.events.PARTS) and player of
# the event: counts of each kind of round, from games and unplayed rounds; for many reports in one
# query (`$tids`), each report's rows as the query of that report alone would give them
_ROUNDS_SQL = """
WITH ev AS (
    SELECT coalesce(event_id, tournament_id) AS rid, tournament_id FROM tournaments
    WHERE coalesce(event_id, tournament_id) IN (SELECT unnest($tids::INTEGER[]))
),
sides AS (
    SELECT ev.rid, game_id, white_id AS player_id, black_id AS opponent_id, round, played, unplayed_code
    FROM canonical_games g JOIN ev USING (tournament_id) WHERE white_id IS NOT NULL
    UNION ALL
    SELECT ev.rid, game_id, black_id, white_id, round, played, unplayed_code
    FROM canonical_games g JOIN ev USING (tournament_id) WHERE black_id IS NOT NULL
),
byes AS (
    SELECT ev.rid, NULL::BIGINT AS game_id, u.player_id, NULL::INTEGER AS opponent_id, u.round, FALSE AS played,
           u.code AS unplayed_code
    FROM unplayed_rounds u JOIN ev USING (tournament_id)
    WHERE NOT EXISTS (
        SELECT 1 FROM sides s WHERE s.rid = ev.rid AND s.player_id = u.player_id AND s.round = u.round)
),
t AS (SELECT ev.rid, min(first_day) AS first_day FROM tournaments JOIN ev USING (tournament_id) GROUP BY ev.rid),
-- a rating in force at the event's start: a rated row on a list before its first day
looked AS (SELECT rid, player_id FROM sides UNION SELECT rid, opponent_id FROM sides),
rated AS (
    SELECT DISTINCT t.rid, rl.player_id
    -- only the events' players are looked up: not a pass over every list of the system
    FROM looked x JOIN t USING (rid) JOIN rating_lists rl ON rl.player_id = x.player_id
    WHERE rl.system = $system AND rl.rating IS NOT NULL AND rl.list_date <= t.first_day
),
played AS (  -- why each game played was not rated: the rating's own word, else the ratings in force
    SELECT r.rid, r.player_id,
           CASE WHEN c.reason IS NOT NULL THEN c.reason
                WHEN me.player_id IS NULL AND opp.player_id IS NULL THEN 'both_unrated'
                WHEN opp.player_id IS NULL THEN 'unrated_opponent'
                ELSE 'not_rated' END AS why,
           greatest(coalesce(c.ro, 0), coalesce(c.rc, 0)) AS top
    FROM sides r
    LEFT JOIN rating_changes c ON c.system = $system AND c.game_id = r.game_id AND c.player_id = r.player_id
    LEFT JOIN rated me ON me.rid = r.rid AND me.player_id = r.player_id
    LEFT JOIN rated opp ON opp.rid = r.rid AND opp.player_id = r.opponent_id
    WHERE r.played AND r.opponent_id IS NOT NULL
),
why AS (  -- counted once per player (a correlated count per player and reason cost a scan each)
    SELECT rid, player_id,
           count(*) FILTER (WHERE why = 'both_unrated') AS n_both_unrated,
           count(*) FILTER (WHERE why = 'unrated_opponent') AS n_unrated_opponent,
           count(*) FILTER (WHERE why = 'incompatible') AS n_incompatible,
           count(*) FILTER (WHERE why = 'below_time_minimum') AS n_time,
           max(top) FILTER (WHERE why = 'below_time_minimum') AS time_top,
           count(*) FILTER (WHERE why NOT IN ('both_unrated', 'unrated_opponent', 'incompatible',
                                              'below_time_minimum')) AS n_other,
           list(DISTINCT why ORDER BY why) FILTER (WHERE why NOT IN ('both_unrated', 'unrated_opponent',
                                                   'incompatible', 'below_time_minimum')) AS other_why
    FROM played GROUP BY rid, player_id
)
SELECT r.rid, r.player_id,
       count(*) FILTER (WHERE NOT r.played AND trim(r.unplayed_code) NOT IN ('H', 'F', 'U', 'Z', '')) AS n_forfeit,
       count(*) FILTER (WHERE NOT r.played AND trim(r.unplayed_code) = 'H') AS n_bye_h,
       count(*) FILTER (WHERE NOT r.played AND trim(r.unplayed_code) = 'F') AS n_bye_f,
       count(*) FILTER (WHERE NOT r.played AND trim(r.unplayed_code) = 'U') AS n_pab,
       count(*) FILTER (WHERE NOT r.played AND trim(r.unplayed_code) = 'Z') AS n_bye_z,
       count(*) FILTER (WHERE NOT r.played AND trim(r.unplayed_code) = '') AS n_not_paired,
       COALESCE(any_value(w.n_both_unrated), 0) AS n_both_unrated,
       COALESCE(any_value(w.n_unrated_opponent), 0) AS n_unrated_opponent,
       COALESCE(any_value(w.n_incompatible), 0) AS n_incompatible,
       COALESCE(any_value(w.n_time), 0) AS n_time,
       any_value(w.time_top) AS time_top,
       COALESCE(any_value(w.n_other), 0) AS n_other,
       any_value(w.other_why) AS other_why,
       any_value(t.first_day) AS first_day
FROM (SELECT * FROM sides UNION ALL SELECT * FROM byes) r LEFT JOIN why w USING (rid, player_id)
LEFT JOIN t USING (rid)
GROUP BY r.rid, r.player_id
ORDER BY r.rid, r.player_id
"""

_SKIP_WORDS = {
    "no_dates": "the event has no dates",
    "before_rating_from": "the event is older than the first list rated",
    "variant": "a chess variant is not rated",
    "not_this_rate_class": "its rate of play is not the one this system rates",
}


def skip_reason(con: duckdb.DuckDBPyConnection, tournament_id: int, system: str) -> str | None:
    """Why the rating of `system` left the whole event out (`rating_skips`, in words), or None."""
    rows = con.execute(
        "SELECT list(DISTINCT reason ORDER BY reason) FROM rating_skips WHERE system = ? AND tournament_id = ?",
        [system, tournament_id],
    ).fetchall()
    reasons = rows[0][0] if rows else None
    return "; ".join(_skip_words(r) for r in reasons) if reasons else None


# the kinds of event never on a FIDE list (`elopipe.read.rate_evidence.NEVER_RATED_NAMES`), each
# with its article
_KIND_WORDS = {
    "simul": "a simultaneous exhibition",
    "blindfold": "a blindfold event",
    "exhibition": "an exhibition",
    "odds": "an odds game",
    "armageddon": "an armageddon event",
    "chess960": "a Chess960 (Freestyle) event",
    "variant": "an event of another game than chess (bughouse, crazyhouse, ...)",
}
# why, where the kind does not say it (FIDE B.02 (2024) R&B: different times are not rated)
_KIND_WHY = {"armageddon": ": its players have different times"}


def _skip_words(reason: str) -> str:
    kind, _, detail = reason.partition(":")
    if kind == "rate_class" and detail == "fast":
        return "a rapid or blitz event (which one, nothing says), not rated in this system"
    if kind == "rate_class":
        return f"a {detail} event, not rated in this system"
    if kind == "online":
        return f"online play ({'its name says so' if detail == 'name' else detail}) is not rated"
    if kind == "not_rated":
        return f"{_KIND_WORDS.get(detail, 'a ' + detail)} (its name says so) is never rated{_KIND_WHY.get(detail, '')}"
    if kind == "in_progress":
        return f"the event is still in progress ({detail.strip()}): it is rated once a file with its results is loaded"
    if kind == "rating_failed":
        return f"the rating failed on it ({detail.strip()})"
    return _SKIP_WORDS.get(reason, reason.replace("_", " "))


def _plural(n: pl.Expr, one: str, many: str) -> pl.Expr:
    return pl.when(n > 0).then(n.cast(pl.Utf8) + pl.when(n == 1).then(pl.lit(" " + one)).otherwise(pl.lit(" " + many)))


NO_REASONS = {"player_id": pl.Int64, "no_rating_reason": pl.Utf8}
#: FIDE rules versions under which no initial rating is computed (their rule cannot be confirmed)
NO_INITIAL_RATING = tuple(name for name, rules in RULES.items() if rules.initial_rule == "unconfirmed")


def round_reasons(con: duckdb.DuckDBPyConnection, tournament_id: int, system: str) -> pl.DataFrame:
    """Per player of the event: `player_id` Int64 and `no_rating_reason` String, the player's
    rounds in words ('1 forfeit, 6 zero-point byes (Z)'), as the reason no game of theirs was
    rated. Only meaningful for players without a `tournament_ratings` row."""
    return round_reasons_of(con, [tournament_id], system).get(tournament_id, pl.DataFrame(schema=NO_REASONS))


def round_reasons_of(con: duckdb.DuckDBPyConnection, tournament_ids: list[int], system: str) -> dict[int, pl.DataFrame]:
    """`round_reasons` of each of `tournament_ids`, in one query: {tournament_id: frame}; an
    event with no round is absent."""
    counts: pl.DataFrame = to_polars(
        con.sql(_ROUNDS_SQL, params={"tids": sorted(set(tournament_ids)), "system": system})
    )
    if counts.height == 0:
        return {}
    version, minutes, threshold = time_minimum_expr(pl.col("first_day"), pl.col("time_top"))
    parts = [
        _plural(pl.col("n_forfeit"), "forfeit", "forfeits"),
        _plural(pl.col("n_bye_h"), "half-point bye (H)", "half-point byes (H)"),
        _plural(pl.col("n_bye_f"), "full-point bye (F)", "full-point byes (F)"),
        _plural(pl.col("n_pab"), "pairing-allocated bye (PAB, U)", "pairing-allocated byes (PAB, U)"),
        _plural(pl.col("n_bye_z"), "zero-point bye (Z)", "zero-point byes (Z)"),
        pl.when(pl.col("n_not_paired") > 0).then(pl.format("not paired in {} round(s)", pl.col("n_not_paired"))),
        _plural(
            pl.col("n_both_unrated"),
            "game against an unrated opponent, the player unrated too",
            "games against unrated opponents, the player unrated too",
        ),
        _plural(pl.col("n_unrated_opponent"), "game against an unrated opponent", "games against unrated opponents"),
        _plural(
            pl.col("n_incompatible"),
            "incompatible game (FFE: an expected result too far apart)",
            "incompatible games (FFE: expected results too far apart)",
        ),
        pl.when(pl.col("n_time") > 0).then(
            pl.format(
                "{} below the minimum time for 60 moves (B.02 1.3, {}: {}; the rate of play gives less)",
                pl.when(pl.col("n_time") == 1).then(pl.lit("1 game")).otherwise(pl.format("{} games", "n_time")),
                version,
                pl.when(threshold.is_not_null())
                .then(pl.format("{} minutes when either player is rated {} or more", minutes, threshold))
                .otherwise(pl.format("{} minutes", minutes)),
            )
        ),
        pl.when(pl.col("n_other") > 0).then(
            pl.format(
                "{} game(s) played, not rated: {}",
                pl.col("n_other"),
                pl.col("other_why")
                .list.eval(pl.element().replace_strict(REASON_WORDS, default=pl.element()))
                .list.join("; "),
            )
        ),
    ]
    words = pl.concat_str(parts, separator=", ", ignore_nulls=True)
    reasons = counts.select(
        pl.col("rid"),
        pl.col("player_id").cast(pl.Int64),
        pl.when(words != "")
        .then(pl.lit("no rated game: ") + words)
        .otherwise(pl.lit("no game"))
        .alias("no_rating_reason"),
    )
    return {int(k[0]): v.drop("rid") for k, v in reasons.partition_by("rid", as_dict=True, maintain_order=True).items()}


def ru_note() -> pl.Expr:
    """The Ru column of a performance row, in words: for an unrated player rated here, his first
    rating and the list that published it, else the games pooled so far and Ru (B.02 7.1.4, 8.2),
    or why there is none yet; for a player without a rated game, `no_rating_reason`; else null.
    Reads the columns unrated, score, pooled_games, ru_provisional, first_rating, list_date,
    no_rating_reason, rules_version (the event's FIDE rules: before July 2014
    no initial rating is computed, `elopipe.rating.fide.b02`)."""
    pooled = pl.col("pooled_games")
    ru = pl.col("ru_provisional")
    no_initial = pl.col("rules_version").is_in(list(NO_INITIAL_RATING)).fill_null(False)
    return (
        pl.when(pl.col("no_rating_reason").is_not_null())
        .then(pl.col("no_rating_reason"))
        .when(~pl.col("unrated").fill_null(False))
        .then(None)
        .when(pl.col("first_rating").is_not_null())
        .then(
            pl.format(
                "first rating {}, published on the {} list ({} games pooled)",
                pl.col("first_rating"),
                pl.col("list_date"),
                pooled.fill_null(0),
            )
        )
        .when(ru.is_not_null())
        .then(pl.format("Ru {} so far, {} games pooled", ru, pooled.fill_null(0)))
        .when(pooled.is_null() & (pl.col("score") == 0))
        .then(pl.lit("0 points in a first event: disregarded (B.02 8.2.1), nothing pooled"))
        .when(pooled.is_null())
        .then(pl.lit("no game pooled yet"))
        .when(no_initial)
        .then(
            pl.format(
                "{} games pooled; no initial rating is computed under the rules before July 2014 (they cannot be"
                " confirmed)",
                pooled,
            )
        )
        .otherwise(pl.format("{} games pooled, no Ru yet (too few games, or Ru below the floor)", pooled))
    )
