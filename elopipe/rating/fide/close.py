"""The close of list t of a FIDE rating period: the period's updates joined into the state, a
first rating (Ru) or R + change, the one-off adjustment of 1 March 2024 (FIDE B.02 (2024),
transitional rule), delisting below the floor (B.02 7.2.1), inactivity (7.2.2, flag 'i'), the
list's rows and flags, and an imported official list that wins for its players.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING
from typing import cast as type_cast

import polars as pl

from elopipe.rating.fide import b02
from elopipe.rating.fide.frames import ENGINE, LIST_SCHEMA, STATE_SCHEMA, by_player, empty, state_from_official
from elopipe.rating.fide.params import FideParams
from elopipe.rating.periods import add_months
from elopipe.rating.rounding import div_round_expr

if TYPE_CHECKING:
    from elopipe.rating.fide.frames import CastSchema, Schema


# a list's rows as the close gives them: `LIST_SCHEMA` but the K of the next period, which the
# period adds once an imported official list has had its say (`k.list_k`)
CLOSED_COLUMNS = [c for c in LIST_SCHEMA if c != "k_next"]


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


def updates(parts: list[pl.DataFrame]) -> pl.DataFrame:
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


def close_list(
    t: dt.date, state: pl.DataFrame, upd: pl.DataFrame, params: FideParams, list_rules: b02.RuleSet
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The new state and list `t`: one join of the period's updates into the state. The new
    rating is Ru for a first rating, else R + change; on 1 March 2024 the one-off adjustment;
    below the floor the player is delisted (7.2.1); flags per `_list_plan`.

    Returns (state in `STATE_SCHEMA`, list rows in `CLOSED_COLUMNS` order)."""
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
        # see `k_base` for the reading of B.02 8.3.3
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
    st = st.collect(engine=ENGINE).lazy()  # shared by the state and the list below
    new_state, lists_t = pl.collect_all(
        [st.select([pl.col(c).cast(d) for c, d in STATE_SCHEMA.items()]), _list_plan(t, st, compressed)],
        engine=ENGINE,
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


def apply_official(
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
        .select(CLOSED_COLUMNS)
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
