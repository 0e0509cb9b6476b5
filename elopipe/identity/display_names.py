"""Players' display names: the best of every spelling the store holds for each (`refresh_display_names`)."""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

from elopipe.store.frames import id_frame, registered


def refresh_display_names(con: duckdb.DuckDBPyConnection, player_ids: Iterable[int]) -> int:
    """Set `players.name` of `player_ids` to the best of every spelling the store holds for them
    (their `tournament_players.name_as_written`, their names on imported official lists), so the
    name on a list does not depend on which file came first.

    Best: a name from the latest official list (a name change counts from its list); then
    the fullest name (more words of 3+ letters, then
    more letters, any script); then the 'Surname, Firstname' form; then more non-ASCII letters
    (accents kept: 'Göl' before 'Gol'); then fewer capitals (TRF files often write surnames in
    capitals); then alphabetically first.  Identity matching uses `name_key` and aliases, never
    this display name.  Returns how many names changed."""
    ids = sorted({int(i) for i in player_ids})
    if not ids:
        return 0
    # the ids as a registered frame: a batch's tens of thousands, passed as a list, cost more to
    # convert than the statement's joins on them
    with registered(con, "_display_ids", id_frame(ids)):
        res = con.execute(_DISPLAY_NAMES_SQL).fetchall()
    return int(res[0][0]) if res else 0


_DISPLAY_NAMES_SQL = r"""
        UPDATE players SET name = best.spelled
        FROM (
            -- the ranking's first keys, taken first: a name on the player's latest official list
            -- beats every other, so a player on twelve monthly lists has one list's names to rank;
            -- a player on no list keeps all his written names. Found from the few official rows
            -- and an anti-join, not a window over every written row (a FIDE month's 46k)
            WITH official AS (
                SELECT player_id, name AS spelled, list_date AS listed FROM v_official_entries
                WHERE player_id IN (SELECT player_id FROM _display_ids) AND trim(coalesce(name, '')) <> ''
            ),
            latest AS (SELECT player_id, max(listed) AS listed FROM official GROUP BY 1),
            spellings AS (
                -- each spelling once (a player has an entry a tournament): the steps below see sets
                SELECT DISTINCT player_id, name_as_written AS spelled, FALSE AS official, NULL::DATE AS listed
                FROM tournament_players
                WHERE player_id IN (SELECT player_id FROM _display_ids) AND trim(coalesce(name_as_written, '')) <> ''
                  AND NOT EXISTS (SELECT 1 FROM latest WHERE latest.player_id = tournament_players.player_id)
                UNION ALL
                SELECT o.player_id, o.spelled, TRUE, o.listed FROM official o JOIN latest l
                  ON l.player_id = o.player_id AND o.listed = l.listed
            ),
            -- most players are written one way only: that spelling is the best, with no ranking
            -- (the regular expressions below cost more than the rest of the statement)
            variety AS (SELECT player_id, count(DISTINCT spelled) AS n FROM spellings GROUP BY 1)
            SELECT player_id, any_value(spelled) AS spelled
            FROM spellings JOIN variety USING (player_id) WHERE n = 1 GROUP BY 1
            UNION ALL
            SELECT player_id, spelled FROM (
                SELECT player_id, spelled, row_number() OVER (
                    PARTITION BY player_id
                    ORDER BY official DESC, listed DESC NULLS LAST,
                             len(list_filter(regexp_extract_all(spelled, '\p{L}+'), lambda t: length(t) > 2)) DESC,
                             length(regexp_replace(spelled, '[^\p{L}]', '', 'g')) DESC,
                             contains(spelled, ', ') DESC,
                             length(regexp_replace(spelled, '[^\p{L}]|[A-Za-z]', '', 'g')) DESC,
                             length(regexp_replace(spelled, '[^A-Z]', '', 'g')),
                             spelled
                ) AS r
                -- equal rows rank equal: each distinct one is ranked once
                FROM (SELECT DISTINCT s.* FROM spellings s JOIN variety USING (player_id) WHERE n > 1)
            ) WHERE r = 1
        ) best
        WHERE players.player_id = best.player_id AND players.name IS DISTINCT FROM best.spelled
        """
