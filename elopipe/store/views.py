"""SQL views over the store (documented in docs/schema.md).

Each view is a name and a SELECT; `ensure_views` (re)creates them all.
"""

from __future__ import annotations

import duckdb

from elopipe.store.compare_view import compare_sql

# Every event a system rated in a period: one with a tournament_ratings row, or with
# rating_changes rows only (an event whose players are all unrated, or whose games none counts).
_RATED = """
    SELECT system, list_date, tournament_id FROM tournament_ratings
    UNION SELECT system, list_date, tournament_id FROM rating_changes
"""
# The players of those events who have no tournament_ratings row there (no rated game: byes,
# forfeits and unrated games only), with the list the event was rated on. A union and a group,
# not an anti-join: DuckDB hashes the whole right side of an anti-join, and the report's filter
# on tournament_id would not reach it (a cost growing with the store for every report).
_UNRATED_ENTRIES = f"""
    SELECT system, tournament_id, player_id, min(list_date) AS list_date
    FROM (SELECT r.system, r.list_date, r.tournament_id, tp.player_id, TRUE AS entry
          FROM ({_RATED}) r JOIN tournament_players tp USING (tournament_id)
          UNION ALL
          SELECT system, list_date, tournament_id, player_id, FALSE FROM tournament_ratings)
    GROUP BY system, tournament_id, player_id
    HAVING bool_and(entry)
"""

