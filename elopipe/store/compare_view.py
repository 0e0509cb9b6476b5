"""The SQL of `v_compare` (issue 18): two sides' lists on one date, player by player, with the
cause of each difference. `elopipe.publish.compare` runs it for one pair; the view shows every pair.

A side is a computed system key of `rating_lists` ('fide', 'ffe', a scenario 'fide@v2017': the
rows of a scenario are stored under 'BASE@NAME') or an imported official list, 'official:SYSTEM'
(`official_lists`). A computed side's rating on the date is its last row on or before it (FIDE
lists are monthly, FFE's a few a year); an official list is read on its own date only (a player
it leaves out is not on it). Two computed sides are matched on player_id; an official row keeps
the player_id the import linked (FIDE ID, then national ID) and `match_key` says which key matched;
a row the computed lists never rated is matched by name key and birth year when exactly one
computed player fits ('name_birth_year'). `rank_a` and `rank_b` are the ranks the lists publish:
`v_rating_lists.rank` of the list in force (active players with the list's ID; NULL for an
inactive player or one without the ID), the same rule over an imported official list.

Every cause is a column, so that a difference can be explained row by row in SQL:

* ``start_rating`` (`c_start`): the sides began from different ratings: the player's first game is
  the same on both sides and its Ro differs (or one side began rated, the other unrated). With an
  official list, whose games are unknown: the ratings differ with no game in the period on either
  side (a base correction: FIDE sometimes starts from a corrected Ro, spec fide-rating-rules.md §3.1);
* ``games_one_side`` (`c_games`): games counted on one side only, up to the date (`games_only_a`,
  `games_only_b`), or games one side's rating considered and the other never did (`seen_one_side`:
  e.g. an event before the other system's rules begin); with an official list, a different number
  of games in the period;
* ``floor`` (`c_floor`): one side delisted the player below its floor (B.02 7.2.1), the other not;
* ``initial_rating`` (`c_initial`): both began unrated at the same first game and their first
  published ratings differ (B.02 8.2: Ru by the old rule, or with two 1800 draws from 2024);
* ``cap_400`` (`c_cap`): a game with the same D counted on both sides was capped by the 400-point
  rule on one side only (B.02 8.3.1 by version);
* ``k`` (`c_k`): a game counted on both sides with a different K (B.02 8.3.3);
* ``opponent_ratings`` (`c_opponents`): same games and rules, but an opponent's Rc differed (the
  knock-on of a difference elsewhere);
* ``other_rules``: none of the above: the systems' formulas differ (e.g. FFE's performance rule).

The main `cause` is the first in `COMPARE_CAUSES` order that applies; NULL when the ratings are
equal, or for a player an official list leaves out (nothing on that side tells why). Against an
official list, `games_a` and `games_b` are each list's games of its period (an official list has
no games to count up to the date).
"""

from __future__ import annotations

from elopipe.read.names import name_key_sql

_COMPARE_SIDES = f"""
    SELECT system AS side, list_date, player_id, 'player_id' AS match_key,
           rating, games, k, COALESCE(flags, '') AS flags, CAST(NULL AS INTEGER) AS list_rank
    FROM rating_lists
    UNION ALL
    SELECT 'official:' || o.system, o.list_date,
           COALESCE(nb.player_id, o.player_id),
           CASE WHEN o.fide_id IS NOT NULL AND o.fide_id = p.fide_id THEN 'fide_id'
                WHEN o.national_id IS NOT NULL AND o.national_id = p.national_id THEN 'national_id'
                WHEN nb.player_id IS NOT NULL THEN 'name_birth_year'
                ELSE 'player_id' END,
           o.rating, o.games, o.k, COALESCE(o.flag, ''), o.list_rank
    FROM (
        -- the official list's own rank, as `v_rating_lists` ranks a computed list: among the
        -- active rows that carry the list's ID, over the whole list (also rows no player matched)
        SELECT *, CASE WHEN ranked THEN CAST(RANK() OVER (PARTITION BY system, list_date, ranked
                                                          ORDER BY rating DESC) AS INTEGER) END AS list_rank
        FROM (SELECT *, rating IS NOT NULL
                        AND NOT regexp_matches(COALESCE(flag, ''), '(^|[ ,;])w?i($|[ ,;])')
                        AND CASE WHEN system LIKE 'fide%' THEN fide_id IS NOT NULL
                                 WHEN system LIKE 'ffe%'
                                 THEN regexp_matches(COALESCE(national_id, ''), '^[A-Z][A-Z0-9][0-9]{{4}}$')
                                 ELSE TRUE END AS ranked
              FROM official_lists)
    ) o
    LEFT JOIN players p ON p.player_id = o.player_id
    LEFT JOIN (
        SELECT name_key, birth_year, min(player_id) AS player_id FROM players
        WHERE birth_year IS NOT NULL AND player_id IN (SELECT player_id FROM rating_lists)
        GROUP BY ALL HAVING count(*) = 1
    ) nb ON o.player_id NOT IN (SELECT player_id FROM rating_lists)
        AND nb.name_key = {name_key_sql("o.name")} AND nb.birth_year = o.birth_year
    WHERE o.player_id IS NOT NULL
"""

