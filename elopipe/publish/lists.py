"""Rating lists as officers know them, read from the view `v_rating_lists`.

A list is one (system, list_date) of `rating_lists`: the players with a rating, ranked by
rating (ties share a rank). Nothing is recomputed here: rating, games, K and change are the
stored values of the rating engine (FIDE B.02 (2024) 7.1: the list folds the period's play
into the previous list).

Columns of `rating_list()` (Polars dtypes):

=============  ==========  =====================================================
rank           Int32       1 = highest rating; equal ratings share a rank
fide_id        Int64       FIDE ID, null when unknown
national_id    String      e.g. FFE licence
name           String
federation     String
sex            String      'm' | 'w' | null
title          String
birth_year     Int32
rating         Int32       rating points
games          Int32       rated games in the period
k              Int32       K used in the period (null: no games or none)
change         Int32       rounded change applied this period, rating points
flags          String      space-separated: 'i' inactive, 'new' first rating,
                           'w' woman, FFE 'F'/'N'/'E'
fide_flag      String      FIDE list FLAG column: 'w', 'i', 'wi' or ''
player_id      Int32       store key
=============  ==========  =====================================================
"""

from __future__ import annotations

import datetime as dt
import re

import duckdb
import polars as pl

LIST_COLUMNS = [
    "rank",
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
    "change",
    "flags",
]

_FLAG_SPLIT = re.compile(r"[\s,;]+")


def list_dates(con: duckdb.DuckDBPyConnection, system: str) -> list[dt.date]:
    """Every list date of `system` in the store, oldest first."""
    rows = con.execute("SELECT DISTINCT list_date FROM rating_lists WHERE system = ? ORDER BY 1", [system]).fetchall()
    return [r[0] for r in rows]


def systems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every rating system that has at least one list in the store."""
    return [r[0] for r in con.execute("SELECT DISTINCT system FROM rating_lists ORDER BY 1").fetchall()]


def latest_list_date(con: duckdb.DuckDBPyConnection, system: str) -> dt.date | None:
    """The most recent list date of `system`, None when the system has no list."""
    dates = list_dates(con, system)
    return dates[-1] if dates else None


def display_flags(stored: str | None, sex: str | None) -> str:
    """Flags as printed on a list: the stored tokens plus 'w' for a woman (FIDE's FLAG legend).

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
    seen: list[str] = []
    for tok in tokens:
        if tok not in seen:
            seen.append(tok)
    return " ".join(seen)


def rating_list(con: duckdb.DuckDBPyConnection, system: str, list_date: dt.date | None = None) -> pl.DataFrame:
    """The list of `system` at `list_date` (None = latest), ranked, as a Polars DataFrame.

    Columns and dtypes: see the module docstring. Raises LookupError when the system has no
    list at that date.
    """
    if list_date is None:
        list_date = latest_list_date(con, system)
        if list_date is None:
            raise LookupError(f"no rating list for system {system!r} in the store")
    df: pl.DataFrame = con.sql(
        """
        SELECT rank, fide_id, national_id, name, federation, sex, title,
               CAST(birth_year AS INTEGER) AS birth_year, rating, games, k, change,
               flags, fide_flag, player_id
        FROM v_rating_lists WHERE system = ? AND list_date = ?
        ORDER BY rank, name, player_id
        """,
        params=[system, list_date],
    ).pl()
    if df.height == 0 and list_date not in list_dates(con, system):
        raise LookupError(f"no rating list for system {system!r} dated {list_date}")
    flags = [display_flags(f, s) for f, s in zip(df["flags"], df["sex"], strict=True)]
    return df.with_columns(pl.Series("flags", flags, dtype=pl.String))