VIEWS: dict[str, str] = {
    # The games the rating engines read: every game that game_sources does not mark as
    # another source row of a canonical game (cross-source deduplication, issue 7).
    # An anti-join on the links that hide a row, not a correlated NOT EXISTS: DuckDB turns the
    # latter into a mark join over every game even when no link exists (0.022 -> 0.004 CPU-s for
    # a count per event over 375k games, issue 27); the rows are the same.
    "canonical_games": """
        SELECT g.* FROM games g
        ANTI JOIN (SELECT source_game_id FROM game_sources WHERE game_id <> source_game_id) s
            ON s.source_game_id = g.game_id
    """,
    # ---- publishing (issue 5) -------------------------------------------------
    # Every rating list of every system, one row per player with a rating. `rank` is the rank
    # FIDE's lists give: among active players who carry the list's ID (a FIDE ID on a FIDE list,
    # an FFE licence on an FFE list), so an inactive player or one rated from files that gave no
    # such ID has no rank; `fed_rank` is the same rank within the player's federation (the
    # national list). `fide_flag` is the FLAG column of FIDE's list files ('w', 'i', 'wi').
    "v_rating_lists": """
        SELECT
            rl.system, rl.list_date,
            CASE WHEN rl.ranked THEN CAST(RANK() OVER (PARTITION BY rl.system, rl.list_date, rl.ranked
                                                       ORDER BY rl.shown DESC) AS INTEGER) END AS rank,
            CASE WHEN rl.ranked AND p.federation IS NOT NULL
                 THEN CAST(RANK() OVER (PARTITION BY rl.system, rl.list_date, rl.ranked, p.federation
                                        ORDER BY rl.shown DESC) AS INTEGER) END AS fed_rank,
            rl.player_id, p.fide_id, p.national_id, p.name, p.federation, p.sex, p.title,
            COALESCE(rl.birth_year, p.birth_year) AS birth_year,
            rl.rating, rl.games, rl.total_games, rl.k, rl.change, rl.flags,
            (CASE WHEN p.sex = 'w' THEN 'w' ELSE '' END)
              || (CASE WHEN rl.inactive THEN 'i' ELSE '' END) AS fide_flag,
            rl.inactive, NOT rl.has_id AS no_id,
            rl.ever_2400, rl.source, rl.k_next, rl.rating_exact, rl.change_exact
        FROM (SELECT *, NOT inactive AND has_id AS ranked,
                     -- the generic Elo's lists show (and rank by) the one decimal it keeps (seed 001)
                     CASE WHEN system = 'elo' OR system LIKE 'elo@%' THEN COALESCE(rating_exact, rating)
                          ELSE rating END AS shown
              FROM (SELECT r.*,
                           regexp_matches(COALESCE(r.flags, ''), '(^|[ ,;])w?i($|[ ,;])') AS inactive,
                           CASE WHEN r.system LIKE 'fide%' THEN q.fide_id IS NOT NULL
                                -- the FFE licence (ffe-rating-rules.md Part D): a letter, a letter
                                -- or a digit, then 4 digits
                                WHEN r.system LIKE 'ffe%'
                                THEN regexp_matches(COALESCE(q.national_id, ''), '^[A-Z][A-Z0-9][0-9]{4}$')
                                ELSE TRUE END AS has_id
                    FROM rating_lists r JOIN players q USING (player_id)
                    WHERE r.rating IS NOT NULL)) rl
        JOIN players p USING (player_id)
    """,
    # The latest list of each system (what `elopipe publish` prints by default).
    "v_rating_list": """
        SELECT v.* FROM v_rating_lists v
        WHERE v.list_date = (SELECT max(list_date) FROM rating_lists r WHERE r.system = v.system)
    """,
    # One row per player, system and list: rating (NULL while unrated), games, K and change
    # of the period, plus the names of the tournaments rated for the player on that list.
    "v_player_history": """
        SELECT
            rl.system, rl.list_date, rl.player_id, p.name, p.fide_id,
            rl.rating, rl.games, rl.total_games, rl.k, rl.change, rl.flags,
            (SELECT list(t.name ORDER BY t.start_date, t.tournament_id)
               FROM tournament_ratings tr JOIN tournaments t USING (tournament_id)
              WHERE tr.system = rl.system AND tr.list_date = rl.list_date
                AND tr.player_id = rl.player_id) AS tournaments
        FROM rating_lists rl
        JOIN players p USING (player_id)
    """,
    # FIDE-style performance row per player and tournament: Ro, where it came from and the file's
    # rating, n, W, Ra, We, W-We, K, K x (W-We) (from change_x100, two decimals) and its rounding
    # half away from zero, Rp; for an unrated player the pooled games so far
    # (rating_lists.total_games) and Ru, and the first rating when the list published it.
    "v_tournament_performance": """
        SELECT
            tr.system, tr.list_date, tr.tournament_id, t.name AS tournament,
            tp.start_rank, tr.player_id, COALESCE(tp.name_as_written, p.name) AS name,
            p.fide_id, tr.rules_version, tr.ro, tr.ro_source, tr.file_rating,
            tr.n, tr.score, tr.ra, tr.we, tr.w_we, tr.k,
            tr.change_x100,
            CAST(tr.change_x100 * 0.01::DECIMAL(3,2) AS DECIMAL(14,2)) AS k_w_we,
            CAST(sign(tr.change_x100) * ((abs(tr.change_x100) + 50) // 100) AS INTEGER)
                AS change_rounded,
            tr.rp, COALESCE(tr.unrated, FALSE) AS unrated,
            CASE WHEN tr.unrated THEN rl.total_games END AS pooled_games,
            tr.ru_provisional,
            tp.points_in_file, tp.rating_in_file,
            -- an unrated player whose pooled games reached a first rating on this very list
            CASE WHEN tr.unrated THEN rl.rating END AS first_rating
        FROM tournament_ratings tr
        JOIN tournaments t USING (tournament_id)
        JOIN players p USING (player_id)
        LEFT JOIN tournament_players tp
               ON tp.tournament_id = tr.tournament_id AND tp.player_id = tr.player_id
        LEFT JOIN rating_lists rl
               ON rl.system = tr.system AND rl.list_date = tr.list_date
              AND rl.player_id = tr.player_id
    """,
    # How a change was made, game by game, back to the file and line: every row of
    # rating_changes (kind 'game'), plus, for every player of an event rated in the period, the
    # games the engine wrote no row for (kind 'game', reason 'forfeit' or 'not_rated') and the
    # unplayed rounds (kind 'unplayed': byes and forfeits with their TRF code). Every player, not
    # only those with a tournament_ratings row: a player whose only entries are byes or forfeits
    # has none (no rated game), and a rating officer still reads each entry and why it is not
    # rated (B.02: unplayed games are not rated). `_RATED` and `_UNRATED_ENTRIES` are written out
    # where they are read, not as CTEs: DuckDB may materialise a CTE read twice, and the report's
    # filter on tournament_id would then no longer reach the tables below it.
    "v_change_explained": f"""
        WITH rc AS (
            SELECT
                c.system, c.list_date, c.tournament_id, c.player_id, 'game' AS kind,
                g.round, c.game_id, c.opponent_id,
                CASE WHEN g.white_id = c.player_id THEN 'w' ELSE 'b' END AS colour,
                c.ro, c.ro_source, c.rc, c.d_raw, c.d_used, COALESCE(c.d_raw <> c.d_used, FALSE) AS capped,
                -- PD and W - PD only where they were used: a row not counted in the change
                -- (a forfeit, a pooled game) would add to a column summed by hand
                CASE WHEN c.counted THEN c.pd END AS pd, c.score,
                CASE WHEN c.counted THEN c.w_minus_pd END AS w_minus_pd, c.k, c.counted, c.reason,
                NULL::VARCHAR AS unplayed_code, g.file_id, g.line, g.tournament_id AS entry_tid
            FROM rating_changes c
            LEFT JOIN games g USING (game_id)
        ),
        -- the games of the rated events the engine wrote no row for: of the players with a
        -- tournament_ratings row, then of the others (`_UNRATED_ENTRIES`): their games beside
        -- their rating_changes rows, grouped, those with no such row kept (again no anti-join)
        missing AS (
            SELECT
                tr.system, tr.list_date, tr.tournament_id, tr.player_id, 'game' AS kind,
                g.round, g.game_id,
                CASE WHEN g.white_id = tr.player_id THEN g.black_id ELSE g.white_id END,
                CASE WHEN g.white_id = tr.player_id THEN 'w' ELSE 'b' END,
                NULL::INTEGER, NULL::VARCHAR, NULL::INTEGER, NULL::INTEGER, NULL::INTEGER, NULL::BOOLEAN,
                NULL::DECIMAL(4,2),
                CASE WHEN g.white_id = tr.player_id THEN g.white_score ELSE g.black_score END,
                NULL::DECIMAL(4,2), NULL::INTEGER, FALSE,
                CASE WHEN NOT g.played THEN 'forfeit' ELSE 'not_rated' END,
                g.unplayed_code, g.file_id, g.line, g.tournament_id
            FROM tournament_ratings tr
            JOIN canonical_games g
              ON g.tournament_id = tr.tournament_id
             AND (g.white_id = tr.player_id OR g.black_id = tr.player_id)
            WHERE NOT EXISTS (
                SELECT 1 FROM rating_changes c
                WHERE c.system = tr.system AND c.game_id = g.game_id
                  AND c.player_id = tr.player_id)
            UNION ALL
            SELECT
                m.system, m.list_date, m.tournament_id, m.player_id, 'game' AS kind,
                m.round, m.game_id, m.opponent_id, m.colour,
                NULL::INTEGER, NULL::VARCHAR, NULL::INTEGER, NULL::INTEGER, NULL::INTEGER, NULL::BOOLEAN,
                NULL::DECIMAL(4,2), m.score, NULL::DECIMAL(4,2), NULL::INTEGER, FALSE,
                m.reason, m.unplayed_code, m.file_id, m.line, m.entry_tid
            FROM (
                SELECT system, tournament_id, game_id, player_id,
                       min(list_date) AS list_date, max(round) AS round, max(opponent_id) AS opponent_id,
                       max(colour) AS colour, max(score) AS score, max(reason) AS reason,
                       max(unplayed_code) AS unplayed_code, max(file_id) AS file_id, max(line) AS line,
                       max(entry_tid) AS entry_tid
                FROM (
                    SELECT
                        e.system, e.list_date, e.tournament_id, g.game_id, e.player_id, TRUE AS side,
                        g.round,
                        CASE WHEN g.white_id = e.player_id THEN g.black_id ELSE g.white_id END AS opponent_id,
                        CASE WHEN g.white_id = e.player_id THEN 'w' ELSE 'b' END AS colour,
                        CASE WHEN g.white_id = e.player_id THEN g.white_score ELSE g.black_score END AS score,
                        CASE WHEN NOT g.played THEN 'forfeit' ELSE 'not_rated' END AS reason,
                        g.unplayed_code, g.file_id, g.line, g.tournament_id AS entry_tid
                    FROM ({_UNRATED_ENTRIES}) e
                    JOIN canonical_games g
                      ON g.tournament_id = e.tournament_id
                     AND (g.white_id = e.player_id OR g.black_id = e.player_id)
                    UNION ALL
                    SELECT e.system, c.list_date, e.tournament_id, c.game_id, e.player_id, FALSE,
                           NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
                    FROM ({_UNRATED_ENTRIES}) e
                    JOIN rating_changes c
                      ON c.system = e.system AND c.tournament_id = e.tournament_id AND c.player_id = e.player_id
                )
                GROUP BY system, tournament_id, game_id, player_id
                HAVING bool_and(side)
            ) m
        ),
        unplayed AS (
            SELECT
                r.system, r.list_date, r.tournament_id, u.player_id, 'unplayed',
                u.round, NULL::BIGINT, u.opponent_id, NULL::VARCHAR,
                NULL::INTEGER, NULL::VARCHAR, NULL::INTEGER, NULL::INTEGER, NULL::INTEGER, NULL::BOOLEAN,
                NULL::DECIMAL(4,2), u.score, NULL::DECIMAL(4,2), NULL::INTEGER, FALSE,
                CASE WHEN u.code IN ('+', '-') THEN 'forfeit'
                     WHEN u.code IN ('H', 'F', 'U', 'Z') THEN 'bye'
                     WHEN trim(u.code) = '' THEN 'not_paired'
                     ELSE 'unplayed' END,
                u.code, u.file_id, u.line, u.tournament_id
            FROM ({_RATED}) r
            JOIN unplayed_rounds u USING (tournament_id)
            WHERE NOT EXISTS (
                SELECT 1 FROM canonical_games g
                WHERE g.tournament_id = u.tournament_id AND g.round = u.round
                  AND (g.white_id = u.player_id OR g.black_id = u.player_id))
        ),
        allrows AS (
            SELECT * FROM rc
            UNION ALL SELECT * FROM missing
            UNION ALL SELECT * FROM unplayed
        )
        SELECT
            a.system, a.list_date, a.tournament_id, t.name AS tournament, a.player_id,
            p.name AS player, a.kind, a.round, a.game_id, a.colour, a.opponent_id,
            o.name AS opponent, a.ro, a.ro_source, a.rc, a.d_raw, a.d_used, a.capped, a.pd, a.score,
            a.w_minus_pd, a.k,
            CAST(a.k * a.w_minus_pd AS DECIMAL(8,2)) AS k_w_minus_pd,
            a.counted,
            CASE WHEN a.counted THEN 'rating_change'
                 WHEN a.reason = 'pooled_unrated' THEN 'first_rating'
                 ELSE 'not_rated' END AS used_for,
            a.reason, a.unplayed_code, a.file_id, f.path AS file_path,
            -- the player's own record: a TRF game sits on White's 001 line, Black's round is on his
            COALESCE(CASE WHEN f.format = 'trf' AND a.kind = 'game' THEN tp.line END, a.line) AS line
        FROM allrows a
        JOIN tournaments t USING (tournament_id)
        JOIN players p ON p.player_id = a.player_id
        LEFT JOIN players o ON o.player_id = a.opponent_id
        LEFT JOIN source_files f ON f.file_id = a.file_id
        LEFT JOIN tournament_players tp
               ON tp.tournament_id = a.entry_tid AND tp.player_id = a.player_id AND tp.file_id = a.file_id
    """,
    "v_ingest_errors": """
        SELECT f.path, f.member, f.status AS file_status, e.line, e.game_index, e.severity, e.code,
               e.message, e.raw, e.file_id, e.error_id
        FROM ingest_errors e JOIN source_files f USING (file_id)
        ORDER BY f.path, e.line NULLS FIRST, e.error_id
    """,
}

