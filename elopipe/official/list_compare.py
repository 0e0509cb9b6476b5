"""Reconciliation: the store's computed list for a date against an official list for that date.

This is how an officer checks the pipeline against FIDE's (or the FFE's) own list: every player
of either side gets a status and, for a difference, the cause when it can be told from the store.

Report columns (Polars, one row per player; `compare_lists`):
``fide_id`` Int64, ``national_id`` Utf8, ``player_id`` Int32 (NULL: the official player is not in
the store), ``name`` Utf8, ``official_rating`` / ``computed_rating`` Int32 (rating points),
``official_minus_computed`` Int32 (official − computed, rating points: the sign of `elopipe compare
COMPUTED official`, whose B − A is the same number), ``official_k`` / ``computed_k`` Int32, ``official_games`` /
``computed_games`` Int32 (games of the period), ``status`` Utf8 ('match' | 'differs' |
'official_only' | 'computed_only'), ``matched_by`` Utf8 (how the official row found its player:
'fide_id', 'national_id' or 'name_birth_year'; NULL on one side only), ``cause`` Utf8 for 'differs':

* ``missing_tournament``: the official list counts more games in the period than the store rated
  (``extra_tournament`` when fewer);
* ``k_mismatch``: same games, different K (FIDE B.02 (2024) 8.3.3: K from age, games and 2400);
* ``base_correction``: the ratings going into the period differed (the previous official list,
  when imported, disagrees with the previous computed list), or the official rating moved with no
  game in the period;
* ``unknown`` otherwise.

(`elopipe compare fide official` tells the same differences apart by the view `v_compare`'s
causes: a base correction is its ``start_rating``, a missing or extra tournament ``games_one_side``,
a K mismatch ``k``.) Rows are ordered 'differs' first (largest |official − computed| first), then
'official_only', 'computed_only' (by FIDE ID, then name) and 'match'.

An official row finds its player by FIDE ID, else by national ID (FFE licence), else by the folded
name key (`elopipe.read.names.name_key`) and birth year among the computed list's players no ID
claimed, when exactly one player and one row pair up that way (and their IDs do not differ): a
player a list writes without a FIDE ID is one row of the report, not an official-only and a
computed-only one. A row with no ID at all (none written, or a placeholder such as ``0``: the
rows `lists import` refuses as ``no_id``) is compared only when it pairs that way with a player
who has a FIDE ID in the store; any other is no player of the list, and is left out of the report
as the import leaves it out, counted in `Comparison.skips` (a computed player without a FIDE ID
matched to it by name would have been shown as compared with an official rating no list gives).

Errors: `elopipe.official.list_import.ListFormatError` for an unreadable list file, or one whose
name or header names a month other than `list_date`'s (and none names its month); `NoComputedList`
(a ValueError) when the store holds no computed list for the date.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

import duckdb
import polars as pl

from elopipe.official.list_base import SKIP_SCHEMA, register
from elopipe.official.list_import import ListFormatError, read_list
from elopipe.read.names import name_key_sql
from elopipe.runtime.errors import ElopipeError

# the official row's name key, as `players.name_key` holds the store's
_OFFICIAL_KEY = name_key_sql("COALESCE(name, '')")


# the official rows (`_cmp_official`) and the computed list ($system, $d) paired: by FIDE ID, else
# national ID (by_id), else name key and birth year (by_name); shared by the report and its left-out rows
_PAIRING = f"""
    WITH o AS (SELECT row_number() OVER () AS orow, *, {_OFFICIAL_KEY} AS nkey,
                      fide_id IS NULL AND national_id IS NULL AS no_id
               FROM _cmp_official),
    by_id AS (
        SELECT o.orow, COALESCE(pf.pid, pn.pid) AS pid,
               CASE WHEN pf.pid IS NOT NULL THEN 'fide_id'
                    WHEN pn.pid IS NOT NULL THEN 'national_id' END AS matched_by
        FROM o
        LEFT JOIN (SELECT fide_id, min(COALESCE(merged_into, player_id)) AS pid FROM players
                   WHERE fide_id IS NOT NULL GROUP BY 1) pf ON pf.fide_id = o.fide_id
        LEFT JOIN (SELECT national_id, min(COALESCE(merged_into, player_id)) AS pid FROM players
                   WHERE national_id IS NOT NULL GROUP BY 1) pn ON pn.national_id = o.national_id
    ),
    comp AS (
        SELECT rl.player_id, rl.rating, rl.k, rl.games, p.fide_id, p.national_id, p.name,
               p.name_key, p.birth_year
        FROM rating_lists rl JOIN players p USING (player_id)
        WHERE rl.system = $system AND rl.list_date = $d AND rl.rating IS NOT NULL
    ),
    -- the rows no ID matched and the computed players no ID claimed, paired by name key
    -- and birth year where the pair is the only one on both sides
    by_name AS (
        SELECT o.orow, c.player_id FROM o JOIN by_id b USING (orow)
        JOIN comp c ON c.name_key = o.nkey AND c.birth_year = o.birth_year AND o.nkey <> ''
        WHERE b.pid IS NULL AND (c.fide_id IS NULL OR o.fide_id IS NULL)
          AND (c.national_id IS NULL OR o.national_id IS NULL)
          -- a row with no ID names a player only through a FIDE ID the store knows
          AND (NOT o.no_id OR c.fide_id IS NOT NULL)
          AND c.player_id NOT IN (SELECT pid FROM by_id WHERE pid IS NOT NULL)
        QUALIFY count(*) OVER (PARTITION BY o.orow) = 1 AND count(*) OVER (PARTITION BY c.player_id) = 1
    )"""

# the lines of the rows with no ID that name no player: left out, as `lists import` leaves them
_LEFT_OUT = f"""
    {_PAIRING}
    SELECT o.line FROM o LEFT JOIN by_name n USING (orow) WHERE o.no_id AND n.player_id IS NULL
