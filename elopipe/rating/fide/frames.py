"""The frames of the FIDE engine's periods: the state a period starts from (one row per player),
the pooled games of unrated players (FIDE B.02 7.1.4), the rows of a list, and `Lists`, every list
known so far by date, which gives the list in force on a date (B.02 7.1.3) and the players an
imported official list rates. An imported official list sets its players' state
(`state_from_official`): it is what FIDE published.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, TypeAlias
from typing import cast as type_cast

import polars as pl

if TYPE_CHECKING:
    from polars._typing import ColumnNameOrSelector, PolarsDataType

    # A frame's schema, column name to Polars data type.
    Schema: TypeAlias = dict[str, PolarsDataType]
    # What the stubs of `DataFrame.cast` take: a `Mapping` keyed by `ColumnNameOrSelector |
    # PolarsDataType`. Its key type is invariant, so they refuse a `Schema` that Polars accepts at
    # run time (pola-rs/polars#14468); `type_cast(CastSchema, schema)` states that it is one.
    CastSchema: TypeAlias = Mapping[ColumnNameOrSelector | PolarsDataType, PolarsDataType]

STATE_SCHEMA: Schema = {
    "player_id": pl.Int64,
    "rating": pl.Int64,
    "total_games": pl.Int64,
    "ever_2400": pl.Boolean,
    "ever_2300": pl.Boolean,
    "birth_year": pl.Int64,
    "last_active": pl.Date,
    "pool_from": pl.Date,
    "k_official": pl.Int64,
    "first_rated": pl.Date,
}


_RATING_SCHEMA: Schema = {"player_id": pl.Int64, "rating": pl.Int64}


POOL_SCHEMA: Schema = {
    "player_id": pl.Int64,
    "list_date": pl.Date,
    "tournament_id": pl.Int64,
    "eff_start": pl.Date,
    "rc": pl.Int64,
    "score_x100": pl.Int64,
}


def by_player(df: pl.DataFrame) -> pl.DataFrame:
    """`df` ordered by player_id, with Polars' sorted flag set.

    Joins on player_id between frames both flagged sorted use a merge join, several times
    faster than hashing the 500k-row state of a full base list.
    """
    key = df.get_column("player_id")
    if key.flags["SORTED_ASC"]:
        return df
    if key.null_count() == 0 and key.is_sorted():
        return df.with_columns(key.set_sorted())
    return df.sort("player_id")


def empty(schema: Schema) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


class Lists:
    """Every list known so far (imported or computed), by date: player_id → rating.

    A computed list holds every rated player known when it was computed, so the list in
    force on a date is the latest list dated on or before it (FIDE B.02 7.1: the list in
    force at the start) — except for players bootstrapped later: a player first seen in
    period t with a file rating for the list b in force at an event's start (b < t) is
    rated b, and on every list dated in [b, t) that was computed before they were known
    (or that was never computed: no games before).  Those ratings live in `boots`
    (player_id, boot_date = b, boot_rating, boot_period = t) and fill the gaps of older
    lists (`in_force._ratings_in_force`).  `official` holds, for each imported official list, the
    players it rates (the source of their Ro, `elopipe.rating.fide.ro`).
    """

    def __init__(self) -> None:
        self.by_date: dict[dt.date, pl.DataFrame] = {}
        self.dates: list[dt.date] = []
        self.boots: pl.DataFrame = empty(_BOOT_SCHEMA)
        self.official: dict[dt.date, pl.Series] = {}

    def mark_official(self, d: dt.date, off: pl.DataFrame) -> None:
        """List `d` is an imported official list: `off`'s players with a rating are rated by it."""
        self.official[d] = off.filter(pl.col("rating").is_not_null()).get_column("player_id").cast(pl.Int64)

    def official_ids(self, d: dt.date | None) -> pl.Series | None:
        """The players the official list dated `d` rates; None when list `d` is not an imported one."""
        return None if d is None else self.official.get(d)

    def put(self, d: dt.date, ratings: pl.DataFrame) -> None:
        if d not in self.by_date:
            bisect.insort(self.dates, d)
        self.by_date[d] = ratings.select(list(_RATING_SCHEMA)).cast(type_cast("CastSchema", _RATING_SCHEMA))

    def in_force(self, d: dt.date) -> pl.DataFrame | None:
        i = bisect.bisect_right(self.dates, d) - 1
        return self.by_date[self.dates[i]] if i >= 0 else None

    def in_force_date(self, d: dt.date) -> dt.date | None:
        i = bisect.bisect_right(self.dates, d) - 1
        return self.dates[i] if i >= 0 else None

    def add_boots(self, t: dt.date, rows: pl.DataFrame) -> None:
        """Record the players bootstrapped in period `t` (player_id, boot_rating, boot_date)."""
        if rows.height:
            new = rows.select("player_id", "boot_date", "boot_rating", pl.lit(t).alias("boot_period"))
            self.boots = pl.concat([self.boots, new.cast(type_cast("CastSchema", _BOOT_SCHEMA))])


