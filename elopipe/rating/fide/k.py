"""K of a FIDE rating period (FIDE B.02 8.3.3), before the 700 cap: a fixed K where the rules
give one, the official list's K, 10 once 2400 was reached, 40 for a junior or a player new to the
list, else the low K. The cap (K × N ≤ 700) and the change are `changes.period_sums`. A list's K
column, the K of each rated player for the period after it, is `list_k`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import polars as pl

from elopipe.rating.fide import b02
from elopipe.rating.fide.params import FideParams, Prepared, version_of
from elopipe.rating.lookup import IdLookup


def k_base(
    k_rules: b02.RuleSet, prev_date: dt.date, prep: Prepared
) -> tuple[pl.Expr, Callable[[pl.DataFrame], pl.DataFrame]]:
    """K before the 700 cap, as an expression over a state row (FIDE B.02 8.3.3): a fixed K
    where the rules give one; the official list's K; 10 once 2400 was reached (with 30 games
    under V2009); 40 for a junior never at 2300; the new player's K under 30 games; else the low
    K. Returns (the expression, the function that adds the `__bd` birth dates it may read).

    "Fewer than 30 games" reads `total_games`, the rated games since the player was first on a
    list. B.02 8.3.3 gives K 40 to "a player new to the rating list until he has completed events
    with at least 30 games". A player who fell below the floor (7.2.1) and is rated again from
    pooled games (7.1.4) is not new to the list: his games from before the fall count toward the
    30 (`close.close_list`), and a history the store does not know (a player first seen on an imported
    list or with a rating from a file) counts as at least 30. No source says otherwise: the spec
    (fide-rating-rules.md §6.4) says such a player is "treated like any unrated player" for his
    new rating (Ru), and lists the 30-game count as not verified (§14.7)."""
    # junior (8.3.3): list year − birth year ≤ 18; V2017's "until the 18th birthday" is checked
    # against the birth date where the store has one (`b02.is_junior`)
    age = pl.lit(prev_date.year) - pl.col("birth_year")
    junior = (age <= 18) & (age >= 0)
    bd = prep.birth_dates
    by_date = None
    if k_rules.junior_rule == "birthday" and bd is not None and bd.height:
        by_date = IdLookup(bd.select("player_id", pl.col("birth_date").alias("__bd")))
        junior = (
            pl.when(pl.col("__bd").is_not_null())
            # born after the list: a typo, not a junior
            .then((pl.col("__bd") <= pl.lit(prev_date)) & (pl.lit(prev_date) < pl.col("__bd").dt.offset_by("18y")))
            .otherwise(junior)
        )

    def with_birth(frame: pl.DataFrame) -> pl.DataFrame:
        return by_date.attach(frame, "player_id", {"__bd": "__bd"}) if by_date is not None else frame

    few_games = pl.col("total_games").is_not_null() & (pl.col("total_games") < 30)
    k_base = (
        pl.when(pl.lit(k_rules.k_fixed is not None))
        .then(pl.lit(k_rules.k_fixed, pl.Int64))
        .when(pl.col("k_official").is_not_null())
        .then(pl.col("k_official"))
        .when(pl.col("ever_2400").fill_null(False) & ~(pl.lit(k_rules.k10_needs_30) & few_games))
        .then(10)
        .when(pl.lit(k_rules.k_junior) & junior.fill_null(False) & ~pl.col("ever_2300").fill_null(False))
        .then(40)
        .when(few_games)
        .then(k_rules.k_new)
        .otherwise(k_rules.k_low)
        .cast(pl.Int64)
    )
    return k_base, with_birth


def list_k(t: dt.date, state: pl.DataFrame, prep: Prepared, params: FideParams) -> pl.DataFrame:
    """The K of every rated player of list `t` for the period after it, as FIDE's lists give it
    for every rated player (the K column of its TXT and XML downloads, which `elopipe lists import`
    reads back as the official K of the next period): `k_base` before the 700 cap, under the rules
    in force on `t` (a period's K is read from the list before it), from `state`, the state after
    list `t` (an imported official list of `t` included: its K is the player's). A birth year the
    state lacks comes from the store's players, as the next period reads it
    (`in_force.state_at_start`).

    Returns player_id Int64, k_next Int64 (K points), one row per player rated on `t`, in
    `state`'s order."""
    k_expr, with_birth = k_base(version_of(t, params), t, prep)
    rated = state.filter(pl.col("rating").is_not_null())
    if rated.get_column("birth_year").null_count() and prep.birth_years.height:
        known = prep.birth_years.select("player_id", pl.col("birth_year").cast(pl.Int64).alias("__by"))
        rated = rated.join(known, on="player_id", how="left", maintain_order="left").with_columns(
            pl.coalesce("birth_year", "__by").alias("birth_year")
        )
    return with_birth(rated).select("player_id", k_expr.alias("k_next"))
