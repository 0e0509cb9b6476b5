"""One rating period of the FIDE engine, step by step (FIDE B.02 7-8): the state at the start,
Ro in force (7.1.3) and bootstraps, D, PD and W - PD per game (8.3.1, table 8.1.2), K (8.3.3),
the change (8.3.4), the close of list t (floor 7.2.1, inactivity 7.2.2, the 1 March 2024
adjustment) and an imported official list.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias
from typing import cast as type_cast

import polars as pl

from elopipe.rating.fide import b02, ro
from elopipe.rating.fide.initial import initial_ratings
from elopipe.rating.fide.params import FideParams, Prepared, rules_by_version, version_of
from elopipe.rating.lookup import IdLookup
from elopipe.rating.periods import add_months, get_scheme
from elopipe.rating.rounding import div_round_expr, round_x100_expr
from elopipe.rating.tables import dp_expr, pd_x100_expr

if TYPE_CHECKING:
    from polars._typing import ColumnNameOrSelector, PolarsDataType
    from polars.expr.whenthen import ChainedThen, Then

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


class Lists:
    """Every list known so far (imported or computed), by date: player_id → rating.

    A computed list holds every rated player known when it was computed, so the list in
    force on a date is the latest list dated on or before it (FIDE B.02 7.1: the list in
    force at the start) — except for players bootstrapped later: a player first seen in
    period t with a file rating for the list b in force at an event's start (b < t) is
    rated b, and on every list dated in [b, t) that was computed before they were known
    (or that was never computed: no games before).  Those ratings live in `boots`
    (player_id, boot_date = b, boot_rating, boot_period = t) and fill the gaps of older
    lists (`_ratings_in_force`).  `official` holds, for each imported official list, the
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
_ENGINE: Final = "in-memory"


_BOOT_SCHEMA: Schema = {"player_id": pl.Int64, "boot_date": pl.Date, "boot_rating": pl.Int64, "boot_period": pl.Date}


