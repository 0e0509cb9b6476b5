"""Where each Ro comes from, and the `ro_from` policy (FIDE B.02 (2024) 7.1.3).

B.02 7.1.3: "The rating list in force at the start of the tournament shall be used": Ro is the
player's rating on that list, and Rc his opponent's. The store knows that list from an imported
official list (`official_lists`, `elopipe lists import`) or from the lists it computed itself,
which drift from FIDE's when the store lacks the players' other games; a player it never rated
starts from the rating the organiser's file gives (a bootstrap, `in_force.bootstrap`).

Every Ro carries its source (``rating_changes.ro_source``, ``tournament_ratings.ro_source``, one of
`RO_SOURCES`): 'official' (the player's row on an imported official list), 'computed' (a list the
store computed), 'file' (the rating the organiser's file gives: a bootstrap, or the 'file'
policy), 'standard' (rapid and blitz from March 2024: an unrated player's standard rating, FIDE
Rapid and Blitz Rating Regulations 7.2.1); None for a Ro that has no source at its event: a player
no list in force nor the event's file rates, who plays at the rating another event's file of the
period gave him (`pair_sources`).

The policy (`FideParams.ro_from`): 'list', the default, is 7.1.3 as the store knows the list;
'file', for a store that lacks the players' other games: a player with a FIDE ID whom no imported
official list of that date (the list in force at the event's start) lists takes the rating the
file gives as his Ro for that event, and his opponents take it as their Rc; the period's change
applies to that rating (B.02 8.3.4: the new rating is the rating in force plus the change), so the
store's list follows the files (`rebase`).

Columns the period (`period`) reads from here, per (event, player) pair of its ``ev`` frame:
``boot_src`` (where a bootstrap rating came from), ``from_boot`` (the rating in force is an
earlier period's bootstrap), ``on_official`` (the list in force is an imported official list
that lists the player), ``official_of_date`` (the same, and that list is dated the event's list
in force), ``by_file`` (the 'file' policy set the rating in force).
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from elopipe.rating.fide.params import FideParams, Prepared, rules_by_version, version_expr

RO_SOURCES = ("official", "computed", "file", "standard")
# the engine keeps the source as an Enum (a byte a side); the store holds it as text (`to_contract`)
RO_SOURCE = pl.Enum(list(RO_SOURCES))


def src(name: str) -> pl.Expr:
    """The source `name` (one of `RO_SOURCES`) as a literal of the engine's type."""
    return pl.lit(name, RO_SOURCE)


def listed(ids: pl.Series | None) -> pl.Expr:
    """True for the players in `ids` (those an imported official list rates), False for all when None."""
    return pl.lit(False) if ids is None else pl.col("player_id").is_in(ids.implode())


def official_flags(
    k: pl.DataFrame, ids: pl.Series | None, list_date: dt.date | None, in_force: dt.date
) -> pl.DataFrame:
    """`k` (pairs whose list in force at the event's start is `list_date`, the latest list the
    store holds on or before `in_force`) with ``on_official`` (that list is an imported official
    list rating the player: `ids`) and ``official_of_date`` (and it is dated `in_force`)."""
    on = listed(ids) & pl.col("store_rating").is_not_null()
    return k.with_columns(on.alias("on_official"), (on & pl.lit(list_date == in_force)).alias("official_of_date"))


def file_rating_usable(params: FideParams) -> pl.Expr:
    """True where the rating a file writes (``file_rating``) can be a FIDE rating at the event:
    at least the floor of the rules in force when it was written (the era of the list in force,
    ``in_force``; a scenario's forced rules do not make a 2018 file's 1202 no rating). FIDE
    publishes no rating below it (B.02 (2009) and (2011): 1200 until June 2012; then 1000; (2024)
    7.1.4: 1400), so a file's 1010 at a 2011 event is a national rating or a mistake, and the
    player is unrated there: it is never his Ro, nor his opponents' Rc. It stays the file's
    rating (``file_rating``) in the store and the reports."""
    floors = {name: rs.floor for name, rs in rules_by_version(params).items()}
    floor = version_expr("in_force", None).replace_strict(floors, default=None, return_dtype=pl.Int64)
    return (pl.col("file_rating") >= floor).fill_null(False)


def by_file(ev: pl.DataFrame, prep: Prepared, params: FideParams) -> pl.DataFrame:
    """Under the 'file' policy, the pairs of a player with a FIDE ID and a file rating whom no
    official list of that date lists take the file's rating as their rating in force (``r_if``,
    flag ``by_file``); under 'list', `ev` with ``by_file`` False."""
    if params.ro_from != "file":
        return ev.with_columns(pl.lit(False).alias("by_file"))
    take = file_rating_usable(params) & listed(prep.fide_ids) & ~pl.col("official_of_date").fill_null(False)
    return ev.with_columns(take.alias("by_file")).with_columns(
        pl.when(pl.col("by_file")).then(pl.col("file_rating")).otherwise(pl.col("r_if")).alias("r_if")
    )


