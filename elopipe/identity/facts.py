"""A player's facts (title, federation, sex, birth year and date, FIDE ID) from every file, not the first.

`players` is written once per person, by the first file that names them; later files (a PGN
export with `WhiteTitle`, a TRF with the new federation) add or correct those facts in their
`tournament_players` entries. `refresh_player_facts` recomputes them from the entries, for the
players a batch, a merge, a split or a corrected file touched, so the store is the same
whatever order the files came in.
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

# FIDE titles, highest first: by the rating each asks (FIDE Title Regulations, Handbook B.01: GM 2500,
# IM 2400, WGM and FM 2300, WIM and CM 2200, WFM 2100, WCM 2000), a women's title before the open
# title of the same rating; any other title written (a PGN's 'LM', 'BOT') ranks after them
TITLE_ORDER = ("GM", "IM", "WGM", "FM", "WIM", "CM", "WFM", "WCM")
_RANK = "CASE title " + " ".join(f"WHEN '{t}' THEN {i}" for i, t in enumerate(TITLE_ORDER)) + " ELSE 99 END"


def refresh_player_facts(
    con: duckdb.DuckDBPyConnection, player_ids: Iterable[int] = (), file_ids: Iterable[int] = ()
) -> int:
    """Set the facts of `player_ids` and of the players with an entry in the files `file_ids` (a
    merged player stands for the player it was merged into) from all their tournament entries;
    returns how many `players` rows changed.

    The rule (an entry is dated by the last day of its tournament, `tournaments.last_day`; an
    entry of unknown date is the oldest):
    * title: that of the most recent entry giving a FIDE title (GM, IM, WGM, FM, WIM, CM, WFM,
      WCM); at one date, the highest (`TITLE_ORDER`). A title written that is no FIDE title
      counts only when no entry gives a FIDE title.
    * federation, sex: those of the most recent entry giving one (a transfer counts from its
      first event); at one date, the first alphabetically.
    * birth year, birth date: the largest the entries write, leaving out a value after the start
      of the entry's event (a typo such as 2030), as `rating.store_io.load_players` reads them;
      such a value only when nothing else gives one.
    * a fact no entry gives: the player's latest imported official list giving it
      (`official_lists`, through the view `v_official_entries`; its title, else its women's
      title), else none: a title only a deleted file or the entries a split took away gave is not
      kept.
    * FIDE ID, only where the player has none: the one FIDE ID its entries write, unless they
      write several or another player holds it (`players suspects` lists such pairs).
    A player with neither entry nor official list row keeps its row as it is. Set-based: one
    UPDATE joined on the players' entries and list rows; SQL errors propagate (the caller rolls
    back)."""
    ids, files = sorted({int(i) for i in player_ids}), sorted({int(f) for f in file_ids})
    if not ids and not files:
        return 0
    res = con.execute(
        f"""
        UPDATE players SET title = f.title, federation = f.federation, sex = f.sex, birth_year = f.birth_year,
                           birth_date = f.birth_date, fide_id = COALESCE(players.fide_id, f.fide_id)
        FROM (
            WITH who AS (
                -- one semi-join on the union of both sets: an OR of two IN was two mark joins over
                -- every row of `players`
                SELECT DISTINCT COALESCE(merged_into, player_id) AS player_id FROM players
                WHERE player_id IN (SELECT UNNEST($ids)
                                    UNION ALL
                                    SELECT player_id FROM tournament_players WHERE file_id IN (SELECT UNNEST($files)))
            ),
            e AS (
                SELECT tp.player_id, tp.title, {_RANK} AS title_rank, nullif(trim(tp.federation), '') AS federation,
                       tp.sex, tp.birth_year, tp.birth_date, nullif(tp.fide_id_in_file, 0) AS fide_id,
                       coalesce(t.last_day, t.first_day) AS day, t.start_date
                FROM tournament_players tp JOIN who USING (player_id) LEFT JOIN tournaments t USING (tournament_id)
            ),
            ef AS (
                SELECT player_id,
                       first(title ORDER BY title_rank < 99 DESC, day DESC NULLS LAST, title_rank, title)
                           FILTER (WHERE title IS NOT NULL) AS title,
                       first(federation ORDER BY day DESC NULLS LAST, federation)
                           FILTER (WHERE federation IS NOT NULL) AS federation,
                       first(sex ORDER BY day DESC NULLS LAST, sex) FILTER (WHERE sex IS NOT NULL) AS sex,
                       max(birth_year) FILTER (WHERE start_date IS NULL OR birth_year <= year(start_date))
                           AS birth_year,
                       max(birth_date) FILTER (WHERE start_date IS NULL OR birth_date <= start_date) AS birth_date,
                       max(birth_year) AS any_birth_year, max(birth_date) AS any_birth_date,
                       CASE WHEN count(DISTINCT fide_id) = 1 THEN any_value(fide_id) END AS fide_id
                FROM e GROUP BY player_id
            ),
            lf AS (
                SELECT o.player_id,
                       first(coalesce(o.title, o.w_title) ORDER BY o.list_date DESC, o.title, o.w_title)
                           FILTER (WHERE coalesce(o.title, o.w_title) IS NOT NULL) AS title,
                       first(o.federation ORDER BY o.list_date DESC, o.federation)
                           FILTER (WHERE o.federation IS NOT NULL) AS federation,
                       first(o.sex ORDER BY o.list_date DESC, o.sex) FILTER (WHERE o.sex IS NOT NULL) AS sex,
                       first(o.birth_year ORDER BY o.list_date DESC, o.birth_year)
                           FILTER (WHERE o.birth_year IS NOT NULL) AS birth_year
                FROM v_official_entries o JOIN who USING (player_id) GROUP BY o.player_id
            )
            SELECT player_id, coalesce(ef.title, lf.title) AS title,
                   coalesce(ef.federation, lf.federation) AS federation, coalesce(ef.sex, lf.sex) AS sex,
                   coalesce(ef.birth_year, lf.birth_year, ef.any_birth_year) AS birth_year,
                   coalesce(ef.birth_date, ef.any_birth_date) AS birth_date,
                   -- a FIDE ID another player holds is left to the officer (`players suspects`)
                   CASE WHEN NOT EXISTS (
                       SELECT 1 FROM players o WHERE o.fide_id = ef.fide_id AND o.player_id <> ef.player_id
                       AND o.merged_into IS NULL) THEN ef.fide_id END AS fide_id
            FROM ef FULL JOIN lf USING (player_id)
        ) f
        WHERE players.player_id = f.player_id
          AND (players.title IS DISTINCT FROM f.title OR players.federation IS DISTINCT FROM f.federation
               OR players.sex IS DISTINCT FROM f.sex OR players.birth_year IS DISTINCT FROM f.birth_year
               OR players.birth_date IS DISTINCT FROM f.birth_date
               OR (players.fide_id IS NULL AND f.fide_id IS NOT NULL))
        """,
        {"ids": ids, "files": files},
    ).fetchall()
    return int(res[0][0]) if res else 0
