"""Whether a changed file at a known path corrects the version stored before it.

A file whose bytes changed at the same path (and archive member) may be a correction (a result
fixed, a name spelt right, the missing round added, a date typo fixed) or new content under a
reused name (this month's `league.pgn`, another event's `results.pgn`, next year's `club.trf` of a
club's round-robin: the same name, players and pairings, another year). A correction deletes the
earlier version's rows; nothing stored is removed without proof, so `corrects` asks for all of:

- the same event: a tournament of each with the same event key (`names.event_key`: folded words,
  no numbers), or whose days of play overlap (`tournaments.first_day`..`last_day`);
- most of the earlier version kept: more than half of its games' pairings (the round, White and
  Black, each player keyed by FIDE ID, else by the written name's `name_key`) are among the new
  version's, each game matched once. Colours count: a double round-robin's second half pairs the
  same players with colours reversed. An earlier version without games compares its entries (the
  players) instead;
- the same days, or the same games: when both versions are dated and no day of play of the one
  is a day of play of the other (`Evidence.days_apart`), the pairings prove nothing (a
  round-robin's pairing table is the same every year), so the new version must hold every game
  of the earlier one with its result (a date typo fixed, nothing else), and the earlier version
  at least `MOVED_MIN_GAMES` games: a game or two can repeat a year later by chance, unless each
  of them has the same moves in the new version, at least `event_sources.EVENT_DATE_PLIES`
  plies (equal movetext hashes: a full move record that long is no repetition; a short draw
  can be). A version whose dates moved and whose results changed too is a new file, both kept;
  a version without games whose dates moved likewise.

An earlier version with no tournament (it was rejected) holds nothing to lose and is always
replaced. Anything else is a new file: both are kept, and the loader says so
(`FileResult.kept_line`). `Evidence.removed` counts the earlier version's games whose pairing the
new one does not hold, for the message a correction that removes games gives.

One query per candidate, over the rows of the two versions only (joins on `file_id`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb
import polars as pl

from elopipe.identity.event_sources import EVENT_DATE_PLIES
from elopipe.ingest import rows as load_rows
from elopipe.read.game_frame import games_frame
from elopipe.read.names import name_key_sql
from elopipe.read.records import ParsedFile
from elopipe.store.frames import registered

# the fewest games of an earlier version that a version with other dates may replace, when it
# holds all of them with their results: fewer could be repeated a year later by chance (a match
# of two games, White winning both, each year)
MOVED_MIN_GAMES = 4


@dataclass(frozen=True)
class Evidence:
    """What the earlier version `file_id` shares with the new one. `old_items`: its games (its
    entries when it has no game); `kept`: how many of those the new version holds; `removed`: its
    games the new version does not hold; `same_event`: a tournament of each is the same event;
    `days_apart`: both versions are dated and share no day of play; `old_games`: its games;
    `same_results`: its games the new version holds with the same result; `same_moves`: those
    of them with equal moves of at least `EVENT_DATE_PLIES` plies on both sides. `old_event`, `old_day`:
    the name and first day of its first event; `new_event`, `new_day`: those of the new version
    (None: no dated event), for the line that says both are kept."""

    file_id: int
    has_tournaments: bool
    same_event: bool
    old_items: int
    kept: int
    removed: int
    days_apart: bool = False
    old_games: int = 0
    same_results: int = 0
    same_moves: int = 0
    old_event: str = ""
    old_day: dt.date | None = None
    new_event: str = ""
    new_day: dt.date | None = None

    @property
    def corrects(self) -> bool:
        """True when the new version is a correction of this one (see the module docstring)."""
        if not self.has_tournaments:
            return True
        if not (self.same_event and (self.old_items == 0 or 2 * self.kept > self.old_items)):
            return False
        if not self.days_apart:
            return True
        # other days: only the same games with the same results prove a correction (a date typo);
        # fewer than MOVED_MIN_GAMES only when each has the same long moves too
        enough = self.old_games >= MOVED_MIN_GAMES or (self.old_games > 0 and self.same_moves == self.old_games)
        return enough and self.same_results == self.old_games

    def old_words(self) -> str:
        """'Club Championship 2023-05-01': the earlier version's first event and its first day."""
        return " ".join(filter(None, (self.old_event, str(self.old_day or "")))) or f"file_id {self.file_id}"

    def new_words(self) -> str:
        """'of 2024-05-01' (the new version's first day; its event's name first when it is not the
        earlier version's), '' when neither is known."""
        new = [] if self.new_event == self.old_event else [self.new_event]
        new += [f"of {self.new_day}"] if self.new_day is not None else []
        return " ".join(filter(None, new))


def _key(fide: str, name: str) -> str:
    """SQL: a player's key, the FIDE ID when written, else the name's key."""
    return f"coalesce('#' || CAST({fide} AS VARCHAR), {name_key_sql(name)})"


