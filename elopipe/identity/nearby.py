"""Tournaments near each other: one event's key and overlapping dates (within `DATE_SLACK_DAYS`).

The shared test of "these two tournaments can be sources of one event", used by player
resolution (a name within the event's other sources), by dedup (the same game seen twice) and by
the join of split events.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
from collections.abc import Iterable, Iterator

import duckdb
import polars as pl

from elopipe.store.frames import to_polars

# Dates of two sources of one event may differ by a day or two (EventDate vs first round).
DATE_SLACK_DAYS = 3


def tournament_spans(
    con: duckdb.DuckDBPyConnection, tids: Iterable[int] | None = None
) -> dict[int, tuple[str, dt.date | None, dt.date | None]]:
    """{tournament_id: (event_key, first day, last day)} of the tournaments `tids` (None: every
    tournament of the store); days are `tournaments.first_day` / `last_day` (None when unknown)."""
    if tids is None:
        rows = con.execute("SELECT tournament_id, event_key, first_day, last_day FROM tournaments").fetchall()
    else:
        rows = con.execute(
            "SELECT tournament_id, event_key, first_day, last_day FROM tournaments"
            " WHERE tournament_id IN (SELECT UNNEST(?))",
            [sorted(set(tids))],
        ).fetchall()
    return {r[0]: (r[1] or "", r[2], r[3]) for r in rows}


# {tournaments: near_tournaments} of the connection being loaded, within `reused_near`
_NEAR: contextvars.ContextVar[tuple[duckdb.DuckDBPyConnection, dict[frozenset[int], set[int]]] | None] = (
    contextvars.ContextVar("near_tournaments", default=None)
)


@contextlib.contextmanager
def reused_near(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Within: `near_tournaments` of `con` is read once for the same tournaments. For a step that
    does not change the tournaments' keys and days meanwhile: the loader's batch, whose player
    resolution, same-game evidence and re-link each ask it of the batch's tournaments."""
    token = _NEAR.set((con, {}))
    try:
        yield
    finally:
        _NEAR.reset(token)


def near_tournaments(con: duckdb.DuckDBPyConnection, tids: Iterable[int]) -> set[int]:
    """The tournaments that can be sources of the same event as one of `tids`, or overlap one in
    dates (within `DATE_SLACK_DAYS`), `tids` included: the candidates of `same_event` (same
    event key, days overlapping or unknown) and `dates_overlap`, found by joins on
    `tournaments.event_key` and on the days of play, so the cost follows the tournaments near
    these, not the store (an "Open" of every past month is not near this month's). A new set
    each call (callers may change it)."""
    ids = sorted(set(tids))
    if not ids:
        return set()
    memo = _NEAR.get()
    if memo is None or memo[0] is not con:
        return _near(con, ids)
    key = frozenset(ids)
    if key not in memo[1]:
        memo[1][key] = _near(con, ids)
    return set(memo[1][key])


def _near(con: duckdb.DuckDBPyConnection, ids: list[int]) -> set[int]:
    rows = con.execute(
        f"""
        WITH b AS (SELECT tournament_id, event_key, first_day, last_day FROM tournaments
                   WHERE tournament_id IN (SELECT UNNEST($ids)))
        -- same event key with unknown days: `same_event` holds whatever the dates
        SELECT t.tournament_id FROM tournaments t JOIN b ON t.event_key = b.event_key AND b.event_key <> ''
         AND (t.first_day IS NULL OR b.first_day IS NULL)
        UNION
        SELECT t.tournament_id FROM tournaments t JOIN b
          ON t.first_day <= b.last_day + INTERVAL {DATE_SLACK_DAYS} DAY
         AND b.first_day <= t.last_day + INTERVAL {DATE_SLACK_DAYS} DAY
        """,
        {"ids": ids},
    ).fetchall()
    return {r[0] for r in rows} | set(ids)


# The ordered pairs (ta of `$left`, tb of `$right`, ta <> tb) whose spans can hold one game
# (`event_sources.compatible` without the rates): `same_event` (same event key, days overlapping or
# unknown) or days overlapping (`dates_overlap`). An equi-join on the key and a range join on the
# days, not all pairs: weekly events of one club pair with none of each other. The key's join
# keeps the pairs of an unknown day only (the others it finds, the days' join finds too): the two
# sets are disjoint, each pair once in its own, so UNION ALL, with no grouping of a FIDE month's
# 270k pairs of tournaments of the same weeks (0.2 CPU-s a batch).
NEAR_PAIRS_SQL = f"""
WITH a AS (SELECT tournament_id AS t, event_key AS k, first_day AS d0, coalesce(last_day, first_day) AS d1
           FROM tournaments WHERE tournament_id IN (SELECT UNNEST($left))),
b AS (SELECT tournament_id AS t, event_key AS k, first_day AS d0, coalesce(last_day, first_day) AS d1
      FROM tournaments WHERE tournament_id IN (SELECT UNNEST($right)))
SELECT a.t AS ta, b.t AS tb FROM a JOIN b ON a.k = b.k AND a.k <> '' AND a.t <> b.t
WHERE a.d0 IS NULL OR b.d0 IS NULL
UNION ALL
SELECT a.t, b.t FROM a JOIN b
  ON a.d0 <= b.d1 + INTERVAL {DATE_SLACK_DAYS} DAY AND b.d0 <= a.d1 + INTERVAL {DATE_SLACK_DAYS} DAY
WHERE a.t <> b.t
"""


def near_pairs(con: duckdb.DuckDBPyConnection, left: Iterable[int], right: Iterable[int]) -> pl.DataFrame:
    """The pairs of a tournament of `left` and another of `right` that can be sources of one event
    or whose days overlap (`NEAR_PAIRS_SQL`): columns ta, tb (Int64), both orders when both are
    on both sides. Their number follows the tournaments near each other, not len(left) x len(right)."""
    # read through the Arrow stream (`to_polars`): `.pl()` imports pyarrow and NumPy (~0.05 CPU-s)
    frame = to_polars(con.sql(NEAR_PAIRS_SQL, params={"left": sorted(set(left)), "right": sorted(set(right))}))
    return frame.select(pl.col("ta").cast(pl.Int64), pl.col("tb").cast(pl.Int64))


def dates_overlap(
    a0: dt.date | None, a1: dt.date | None, b0: dt.date | None, b1: dt.date | None, slack_days: int = DATE_SLACK_DAYS
) -> bool | None:
    """Whether two date ranges overlap within `slack_days`; None when either is unknown."""
    import datetime as _dt

    if a0 is None or b0 is None:
        return None
    slack = _dt.timedelta(days=slack_days)
    return a0 - slack <= (b1 or b0) and b0 - slack <= (a1 or a0)


def same_event(a: tuple[str, dt.date | None, dt.date | None], b: tuple[str, dt.date | None, dt.date | None]) -> bool:
    """Two tournaments are sources of one event: same event key, and dates overlapping (or unknown)."""
    if not a[0] or a[0] != b[0]:
        return False
    return dates_overlap(a[1], a[2], b[1], b[2]) is not False