# A month is a few hundred thousand rows held in memory: Polars' in-memory engine runs
# these plans faster than the streaming engine (the default since Polars 2.0)
ENGINE: Final = "in-memory"


_BOOT_SCHEMA: Schema = {"player_id": pl.Int64, "boot_date": pl.Date, "boot_rating": pl.Int64, "boot_period": pl.Date}


LIST_SCHEMA: Schema = {
    "list_date": pl.Date,
    "player_id": pl.Int64,
    "rating": pl.Int64,
    "games": pl.Int64,
    "total_games": pl.Int64,
    "k": pl.Int64,
    "k_next": pl.Int64,
    "change": pl.Int64,
    "flags": pl.Utf8,
    "ever_2400": pl.Boolean,
    "birth_year": pl.Int64,
    "source": pl.Utf8,
}


def state_from_official(state: pl.DataFrame, off: pl.DataFrame) -> pl.DataFrame:
    """Players of an official list override the state (rating, K, birth year)."""
    if state.height == 0:
        # one row per player and list: store_io.load_official_lists guarantees it
        return (
            off.select(
                "player_id",
                "rating",
                pl.lit(None, pl.Int64).alias("total_games"),
                ((pl.col("rating").fill_null(0) >= 2400) | pl.col("ever_2400").fill_null(False)).alias("ever_2400"),
                (pl.col("rating").fill_null(0) >= 2300).alias("ever_2300"),
                "birth_year",
                # FIDE's 'i'/'wi' flag: inactive on the imported list (B.02 7.2.2)
                pl.when(pl.col("flag").str.contains("i").fill_null(False))
                .then(None)
                .otherwise(pl.col("list_date"))
                .alias("last_active"),
                pl.lit(None, pl.Date).alias("pool_from"),
                "k",
                pl.when(pl.col("rating").is_not_null()).then(pl.col("list_date")).alias("first_rated"),
            )
            .rename({"k": "k_official"})
            .cast(type_cast("CastSchema", STATE_SCHEMA))
        )
    o = off.select(
        "player_id",
        pl.col("rating").alias("o_rating"),
        pl.col("k").alias("o_k"),
        pl.col("birth_year").alias("o_by"),
        pl.col("list_date").alias("o_date"),
        pl.col("flag").str.contains("i").fill_null(False).alias("o_inactive"),
        pl.col("ever_2400").fill_null(False).alias("o_ever_2400"),
    ).unique("player_id", keep="first")
    s = state.join(o, on="player_id", how="full", coalesce=True)
    listed = pl.col("o_date").is_not_null()
    return s.select(
        "player_id",
        pl.when(listed).then(pl.col("o_rating")).otherwise(pl.col("rating")).alias("rating"),
        "total_games",
        (
            pl.col("ever_2400").fill_null(False)
            | (pl.col("o_rating").fill_null(0) >= 2400)
            | pl.col("o_ever_2400").fill_null(False)
        ).alias("ever_2400"),
        (pl.col("ever_2300").fill_null(False) | (pl.col("o_rating").fill_null(0) >= 2300)).alias("ever_2300"),
        pl.coalesce("o_by", "birth_year").alias("birth_year"),
        pl.when(pl.col("o_inactive").fill_null(False))
        .then(pl.col("last_active"))
        .otherwise(pl.coalesce("last_active", "o_date"))
        .alias("last_active"),
        "pool_from",
        pl.when(listed).then(pl.col("o_k")).otherwise(pl.col("k_official")).alias("k_official"),
        pl.coalesce("first_rated", pl.when(pl.col("o_rating").is_not_null()).then(pl.col("o_date"))).alias(
            "first_rated"
        ),
    ).cast(type_cast("CastSchema", STATE_SCHEMA))