# FIDE title norms (issue 29): one row per player, event and norm type (elopipe.rating.fide.norms_store).
VIEWS["v_norms"] = """
    SELECT n.system, n.list_date, n.tournament_id, t.name AS tournament, t.first_day, t.last_day, t.rounds,
           n.player_id, p.name, p.fide_id, n.norm, n.era, n.decision, n.clause, n.reason, n.hint, n.failed,
           n.single_miss, n.half_point, n.holds_title, n.games,
           CAST(n.points_x2 / 2 AS DECIMAL(4,1)) AS points, n.ra, n.p, n.dp, n.rp,
           n.raised_id, o.name AS raised_name, n.raised_from, n.title_holders, n.norm_titles, n.feds,
           n.own_fed, n.top_fed, n.top_count, n.dropped, n.exemption
    FROM title_norms n
    JOIN tournaments t USING (tournament_id)
    JOIN players p ON p.player_id = n.player_id
    LEFT JOIN players o ON o.player_id = n.raised_id
"""

# Two sides' lists of one date player by player, with the cause of each difference (issue 18).
VIEWS["v_compare"] = compare_sql()

# ---- what identity reads of the tables higher layers own (issue 28, item 5) ----------------
# identity sits below rating and official: it reads their tables through these views only, so
# the columns it relies on are named here, documented and tested (tests/store/test_identity_views.py).
# The sides of every game a rating run considered (`elopipe.identity.rerate`).
VIEWS["v_rated_sides"] = """
    SELECT system, list_date, game_id, player_id, opponent_id FROM rating_changes
"""
# What the imported official lists say of the store's players (`elopipe.identity.decisions`
# display names, `elopipe.identity.facts`).
VIEWS["v_official_entries"] = """
    SELECT player_id, system, list_date, name, title, w_title, federation, sex, birth_year FROM official_lists
    WHERE player_id IS NOT NULL
"""