LIST_SCHEMA: Schema = {
    "list_date": pl.Date,
    "player_id": pl.Int64,
    "rating": pl.Int64,
    "games": pl.Int64,
    "total_games": pl.Int64,
    "k": pl.Int64,
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
    """Plain (event, player) pairs (see `one_period`) with a file rating: tp_key, in_force,
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


# list rows, rating changes, tournament rows, discrepancies of one period
_PeriodFrames = tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None, pl.DataFrame | None]


def one_period(
    t: dt.date,
    prev_list: dt.date | None,
    sides_t: pl.DataFrame | None,
    state: pl.DataFrame,
    lists: Lists,
    pool: pl.DataFrame,
    prep: Prepared,
    params: FideParams,
    off_t: pl.DataFrame | None,
    std_hist: pl.DataFrame | None,
) -> tuple[
    pl.DataFrame, pl.DataFrame, tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None, pl.DataFrame | None]
]:
    """Rating period ending with list `t` (FIDE B.02 8): rate its games, pool the unrated
    players' games and publish their Ru, then the new state and list `t`.

    Returns (state after `t`, the pool, (list rows, rating changes, tournament rows,
    discrepancies)); the last three are None when the period has no game."""
    list_rules = version_of(t, params)
    prev_date = prev_list or get_scheme("fide").previous_list(t)
    changes_t = tr_t = disc_t = None
    upd_parts: list[pl.DataFrame] = []
    pool_new = None
    fr_t = None
    if sides_t is not None and sides_t.height:
        # the ratings the files of the period's events give (one filter of the store's, a period)
        tids = sides_t.get_column("tournament_id").unique().implode()
        fr_t = prep.file_ratings.filter(pl.col("tournament_id").is_in(tids))
        rated = _rate_games(t, prev_date, sides_t, state, lists, prep, params, std_hist, fr_t)
        changes_t, tr_t, disc_t, state = rated.changes, rated.tournaments, rated.discrepancies, rated.state
        upd_parts += rated.updates
        # unrated players pool their games against rated opponents (7.1.4)
        pool_new = rated.pooled
        pool = pl.concat([pool, pool_new.cast(type_cast("CastSchema", POOL_SCHEMA))])
        upd_parts.append(pool_new.group_by("player_id").agg(pl.len().cast(pl.Int64).alias("pool_games_t")))
    if pool.height:
        published, pool_rows_t, tr_unrated = initial_ratings(t, state, pool, pool_new, prep, params, list_rules)
        upd_parts += [published, pool_rows_t]
        if tr_unrated is not None:
            # an unrated player has no Ro, hence no source
            tr_unrated = tr_unrated.with_columns(pl.lit(None, ro.RO_SOURCE).alias("ro_source"))
            tr_t = pl.concat([tr_t, tr_unrated.select(tr_t.columns)]) if tr_t is not None else tr_unrated
    if tr_t is not None:
        # the rating the file gives beside Ro, so that a report marks a Ro far from it (`ro`)
        if fr_t is not None:
            tr_t = tr_t.join(
                fr_t.select("tournament_id", "player_id", "file_rating"), on=["tournament_id", "player_id"], how="left"
            )
        else:
            tr_t = tr_t.with_columns(pl.lit(None, pl.Int64).alias("file_rating"))
        tr_t = tr_t.select(pl.lit(t).alias("list_date"), *_TR_COLUMNS)
    new_state, lists_t = _close_list(t, state, _updates(upd_parts), params, list_rules)
    if off_t is not None and off_t.height:
        new_state, lists_t = _apply_official(t, new_state, lists_t, off_t)
        lists.mark_official(t, off_t)
    lists.put(t, lists_t)
    return by_player(new_state), pool, (lists_t, changes_t, tr_t, disc_t)


_TR_COLUMNS = (
    "tournament_id", "player_id", "rules_version", "ro", "ro_source", "file_rating", "n", "score_x100", "ra",
    "we_x100", "wwe_x100", "k", "change_x100", "rp", "unrated", "ru_provisional",
)  # fmt: skip


@dataclass
class _RatedGames:
    """What the rated games of one period give: rows for the store, the players' updates (joined
    into the state by `_updates`), the games pooled by unrated players, and the state with the
    period's new players, file birth years and bootstraps."""

    changes: pl.DataFrame
    tournaments: pl.DataFrame
    discrepancies: pl.DataFrame
    updates: list[pl.DataFrame]
    pooled: pl.DataFrame
    state: pl.DataFrame