def _new_frames(parsed: ParsedFile) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The new version's tournaments (name, event_key, first_day, last_day), players
    (tournament_ref, ref, name, fide_id) and games (tournament_ref, round, white_ref, black_ref,
    result, movetext_hash, ply_count)."""
    games = games_frame(parsed.games)
    t_refs = {t.ref: t.ref for t in parsed.tournaments}
    spans = load_rows.tournaments_frame([load_rows.FileRows(0, parsed, games, t_refs)]).select(
        "name", "event_key", "first_day", "last_day"
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
    return (
        spans,
        players,
        games.select("tournament_ref", "round", "white_ref", "black_ref", "result", "movetext_hash", "ply_count"),
    )


_EVIDENCE = f"""
WITH np AS (SELECT tournament_ref, ref, {_key("fide_id", "name")} AS k FROM _new_players),
ng AS (
    SELECT g.round, w.k AS w, b.k AS b, g.result, g.movetext_hash, g.ply_count,
        row_number() OVER (PARTITION BY g.round, w.k, b.k ORDER BY g.result) AS nth
    FROM _new_games g
    LEFT JOIN np w ON w.tournament_ref = g.tournament_ref AND w.ref = g.white_ref
    LEFT JOIN np b ON b.tournament_ref = g.tournament_ref AND b.ref = g.black_ref
),
op AS (
    SELECT tournament_id, player_id, {_key("fide_id_in_file", "name_as_written")} AS k
    FROM tournament_players WHERE file_id = $fid
),
og AS (
    SELECT g.round, w.k AS w, b.k AS b, g.result, g.movetext_hash, g.ply_count,
        row_number() OVER (PARTITION BY g.round, w.k, b.k ORDER BY g.result) AS nth
    FROM games g
    LEFT JOIN op w ON w.tournament_id = g.tournament_id AND w.player_id = g.white_id
    LEFT JOIN op b ON b.tournament_id = g.tournament_id AND b.player_id = g.black_id
    WHERE g.file_id = $fid
),
-- each game of the earlier version matched to at most one of the new: a game written twice by
-- mistake and once in the correction is one game removed
games_kept AS (
    SELECT count(*) AS n, count(ng.nth) AS kept,
        count(ng.nth) FILTER (WHERE ng.result IS NOT DISTINCT FROM og.result) AS same_result,
        count(ng.nth) FILTER (WHERE ng.movetext_hash = og.movetext_hash AND ng.ply_count >= $plies
                              AND og.ply_count >= $plies) AS same_moves
    FROM og LEFT JOIN ng
    ON ng.round IS NOT DISTINCT FROM og.round AND ng.w IS NOT DISTINCT FROM og.w
    AND ng.b IS NOT DISTINCT FROM og.b AND ng.nth = og.nth
),
entries_kept AS (
    SELECT count(DISTINCT k) AS n, count(DISTINCT k) FILTER (WHERE k IN (SELECT k FROM np)) AS kept FROM op
),
ot AS (SELECT name, event_key, first_day, last_day FROM tournaments WHERE file_id = $fid)
SELECT
    (SELECT count(*) FROM ot) > 0,
    EXISTS (SELECT 1 FROM ot JOIN _new_spans n ON (ot.event_key <> '' AND ot.event_key = n.event_key)
            OR (ot.first_day <= n.last_day AND n.first_day <= ot.last_day)),
    gk.n, gk.kept, ek.n, ek.kept,
    -- dated on both sides, and no day of play of the one is a day of play of the other
    EXISTS (SELECT 1 FROM ot WHERE first_day IS NOT NULL)
        AND EXISTS (SELECT 1 FROM _new_spans WHERE first_day IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM ot JOIN _new_spans n
                        ON ot.first_day <= n.last_day AND n.first_day <= ot.last_day),
    gk.same_result, gk.same_moves,
    (SELECT coalesce(arg_min(name, first_day), min(name)) FROM ot), (SELECT min(first_day) FROM ot),
    (SELECT coalesce(arg_min(name, first_day), min(name)) FROM _new_spans), (SELECT min(first_day) FROM _new_spans)
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
                row = con.execute(_EVIDENCE, {"fid": fid, "plies": EVENT_DATE_PLIES}).fetchall()[0]
                has_t, same, n_games, kept_games, n_entries, kept_entries, apart, same_results, same_moves = row[:9]
                old_event, old_day, new_event, new_day = row[9:]
                by_games = n_games > 0
                out.append(
                    Evidence(
                        fid,
                        bool(has_t),
                        bool(same),
                        n_games if by_games else n_entries,
                        kept_games if by_games else kept_entries,
                        n_games - kept_games,
                        bool(apart),
                        n_games,
                        same_results,
                        same_moves,
                        old_event or "",
                        old_day,
                        new_event or "",
                        new_day,
                    )
                )
    return out
