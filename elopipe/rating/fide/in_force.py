"""The ratings in force for one FIDE rating period (FIDE B.02 7.1.3: the list in force at an
event's start): the period's players and their state at its start, the rating in force of each
(event, player) pair with where it came from (`elopipe.rating.fide.ro`), a player the store never
rated started from the rating his file gives (a bootstrap), the rapid or blitz player with a
standard rating (FIDE Rapid and Blitz Rating Regulations (2024) 7.2.1), and the file ratings that
disagree with the store (`rating_discrepancies`).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING
from typing import cast as type_cast

import polars as pl

from elopipe.rating.fide import ro
from elopipe.rating.fide.frames import STATE_SCHEMA, Lists, by_player, empty
from elopipe.rating.fide.params import FideParams, Prepared
from elopipe.rating.lookup import IdLookup

if TYPE_CHECKING:
    from elopipe.rating.fide.frames import CastSchema, Schema


def _asof_rating(keys: pl.DataFrame, hist: pl.DataFrame, date_col: str, out: str) -> pl.DataFrame:
    """keys(player_id, `date_col`) + `out` = rating on the latest `hist` list ≤ date."""
    if hist.height == 0:
        return keys.with_columns(pl.lit(None, pl.Int64).alias(out))
    # only the players asked for: the history can hold a whole base list
    h = (
        hist.join(keys.select("player_id").unique(), on="player_id", how="semi")
        .select("player_id", pl.col("list_date").alias(date_col), pl.col("rating").alias(out))
        .sort("player_id", date_col)
    )
    return keys.sort("player_id", date_col).join_asof(
        h, on=date_col, by="player_id", strategy="backward", check_sortedness=False
    )


# a discrepancy row as the engine finds it, and its name in `DISC_SCHEMA`
_DISC_COLS = {
    "in_force": "list_date",
    "tournament_id": "tournament_id",
    "player_id": "player_id",
    "file_rating": "file_rating",
    "store_rating": "list_rating",
    "file_id": "file_id",
}


def _plain_with_file_rating(
    sides: pl.DataFrame,
    file_ratings: pl.DataFrame,
    kv: IdLookup,
    latest_dates: list[dt.date],
    plain: pl.Expr,
    differing: bool,
) -> pl.DataFrame:
    """Plain (event, player) pairs (see `in_force`) with a file rating: tp_key, in_force,
    tournament_id, player_id, file_rating, store_rating (the current rating, on the list in
    force), file_id; `differing`: only those whose file rating differs from it."""
    schema: Schema = {"tp_key": pl.Int64, "in_force": pl.Date, "tournament_id": pl.Int64, "player_id": pl.Int64}
    schema |= {"file_rating": pl.Int64, "store_rating": pl.Int64, "file_id": pl.Int64}
    if file_ratings.height == 0 or not latest_dates:
        return empty(schema)
    fr = kv.attach(file_ratings.filter(pl.col("file_rating").is_not_null()), "player_id", {"store_rating": "r_cur"})
    keep = pl.col("store_rating").is_not_null()
    fr = fr.filter(keep & (pl.col("store_rating") != pl.col("file_rating")) if differing else keep)
    if fr.height == 0:
        return empty(schema)
    # the pairs that played in the period, with their event's list in force
    pairs = sides.filter(plain.fill_null(False) & pl.col("tp_key").is_in(fr.get_column("tp_key").implode()))
    pairs = pairs.select("tp_key", "in_force").unique(subset="tp_key")
    return fr.join(pairs, on="tp_key", how="inner").select(list(schema)).cast(type_cast("CastSchema", schema))


def _ratings_in_force(keys: pl.DataFrame, lists: Lists) -> pl.DataFrame:
    """keys(player_id, in_force, r_cur, ...) + store_rating from the list in force.

    ``r_cur`` is the player's rating on the latest list (the state at the start of the
    period); it is used instead of joining that whole list when it is the one in force.
    A player bootstrapped for a list b ≤ the start, in a period after the stored list in
    force L (L < boot period, or no list at all), was not known when L was computed: their
    rating in force is the bootstrapped one (see `Lists`).
    """
    parts = []
    latest = lists.dates[-1] if lists.dates else None
    boots = lists.boots
    for (d,), k in keys.partition_by("in_force", as_dict=True).items():
        lst = lists.in_force(d)
        l_date = lists.in_force_date(d)
        if lst is None:
            k = k.with_columns(pl.lit(None, pl.Int64).alias("store_rating"))
        elif latest is not None and lst is lists.by_date[latest]:  # lst set: `latest` is too
            k = k.with_columns(pl.col("r_cur").alias("store_rating"))
        else:
            k = k.join(lst.rename({"rating": "store_rating"}), on="player_id", how="left")
        k = ro.official_flags(k, lists.official_ids(l_date), l_date, d).with_columns(pl.lit(False).alias("from_boot"))
        if boots.height:
            b = boots.filter(pl.col("boot_date") <= d)
            if l_date is not None:
                b = b.filter(pl.col("boot_period") > l_date)
            if b.height:
                k = (
                    k.join(b.select("player_id", "boot_rating"), on="player_id", how="left")
                    .with_columns(
                        pl.coalesce("store_rating", "boot_rating").alias("store_rating"),
                        (pl.col("store_rating").is_null() & pl.col("boot_rating").is_not_null()).alias("from_boot"),
                    )
                    .drop("boot_rating")
                )
        parts.append(k)
    return pl.concat(parts)


def state_at_start(sides_t: pl.DataFrame, state: pl.DataFrame, prep: Prepared) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the period's players, sorted; their state at the start of the period with a `__changed`
    column): one left join, so players new to the store get an all-null state row; a birth year
    from the files fills in where the store has none."""
    period_players = by_player(sides_t.select(pl.col("player_id").unique().sort()))
    known = (
        period_players.join(state, on="player_id", how="left", coalesce=False)
        # the right key is null for players the state did not know
        .with_columns(pl.col("player_id_right").is_null().alias("__changed"))
        .select(*STATE_SCHEMA, "__changed")
    )
    no_by = known.filter(pl.col("birth_year").is_null())
    if no_by.height:
        filled = (
            no_by.drop("birth_year")
            .join(prep.birth_years, on="player_id", how="left")
            .with_columns((pl.col("__changed") | pl.col("birth_year").is_not_null()).alias("__changed"))
            .select(*STATE_SCHEMA, "__changed")
        )
        known = pl.concat([known.filter(pl.col("birth_year").is_not_null()), filled])
    return period_players, known.cast(type_cast("CastSchema", STATE_SCHEMA))