def _rate_games(
    t: dt.date,
    prev_date: dt.date,
    sides_t: pl.DataFrame,
    state: pl.DataFrame,
    lists: Lists,
    prep: Prepared,
    params: FideParams,
    std_hist: pl.DataFrame | None,
    fr_t: pl.DataFrame,
) -> _RatedGames:
    """The games of the period: Ro and Rc in force and where Ro came from (`ro`), D, PD and
    W − PD per game, K and the change per player (B.02 7.1.3, 8.3.1–8.3.4); `fr_t`: the ratings
    the files of the period's events give (`Prepared.file_ratings`)."""
    period_players, known = _state_at_start(sides_t, state, prep)
    # K belongs to the period (read from list t - 1), so its rules are those in force on that
    # list's date, whatever the versions of the period's events
    k_rules = version_of(prev_date, params)
    k_base, with_birth = _k_base(k_rules, prev_date, prep)
    # per-player values come by gathers (`IdLookup`), not joins: ~250k sides a FIDE month
    kv = IdLookup(
        with_birth(known).select("player_id", pl.col("rating").alias("r_cur"), "first_rated", k_base.alias("k_base"))
    )
    # Ro (list in force) and R_prev are the current rating for most sides; the others are
    # replaced below (`exc`)
    sides_r = kv.attach(sides_t, "player_id", {"ro_if": "r_cur", "r_prev": "r_cur"})
    sides_r = kv.attach(sides_r, "opponent_id", {"rc": "r_cur"})
    ev, disc_t = _in_force(sides_r, kv, lists, prep, params, std_hist, fr_t)
    known, boot_rows = _bootstrap(ev, known)
    known, rebased = ro.rebase(ev, known)
    ev = ro.pair_sources(ev, boot_rows)
    lists.add_boots(t, boot_rows)
    updates = [
        boot_rows.select("player_id", pl.lit(True).alias("boot"))
        if boot_rows.height
        else pl.DataFrame(schema={"player_id": pl.Int64, "boot": pl.Boolean})
    ]
    k_of = kv  # K before the cap, by player
    if boot_rows.height or rebased:
        # R_prev is the rating after bootstrapping (or the file's, `ro.rebase`), which may
        # also set the 2400/2300 marks: K from the updated state
        k_of = IdLookup(with_birth(known).select("player_id", "rating", k_base.alias("k_base")))
        sides_r = k_of.attach(sides_r.drop("r_prev"), "player_id", {"r_prev": "rating"})
    # the (event, player) pairs whose rating in force is not the current one (an older list in
    # force, a bootstrap, the file's): every other side keeps the current rating, from the latest
    # list (its source `ro.side_default`)
    latest_ids = lists.official_ids(lists.dates[-1] if lists.dates else None)
    sides_r = sides_r.with_columns(ro.side_default(latest_ids).alias("ro_src"))
    moved = pl.col("r_if").ne_missing(pl.col("r_cur"))
    exc = ev.filter(moved | (pl.col("ro_src") != ro.src("computed")) | pl.lit(latest_ids is not None))
    for key, out in (("tp_key", "ro_if"), ("to_key", "rc")):
        x = exc if key == "tp_key" else exc.filter(moved)
        if not x.height:
            continue
        x = x.select(pl.col("tp_key").alias(key), pl.col("r_if").alias("__x"), "ro_src", pl.lit(True).alias("__in"))
        x = x if key == "tp_key" else x.drop("ro_src")
        sides_r = sides_r.join(x, on=key, how="left", maintain_order="left", suffix="__new")
        sides_r = sides_r.with_columns(pl.when(pl.col("__in")).then(pl.col("__x")).otherwise(pl.col(out)).alias(out))
        if key == "tp_key":
            sides_r = sides_r.with_columns(pl.coalesce("ro_src__new", "ro_src").alias("ro_src")).drop("ro_src__new")
        sides_r = sides_r.drop("__x", "__in")
    event_versions = sides_t.get_column("version").unique().to_list()
    versions = [v for v in event_versions if v is not None]
    s = _sides_plan(sides_r.lazy(), params, versions).collect(engine=_ENGINE)
    per_event, n_per_player = _period_sums(s, period_players, k_of, k_rules)
    updates.append(n_per_player)
    changes_t, tr_t = _period_rows(s, per_event, n_per_player, event_versions, prep)
    # the state rows that changed (new players, file birth years, bootstrap) replace theirs
    changed = known.filter(pl.col("__changed")).drop("__changed")
    if changed.height:
        state = by_player(pl.concat([state.join(changed.select("player_id"), on="player_id", how="anti"), changed]))
    pooled = s.filter(pl.col("reason") == "pooled_unrated").select(list(POOL_SCHEMA))
    return _RatedGames(changes_t, tr_t, disc_t, updates, pooled, state)


def _state_at_start(sides_t: pl.DataFrame, state: pl.DataFrame, prep: Prepared) -> tuple[pl.DataFrame, pl.DataFrame]:
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