# Every pair of sides on every list date both have: what v_compare shows.
_ALL_PAIRS = """
    SELECT DISTINCT x.side AS side_a, y.side AS side_b, x.list_date
    FROM (SELECT DISTINCT side, list_date FROM sides) x
    JOIN (SELECT DISTINCT side, list_date FROM sides) y ON y.list_date = x.list_date AND y.side <> x.side
"""

# Precedence of the causes of a difference (the first that applies is the main cause):
COMPARE_CAUSES = (
    "start_rating", "games_one_side", "floor", "initial_rating", "cap_400", "k", "opponent_ratings", "other_rules",
)  # fmt: skip

_COMPARE_BODY = """
WITH sides AS ({sides}),
pairs AS ({pairs}),
-- each side's list in force on the date: a computed side's last row for the player on or before it,
-- an official list's row of that date
at_side AS (
    SELECT p.side_a, p.side_b, p.list_date, 'a' AS which, s.player_id,
           arg_max({{'rating': s.rating, 'games': s.games, 'k': s.k, 'key': s.match_key, 'on': s.list_date,
                    'rank': s.list_rank}}, s.list_date) AS r,
           count(*) FILTER (WHERE s.flags LIKE '%delisted%') AS delisted
    FROM pairs p JOIN sides s ON s.side = p.side_a AND s.list_date <= p.list_date
     AND (s.side NOT LIKE 'official:%' OR s.list_date = p.list_date)
    GROUP BY ALL
    UNION ALL
    SELECT p.side_a, p.side_b, p.list_date, 'b', s.player_id,
           arg_max({{'rating': s.rating, 'games': s.games, 'k': s.k, 'key': s.match_key, 'on': s.list_date,
                    'rank': s.list_rank}}, s.list_date),
           count(*) FILTER (WHERE s.flags LIKE '%delisted%')
    FROM pairs p JOIN sides s ON s.side = p.side_b AND s.list_date <= p.list_date
     AND (s.side NOT LIKE 'official:%' OR s.list_date = p.list_date)
    GROUP BY ALL
),
-- struct fields are read with struct_extract: a three-part name (alias.struct.field) would be ambiguous
-- with catalog.table.column in a store whose file name is an alias here (a.duckdb)
flat AS (
    SELECT side_a, side_b, list_date, which, player_id, delisted,
           struct_extract(r, 'rating') AS rating, struct_extract(r, 'games') AS games,
           struct_extract(r, 'k') AS k, struct_extract(r, 'key') AS match_key,
           struct_extract(r, 'on') AS listed_on, struct_extract(r, 'rank') AS official_rank
    FROM at_side
),
-- the rank on the list in force, the list's own: `v_rating_lists.rank` for a computed side (active
-- players with the list's ID; NULL for the others), the official list's rank (`list_rank`) for an import
ranked AS (
    SELECT f.*, COALESCE(f.official_rank, v.rank) AS rnk
    FROM flat f
    LEFT JOIN (SELECT system, list_date, player_id, rank FROM v_rating_lists
               WHERE system IN (SELECT side_a FROM pairs UNION SELECT side_b FROM pairs)) v
      ON v.system = CASE f.which WHEN 'a' THEN f.side_a ELSE f.side_b END
     AND v.list_date = f.listed_on AND v.player_id = f.player_id
),
-- every game side each computed side rated (counted or not) up to the date
game_rows AS (
    SELECT p.side_a, p.side_b, p.list_date, 'a' AS which, c.player_id, c.game_id, c.list_date AS rated_on,
           c.counted, c.ro, c.rc, c.d_raw, COALESCE(c.d_raw <> c.d_used, FALSE) AS capped, c.k
    FROM pairs p JOIN rating_changes c ON c.system = p.side_a AND c.list_date <= p.list_date
    UNION ALL
    SELECT p.side_a, p.side_b, p.list_date, 'b', c.player_id, c.game_id, c.list_date,
           c.counted, c.ro, c.rc, c.d_raw, COALESCE(c.d_raw <> c.d_used, FALSE), c.k
    FROM pairs p JOIN rating_changes c ON c.system = p.side_b AND c.list_date <= p.list_date
),
games_cmp AS (
    SELECT side_a, side_b, list_date, player_id,
           count(*) FILTER (WHERE ca) AS games_a, count(*) FILTER (WHERE cb) AS games_b,
           count(*) FILTER (WHERE ca AND NOT cb) AS only_a, count(*) FILTER (WHERE cb AND NOT ca) AS only_b,
           count(*) FILTER (WHERE ca AND cb AND xa <> xb AND da = db) AS cap_differs,
           count(*) FILTER (WHERE ca AND cb AND ka <> kb) AS k_differs,
           count(*) FILTER (WHERE ca AND cb AND rca <> rcb) AS rc_differs,
           count(*) FILTER (WHERE NOT (pa AND pb)) AS seen_one_side
    FROM (
        SELECT side_a, side_b, list_date, player_id, game_id,
               bool_or(which = 'a') AS pa, bool_or(which = 'b') AS pb,
               bool_or(which = 'a' AND counted) AS ca, bool_or(which = 'b' AND counted) AS cb,
               bool_or(which = 'a' AND capped) AS xa, bool_or(which = 'b' AND capped) AS xb,
               max(d_raw) FILTER (WHERE which = 'a') AS da, max(d_raw) FILTER (WHERE which = 'b') AS db,
               max(k) FILTER (WHERE which = 'a') AS ka, max(k) FILTER (WHERE which = 'b') AS kb,
               max(rc) FILTER (WHERE which = 'a') AS rca, max(rc) FILTER (WHERE which = 'b') AS rcb
        FROM game_rows GROUP BY ALL
    ) GROUP BY ALL
),
-- how each side began: Ro of the player's first game (NULL: began unrated), first published rating
starts AS (
    SELECT side_a, side_b, list_date, which, player_id,
           struct_extract(arg_min({{'ro': ro, 'game': game_id}}, (rated_on, game_id)), 'ro') AS first_ro,
           arg_min(game_id, (rated_on, game_id)) AS first_game
    FROM game_rows GROUP BY ALL
),
firsts AS (
    SELECT p.side_a, p.side_b, p.list_date, w.which, s.player_id, arg_min(s.rating, s.list_date) AS first_rating
    FROM pairs p CROSS JOIN (VALUES ('a'), ('b')) w(which)
    JOIN sides s ON s.side = CASE w.which WHEN 'a' THEN p.side_a ELSE p.side_b END
     AND s.list_date <= p.list_date AND s.rating IS NOT NULL
    GROUP BY ALL
),
joined AS (
    SELECT COALESCE(a.side_a, b.side_a) AS side_a, COALESCE(a.side_b, b.side_b) AS side_b,
           COALESCE(a.list_date, b.list_date) AS list_date, COALESCE(a.player_id, b.player_id) AS player_id,
           CASE WHEN b.match_key <> 'player_id' THEN b.match_key ELSE COALESCE(a.match_key, b.match_key) END
               AS match_key,
           a.rating AS rating_a, b.rating AS rating_b, a.rnk AS rank_a, b.rnk AS rank_b,
           a.games AS list_games_a, b.games AS list_games_b, a.k AS k_a, b.k AS k_b,
           a.delisted AS delisted_a, b.delisted AS delisted_b, a.player_id IS NOT NULL AS on_a,
           b.player_id IS NOT NULL AS on_b
    FROM (SELECT * FROM ranked WHERE which = 'a') a
    FULL OUTER JOIN (SELECT * FROM ranked WHERE which = 'b') b
      ON a.side_a = b.side_a AND a.side_b = b.side_b AND a.list_date = b.list_date AND a.player_id = b.player_id
),
facts AS (
    SELECT j.*, g.games_a, g.games_b, COALESCE(g.only_a, 0) AS only_a, COALESCE(g.only_b, 0) AS only_b,
           COALESCE(g.cap_differs, 0) AS cap_differs, COALESCE(g.k_differs, 0) AS k_differs,
           COALESCE(g.rc_differs, 0) AS rc_differs, COALESCE(g.seen_one_side, 0) AS seen_one_side,
           sa.first_ro AS start_a, sb.first_ro AS start_b, sa.first_game = sb.first_game AS same_first_game,
           fa.first_rating AS first_rating_a,
           fb.first_rating AS first_rating_b,
           j.side_a LIKE 'official:%' OR j.side_b LIKE 'official:%' AS has_official
    FROM joined j
    LEFT JOIN games_cmp g USING (side_a, side_b, list_date, player_id)
    LEFT JOIN (SELECT * FROM starts WHERE which = 'a') sa USING (side_a, side_b, list_date, player_id)
    LEFT JOIN (SELECT * FROM starts WHERE which = 'b') sb USING (side_a, side_b, list_date, player_id)
    LEFT JOIN (SELECT * FROM firsts WHERE which = 'a') fa USING (side_a, side_b, list_date, player_id)
    LEFT JOIN (SELECT * FROM firsts WHERE which = 'b') fb USING (side_a, side_b, list_date, player_id)
),
flagged AS (
    SELECT *,
        -- both sides began from a rating (Ro of the first game) and not the same one, or one began rated
        CASE WHEN has_official
             -- an official list has no games to compare: no game on either side, yet the ratings differ
             THEN COALESCE(list_games_a, 0) = 0 AND COALESCE(list_games_b, 0) = 0
             -- from the same first game: when the first games differ, so do the games counted
             ELSE COALESCE(same_first_game, FALSE) AND start_a IS DISTINCT FROM start_b
                  AND (start_a IS NOT NULL OR start_b IS NOT NULL) END AS c_start,
        CASE WHEN has_official THEN COALESCE(list_games_a, 0) <> COALESCE(list_games_b, 0)
             ELSE only_a + only_b + seen_one_side > 0 END AS c_games,
        (COALESCE(delisted_a, 0) > 0) <> (COALESCE(delisted_b, 0) > 0) AS c_floor,
        COALESCE(same_first_game AND start_a IS NULL AND start_b IS NULL
                 AND first_rating_a <> first_rating_b, FALSE) AS c_initial,
        cap_differs > 0 AS c_cap,
        (k_differs > 0
         OR COALESCE(has_official AND k_a <> k_b AND list_games_a > 0 AND list_games_b > 0, FALSE)) AS c_k,
        rc_differs > 0 AS c_opponents
    FROM facts
)
SELECT f.side_a, f.side_b, f.list_date, f.player_id, p.fide_id, p.national_id, p.name, f.match_key,
       f.rating_a, f.rating_b, CAST(f.rating_b - f.rating_a AS INTEGER) AS diff, f.rank_a, f.rank_b,
       CAST(CASE WHEN f.has_official THEN f.list_games_a ELSE f.games_a END AS INTEGER) AS games_a,
       CAST(CASE WHEN f.has_official THEN f.list_games_b ELSE f.games_b END AS INTEGER) AS games_b,
       CAST(f.only_a AS INTEGER) AS games_only_a, CAST(f.only_b AS INTEGER) AS games_only_b,
       CAST(f.cap_differs AS INTEGER) AS cap_differs, CAST(f.k_differs AS INTEGER) AS k_differs,
       CAST(f.rc_differs AS INTEGER) AS rc_differs, CAST(f.seen_one_side AS INTEGER) AS seen_one_side,
       f.k_a, f.k_b, f.start_a, f.start_b, f.first_rating_a, f.first_rating_b,
       CAST(f.delisted_a AS INTEGER) AS delisted_a, CAST(f.delisted_b AS INTEGER) AS delisted_b,
       CASE WHEN f.rating_a IS NOT NULL AND f.rating_b IS NOT NULL
                 THEN CASE WHEN f.rating_a = f.rating_b THEN 'same' ELSE 'changed' END
            WHEN f.rating_a IS NOT NULL THEN 'only_a' ELSE 'only_b' END AS status,
       CASE WHEN f.rating_a IS NOT DISTINCT FROM f.rating_b THEN NULL
            -- a player an official list leaves out: nothing on that side tells why
            WHEN f.has_official AND NOT (f.on_a AND f.on_b) THEN NULL
            WHEN f.c_start THEN 'start_rating'
            WHEN f.c_games THEN 'games_one_side'
            WHEN f.c_floor THEN 'floor'
            WHEN f.c_initial THEN 'initial_rating'
            WHEN f.c_cap THEN 'cap_400'
            WHEN f.c_k THEN 'k'
            WHEN f.c_opponents THEN 'opponent_ratings'
            ELSE 'other_rules' END AS cause,
       f.c_start, f.c_games, f.c_floor, f.c_initial, f.c_cap, f.c_k, f.c_opponents
FROM flagged f
JOIN players p USING (player_id)
WHERE f.rating_a IS NOT NULL OR f.rating_b IS NOT NULL
"""


def sides_sql() -> str:
    """The SELECT of every side's rows (side, list_date, player_id, match_key, rating, games, k,
    flags): `rating_lists` by system, `official_lists` as 'official:SYSTEM' with the player matched
    as `v_compare` matches it (the module docstring)."""
    return _COMPARE_SIDES


def compare_sql(pairs: str | None = None) -> str:
    """The SELECT of `v_compare`, over the (side_a, side_b, list_date) rows of the SQL `pairs`
    (default: every pair of sides on every list date both have). `elopipe compare` passes one
    pair, so that only its rows are read."""
    return _COMPARE_BODY.format(sides=_COMPARE_SIDES, pairs=pairs or _ALL_PAIRS)