def plain_by_file(
    pairs: pl.DataFrame, prep: Prepared, params: FideParams, latest_ids: pl.Series | None, latest: dt.date | None
) -> pl.DataFrame | None:
    """Under the 'file' policy, the plain pairs (rated on the latest list, `in_force.in_force`)
    whose rating in force becomes the file's: `pairs` (tp_key, tournament_id, player_id, in_force,
    file_rating, file_id, store_rating: the current rating) of players with a FIDE ID, less those
    the latest list, an imported official one of the event's date, lists. Rows in the columns of
    the ``ev`` frame; None under 'list' or when there is none."""
    if params.ro_from != "file" or pairs.height == 0:
        return None
    on = listed(latest_ids) & pl.col("store_rating").is_not_null()
    rows = pairs.filter(listed(prep.fide_ids)).with_columns(
        on.alias("on_official"), (on & (pl.col("in_force") == pl.lit(latest, pl.Date))).alias("official_of_date")
    )
    rows = rows.filter(~pl.col("official_of_date") & file_rating_usable(params))
    if rows.height == 0:
        return None
    return rows.with_columns(
        pl.col("store_rating").alias("r_cur"),
        pl.lit(None, pl.Int64).alias("boot_rating"),
        pl.lit(None, RO_SOURCE).alias("boot_src"),
        pl.lit(False).alias("from_boot"),
        pl.col("file_rating").alias("r_if"),
        pl.lit(True).alias("by_file"),
    )


def pair_sources(ev: pl.DataFrame, booted: pl.DataFrame) -> pl.DataFrame:
    """`ev` with ``ro_src``, where each pair's rating in force comes from (`RO_SOURCES`); `booted`:
    the players the period bootstrapped (player_id). A pair with no rating in force plays at his
    current rating (B.02 8.2.4, rated since): 'computed' when a list rates him (a later one than
    the list in force), None (no source) when this period bootstrapped him: the rating is
    another event's file's (or his standard rating), neither a list in force nor this event's
    file rates him, and his opponents take him as unrated (Bunratty Challengers 2011, whose
    file writes every rating as 0: 20 players the Armstrong Cup file of the same period rates
    were said to take their Ro from the file)."""
    booted_now = pl.col("player_id").is_in(booted.get_column("player_id").implode()) if booted.height else pl.lit(False)
    source = (
        pl.when(pl.col("by_file"))
        .then(src("file"))
        .when(pl.col("store_rating").is_null() & pl.col("boot_rating").is_not_null())
        .then(pl.col("boot_src"))
        .when(pl.col("from_boot").fill_null(False))
        .then(src("file"))
        .when(pl.col("on_official").fill_null(False))
        .then(src("official"))
        .when(pl.col("r_if").is_null() & booted_now)
        .then(pl.lit(None, RO_SOURCE))
        .otherwise(src("computed"))
    )
    return ev.with_columns(source.alias("ro_src"))


def side_default(latest_ids: pl.Series | None) -> pl.Expr:
    """The source of a side rated on the current rating (the latest list): 'official' when that
    list is an imported official one rating the player, else 'computed'."""
    if latest_ids is None:
        return src("computed")
    return pl.when(listed(latest_ids)).then(src("official")).otherwise(src("computed"))


def rebase(ev: pl.DataFrame, known: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Under the 'file' policy: the period's state (`known`, `frames.STATE_SCHEMA` and
    ``__changed``) with each rated player whose Ro the file gave (``by_file``) rated as the file of
    his event with the latest list in force says (ties: the lower rating; the 2400 and 2300 marks
    follow it), so that the period's change applies to it. Returns (the state, how many players
    were rebased); `known` unchanged under 'list'."""
    rows = ev.filter(pl.col("by_file").fill_null(False) & pl.col("r_cur").is_not_null())
    if rows.height == 0:
        return known, 0
    files = (
        rows.sort(["player_id", "in_force", "file_rating"], descending=[False, True, False])
        .group_by("player_id", maintain_order=True)
        .agg(pl.col("file_rating").first().alias("__file"))
    )
    moved = pl.col("__file").is_not_null() & pl.col("__file").ne_missing(pl.col("rating"))
    known = (
        known.join(files, on="player_id", how="left")
        .with_columns(
            pl.when(moved).then(pl.col("__file")).otherwise(pl.col("rating")).alias("rating"),
            pl.when(moved)
            .then(pl.col("ever_2400").fill_null(False) | (pl.col("__file") >= 2400))
            .otherwise(pl.col("ever_2400"))
            .alias("ever_2400"),
            pl.when(moved)
            .then(pl.col("ever_2300").fill_null(False) | (pl.col("__file") >= 2300))
            .otherwise(pl.col("ever_2300"))
            .alias("ever_2300"),
            (pl.col("__changed") | moved).alias("__changed"),
        )
        .drop("__file")
    )
    return known, files.height