def in_force(
    sides_r: pl.DataFrame,
    kv: IdLookup,
    lists: Lists,
    prep: Prepared,
    params: FideParams,
    std_hist: pl.DataFrame | None,
    fr_t: pl.DataFrame,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rating in force at each event's start (B.02 7.1.3) of the (event, player) pairs that
    need a look in the lists or whose rating the 'file' Ro policy takes from the file
    (`ro`), and the file ratings (`fr_t`, the period's) that disagree with the store.

    Returns (pairs: tp_key, tournament_id, player_id, in_force, version, r_cur, first_rated,
    k_base, store_rating, file_rating, file_id, boot_rating, r_if and the columns of `ro`
    (boot_src, from_boot, on_official, official_of_date, by_file); discrepancies in the
    `rating_discrepancies` columns)."""
    # An (event, player) pair is plain when the list in force at the event's start is the
    # latest list and the player is rated on it: their rating in force is then the current one,
    # there is nothing to bootstrap, and the only check left is the rating written in the file.
    latest = lists.by_date[lists.dates[-1]] if lists.dates else None
    in_force_dates = sides_r.get_column("in_force").drop_nulls().unique().to_list()
    latest_dates = [d for d in in_force_dates if latest is not None and lists.in_force(d) is latest]
    plain = pl.col("in_force").is_in(latest_dates) & pl.col("r_prev").is_not_null()
    keys = (
        sides_r.filter(~plain.fill_null(False))
        .select("tp_key", "tournament_id", "player_id", "in_force", "version")
        .unique(subset="tp_key")
    )
    by_file = params.ro_from == "file"
    plain_fr = _plain_with_file_rating(sides_r, fr_t, kv, latest_dates, plain, differing=not by_file)
    differ = pl.col("store_rating") != pl.col("file_rating")
    disc_plain = plain_fr.filter(differ) if by_file else plain_fr
    disc_plain = disc_plain.select(list(_DISC_COLS))
    ev = kv.attach(keys, "player_id", {"r_cur": "r_cur", "first_rated": "first_rated", "k_base": "k_base"})
    if ev.height:
        ev = _ratings_in_force(ev, lists)
    else:
        ev = ev.with_columns(
            pl.lit(None, pl.Int64).alias("store_rating"),
            pl.lit(False).alias("on_official"),
            pl.lit(False).alias("official_of_date"),
            pl.lit(False).alias("from_boot"),
        )
    if fr_t.height:
        ev = ev.join(fr_t.select("tp_key", "file_rating", "file_id"), on="tp_key", how="left")
    else:
        # no rating written in the files (e.g. PGN without Elo tags): nothing to join
        ev = ev.with_columns(pl.lit(None, pl.Int64).alias("file_rating"), pl.lit(None, pl.Int64).alias("file_id"))
    never_before = pl.col("first_rated").is_null() | (pl.col("first_rated") > pl.col("in_force"))
    ev = ev.with_columns(
        pl.when(pl.col("store_rating").is_null() & never_before & ro.file_rating_usable(params))
        .then(pl.col("file_rating"))
        .alias("boot_rating")
    ).with_columns(pl.when(pl.col("boot_rating").is_not_null()).then(ro.src("file")).alias("boot_src"))
    if std_hist is not None:
        # R&B 7.2.1 (from March 2024): an unrated rapid/blitz player with a standard rating at
        # the start of the event is treated as rated at that rating
        std = _asof_rating(ev.select("player_id", "in_force").unique(), std_hist, "in_force", "std_rating")
        ev = (
            ev.join(std, on=["player_id", "in_force"], how="left")
            .with_columns(
                pl.when(pl.col("store_rating").is_null() & never_before & pl.col("version").is_in(["V2024", "V2024A"]))
                .then(pl.coalesce("boot_rating", "std_rating"))
                .otherwise(pl.col("boot_rating"))
                .alias("boot_rating")
            )
            .with_columns(
                pl.when(pl.col("boot_src").is_null() & pl.col("boot_rating").is_not_null())
                .then(ro.src("standard"))
                .otherwise(pl.col("boot_src"))
                .alias("boot_src")
            )
        )
    ev = ro.by_file(ev.with_columns(pl.coalesce("store_rating", "boot_rating").alias("r_if")), prep, params)
    disagree = ev.filter(
        pl.col("file_rating").is_not_null()
        & pl.col("boot_rating").is_null()
        & (pl.col("store_rating").is_null() | (pl.col("store_rating") != pl.col("file_rating")))
        & (pl.col("store_rating").is_not_null() | ~never_before)
    ).select(list(_DISC_COLS))
    disc_t = pl.concat([disagree, disc_plain]).rename(_DISC_COLS).sort("tournament_id", "player_id")
    latest_date = lists.dates[-1] if lists.dates else None
    plain_rows = ro.plain_by_file(plain_fr, prep, params, lists.official_ids(latest_date), latest_date)
    if plain_rows is not None:
        ev = pl.concat([ev, plain_rows], how="diagonal_relaxed")
    return ev, disc_t


def bootstrap(ev: pl.DataFrame, known: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Players the store never rated take the rating written in this period's files as their
    rating on the list in force (the earliest such event's). Returns (the period's state with
    the bootstraps, rows: player_id, boot_rating, boot_date)."""
    boot_rows = (
        ev.filter(pl.col("boot_rating").is_not_null())
        .sort("player_id", "in_force", "boot_rating")
        .group_by("player_id", maintain_order=True)
        .agg(pl.col("boot_rating").first(), pl.col("in_force").first().alias("boot_date"))
        .join(
            known.filter(pl.col("rating").is_null() & pl.col("first_rated").is_null()).select("player_id"),
            on="player_id",
            how="semi",
        )
    )
    if not boot_rows.height:
        return known, boot_rows
    booted = pl.col("boot_rating").is_not_null()
    known = (
        known.join(boot_rows, on="player_id", how="left")
        .with_columns(
            pl.coalesce("rating", "boot_rating").alias("rating"),
            pl.when(booted)
            .then(pl.col("ever_2400").fill_null(False) | (pl.col("boot_rating") >= 2400))
            .otherwise(pl.col("ever_2400"))
            .alias("ever_2400"),
            pl.when(booted)
            .then(pl.col("ever_2300").fill_null(False) | (pl.col("boot_rating") >= 2300))
            .otherwise(pl.col("ever_2300"))
            .alias("ever_2300"),
            pl.coalesce("last_active", "boot_date").alias("last_active"),
            pl.coalesce("first_rated", "boot_date").alias("first_rated"),
        )
        .with_columns((pl.col("__changed") | booted).alias("__changed"))
        .drop("boot_rating", "boot_date")
    )
    return known, boot_rows
