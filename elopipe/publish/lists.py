"""Rating lists as officers know them, read from the view `v_rating_lists`.

A list is one (system, list_date) of `rating_lists`: the players with a rating. Nothing is
recomputed here: rating, games, K and change are the stored values of the rating engine (FIDE
B.02 (2024) 7.1: the list folds the period's play into the previous list).

Who is ranked. FIDE's lists rank active players only (FIDE's top lists; B.02 7.2.2 makes a
player inactive after a year without a rated game) and a FIDE list is a list of FIDE IDs: a
player rated from files that gave no FIDE ID (the Irish 2011 files carry ICU numbers) is shown
apart, flagged 'no-fide-id', never ranked. An FFE officer hands out the list of FFE licensees:
the FFE requires a licence of every French player and of foreigners without a FIDE ID
(ffe-rating-rules.md Part D), so an FFE list ranks the players with a licence and shows the
others apart, flagged 'no-licence'. Other systems (elo, glicko2) rank everyone active.
Rows come ranked players' section first (by rating, inactive players among them without a
rank), then the players without the list's ID, by rating.

Columns of `rating_list()` (Polars dtypes):

=============  ==========  =====================================================
rank           Int32       active rank among players with the list's ID; 1 = highest
                           rating, equal ratings share a rank; null when inactive
                           or without the ID
fed_rank       Int32       the same rank within the player's federation (the
                           national list); null without a federation
fide_id        Int64       FIDE ID, null when unknown
national_id    String      e.g. FFE licence
name           String
federation     String
sex            String      'M' | 'F' | null: the spelling of FIDE's and the FFE's
                           list files (`LIST_SEX`), in every format
title          String
birth_year     Int32
rating         Int32       rating points (rounded; `published` gives the generic
                           Elo's one decimal)
games          Int32       rated games in the period
k              Int32       K used in the period, on its games (null: no game in the
                           period, or a new player, whose first rating used none)
k_next         Int32       FIDE systems: the player's K for the next period, the K
                           column of FIDE's lists and of the TXT (null: another
                           system, an unrated player)
change         Int32       rounded change applied this period, rating points
flags          String      space-separated: 'i' inactive, 'new' first rating,
                           'w' woman, FFE 'F'/'N'/'E', 'no-fide-id' (FIDE
                           lists) / 'no-licence' (FFE lists): not ranked
fide_flag      String      FIDE list FLAG column: 'w', 'i', 'wi' or ''
inactive       Boolean     flag 'i'
no_id          Boolean     the player lacks the list's ID (see above)
player_id      Int32       store key
rating_exact   Decimal     the generic Elo's rating, one decimal (null for others)
change_exact   Decimal     the generic Elo's change, one decimal (null: idle, other
                           systems)
=============  ==========  =====================================================
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

import duckdb
import polars as pl

from elopipe.runtime.errors import ElopipeError
from elopipe.store.frames import to_polars

# A published list spells sex as FIDE's list files (the Sex column, M/F) and the FFE's (`Sexe`,
# M/F) do, in every format; the store keeps the TRF's `m`/`w` (FIDE TRF 001, column 10), which
# identity reads and matches. 'w' stays the woman's flag of FIDE's FLAG column (`display_flags`).
LIST_SEX = {"m": "M", "w": "F"}

# the formats a list is published in (`outputs.write_list`)
LIST_FORMATS = ("csv", "parquet", "txt", "html")
LIST_COLUMNS = [
    "rank",
    "fed_rank",
    "fide_id",
    "national_id",
    "name",
    "federation",
    "sex",
    "title",
    "birth_year",
    "rating",
    "games",
    "k",
    "k_next",
    "change",
    "flags",
]

_FLAG_SPLIT = re.compile(r"[\s,;]+")


def list_dates(con: duckdb.DuckDBPyConnection, system: str) -> list[dt.date]:
    """Every list date of `system` in the store, oldest first."""
    rows = con.execute("SELECT DISTINCT list_date FROM rating_lists WHERE system = ? ORDER BY 1", [system]).fetchall()
    return [r[0] for r in rows]


def nearest_dates(dates: Iterable[dt.date], day: dt.date) -> str:
    """The dates of `dates` just before and after `day`, as 'a, b' (one if at an end; '' for none)."""
    ordered = sorted(set(dates))
    before = [d for d in ordered if d < day][-1:]
    after = [d for d in ordered if d > day][:1]
    return ", ".join(str(d) for d in before + after)


class NoListError(ElopipeError, LookupError):
    """A list date the system has no list on, asked for by the user (a usage error: exit 2, as
    `compare` answers it)."""

    exit_code = 2


def no_list(system: str, list_date: dt.date, known: Iterable[dt.date]) -> NoListError:
    """The error for a list date `system` has no list on, naming its lists nearest to it (`known`:
    its list dates; `nearest_dates`), as `compare` names them. A system rated by tournament
    (generic Elo, `period=tournament`) dates its lists by the events' last days, so a month's list
    ('2011-02', read as its 1st) is found there under another day."""
    said = f"no rating list for system {system!r} dated {list_date}"
    near = nearest_dates(known, list_date)
    return NoListError(f"{said}; its nearest: {near}" if near else f"{said}: it has no list in the store")


def systems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every rating system that has at least one list in the store."""
    return [r[0] for r in con.execute("SELECT DISTINCT system FROM rating_lists ORDER BY 1").fetchall()]


