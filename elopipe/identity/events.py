"""One event held in several files: the tournaments that are parts of it, joined.

TWIC publishes a long event across two or three weekly files; each file gives a tournament of
its own, and without joining them each part would have its own Ra, Rp and crosstable (Corus
2010 became three "tournaments"). Two tournaments of different files are parts of one event
when all the evidence holds:

- the same event key (`identity.event_key`, not empty) and the same place (`city`), or one
  place unknown; the same rate class, or both unknown (an event's playoff at a faster rate is
  another event: joining them would rate its games at the other's rate);
- days of play that overlap or follow each other within `identity.DATE_SLACK_DAYS`;
- rounds that continue without repeating: both parts have numbered rounds, and none in common
  among their canonical games (two sections of one festival repeat round numbers; a game one
  file repeats from the other is one game, `elopipe.identity.dedup`);
- players in common: at least half of the smaller part's (two events under one name, on the
  same days, are played by other people).

Each connected group of such pairs is one event, named by its lowest tournament_id:
`tournaments.event_id` (NULL for a tournament that is no part of another). Games keep their
tournament and their source file; the rating (`rating.store_io`) and the reports read the
event. Parts that repeat games are sources of one event for `elopipe.identity.dedup`, not parts.

`join_events` recomputes the groups a batch can change, set-based: its cost follows the
tournaments near the batch's (same key, days within the slack) and their events, not the store.
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb
import polars as pl

from elopipe.identity.nearby import DATE_SLACK_DAYS
from elopipe.store.frames import registered

# The tournaments whose grouping a batch of `$ids` can change: those under the same event keys
# whose days come within the slack of one of them, and the other parts of their events.
_MEMBERS_SQL = f"""
WITH b AS (
    SELECT event_key, first_day, last_day FROM tournaments
    WHERE tournament_id IN (SELECT UNNEST($ids)) AND event_key <> '' AND first_day IS NOT NULL
),
near AS (
    SELECT t.tournament_id, t.event_id FROM tournaments t JOIN b ON t.event_key = b.event_key
     AND t.first_day <= b.last_day + INTERVAL {DATE_SLACK_DAYS} DAY
     AND b.first_day <= t.last_day + INTERVAL {DATE_SLACK_DAYS} DAY
)
SELECT tournament_id FROM near
UNION SELECT tournament_id FROM tournaments WHERE event_id IN (SELECT event_id FROM near)
-- parts of an event whose named part a correction replaced: their event is to be named again
UNION SELECT t.tournament_id FROM tournaments t
      WHERE t.event_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tournaments e WHERE e.tournament_id = t.event_id)
UNION SELECT UNNEST($ids)
"""

# (lower id, higher id) of the pairs of parts of one event among `$members` (module docstring)
_PARTS_SQL = f"""
WITH cand AS (
    SELECT tournament_id, file_id, event_key, city, rate_class, first_day, last_day
    FROM tournaments WHERE tournament_id IN (SELECT UNNEST($members)) AND event_key <> ''
),
pairs AS (
    SELECT a.tournament_id AS ta, b.tournament_id AS tb
    FROM cand a JOIN cand b ON a.event_key = b.event_key AND a.tournament_id < b.tournament_id
     AND a.file_id <> b.file_id
     AND (a.city IS NULL OR b.city IS NULL OR a.city = b.city)
     AND a.rate_class IS NOT DISTINCT FROM b.rate_class
     AND a.first_day <= b.last_day + INTERVAL {DATE_SLACK_DAYS} DAY
     AND b.first_day <= a.last_day + INTERVAL {DATE_SLACK_DAYS} DAY
),
rounds AS (
    SELECT DISTINCT tournament_id, round FROM canonical_games
    WHERE tournament_id IN (SELECT ta FROM pairs UNION SELECT tb FROM pairs) AND round IS NOT NULL
),
repeated AS (
    SELECT DISTINCT p.ta, p.tb FROM pairs p
    JOIN rounds ra ON ra.tournament_id = p.ta JOIN rounds rb ON rb.tournament_id = p.tb AND ra.round = rb.round
),
people AS (
    SELECT DISTINCT tp.tournament_id, COALESCE(pl.merged_into, tp.player_id) AS pid
    FROM tournament_players tp JOIN players pl USING (player_id)
    WHERE tp.tournament_id IN (SELECT ta FROM pairs UNION SELECT tb FROM pairs)
),
sizes AS (SELECT tournament_id, count(*) AS n FROM people GROUP BY 1),
common AS (
    SELECT p.ta, p.tb, count(*) AS n FROM pairs p
    JOIN people a ON a.tournament_id = p.ta JOIN people b ON b.tournament_id = p.tb AND a.pid = b.pid
    GROUP BY ALL
)
SELECT p.ta, p.tb FROM pairs p
JOIN common c USING (ta, tb) JOIN sizes sa ON sa.tournament_id = p.ta JOIN sizes sb ON sb.tournament_id = p.tb
WHERE p.ta IN (SELECT tournament_id FROM rounds) AND p.tb IN (SELECT tournament_id FROM rounds)
  AND NOT EXISTS (SELECT 1 FROM repeated r WHERE r.ta = p.ta AND r.tb = p.tb)
  AND 2 * c.n >= least(sa.n, sb.n)
"""


def join_events(con: duckdb.DuckDBPyConnection, tids: Iterable[int]) -> None:
    """Set `tournaments.event_id` for `tids` and the tournaments whose grouping they can change
    (`_MEMBERS_SQL`; see the module docstring)."""
    ids = sorted(set(tids))
    if not ids:
        return
    members = sorted(r[0] for r in con.execute(_MEMBERS_SQL, {"ids": ids}).fetchall())
    parent = {t: t for t in members}

    def root(t: int) -> int:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    # the pairs found, not the store's rows: a handful per split event. A pair is two members: a
    # batch of one new event (no namesake on its days) has none, and the plan of `_PARTS_SQL`
    # costs ~0.01 CPU-s on no rows (issue 27)
    pairs = con.execute(_PARTS_SQL, {"members": members}).fetchall() if len(members) > 1 else []
    for ta, tb in pairs:
        ra, rb = root(ta), root(tb)
        parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for t in members:
        groups.setdefault(root(t), []).append(t)
    event_of = {t: (min(g) if len(g) > 1 else None) for g in groups.values() for t in g}
    frame = pl.DataFrame(
        {"tournament_id": list(event_of), "event_id": list(event_of.values())},
        schema={"tournament_id": pl.Int32, "event_id": pl.Int32},
    )
    with registered(con, "_event_ids", frame):
        con.execute(
            "UPDATE tournaments SET event_id = e.event_id FROM _event_ids e"
            " WHERE tournaments.tournament_id = e.tournament_id AND tournaments.event_id IS DISTINCT FROM e.event_id"
        )


# SQL: the tournaments that are parts of the event whose id is the parameter (itself when alone)
PARTS = "(SELECT tournament_id FROM tournaments WHERE coalesce(event_id, tournament_id) = ?)"


def event_of(con: duckdb.DuckDBPyConnection, tournament_id: int) -> int:
    """The id of the event `tournament_id` is a part of (itself when it is no part of another)."""
    row = con.execute(
        "SELECT coalesce(event_id, tournament_id) FROM tournaments WHERE tournament_id = ?", [tournament_id]
    ).fetchall()
    return int(row[0][0]) if row else tournament_id