# One paragraph per view for docs/schema.md (`elopipe.store.schema_docs.render_markdown`).
VIEW_DOCS: dict[str, str] = {
    "v_rated_sides": "The sides of every game a rating run considered, as the run saw them: one row per "
    "`rating_changes` row, columns system, list_date (the list the game was rated on), game_id, player_id, "
    "opponent_id. Read by identity (`elopipe.identity.rerate`): after a merge or split, a rated game whose "
    "player or opponent is no longer on the game's sides has moved, and the lists from its period on change.",
    "v_official_entries": "What the imported official lists say of the store's players: one row per "
    "`official_lists` row linked to a player, columns player_id, system, list_date, name, title, w_title, "
    "federation, sex, birth_year. Read by identity: the name a player is shown under (the latest list's "
    "spelling first, `elopipe.identity.decisions.refresh_display_names`) and a fact no entry of the player "
    "gives (`elopipe.identity.facts`).",
    "v_norms": "FIDE title norms (B.01), one row per player, event and norm type (GM, IM, WGM, WIM) of every FIDE "
    "standard event rated: `decision` ('norm', 'missed', 'unknown' with the missing fact in `reason`, 'refused' "
    "before 1 July 2017, 'not_eligible'), `clause` (the first that fails, e.g. '1.4.5'), `reason` ('1.4.5: 2 GMs "
    "among the opponents, 3 needed'), `hint` ('half a point more'), `failed` (every failing clause), "
    "`single_miss`, `half_point`, `holds_title`; the figures: games, points, Ra, p (%), dp, Rp, the opponent "
    "raised to the rating floor (`raised_id`, `raised_name`, `raised_from`), title_holders, norm_titles, feds, "
    "own_fed, top_fed, top_count, `dropped` (rounds left out under 1.4.1e/f), `exemption` ('1.4.3d'), era. "
    "Example: `SELECT name, norm, games, points, ra, rp, reason FROM v_norms WHERE decision = 'norm' AND NOT "
    "holds_title`.",
    "v_compare": "Two sides' rating lists of one date, player by player (`elopipe compare`): every pair of "
    "sides (side_a, side_b: a system such as 'fide', a scenario 'fide@v2017', or 'official:fide', an imported"
    " list) on every list date both have. A computed side's rating is its last row on or before the date; an "
    "official list's, its row of that date. Columns: player, `match_key` (player_id, or fide_id / national_id"
    " / name_birth_year for an official list), rating_a, rating_b, `diff` (B - A), rank_a, rank_b (each list's "
    "own rank, as `v_rating_lists.rank`: NULL for an inactive player or one without the list's ID), games_a, "
    "games_b (counted up to the date; against an official list, the period's), games_only_a, games_only_b, "
    "seen_one_side, cap_differs, k_differs, rc_differs, k_a, k_b, start_a, start_b (Ro of the first game), "
    "first_rating_a, first_rating_b, delisted_a, delisted_b, `status` ('same', 'changed', 'only_a', "
    "'only_b'), the main `cause` (first that applies of start_rating, games_one_side, floor, initial_rating, "
    "cap_400, k, opponent_ratings, other_rules; see elopipe/store/compare_view.py) and one boolean column per"
    " cause (c_start, c_games, c_floor, c_initial, c_cap, c_k, c_opponents). Example: `SELECT name, rating_a,"
    " rating_b, diff, cause FROM v_compare WHERE side_a = 'fide' AND side_b = 'ffe' AND list_date = DATE "
    "'2022-09-01' ORDER BY abs(diff) DESC`.",
    "v_ingest_errors": "Every ingest problem with its file's path (and archive member), line, game index "
    "(0-based, PGN), severity, code, message and the raw text kept.",
    "canonical_games": "The games the rating engines read: `games` minus the rows that "
    "`game_sources` marks as another source of a canonical game.",
    "v_rating_lists": "Every rating list of every system: one row per player with a rating. "
    "`rank` is the active rank, as FIDE's lists rank: by rating within (system, list_date) among the "
    "players who are active and carry the list's ID (a FIDE ID on a FIDE list, an FFE licence on an "
    "FFE list; other systems need none); ties share a rank; NULL for an inactive player and for one "
    "with `no_id`. `fed_rank` is the same rank within the player's federation (the national list). "
    "`inactive` (the flag 'i'), `no_id` (the player lacks the list's ID: rated from files that gave "
    "none, shown apart and never ranked). Player details come from `players`; rating / games / "
    "total_games / K / change / flags as stored in `rating_lists`; `fide_flag` is the FLAG column of "
    "FIDE's list files ('w', 'i', 'wi'); `k` the K used in this period (NULL without a game in it, or for a new "
    "player: a list's CSV `k`), `k_next` the player's K for the next period (FIDE systems), the K column of "
    "FIDE's lists and of a list's TXT and CSV `k_next`; `source` where the row comes from: 'computed' (the "
    "engine), 'imported' (an official list), 'bootstrap' (computed, on the first list of a player the store "
    "had never rated, from the rating the organiser's file gave: his Ro's source 'file'); "
    "`rating_exact` / `change_exact` the one decimal the generic Elo keeps (its lists rank by `rating_exact`).",
    "v_rating_list": "The latest list of each system (same columns as `v_rating_lists`). "
    "Example: `SELECT rank, name, rating FROM v_rating_list WHERE system = 'fide' ORDER BY rank`.",
    "v_player_history": "One row per player, system and list: rating (NULL while unrated), "
    "games, total_games, K, change, flags, and `tournaments`, the names of the tournaments rated "
    "for the player on that list.",
    "v_tournament_performance": "FIDE-style performance per player and tournament, from "
    "`tournament_ratings`: start_rank, Ro, `ro_source` (where Ro came from: 'official' an imported official "
    "list, 'computed' the store's list, 'file' the organiser's file, 'standard' a rapid/blitz player's "
    "standard rating), `file_rating` (the rating the file gives; a report marks a Ro 50 or more points from "
    "it), n, score (W), Ra, We, W-We, K, `change_x100`, "
    "`k_w_we` = K x (W-We) with two decimals, `change_rounded` (half away from zero), Rp; for an "
    "unrated player `pooled_games` (rated games pooled so far), `ru_provisional` (Ru from them) and "
    "`first_rating`, the rating the list of `list_date` published for him (his first rating, flag 'new'; NULL "
    "while he is still pooling: fewer than 5 games, or Ru below the floor).",
    "v_change_explained": "How a change was made, game by game, back to the file and line. "
    "Rows of kind 'game' are `rating_changes` (Ro, `ro_source`, Rc, d_raw, d_used, `capped`, PD, score, "
    "W-PD, K, `k_w_minus_pd`, counted, reason) plus the games the engine wrote no row for (reason "
    "'forfeit' or 'not_rated'); rows of kind 'unplayed' are `unplayed_rounds` (reason 'bye', 'forfeit' "
    "or 'not_paired', with the TRF code). Every player of an event rated in the period has his entries "
    "there, rated or not: one whose entries are all byes or forfeits (no `tournament_ratings` row) too, "
    "each with its reason and no change (B.02: unplayed games are not rated). `counted` is TRUE when the "
    "row counts in the rating change K x sum(W - PD); `used_for` says what it was used for: 'rating_change' "
    "(counted), 'first_rating' (reason 'pooled_unrated': a game of an unrated player against a rated one, "
    "pooled toward his initial rating Ru, B.02 7.1.4 and 8.2, not toward a change) or 'not_rated' (see "
    "`reason`). PD, W-PD, K and `k_w_minus_pd` are NULL on every row not counted (D is kept where the "
    "engine computed it), so summing `w_minus_pd` over a player's rows of a list gives the sum of his change. "
    "Each row carries `file_path` and `line`, the player's own record: in a TRF his 001 line (a game is "
    "written on both players' lines), in a PGN the game. Example: `SELECT round, opponent, rc, d_used, pd, score, "
    "w_minus_pd, reason, file_path, line FROM v_change_explained WHERE player = 'Carlsen, "
    "Magnus' ORDER BY list_date, round`.",
}


def ensure_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create or replace every view in `VIEWS`."""
    for name, sql in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")