"""


#: The report's statuses, in its order: real differences first, then one-side rows, then matches.
STATUSES = ("differs", "official_only", "computed_only", "match")


class NoComputedList(ElopipeError, ValueError):
    """The store has no computed list for the system and date compared."""


@dataclass
class Comparison:
    """`report` (module docstring); `skips`: the file's rows left out of it, as
    `list_import.ListRead.skips` (a bad rating, a misaligned line, a repeated ID, and a row without
    an ID that names no player with a FIDE ID: module docstring); `warnings`: what the reader said of
    the file as a whole, as `lists import` says it (a cut XML file, names cleaned of escape codes)."""

    system: str
    list_date: dt.date
    report: pl.DataFrame
    skips: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=SKIP_SCHEMA))
    warnings: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Players per status (each player once), in the report's order of statuses."""
        out = dict(self.report.group_by("status").len().iter_rows())
        return {s: int(out[s]) for s in STATUSES if s in out}

    def cause_counts(self) -> dict[str, int]:
        """The 'differs' players per cause (each once: a row has one cause), most first; they add
        up to `counts()['differs']`."""
        differs = self.report.filter(pl.col("status") == "differs")
        by_cause = differs.group_by("cause").len().sort(["len", "cause"], descending=[True, False])
        return {str(c): int(n) for c, n in by_cause.iter_rows()}