def _k_base(
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
    30 (`_close_list`), and a history the store does not know (a player first seen on an imported
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


def _in_force(
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
        pl.when(pl.col("store_rating").is_null() & never_before).then(pl.col("file_rating")).alias("boot_rating")
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


def _bootstrap(ev: pl.DataFrame, known: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
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


def _period_sums(
    s: pl.DataFrame, period_players: pl.DataFrame, k_of: IdLookup, k_rules: b02.RuleSet
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per (event, rated player): Ro, N, ΣW, ΣRc, ΣPD and Σ(W − PD) of the counted games, in
    hundredths; per player: N, K after the 700 cap (K × N ≤ 700, B.02 8.3.3) and the change
    K × Σ(W − PD), rounded once, halves away from zero (8.3.4).

    Returns (per event: tournament_id, player_id, ro, n, score_x100, sum_rc, we_x100,
    wwe_x100; per player: player_id, n, k, change)."""
    per_event = (
        s.lazy()
        .filter(pl.col("counted"))
        .group_by("tp_key")
        .agg(
            pl.col("ro").first().alias("ro"),
            pl.col("ro_source").first().alias("ro_source"),
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("score_x100").sum().alias("score_x100"),
            pl.col("rc").sum().alias("sum_rc"),
            pl.col("pd_x100").sum().alias("we_x100"),
        )
        .with_columns(
            (pl.col("tp_key") // (1 << 32)).alias("tournament_id"),
            (pl.col("tp_key") % (1 << 32)).alias("player_id"),
            # Σ(W − PD) = ΣW − ΣPD, exact in hundredths
            (pl.col("score_x100") - pl.col("we_x100")).alias("wwe_x100"),
        )
        .drop("tp_key")
        .collect(engine=_ENGINE)
    )
    sums = per_event.group_by("player_id").agg(pl.col("n").sum(), pl.col("wwe_x100").sum().alias("sum_x100"))
    # in player order (the period's players are sorted): the update joins the state by merge
    n_per_player = IdLookup(sums).attach(period_players, "player_id", {"n": "n", "sum_x100": "sum_x100"})
    n_per_player = k_of.attach(n_per_player.filter(pl.col("n").is_not_null()), "player_id", {"k_base": "k_base"})
    n_per_player = (
        n_per_player.with_columns(
            pl.when(pl.lit(k_rules.cap_700) & (pl.col("k_base") * pl.col("n") > 700))
            .then(700 // pl.col("n"))
            .otherwise(pl.col("k_base"))
            .alias("k")
        )
        .with_columns(round_x100_expr(pl.col("k") * pl.col("sum_x100")).alias("change"))
        .select("player_id", "n", "k", "change")
    )
    return per_event, n_per_player


def _period_rows(
    s: pl.DataFrame,
    per_event: pl.DataFrame,
    n_per_player: pl.DataFrame,
    event_versions: list[str | None],
    prep: Prepared,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The period's rows of `rating_changes` (one per side, with the player's final K on counted
    games) and of `tournament_ratings` for rated players: Ra (mean Rc), p, Rp = Ra + dp (8.1.1,
    table 8.1.1), K × Σ(W − We) unrounded (`change_x100`)."""
    k_final = IdLookup(n_per_player.select("player_id", "k"))
    sk = k_final.attach(s, "player_id", {"k": "k"}).lazy()
    changes_plan = sk.select(
        "list_date", "tournament_id", "game_id", "player_id", "opponent_id", "ro", "ro_source", "rc", "d_raw",
        "d_used", "pd_x100", "score_x100", "wpd_x100", pl.when(pl.col("counted")).then(pl.col("k")).alias("k"),
        "counted", "reason", "tc_assumed",
    )  # fmt: skip
    tr_plan = k_final.attach(per_event, "player_id", {"k": "k"}).lazy()
    if len(event_versions) == 1 and event_versions[0] is not None:
        # one rules version for the period's events (the usual case): a literal, no join
        tr_plan = tr_plan.with_columns(pl.lit(event_versions[0], pl.Utf8).alias("rules_version"))
    else:
        tr_plan = tr_plan.join(
            prep.tournaments.lazy().select(
                pl.col("tournament_id").cast(pl.Int64), pl.col("version").alias("rules_version")
            ),
            on="tournament_id",
            how="left",
        )
    tr_plan = tr_plan.with_columns(
        div_round_expr(pl.col("sum_rc"), pl.col("n")).alias("ra"),
        div_round_expr(pl.col("score_x100"), pl.col("n")).alias("p_x100"),
        (pl.col("k") * pl.col("wwe_x100")).alias("change_x100"),
        pl.lit(False).alias("unrated"),
        pl.lit(None, pl.Int64).alias("ru_provisional"),
    ).with_columns((pl.col("ra") + dp_expr(pl.col("p_x100"))).alias("rp"))
    changes_t, tr_t = pl.collect_all([changes_plan, tr_plan], engine=_ENGINE)
    return changes_t, tr_t


_UPDATE_SCHEMA: Schema = {
    "player_id": pl.Int64,
    "n": pl.Int64,
    "k": pl.Int64,
    "change": pl.Int64,
    "ru": pl.Int64,
    "pool_n": pl.Int64,
    "pool_games": pl.Int64,
    "pool_games_t": pl.Int64,
    "boot": pl.Boolean,
}


def _updates(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """The period's per-player updates (`_UPDATE_SCHEMA`) in one frame, sorted by player: one
    full join of the parts on player_id."""
    upd = None
    for part in parts:
        if part.height == 0:
            continue
        upd = part if upd is None else upd.join(part, on="player_id", how="full", coalesce=True)
    if upd is None:
        upd = empty(_UPDATE_SCHEMA)
    return by_player(
        upd.with_columns([pl.lit(None, dt_).alias(c) for c, dt_ in _UPDATE_SCHEMA.items() if c not in upd.columns])
        .select(list(_UPDATE_SCHEMA))
        .cast(type_cast("CastSchema", _UPDATE_SCHEMA))
    )


def _close_list(
    t: dt.date, state: pl.DataFrame, upd: pl.DataFrame, params: FideParams, list_rules: b02.RuleSet
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The new state and list `t`: one join of the period's updates into the state. The new
    rating is Ru for a first rating, else R + change; on 1 March 2024 the one-off adjustment;
    below the floor the player is delisted (7.2.1); flags per `_list_flags`.

    Returns (state in `STATE_SCHEMA`, list rows in `LIST_SCHEMA` order less `rating_exact`)."""
    st = state.lazy().join(upd.lazy(), on="player_id", how="left")
    was_rated = pl.col("rating").is_not_null()
    new_rating: pl.Expr = (
        pl.when(pl.col("ru").is_not_null())
        .then(pl.col("ru"))
        .when(was_rated)
        .then(pl.col("rating") + pl.col("change").fill_null(0))
    )
    compressed = t == b02.COMPRESSION_LIST and params.rules in (None, "V2024")
    if compressed:
        # FIDE B.02 (2024), one-off adjustment of 1 March 2024: R + 0.4 x (2000 - R) < 2000
        st = st.with_columns(new_rating.alias("__pre"))
        nr = pl.col("__pre")
        # the points added are shown in the list row's flags ('adj2024:+N'); `change` stays the
        # K-based change of the period, so rating = previous + change + N
        adj: pl.Expr = pl.when(nr < 2000).then(div_round_expr(2 * (2000 - nr), pl.lit(5)))
        new_rating = nr + adj.fill_null(0)
    else:
        adj = pl.lit(None, pl.Int64)
    st = st.with_columns(new_rating.alias("new_rating"), was_rated.alias("was_rated"), adj.alias("adj2024"))
    st = st.with_columns((pl.col("new_rating") < list_rules.floor).fill_null(False).alias("delisted")).with_columns(
        pl.when(pl.col("delisted")).then(None).otherwise(pl.col("new_rating")).alias("new_rating")
    )
    active_now = (pl.col("n").fill_null(0) > 0) | pl.col("ru").is_not_null()
    st = st.with_columns(
        pl.col("rating").alias("old_rating"),
        pl.col("new_rating").alias("rating"),
        # a first rating starts the count at its pooled games; a player rated again after a
        # fall below the floor keeps the games of his earlier listing (unknown stays unknown):
        # see `_k_base` for the reading of B.02 8.3.3
        pl.when(pl.col("ru").is_not_null() & pl.col("first_rated").is_null())
        .then(pl.col("pool_n"))
        .when(pl.col("ru").is_not_null())
        .then(pl.col("total_games") + pl.col("pool_n"))
        .otherwise(pl.col("total_games") + pl.col("n").fill_null(0))
        .alias("total_games"),
        (pl.col("ever_2400").fill_null(False) | (pl.col("new_rating").fill_null(0) >= 2400)).alias("ever_2400"),
        (pl.col("ever_2300").fill_null(False) | (pl.col("new_rating").fill_null(0) >= 2300)).alias("ever_2300"),
        pl.when(active_now).then(pl.lit(t)).otherwise(pl.col("last_active")).alias("last_active"),
        pl.when(pl.col("delisted"))
        .then(pl.lit(t + dt.timedelta(days=1)))
        .otherwise(pl.col("pool_from"))
        .alias("pool_from"),
        pl.lit(None, pl.Int64).alias("k_official"),
        pl.coalesce("first_rated", pl.when(pl.col("new_rating").is_not_null()).then(pl.lit(t))).alias("first_rated"),
    )
    st = st.collect(engine=_ENGINE).lazy()  # shared by the state and the list below
    new_state, lists_t = pl.collect_all(
        [st.select([pl.col(c).cast(d) for c, d in STATE_SCHEMA.items()]), _list_plan(t, st, compressed)],
        engine=_ENGINE,
    )
    return new_state, lists_t


def _list_plan(t: dt.date, st: pl.LazyFrame, compressed: bool) -> pl.LazyFrame:
    """List `t`'s rows from the closed state: rated players, players with pooled games, and the
    delisted. Flags: 'i' inactive, no rated game in the last 12 months (7.2.2); 'new' first
    rating; 'delisted' fell below the floor; 'pool' unrated with pooled games; 'adj2024:+N'."""
    delisted = pl.col("delisted").fill_null(False)
    inactive = pl.col("last_active").is_null() | (pl.col("last_active") <= pl.lit(add_months(t, -12)))
    flags = _flags_expr(
        [
            ("i", pl.col("rating").is_not_null() & inactive),
            ("new", pl.col("ru").is_not_null()),
            ("delisted", delisted),
            ("pool", pl.col("rating").is_null() & ~delisted),
        ],
        pl.lit("adj2024:+") + pl.col("adj2024").cast(pl.Utf8) if compressed else None,
    )
    return st.filter(pl.col("rating").is_not_null() | pl.col("pool_games").is_not_null() | delisted).select(
        pl.lit(t).alias("list_date"),
        "player_id",
        "rating",
        pl.coalesce(
            pl.when(pl.col("ru").is_null()).then(pl.col("n")),
            pl.col("pool_games_t"),
            pl.lit(0, pl.Int64),
        ).alias("games"),
        pl.when(pl.col("rating").is_not_null() | delisted)
        .then(pl.col("total_games"))
        .otherwise(pl.col("pool_games"))
        .alias("total_games"),
        pl.when(pl.col("ru").is_null()).then(pl.col("k")).alias("k"),
        pl.when(pl.col("ru").is_null() & pl.col("was_rated").fill_null(False))
        .then(pl.col("change").fill_null(0))
        .alias("change"),
        flags.alias("flags"),
        "ever_2400",
        "birth_year",
        pl.when(pl.col("boot").fill_null(False))
        .then(pl.lit("bootstrap"))
        .otherwise(pl.lit("computed"))
        .alias("source"),
    )


def _apply_official(
    t: dt.date, new_state: pl.DataFrame, lists_t: pl.DataFrame, off_t: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """An imported official list for `t` is what FIDE published: it wins for its players, in the
    state and in list `t` (source 'imported')."""
    new_state = state_from_official(new_state, off_t)
    o = off_t.unique("player_id", keep="first").select(
        "player_id", pl.col("rating").alias("o_rating"), pl.lit(True).alias("imp")
    )
    lists_t = (
        lists_t.join(o, on="player_id", how="full", coalesce=True)
        .join(
            new_state.select("player_id", pl.col("ever_2400").alias("o_e"), pl.col("birth_year").alias("o_by")),
            on="player_id",
            how="left",
        )
        .with_columns(
            pl.when(pl.col("imp")).then(pl.col("o_rating")).otherwise(pl.col("rating")).alias("rating"),
            pl.coalesce("games", pl.lit(0, pl.Int64)).alias("games"),
            pl.coalesce("list_date", pl.lit(t)).alias("list_date"),
            pl.when(pl.col("imp")).then(pl.lit("imported")).otherwise(pl.col("source")).alias("source"),
            pl.col("o_e").alias("ever_2400"),
            pl.col("o_by").alias("birth_year"),
        )
        .select(list(LIST_SCHEMA))
    )
    return new_state, lists_t


def _flags_expr(marks: list[tuple[str, pl.Expr]], extra: pl.Expr | None) -> pl.Expr:
    """A list row's flags: the names of the true `marks`, in order, joined by ',' (null if none).

    `extra` (a string, null where absent) is appended last.  The marks are folded into a
    bit mask mapped to its string: building strings row by row for the whole list (about
    500k rows, nearly all without a flag) cost several times more.
    """
    mask = pl.sum_horizontal([cond.fill_null(False).cast(pl.UInt8) * (1 << bit) for bit, (_, cond) in enumerate(marks)])
    names = {
        m: ",".join(name for bit, (name, _) in enumerate(marks) if m >> bit & 1) or None for m in range(1 << len(marks))
    }
    flags = mask.replace_strict(names, return_dtype=pl.Utf8)
    if extra is None:
        return flags
    return (
        pl.when(extra.is_not_null())
        .then(pl.concat_str(flags, extra, separator=",", ignore_nulls=True))
        .otherwise(flags)
    )


def _switch_on_version(groups: dict[Any, list[str]], value: Callable[[Any], pl.Expr], default: pl.Expr) -> pl.Expr:
    """`value(key)` for the sides whose ``version`` is in ``groups[key]``.

    A period's events nearly always share one key: the expression is then `value(key)` itself,
    with no per-row test of the version."""
    if len(groups) <= 1:
        return value(next(iter(groups))) if groups else default
    expr: Then | ChainedThen = pl.when(pl.lit(False)).then(None)
    for key in sorted(groups, key=repr):
        expr = expr.when(pl.col("version").is_in(groups[key])).then(value(key))
    return expr


def _per_version(params: FideParams, versions: list[str], value: Callable[[b02.RuleSet], object]) -> pl.Expr:
    """A rule's value for each side's ``version``, as literals (no join with the rules)."""
    rules = rules_by_version(params)
    groups: dict[Any, list[str]] = {}
    for v in sorted(versions):
        groups.setdefault(value(rules[v]), []).append(v)
    return _switch_on_version(groups, pl.lit, pl.lit(None))


def _sides_plan(sides: pl.LazyFrame, params: FideParams, versions: list[str]) -> pl.LazyFrame:
    """Per player-side: Ro, Rc, why not counted, D, D after the 400-point rule, PD, W − PD.

    `sides` carries the player's rating in force (ro_if) and current rating (r_prev), K
    before the 700 cap (k_base) and the opponent's rating in force (rc); `versions` are the
    rule versions of its events.
    """
    # 8.2.4: a player rated since (late report) plays at their current rating
    s = sides.with_columns(pl.coalesce("ro_if", "r_prev").alias("ro")).with_columns(
        pl.when(pl.col("ro").is_not_null()).then(pl.col("ro_src")).alias("ro_source")
    )
    top = pl.max_horizontal(pl.col("ro").fill_null(0), pl.col("rc").fill_null(0))
    t120 = _per_version(params, versions, lambda r: r.time_thresholds[0])
    t90 = _per_version(params, versions, lambda r: r.time_thresholds[1])
    minimum = pl.when(top >= t120).then(120).when(top >= t90).then(90).otherwise(60)
    too_fast = (
        pl.lit(params.check_time_minimum and params.system == "fide")
        & pl.col("tc_minutes").is_not_null()
        & (pl.col("tc_minutes") < minimum)
    )
    rb600 = (
        pl.lit(params.system != "fide")
        & (pl.col("eff_start") >= b02.RB_600_FROM)
        & pl.col("ro_if").is_not_null()
        & pl.col("rc").is_not_null()
        & ((pl.col("ro_if") - pl.col("rc")).abs() >= 600)
        & ((pl.col("ro_if") > 2600) | (pl.col("rc") > 2600))
    )
    reason = (
        pl.when(pl.col("reason").is_not_null())
        .then(pl.col("reason"))
        .when(too_fast)
        .then(pl.lit("below_time_minimum"))
        .when(rb600)
        .then(pl.lit("rb_600_points"))
        .when(pl.col("r_prev").is_null() & pl.col("rc").is_not_null())
        .then(pl.lit("pooled_unrated"))
        .when(pl.col("r_prev").is_null())
        .then(pl.lit("both_unrated"))
        .when(pl.col("rc").is_null())
        .then(pl.lit("unrated_opponent"))
    )
    s = s.with_columns(reason.alias("reason")).with_columns(
        pl.col("reason").is_null().alias("counted"),
        (pl.col("ro") - pl.col("rc")).alias("d_raw"),
    )
    rules = rules_by_version(params)
    if any(rules[v].cap_mode == "one_upgrade" for v in versions):
        # V2022 8.3.1: one upgrade per event, the largest D > 400 of the player's games
        up = (
            # ties on D broken by the round, so the capped game does not depend on row order
            pl.when(pl.col("counted") & (pl.col("d_raw") > 400))
            .then(pl.col("d_raw") * 10_000 - pl.col("round").fill_null(0).clip(0, 9_999))
            .rank("ordinal", descending=True)
            .over("tp_key")
        )
    else:
        up = pl.lit(None, pl.UInt32)
    d = pl.col("d_raw")
    capped = d.clip(-400, 400)
    cap_lower = _per_version(params, versions, lambda r: r.v2022_cap_lower)
    by_mode = {
        "all": capped,
        "none": d,
        "all_below_2650": pl.when(pl.col("ro") >= 2650).then(d).otherwise(capped),
        # V2022 8.3.1: the largest D > 400 of the event is capped once
        "one_upgrade": pl.when(d > 400)
        .then(pl.when(pl.col("__up") == 1).then(400).otherwise(d))
        .when(d < -400)
        .then(pl.when(cap_lower).then(-400).otherwise(d))
        .otherwise(d),
    }
    modes: dict[Any, list[str]] = {}
    for v in sorted(versions):
        modes.setdefault(rules[v].cap_mode, []).append(v)
    d_used = _switch_on_version(modes, by_mode.__getitem__, d)
    return (
        s.with_columns(up.alias("__up"))
        .with_columns(d_used.alias("d_used"))
        .with_columns(pd_x100_expr(pl.col("d_used")).alias("pd_x100"))
        .with_columns((pl.col("score_x100") - pl.col("pd_x100")).alias("wpd_x100"))
    )