def latest_list_date(con: duckdb.DuckDBPyConnection, system: str) -> dt.date | None:
    """The most recent list date of `system`, None when the system has no list."""
    dates = list_dates(con, system)
    return dates[-1] if dates else None


def no_id_flag(system: str) -> str:
    """The flag of a player who lacks the ID `system`'s list ranks by: 'no-fide-id' on a FIDE
    list, 'no-licence' on an FFE list, '' for a system that needs no ID."""
    if system.startswith("fide"):
        return "no-fide-id"
    return "no-licence" if system.startswith("ffe") else ""


def display_flags(stored: str | None, sex: str | None, extra: str = "") -> str:
    """Flags as printed on a list: the stored tokens plus 'w' for a woman (FIDE's FLAG legend),
    then `extra` (e.g. `no_id_flag`).

    FIDE's 'wi' token is split into 'w' and 'i' so that each flag is one word.
    """
    tokens: list[str] = []
    for tok in _FLAG_SPLIT.split(stored or ""):
        if not tok:
            continue
        if tok == "wi":
            tokens.extend(["w", "i"])
        else:
            tokens.append(tok)
    if sex == "w" and "w" not in tokens:
        tokens.append("w")
    if extra:
        tokens.append(extra)
    seen: list[str] = []
    for tok in tokens:
        if tok not in seen:
            seen.append(tok)
    return " ".join(seen)


def keeps_decimal(system: str) -> bool:
    """True for the generic Elo ('elo', a scenario 'elo@x'): its ratings keep one decimal (seed
    001: "Normalmente, arredondamos as classificações Elo para um dígito decimal")."""
    return system == "elo" or system.startswith("elo@")


def published(df: pl.DataFrame, system: str) -> pl.DataFrame:
    """The list `df` of `rating_list` as published: for a system that keeps a decimal
    (`keeps_decimal`), ``rating`` and ``change`` are ``rating_exact`` and ``change_exact``
    (Decimal, one decimal: 2589.7 -> 2597.2 shows +7.5, not 2590 -> 2597 and +8; a store rated
    before ``change_exact`` existed shows the rounded change); other systems' lists unchanged
    (integers)."""
    if not keeps_decimal(system):
        return df
    dec = pl.Decimal(18, 1)
    return df.with_columns(
        pl.col("rating_exact").cast(dec).fill_null(pl.col("rating").cast(dec)).alias("rating"),
        pl.col("change_exact").cast(dec).fill_null(pl.col("change").cast(dec)).alias("change"),
    )


def rating_list(con: duckdb.DuckDBPyConnection, system: str, list_date: dt.date | None = None) -> pl.DataFrame:
    """The list of `system` at `list_date` (None = latest), ranked, as a Polars DataFrame.

    Columns and dtypes: see the module docstring. Raises LookupError when the system has no
    list at that date.
    """
    if list_date is None:
        list_date = latest_list_date(con, system)
        if list_date is None:
            raise LookupError(f"no rating list for system {system!r} in the store")
    df: pl.DataFrame = to_polars(
        con.sql(
            """
        SELECT rank, fed_rank, fide_id, national_id, name, federation, sex, title,
               CAST(birth_year AS INTEGER) AS birth_year, rating, games, k, k_next, change,
               flags, fide_flag, inactive, no_id, player_id, rating_exact, change_exact
        FROM v_rating_lists WHERE system = ? AND list_date = ?
        ORDER BY no_id, {order} DESC, name, player_id
        """.format(order="COALESCE(rating_exact, rating)" if keeps_decimal(system) else "rating"),
            params=[system, list_date],
        )
    )
    if df.height == 0:
        known = list_dates(con, system)
        if list_date not in known:
            raise no_list(system, list_date, known)
    marker = no_id_flag(system)
    flags = [
        display_flags(f, s, marker if no_id else "")
        for f, s, no_id in zip(df["flags"], df["sex"], df["no_id"], strict=True)
    ]
    return df.with_columns(
        pl.Series("flags", flags, dtype=pl.String),
        pl.col("sex").replace_strict(LIST_SEX, default=None, return_dtype=pl.String),
    )