def compare_lists(
    con: duckdb.DuckDBPyConnection,
    system: str,
    list_date: dt.date,
    path: str | os.PathLike[str],
) -> Comparison:
    """Compare `rating_lists` (system, list_date) with the official list file at `path` (read,
    not stored). `system` is the exact system compared ('fide', 'fide-rapid', 'ffe', ...).
    Works on a read-only connection."""
    read = read_list(con, path, system, list_date)
    if read.other_month:  # every player would differ by a month's games: a wrong report, not a check
        raise ListFormatError(
            f"{read.other_month}; compare a list with the computed list of its own month (its --list-date)"
        )
    official = read.rel.pl().filter(pl.col("system") == system)
    computed_n = con.execute(
        "SELECT count(*) FROM rating_lists WHERE system = ? AND list_date = ?", [system, list_date]
    ).fetchall()[0][0]
    if computed_n == 0:
        raise NoComputedList(f"the store has no computed {system} list for {list_date}; run the rating first")
    register(con, "_cmp_official", official)
    try:
        report = con.sql(
            f"""
            {_PAIRING},
            off AS (
                SELECT o.*, COALESCE(b.pid, n.player_id) AS player_id,
                       COALESCE(b.matched_by, CASE WHEN n.player_id IS NOT NULL THEN 'name_birth_year' END)
                           AS matched_by
                FROM o JOIN by_id b USING (orow) LEFT JOIN by_name n USING (orow)
                WHERE NOT (o.no_id AND n.player_id IS NULL)
            ),
            prev_date AS (
                SELECT max(list_date) AS d FROM official_lists WHERE system = $system AND list_date < $d
            ),
            prev AS (
                SELECT ol.player_id, ol.rating AS prev_official, rl.rating AS prev_computed
                FROM official_lists ol, prev_date
                JOIN rating_lists rl ON rl.system = $system AND rl.list_date = prev_date.d
                WHERE ol.system = $system AND ol.list_date = prev_date.d AND rl.player_id = ol.player_id
            ),
            joined AS (
                SELECT COALESCE(off.fide_id, comp.fide_id) AS fide_id,
                       COALESCE(off.national_id, comp.national_id) AS national_id,
                       COALESCE(off.player_id, comp.player_id) AS player_id,
                       COALESCE(comp.name, off.name) AS name,
                       off.rating AS official_rating, comp.rating AS computed_rating,
                       off.rating - comp.rating AS diff,
                       off.k AS official_k, comp.k AS computed_k,
                       off.games AS official_games, comp.games AS computed_games, off.matched_by,
                       prev.prev_official, prev.prev_computed
                FROM off FULL OUTER JOIN comp ON comp.player_id = off.player_id
                LEFT JOIN prev ON prev.player_id = COALESCE(off.player_id, comp.player_id)
            )
            SELECT fide_id, national_id, CAST(player_id AS INTEGER) AS player_id, name,
                   CAST(official_rating AS INTEGER) AS official_rating,
                   CAST(computed_rating AS INTEGER) AS computed_rating,
                   CAST(diff AS INTEGER) AS official_minus_computed,
                   CAST(official_k AS INTEGER) AS official_k, CAST(computed_k AS INTEGER) AS computed_k,
                   CAST(official_games AS INTEGER) AS official_games,
                   CAST(computed_games AS INTEGER) AS computed_games,
                   CASE WHEN computed_rating IS NULL THEN 'official_only'
                        WHEN official_rating IS NULL THEN 'computed_only'
                        WHEN diff = 0 THEN 'match' ELSE 'differs' END AS status,
                   CASE WHEN computed_rating IS NOT NULL AND official_rating IS NOT NULL THEN matched_by END
                       AS matched_by,
                   CASE WHEN computed_rating IS NULL OR official_rating IS NULL OR diff = 0 THEN NULL
                        WHEN prev_official IS NOT NULL AND prev_computed IS NOT NULL
                             AND prev_official <> prev_computed THEN 'base_correction'
                        WHEN official_games IS NOT NULL AND official_games > COALESCE(computed_games, 0)
                             THEN 'missing_tournament'
                        WHEN official_games IS NOT NULL AND official_games < COALESCE(computed_games, 0)
                             THEN 'extra_tournament'
                        WHEN official_k IS NOT NULL AND computed_k IS NOT NULL AND official_k <> computed_k
                             THEN 'k_mismatch'
                        WHEN COALESCE(official_games, 0) = 0 AND COALESCE(computed_games, 0) = 0
                             THEN 'base_correction'
                        ELSE 'unknown' END AS cause
            FROM joined
            ORDER BY list_position(['differs', 'official_only', 'computed_only', 'match'], status),
                     abs(official_minus_computed) DESC NULLS LAST, fide_id NULLS LAST, name
            """,
            params={"system": system, "d": list_date},
        ).pl()
        left_out = [line for (line,) in con.execute(_LEFT_OUT, {"system": system, "d": list_date}).fetchall()]
    finally:
        con.execute("SELECT 1").fetchall()  # complete the report's result before unregistering
        con.unregister("_cmp_official")
    reasons = pl.col("reason").is_in(["bad_rating", "misaligned", "duplicate_id"])
    # a row without a usable ID (none, a placeholder, or one not a number: 'abc') is counted when
    # no player took it by name; the rows 'bad_id' fell out of both the report and the count
    no_usable_id = pl.col("reason").is_in(["no_id", "bad_id"]) & pl.col("line").is_in(left_out)
    skips = read.skips.filter(reasons | no_usable_id)
    return Comparison(system, list_date, report, skips, read.warnings)
