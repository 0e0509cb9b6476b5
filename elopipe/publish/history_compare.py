"""A player's rating history under two sides, A against B (issue 18: `elopipe player NAME --compare B`).

A side is what `elopipe compare` takes (`elopipe.publish.compare`): a computed system ('fide'), a
scenario ('fide@v2017', stored under that system key) or an imported official list
('official:fide', or 'official' alone for the official list of A's system), its rows matched to
the player as `v_compare` matches them (`elopipe.store.compare_view.sides_sql`).

The chart's lines are drawn by `history.write_player_page`: A's and a computed B's as the
single-side chart draws them (`history.player_series`), an official B's by `official_series`.

`PlayerComparison.rows` columns (Polars, one row per list date either side has for the player,
oldest first): list_date Date; rating_a, rating_b Int32 (rating points in force on the date: a
computed side's last list on or before it; an official side's last imported list on or before it,
the rating an officer reads as the official one in force, when that list holds the player (the
player's row of an earlier list is not carried past a later list that leaves him out); NULL:
unrated, or not on that side's list); diff Int32 (rating_b − rating_a, only where both sides have a
list of the date that rates the player: a side's rating carried from its earlier list is not compared);
carried_a, carried_b Boolean (the rating shown is from that side's last list before the date: it has
no list of the date, e.g. FFE lists a few times a year, a date past the side's last list, or an
official list imported for some dates only);
games_a, games_b Int32
(games rated on that side's list of the date; NULL: no list of the date); on_a, on_b Boolean (the
side has a list row for the player on the date); delisted_a, delisted_b Boolean (the side's list in
force has the player below its floor, rating NULL: B.02 7.2.1); idle Boolean (no game on either side and neither
rating moved: left out of a table without --all-months, as `history.history_frame` leaves such
lists out).

Errors: `CompareError` (exit 2) for a side the store holds no rows of.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import polars as pl

from elopipe.publish.charts import Series
from elopipe.publish.compare import check_sides, resolve_side
from elopipe.store.compare_view import sides_sql
from elopipe.store.frames import to_polars

_HISTORY_PAIR_SQL = """
WITH sides AS ({sides}),
pick AS (SELECT * FROM (VALUES ('a', CAST($a AS VARCHAR)), ('b', CAST($b AS VARCHAR))) v(which, side)),
mine AS (  -- the player's rows on each side; `moved`: the rating differs from the side's list before
    SELECT k.which, s.list_date, s.rating, s.games, s.flags LIKE '%delisted%' AS delisted,
           s.rating IS DISTINCT FROM lag(s.rating) OVER w OR row_number() OVER w = 1 AS moved
    FROM sides s JOIN pick k ON s.side = k.side
    WHERE s.player_id = $pid
    WINDOW w AS (PARTITION BY k.which ORDER BY s.list_date)
),
grid AS (SELECT d.list_date, k.which, k.side FROM (SELECT DISTINCT list_date FROM mine) d CROSS JOIN pick k),
official_dates AS (  -- the dates of the imported official lists compared (the lists, not the player's rows)
    SELECT DISTINCT k.which, o.list_date FROM official_lists o JOIN pick k ON k.side = 'official:' || o.system
),
in_force AS (  -- each side's list in force on the date: the player's last row on or before it, and, for an
               -- official side, the last official list imported on or before it
    SELECT g.list_date, g.which, g.side, m.list_date AS row_date, m.rating, m.games, m.delisted, m.moved,
           g.side NOT LIKE 'official:%' OR m.list_date = o.list_date AS holds
    FROM grid g
    ASOF LEFT JOIN mine m ON m.which = g.which AND m.list_date <= g.list_date
    ASOF LEFT JOIN official_dates o ON o.which = g.which AND o.list_date <= g.list_date
),
at_date AS (  -- the rating of the side's list in force: a computed side's last list, an official side's last
              -- imported list when it holds the player (one that leaves him out ends what an earlier one said)
    SELECT list_date, which, COALESCE(row_date = list_date, FALSE) AS listed,
           CASE WHEN holds THEN rating END AS rating,
           CASE WHEN row_date = list_date THEN games END AS games,
           COALESCE(holds AND delisted, FALSE) AS delisted,
           COALESCE(row_date = list_date AND moved, FALSE) AS moved
    FROM in_force
)
SELECT a.list_date, CAST(a.rating AS INTEGER) AS rating_a, CAST(b.rating AS INTEGER) AS rating_b,
       -- compared only where both sides have a list of the date: a rating carried from a side's
       -- earlier list is shown (carried_a, carried_b) but is not that side's list of the date
       CAST(CASE WHEN a.listed AND b.listed THEN b.rating - a.rating END AS INTEGER) AS diff,
       a.rating IS NOT NULL AND NOT a.listed AS carried_a, b.rating IS NOT NULL AND NOT b.listed AS carried_b,
       CAST(a.games AS INTEGER) AS games_a, CAST(b.games AS INTEGER) AS games_b, a.listed AS on_a, b.listed AS on_b,
       a.delisted AS delisted_a, b.delisted AS delisted_b,
       COALESCE(a.games, 0) = 0 AND COALESCE(b.games, 0) = 0 AND NOT a.moved AND NOT b.moved
           AND row_number() OVER (ORDER BY a.list_date) > 1 AS idle
FROM at_date a JOIN at_date b ON b.list_date = a.list_date AND a.which = 'a' AND b.which = 'b'
ORDER BY a.list_date
"""


@dataclass
class PlayerComparison:
    """The player's history under `side_a` against `side_b` (side keys): every list date
    (`rows`, columns: module docstring)."""

    player_id: int
    side_a: str
    side_b: str
    rows: pl.DataFrame

    @property
    def official_b(self) -> bool:
        """B is an imported official list (its line: `official_series`)."""
        return self.side_b.startswith("official:")

    def official_series(self) -> Series | None:
        """B's line when B is an official list: its ratings on the dates the store has a list of,
        a dot on each (a step line alone would hide a single list); None when no list rates the player."""
        listed = self.rows.filter(pl.col("on_b") & pl.col("rating_b").is_not_null())
        if listed.height == 0:
            return None
        return Series(list(listed["list_date"]), list(listed["rating_b"]), points=True)

    def shown(self, all_months: bool) -> pl.DataFrame:
        """The rows a table shows: without `all_months`, no idle list (the first is kept)."""
        return (self.rows if all_months else self.rows.filter(~pl.col("idle"))).drop("idle")

    def lines(self, series_a: Series | None, series_b: Series | None) -> list[Series]:
        """The chart's two lines, A's then B's (None: nothing of the player to draw on that side),
        each labelled with its side key and each marker's title ending in its side; [] when
        neither side has anything to draw."""
        if series_a is None and series_b is None:
            return []
        return [_labelled(series_a, self.side_a), _labelled(series_b, self.side_b)]

    def summary(self, all_months: bool = True) -> str:
        """One line on the rows a table shows (`shown(all_months)`): the lists of one date rating the
        player on both sides (the rows with a B − A), on how many B − A is not zero and the largest
        difference (rating points) with its list date; then how many such lists the table leaves
        out without `all_months`, and, when a rating shown is carried from a side's earlier list,
        that it is bracketed and not compared."""
        rows = self.shown(all_months)
        both = rows.filter(pl.col("diff").is_not_null())
        differ = both.filter(pl.col("diff") != 0).sort([pl.col("diff").abs(), "list_date"], descending=[True, False])
        line = f"lists rating the player on both sides: {both.height}; B − A not zero on {differ.height}"
        if differ.height:
            top = differ.row(0, named=True)
            line += f"; largest: {top['diff']:+d} on {top['list_date']}"
        hidden = self.rows.filter(pl.col("diff").is_not_null()).height - both.height
        if hidden:
            line += f"; {hidden} more without a game on either side (--all-months)"
        if rows.filter(pl.col("carried_a") | pl.col("carried_b")).height:
            line += "; a rating in brackets is carried from that side's earlier list (none of the date): not compared"
        return line


def _labelled(series: Series | None, side: str) -> Series:
    if series is None:  # still named in the legend: the reader sees the side had nothing to draw
        return Series([], [], label=side)
    events = [e._replace(title=f"{e.title} [{side}]") for e in series.events]
    return series._replace(events=events, label=side)


def player_comparison(con: duckdb.DuckDBPyConnection, player_id: int, a: str, b: str) -> PlayerComparison:
    """The player's history under side `a` against side `b` (sides as `elopipe compare` takes
    them: 'official' alone is the official list of `a`'s system). Works on a read-only
    connection. Raises CompareError (exit 2), listing the sides the store holds, when it holds
    no row of `a` or `b`."""
    side_a, side_b = resolve_side(a, b), resolve_side(b, a)
    check_sides(con, side_a, side_b)
    rows = to_polars(
        con.sql(_HISTORY_PAIR_SQL.format(sides=sides_sql()), params={"a": side_a, "b": side_b, "pid": player_id})
    )
    return PlayerComparison(player_id, side_a, side_b, rows)
