"""The FIDE rating engine in Polars: every monthly list from the games in the store.

Rules: `elopipe.rating.fide.b02` (FIDE B.02, V2017/V2022/V2024/V2024A, and the rapid/blitz
chapter).  Periods: `elopipe.rating.periods` (FIDE lists on the 1st of the month; an event
is rated on the first list whose closing date, list date − 3 days, is on or after its end
date; it uses the list in force on its start date, B.02 7.1.3 and spec §3.1).

The engine's modules, in the order the data takes: `params` (parameters, inputs, outputs, the
rules version of each event), `prepare` (the store's frames to player-sides by period), `period`
(one period, step by step: `in_force` the ratings in force and bootstraps, `k` K, `changes` D, PD
and the change, `initial` pooled games and Ru of unrated players, `close` the close of the list;
`frames` the frames they share) and this module (`run_periods`, the period loop, and
`to_contract`, the store's columns).

How one period (list t) is computed (`period.one_period`), with no per-game Python loop:

1. The player-sides of the period's games (two rows per game) are joined to the list in
   force at each tournament's start (the latest computed or imported list dated on or
   before the start; every computed list holds every rated player).  A player with no
   rating in the store before a tournament takes the rating written in the file (TRF
   rating column, PGN WhiteElo/BlackElo) as their rating on that list ("bootstrap"); a
   player whose history is unknown counts as having ≥ 30 games.
   Disagreements between a file's rating and the store's list are recorded, and each Ro
   records where it came from (official list, computed list, file: `elopipe.rating.fide.ro`,
   which also holds the 'file' policy, `FideParams.ro_from`).
   Per-player values reach the sides by gathers through a dense player-id array
   (`elopipe.rating.lookup.IdLookup`) rather than hash joins; only the (event, player)
   pairs whose list in force is not the latest one, or who are unrated, are looked up in
   the older lists and the files (the others are rated on the current list).
2. D = Ro − Rc, the version's 400-point rule (8.3.1), PD by a gather into table 8.1.2,
   W − PD in hundredths.
3. K from the state at the start of the period (list t − 1): ever ≥ 2400 → 10; junior and
   never ≥ 2300 → 40; < 30 games → 40; else 20 (8.3.3, order of spec §4.2); then
   K = floor(700/n) when K × n > 700.
4. Change = K × Σ(W − PD), rounded once per period, halves away from zero (8.3.4).
   The per-tournament unrounded K × (W − We) is kept (``tournament_ratings.change_x100``).
5. Unrated players pool their games against rated opponents over ≤ 26 months (7.1.4);
   a zero first event is disregarded (8.2.1); Ru is published at ≥ 5 games and ≥ the floor.
6. A rating below the floor makes the player unrated (7.2.1); the 1 Mar 2024 list applies
   the one-off adjustment R + 0.4 × (2000 − R) to every rating below 2000 after the
   period's change (FIDE B.02 (2024), transitional rule of 1 March 2024); inactive = no
   rated game in the last 12 months (7.2.2, flag 'i').

List flags (``rating_lists.flags``, comma-separated): 'i' inactive; 'new' first rating
published; 'pool' unrated with pooled games; 'delisted' fell below the floor;
'adj2024:+N' the 1 March 2024 adjustment added N rating points.  ``change`` is always the
K-based change of the period, so rating = previous rating + change (+ N on 1 March 2024,
or Ru for 'new').
7. An imported official list for t (``official_lists``) overrides the computed ratings of
   the players it lists (it is what FIDE published).

Output frames (`EngineResult`) follow the store contract of `elopipe.store.schema`:
``rating_lists``, ``rating_changes``, ``tournament_ratings``, ``rating_discrepancies``.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING
from typing import cast as type_cast

import polars as pl

from elopipe.rating.fide.checkpoint import Recorder, Resume
from elopipe.rating.fide.params import EngineResult, FideParams, Prepared
from elopipe.rating.fide.period import (
    LIST_SCHEMA,
    POOL_SCHEMA,
    STATE_SCHEMA,
    Lists,
    by_player,
    empty,
    one_period,
    state_from_official,
)
from elopipe.rating.fide.ro import RO_SOURCE

if TYPE_CHECKING:
    from elopipe.rating.fide.frames import CastSchema, Schema


def run_periods(
    prep: Prepared,
    params: FideParams,
    through: dt.date | None = None,
    *,
    resume: Resume | None = None,
    recorder: Recorder | None = None,
) -> EngineResult:
    """Compute every list of `prep.list_dates` (up to `through`) in order.

    Python iterates over periods only; each period is a handful of Polars joins and
    group-bys over its player-sides, and one join into the full list of players.
    `resume`: start from a kept checkpoint (`checkpoint.Resume`: `prep.list_dates` then begin
    with its `start`) rather than from an empty state; `recorder`: collects what each period
    carries to the next (`checkpoint.Recorder`).
    """
    list_dates = [d for d in prep.list_dates if through is None or d <= through]
    sides_all = prep.sides
    official = prep.official
    state = empty(STATE_SCHEMA)
    lists = Lists()
    pool = empty(POOL_SCHEMA)
    prev_list: dt.date | None = None
    if resume is not None:
        state, pool, lists, prev_list = resume.state, resume.pool, resume.lists, resume.prev_list
        if recorder is not None:
            recorder.begin(state)
    elif list_dates and official.height:
        first = list_dates[0]
        all_dates = official.get_column("list_date").unique().to_list()
        dates = sorted(d for d in all_dates if d < first)

        def on(d: dt.date) -> pl.DataFrame:
            # a single imported list (the usual base) is used as it is, without a copy
            return official if len(all_dates) == 1 else official.filter(pl.col("list_date") == d)

        for d in dates:
            lists.put(d, on(d))
            lists.mark_official(d, on(d))
        if dates:
            state = by_player(state_from_official(state, on(dates[-1])))
    std_hist = None
    if prep.standard_lists is not None and prep.standard_lists.height:
        std_hist = prep.standard_lists.select("player_id", "list_date", "rating")

    out_lists: list[pl.DataFrame] = []
    out_changes: list[pl.DataFrame] = []
    out_tr: list[pl.DataFrame] = []
    out_disc: list[pl.DataFrame] = []
    periods = sides_all.get_column("list_date").unique().to_list()
    if len(periods) == 1:
        # one period (a month rated on its own): the frame itself, without a copy
        sides_by_period = {periods[0]: sides_all}
    else:
        sides_by_period = {k[0]: v for k, v in sides_all.partition_by("list_date", as_dict=True).items()}
    off_dates = set(official.get_column("list_date").unique().to_list()) if official.height else set()
    off_by_date = {
        d: official if len(off_dates) == 1 else official.filter(pl.col("list_date") == d)
        for d in list_dates
        if d in off_dates
    }
    for t in list_dates:
        pool_before, boots_before = pool.height, lists.boots.height
        state, pool, frames = one_period(
            t,
            prev_list,
            sides_by_period.get(t),
            state,
            lists,
            pool,
            prep,
            params,
            off_by_date.get(t),
            std_hist,
        )
        lists_t, changes_t, tr_t, disc_t = frames
        out_lists.append(lists_t)
        for out, f in ((out_changes, changes_t), (out_tr, tr_t), (out_disc, disc_t)):
            if f is not None:
                out.append(f)
        if recorder is not None:
            recorder.period(t, state, pool.slice(pool_before), lists.boots.slice(boots_before))
        prev_list = t
    if recorder is not None:
        recorder.after(state, pool, lists)

    return EngineResult(
        rating_lists=_concat(out_lists, LIST_SCHEMA),
        rating_changes=_concat(out_changes, CHANGE_SCHEMA),
        tournament_ratings=_concat(out_tr, TR_SCHEMA),
        rating_discrepancies=_concat(out_disc, DISC_SCHEMA),
        skips=prep.skips,
        list_dates=list_dates,
    )


CHANGE_SCHEMA: Schema = {
    "list_date": pl.Date,
    "tournament_id": pl.Int64,
    "game_id": pl.Int64,
    "player_id": pl.Int64,
    "opponent_id": pl.Int64,
    "ro": pl.Int64,
    "ro_source": RO_SOURCE,
    "rc": pl.Int64,
    "d_raw": pl.Int64,
    "d_used": pl.Int64,
    "pd_x100": pl.Int64,
    "score_x100": pl.Int64,
    "wpd_x100": pl.Int64,
    "k": pl.Int64,
    "counted": pl.Boolean,
    "reason": pl.Utf8,
    "tc_assumed": pl.Boolean,
}


TR_SCHEMA: Schema = {
    "list_date": pl.Date,
    "tournament_id": pl.Int64,
    "player_id": pl.Int64,
    "rules_version": pl.Utf8,
    "ro": pl.Int64,
    "ro_source": RO_SOURCE,
    "file_rating": pl.Int64,
    "n": pl.Int64,
    "score_x100": pl.Int64,
    "ra": pl.Int64,
    "we_x100": pl.Int64,
    "wwe_x100": pl.Int64,
    "k": pl.Int64,
    "change_x100": pl.Int64,
    "rp": pl.Int64,
    "unrated": pl.Boolean,
    "ru_provisional": pl.Int64,
}


DISC_SCHEMA: Schema = {
    "list_date": pl.Date,
    "tournament_id": pl.Int64,
    "player_id": pl.Int64,
    "file_rating": pl.Int64,
    "list_rating": pl.Int64,
    "file_id": pl.Int64,
}


def _concat(frames: list[pl.DataFrame], schema: Schema) -> pl.DataFrame:
    frames = [f for f in frames if f.height]
    if not frames:
        return pl.DataFrame(schema=schema)
    return pl.concat([f.select(list(schema)).cast(type_cast("CastSchema", schema)) for f in frames])


def _x100_to_decimal(expr: pl.Expr, precision: int, scale: int) -> pl.Expr:
    """Integer hundredths → Decimal(precision, scale), exactly (decimal × 0.01, no float)."""
    cent = pl.lit("0.01").cast(pl.Decimal(4, 2))
    return (expr.cast(pl.Decimal(18, 2)) * cent).cast(pl.Decimal(precision, scale))


def to_contract(result: EngineResult) -> EngineResult:
    """The engine's frames with the store's decimal columns.

    The engine keeps PD, W − PD, scores and sums in integer hundredths (``*_x100``); the
    store contract has ``pd``, ``score``, ``w_minus_pd`` (rating_changes) and ``score``,
    ``we``, ``w_we`` (tournament_ratings) as DECIMAL.  Converted exactly (no float).
    A game's values fit 4 digits; the per-tournament sums take 18 (`elopipe.store.schema`: a
    file's longest event has millions of rounds, 1,001 already overflow 5 digits).
    """
    ch = result.rating_changes
    ch = ch.with_columns(
        pl.col("ro_source").cast(pl.Utf8),
        _x100_to_decimal(pl.col("pd_x100"), 4, 2).alias("pd"),
        _x100_to_decimal(pl.col("score_x100"), 4, 2).cast(pl.Decimal(2, 1)).alias("score"),
        _x100_to_decimal(pl.col("wpd_x100"), 4, 2).alias("w_minus_pd"),
    ).drop("pd_x100", "score_x100", "wpd_x100")
    tr = result.tournament_ratings
    tr = tr.with_columns(
        pl.col("ro_source").cast(pl.Utf8),
        _x100_to_decimal(pl.col("score_x100"), 18, 2).cast(pl.Decimal(18, 1)).alias("score"),
        _x100_to_decimal(pl.col("we_x100"), 18, 2).alias("we"),
        _x100_to_decimal(pl.col("wwe_x100"), 18, 2).alias("w_we"),
    ).drop("score_x100", "we_x100", "wwe_x100")
    return EngineResult(
        rating_lists=result.rating_lists,
        rating_changes=ch,
        tournament_ratings=tr,
        rating_discrepancies=result.rating_discrepancies,
        skips=result.skips,
        list_dates=result.list_dates,
    )
