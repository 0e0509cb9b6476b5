"""Whether a changed file at a known path corrects the version stored before it.

A file whose bytes changed at the same path (and archive member) may be a correction (a result
fixed, a name spelt right, the missing round added) or new content under a reused name (this
month's `league.pgn`, another event's `results.pgn`). A correction deletes the earlier version's
rows, so it needs evidence that the two hold the same event (`corrects`):

- the same event: a tournament of each with the same event key (`names.event_key`: folded words,
  no numbers), or whose days of play overlap (`tournaments.first_day`..`last_day`); and
- most of the earlier version kept: more than half of its games' pairings (the round, White and
  Black, each player keyed by FIDE ID, else by the written name's `name_key`) are among the new
  version's, each game matched once. Colours count: a double round-robin's second half pairs the
  same players with colours reversed. An earlier version without games compares its entries (the
  players) instead.

An earlier version with no tournament (it was rejected) holds nothing to lose and is always
replaced. Anything else is a new file: both are kept. `Evidence.removed` counts the earlier
version's games whose pairing the new one does not hold, for the message a correction that
removes games gives.

One query per candidate, over the rows of the two versions only (joins on `file_id`).
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import polars as pl

from elopipe.ingest import rows as load_rows
from elopipe.read.game_frame import games_frame
from elopipe.read.names import name_key_sql
from elopipe.read.records import ParsedFile
from elopipe.store.frames import registered


@dataclass(frozen=True)
class Evidence:
    """What the earlier version `file_id` shares with the new one. `old_items`: its games (its
    entries when it has no game); `kept`: how many of those the new version holds; `removed`: its
    games the new version does not hold; `same_event`: a tournament of each is the same event."""

    file_id: int
    has_tournaments: bool
    same_event: bool
    old_items: int
    kept: int
    removed: int

    @property
    def corrects(self) -> bool:
        """True when the new version is a correction of this one (see the module docstring)."""
        if not self.has_tournaments:
            return True
        return self.same_event and (self.old_items == 0 or 2 * self.kept > self.old_items)


def _key(fide: str, name: str) -> str:
    """SQL: a player's key, the FIDE ID when written, else the name's key."""
    return f"coalesce('#' || CAST({fide} AS VARCHAR), {name_key_sql(name)})"


def _new_frames(parsed: ParsedFile) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The new version's tournaments (event_key, first_day, last_day), players (tournament_ref,
    ref, name, fide_id) and games (tournament_ref, round, white_ref, black_ref)."""
    games = games_frame(parsed.games)
    t_refs = {t.ref: t.ref for t in parsed.tournaments}
    spans = load_rows.tournaments_frame([load_rows.FileRows(0, parsed, games, t_refs)]).select(
        "event_key", "first_day", "last_day"
    )
    players = pl.DataFrame(
        {
            "tournament_ref": [p.tournament_ref for p in parsed.players],
            "ref": [p.ref for p in parsed.players],
            "name": [p.name for p in parsed.players],
            "fide_id": [p.fide_id for p in parsed.players],
        },
        schema={"tournament_ref": pl.Int64, "ref": pl.Int64, "name": pl.Utf8, "fide_id": pl.Int64},
    )
    return spans, players, games.select("tournament_ref", "round", "white_ref", "black_ref")


_EVIDENCE = f"""
WITH np AS (SELECT tournament_ref, ref, {_key("fide_id", "name")} AS k FROM _new_players),
ng AS (
    SELECT g.round, w.k AS w, b.k AS b, row_number() OVER (PARTITION BY g.round, w.k, b.k) AS nth
    FROM _new_games g
    LEFT JOIN np w ON w.tournament_ref = g.tournament_ref AND w.ref = g.white_ref
    LEFT JOIN np b ON b.tournament_ref = g.tournament_ref AND b.ref = g.black_ref
),
op AS (
    SELECT tournament_id, player_id, {_key("fide_id_in_file", "name_as_written")} AS k
    FROM tournament_players WHERE file_id = $fid
),
og AS (
    SELECT g.round, w.k AS w, b.k AS b, row_number() OVER (PARTITION BY g.round, w.k, b.k) AS nth
    FROM games g
    LEFT JOIN op w ON w.tournament_id = g.tournament_id AND w.player_id = g.white_id
    LEFT JOIN op b ON b.tournament_id = g.tournament_id AND b.player_id = g.black_id
    WHERE g.file_id = $fid
),
-- each game of the earlier version matched to at most one of the new: a game written twice by
-- mistake and once in the correction is one game removed
games_kept AS (
    SELECT count(*) AS n, count(ng.nth) AS kept FROM og LEFT JOIN ng
    ON ng.round IS NOT DISTINCT FROM og.round AND ng.w IS NOT DISTINCT FROM og.w
    AND ng.b IS NOT DISTINCT FROM og.b AND ng.nth = og.nth
),
entries_kept AS (
    SELECT count(DISTINCT k) AS n, count(DISTINCT k) FILTER (WHERE k IN (SELECT k FROM np)) AS kept FROM op
),
ot AS (SELECT event_key, first_day, last_day FROM tournaments WHERE file_id = $fid)
SELECT
    (SELECT count(*) FROM ot) > 0,
    EXISTS (SELECT 1 FROM ot JOIN _new_spans n ON (ot.event_key <> '' AND ot.event_key = n.event_key)
            OR (ot.first_day <= n.last_day AND n.first_day <= ot.last_day)),
    gk.n, gk.kept, ek.n, ek.kept
FROM games_kept gk, entries_kept ek
"""


def evidence(con: duckdb.DuckDBPyConnection, parsed: ParsedFile | None, file_ids: list[int]) -> list[Evidence]:
    """The `Evidence` of the new version `parsed` (None: a rejected file, which holds nothing)
    against each stored version `file_ids`, in their order."""
    spans, players, games = _new_frames(parsed if parsed is not None else ParsedFile("unknown"))
    out = []
    with registered(con, "_new_spans", spans), registered(con, "_new_players", players):
        with registered(con, "_new_games", games):
            for fid in file_ids:
                row = con.execute(_EVIDENCE, {"fid": fid}).fetchall()[0]
                has_t, same, n_games, kept_games, n_entries, kept_entries = row
                by_games = n_games > 0
                out.append(
                    Evidence(
                        fid,
                        bool(has_t),
                        bool(same),
                        n_games if by_games else n_entries,
                        kept_games if by_games else kept_entries,
                        n_games - kept_games,
                    )
                )
    return out
