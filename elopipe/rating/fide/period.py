"""One rating period of the FIDE engine, step by step (FIDE B.02 7-8): the entry of the period,
which calls, in the order the data takes, `in_force` (the state at the start, Ro in force,
7.1.3, and bootstraps), `k` (K, 8.3.3), `changes` (D, PD and W - PD per game, 8.3.1,
table 8.1.2, the 700 cap and the change, 8.3.3-8.3.4), `initial` (the unrated players'
pooled games and Ru, 7.1.4, 8.2) and `close` (the close of list t: floor 7.2.1, inactivity
7.2.2, the 1 March 2024 adjustment, and an imported official list). The frames they share are
`frames`; the names the engine reads from them are importable from here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import cast as type_cast

import polars as pl

from elopipe.rating.fide import changes, close, in_force, k, ro
from elopipe.rating.fide.frames import (
    ENGINE,
    LIST_SCHEMA,
    POOL_SCHEMA,
    STATE_SCHEMA,
    Lists,
    by_player,
    empty,
    state_from_official,
)
from elopipe.rating.fide.initial import initial_ratings
from elopipe.rating.fide.params import FideParams, Prepared, version_of
from elopipe.rating.lookup import IdLookup
from elopipe.rating.periods import get_scheme

if TYPE_CHECKING:
    from elopipe.rating.fide.frames import CastSchema

__all__ = [
    "LIST_SCHEMA",
    "POOL_SCHEMA",
    "STATE_SCHEMA",
    "Lists",
    "by_player",
    "empty",
    "one_period",
    "state_from_official",
]


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
) -> tuple[pl.DataFrame, pl.DataFrame, _PeriodFrames]:
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
    new_state, lists_t = close.close_list(t, state, close.updates(upd_parts), params, list_rules)
    if off_t is not None and off_t.height:
        new_state, lists_t = close.apply_official(t, new_state, lists_t, off_t)
        lists.mark_official(t, off_t)
    # the K column of the list: each rated player's K for the next period (FIDE's lists give it
    # for every rated player, not only those who played)
    k_next = k.list_k(t, new_state, prep, params)
    lists_t = lists_t.join(k_next, on="player_id", how="left", maintain_order="left").select(list(LIST_SCHEMA))
    lists.put(t, lists_t)
    return by_player(new_state), pool, (lists_t, changes_t, tr_t, disc_t)


_TR_COLUMNS = (
    "tournament_id", "player_id", "rules_version", "ro", "ro_source", "file_rating", "n", "score_x100", "ra",
    "we_x100", "wwe_x100", "k", "change_x100", "rp", "unrated", "ru_provisional",
)  # fmt: skip


@dataclass
class _RatedGames:
    """What the rated games of one period give: rows for the store, the players' updates (joined
    into the state by `close.updates`), the games pooled by unrated players, and the state with the
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
    period_players, known = in_force.state_at_start(sides_t, state, prep)
    # K belongs to the period (read from list t - 1), so its rules are those in force on that
    # list's date, whatever the versions of the period's events
    k_rules = version_of(prev_date, params)
    k_base, with_birth = k.k_base(k_rules, prev_date, prep)
    # per-player values come by gathers (`IdLookup`), not joins: ~250k sides a FIDE month
    kv = IdLookup(
        with_birth(known).select("player_id", pl.col("rating").alias("r_cur"), "first_rated", k_base.alias("k_base"))
    )
    # Ro (list in force) and R_prev are the current rating for most sides; the others are
    # replaced below (`exc`)
    sides_r = kv.attach(sides_t, "player_id", {"ro_if": "r_cur", "r_prev": "r_cur"})
    sides_r = kv.attach(sides_r, "opponent_id", {"rc": "r_cur"})
    ev, disc_t = in_force.in_force(sides_r, kv, lists, prep, params, std_hist, fr_t)
    known, boot_rows = in_force.bootstrap(ev, known)
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
    # a pair without a source (`ro.pair_sources`) is one too: not a side's default 'computed'
    exc = ev.filter(moved | pl.col("ro_src").ne_missing(ro.src("computed")) | pl.lit(latest_ids is not None))
    for key, out in (("tp_key", "ro_if"), ("to_key", "rc")):
        x = exc if key == "tp_key" else exc.filter(moved)
        if not x.height:
            continue
        x = x.select(pl.col("tp_key").alias(key), pl.col("r_if").alias("__x"), "ro_src", pl.lit(True).alias("__in"))
        x = x if key == "tp_key" else x.drop("ro_src")
        sides_r = sides_r.join(x, on=key, how="left", maintain_order="left", suffix="__new")
        sides_r = sides_r.with_columns(pl.when(pl.col("__in")).then(pl.col("__x")).otherwise(pl.col(out)).alias(out))
        if key == "tp_key":
            new_src = pl.when(pl.col("__in")).then(pl.col("ro_src__new")).otherwise(pl.col("ro_src"))
            sides_r = sides_r.with_columns(new_src.alias("ro_src")).drop("ro_src__new")
        sides_r = sides_r.drop("__x", "__in")
    event_versions = sides_t.get_column("version").unique().to_list()
    versions = [v for v in event_versions if v is not None]
    s = changes.sides_plan(sides_r.lazy(), params, versions).collect(engine=ENGINE)
    per_event, n_per_player = changes.period_sums(s, period_players, k_of, k_rules)
    updates.append(n_per_player)
    changes_t, tr_t = changes.period_rows(s, per_event, n_per_player, event_versions, prep)
    # the state rows that changed (new players, file birth years, bootstrap) replace theirs
    changed = known.filter(pl.col("__changed")).drop("__changed")
    if changed.height:
        state = by_player(pl.concat([state.join(changed.select("player_id"), on="player_id", how="anti"), changed]))
    pooled = s.filter(pl.col("reason") == "pooled_unrated").select(list(POOL_SCHEMA))
    return _RatedGames(changes_t, tr_t, disc_t, updates, pooled, state)
