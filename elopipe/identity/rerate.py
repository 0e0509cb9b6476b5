"""Whether an officer's merge or split calls for a re-rate: is a rated game of the players now
another player's?

The stored lists were computed from the games' sides as they were then: each rated game has a
`rating_changes` row (a game a rating period considered) naming its player and opponent, read
through the view `v_rated_sides` (rating sits above identity: the view names what is read). After a
decision, a game of the players whose row names a player no longer on the game's sides has moved
(to the kept player, or to the player split off), and every list from that game's period on
changes; if none has, no list changes. The test is on the store's facts, as sets: the players'
games are noted before the decision (`RatedSides`) and checked after it. A merge or split made
since the last rating and not yet rated counts too: the lists do not show it either.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

import duckdb

from elopipe.runtime.hints import command_hint


@dataclass(frozen=True)
class Rerate:
    """One system whose lists a decision changes: lists from `first_list` (the earliest period
    of a moved game) on; `games`: rated games that moved to another player."""

    system: str
    first_list: dt.date
    games: int

    def message(self, db: str | os.PathLike[str] | None = None) -> str:
        """One line: 're-rate needed: fide lists from 2019-03-01 change (4 rated games moved); run
        `elopipe rate --system fide`' (with `--db PATH` for a store `db` that is not the default)."""
        games = f"{self.games:,} rated game{'s' if self.games != 1 else ''} moved"
        return (
            f"re-rate needed: {self.system} lists from {self.first_list} change ({games});"
            f" run `{command_hint(f'rate --system {self.system}', db)}`"
        )


class RatedSides:
    """The games of `player_ids`, noted in a temporary table of `con` when made; `moved()` then
    gives, per system, the rated games among them whose `rating_changes` rows name a player (or
    opponent) no longer on the game's sides. Use within the decision's transaction."""

    _TABLE = "_decision_games"

    def __init__(self, con: duckdb.DuckDBPyConnection, player_ids: list[int]) -> None:
        self.con = con
        con.execute(
            f"""
            CREATE OR REPLACE TEMP TABLE {self._TABLE} AS
            SELECT game_id FROM games WHERE white_id IN (SELECT UNNEST($ids)) OR black_id IN (SELECT UNNEST($ids))
            """,
            {"ids": sorted(set(player_ids))},
        )

    def moved(self) -> list[Rerate]:
        """Per system (alphabetical), the first list and the number of the noted games that were
        rated with a player no longer on their sides; [] when none. Drops the temporary table."""
        try:
            rows = self.con.execute(
                f"""
                SELECT rc.system, min(rc.list_date), count(DISTINCT rc.game_id)
                FROM v_rated_sides rc JOIN {self._TABLE} USING (game_id) JOIN games g USING (game_id)
                WHERE rc.player_id NOT IN (g.white_id, g.black_id)
                   OR rc.opponent_id NOT IN (g.white_id, g.black_id)
                GROUP BY 1 ORDER BY 1
                """
            ).fetchall()
        finally:
            self.con.execute(f"DROP TABLE IF EXISTS {self._TABLE}")
        return [Rerate(system, first, int(n)) for system, first, n in rows]


def moved_by_merges(con: duckdb.DuckDBPyConnection, merged_ids: list[int]) -> list[Rerate]:
    """Per system (alphabetical), the rated games whose `rating_changes` rows name one of the
    players `merged_ids` (merged away by an ingest's automatic merges: no game names them any
    more); [] when none, or when nothing was ever rated. Read from `v_rated_sides` only, filtered
    on those players."""
    ids = sorted(set(merged_ids))
    if not ids or not con.execute("SELECT EXISTS (SELECT 1 FROM v_rated_sides)").fetchall()[0][0]:
        return []
    rows = con.execute(
        """
        SELECT system, min(list_date), count(DISTINCT game_id) FROM v_rated_sides
        WHERE player_id IN (SELECT UNNEST($ids)) OR opponent_id IN (SELECT UNNEST($ids))
        GROUP BY 1 ORDER BY 1
        """,
        {"ids": ids},
    ).fetchall()
    return [Rerate(system, first, int(n)) for system, first, n in rows]


def combine(found: list[Rerate]) -> list[Rerate]:
    """One `Rerate` per system of `found` (several batches): the earliest list, the games summed."""
    out: dict[str, Rerate] = {}
    for r in found:
        o = out.get(r.system)
        out[r.system] = r if o is None else Rerate(r.system, min(o.first_list, r.first_list), o.games + r.games)
    return [out[s] for s in sorted(out)]
