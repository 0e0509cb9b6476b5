"""Run the generic K-factor Elo ('elo', seed 001) and Glicko-2 ('glicko2') over the store.

Rules: `elopipe.rating.generic.elo` and `elopipe.rating.generic.glicko`. This module feeds them the game rows
of `elopipe.rating.game_rows` and writes the store contract (`result_tables.write_results`):

* ``rating_lists``: at every list with games, every player known so far (games = 0 when
  idle). 'elo': ``rating_exact`` (one decimal, the value the system keeps) and ``rating``
  (rounded half up to an integer), ``k``, ``change`` (rounded) and ``change_exact`` (one
  decimal: the published lists show the decimals, `elopipe.publish.lists.published`). 'glicko2': ``rating``,
  ``rating_exact``, ``rd``, ``volatility``.
* ``rating_changes``: one row per player and game: ro / rc (ratings in force, rounded), pd
  (expected score, 2 decimals; 'elo' only), score, w_minus_pd, k; games that cannot count
  keep their row with counted = FALSE and the reason ('forfeit', 'no_result', 'no_player').
* ``tournament_ratings``: per event and player: n, score, Ra, Ro, We, W - We, K.
* ``rating_skips``: events out of scope (variant, rate of play, no dates).

Starting values: the FIDE rating written in the player's first file (source 'bootstrap'),
else the national rating written there, else the system default (1500; flags 'new'). The
first file is the player's first entry in time, whether or not it gives a rating: a rating
written in a later file never starts a player on an earlier list (no look-ahead). Of two
entries on that first day, the higher rating: what the files say decides, not the order
they were stored in.

Periods: 'elo' — ``period`` = 'month' (default), 'tournament' (one period per event end
date) or 'game' (each game at once, by day, round, then the game's file and place in it, never
the ingestion order; lists are daily);
'glicko2' — monthly (Glickman: "a rating period ... such as a month").
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypedDict

import duckdb
import polars as pl

from elopipe.rating import full_run, scenarios, store_io
from elopipe.rating.game_rows import SCOPE_REASONS, load_game_rows
from elopipe.rating.generic.elo import KSchedule, expected_score, round_one_decimal
from elopipe.rating.generic.glicko import GlickoParams, rate_periods
from elopipe.rating.periods import get_scheme
from elopipe.rating.rounding import round_decimal
from elopipe.rating.summary import RateSummary

ELO_PERIODS = ("month", "tournament", "game")


def _two_decimals(x: float) -> Decimal:
    return Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


class _RowOptions(TypedDict):
    """The `load_game_rows` options every period of `_rows` shares."""

    rate_class: str | None
    unknown_tc: str
    no_moves: str
    skip_online: bool


def _rows(
    con: duckdb.DuckDBPyConnection, period: str, rate_class: str | None, unknown_tc: str, no_moves: str
) -> pl.DataFrame:
    common: _RowOptions = {
        "rate_class": rate_class,
        "unknown_tc": unknown_tc,
        "no_moves": no_moves,
        "skip_online": False,
    }
    if period == "month":
        return load_game_rows(con, scheme=get_scheme("monthly"), **common)
    if period == "tournament":
        return load_game_rows(con, scheme=None, by_event_end=True, **common)
    if period == "game":
        # daily lists: a game dated D is on the list of D + 1 (scheme None does exactly that)
        return load_game_rows(con, scheme=None, **common)
    raise ValueError(f"period {period!r}: expected one of {ELO_PERIODS}")


def _starting_values(rows: pl.DataFrame) -> dict[int, tuple[int, str]]:
    """player -> (rating, 'bootstrap') from the player's first entry in time (eff_date): its FIDE
    rating, else its national rating (not an estimate, flag 'E'). Of several entries on that
    day (two events, or two sources of one), the highest such rating: the choice depends on what
    the files say only, never on which was stored first (tournament ids follow the ingestion
    order, and lists must not).

    A player whose first entry gives no rating is absent (the caller starts them at the default,
    flag 'new'): a rating written in a later file is never taken back to an earlier list, so
    ingesting a later file cannot rewrite the lists before it (no look-ahead)."""
    r = rows.with_columns(
        pl.coalesce(
            "rating_in_file",
            pl.when(pl.col("national_rating_flag").fill_null("") != "E").then(pl.col("national_rating")),
        ).alias("__start")
    )
    first = (
        r.sort("eff_date", "__start", descending=[False, True], nulls_last=True)
        .group_by("player_id", maintain_order=True)
        .first()
        .filter(pl.col("__start").is_not_null())
    )
    return {pid: (int(v), "bootstrap") for pid, v in first.select("player_id", "__start").iter_rows()}


#: the order games are played in with period 'game': the day, the round, then the game's file (its
#: sha256), line and board, which fix the order of two games of one day without the game ids:
#: those follow the ingestion order, and lists must not (the same files in another order gave
#: other lists when a player's two games of one day came from two files)
_GAME_ORDER = ["eff_date", "__round", "__file", "line", "__board", "game_id"]


def _with_game_order(con: duckdb.DuckDBPyConnection, rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` (`load_game_rows`) with the keys of `_GAME_ORDER` read from the store: __round,
    __board Int64 (null when not written), __file Utf8 (``source_files.sha256``)."""
    keys = store_io.query(
        con,
        "SELECT g.game_id, g.round::BIGINT AS __round, g.board::BIGINT AS __board, f.sha256 AS __file "
        "FROM games g JOIN source_files f USING (file_id)",
    )
    return rows.join(keys, on="game_id", how="left")


def _not_counted(rows: pl.DataFrame) -> pl.DataFrame:
    return rows.filter(
        pl.col("reason").is_not_null() & ~pl.col("reason").is_in(list(SCOPE_REASONS))
    ).select(
        "list_date", "tournament_id", "game_id", "player_id", "opponent_id", "score",
        pl.lit(False).alias("counted"), "reason", "tc_assumed",
    )  # fmt: skip


# ---- generic Elo -----------------------------------------------------------------------


def run_elo(
    con: duckdb.DuckDBPyConnection,
    *,
    k: KSchedule | int = 20,
    period: str = "month",
    default_rating: float = 1500.0,
    rate_class: str | None = "standard",
    unknown_tc: str = "standard",
    no_moves: str = "played",
    through: dt.date | None = None,
    write: bool = True,
    exclude: Mapping[int, str] | None = None,
    store_as: str = "elo",
) -> tuple[RateSummary, dict[str, pl.DataFrame]]:
    """Generic K-factor Elo (seed 001) over the store; see the module docstring.

    In 'month' and 'tournament' periods every game of the period uses the ratings at its
    start; in 'game' periods ratings move after every game. Ratings are Decimal with one
    decimal; the change of a period is rounded to 0.1, halves away from zero.
    `exclude`: tournaments left out, {tournament_id: reason} (`elopipe.rating.faults`).
    `through`: last list (the stored lists after it are kept, a preview). `store_as`: the system
    key written ('elo', or a scenario 'elo@x', `elopipe.rating.scenarios`).
    """
    schedule = k if isinstance(k, KSchedule) else KSchedule(default=int(k))
    summary = RateSummary(store_as)
    rows, skips = full_run.leave_out(_rows(con, period, rate_class, unknown_tc, no_moves), summary, exclude, through)
    ratable = rows.filter(pl.col("reason").is_null())
    starts = _starting_values(rows)
    rating: dict[int, Decimal] = {}
    source: dict[int, str] = {}
    total: dict[int, int] = {}
    list_rows: list[dict[str, Any]] = []
    change_rows: list[dict[str, Any]] = []

    def current(pid: int) -> Decimal:
        if pid not in rating:
            v, src = starts.get(pid, (default_rating, "new"))
            rating[pid] = Decimal(str(v)).quantize(Decimal("0.1"))
            source[pid] = src
            total[pid] = 0
        return rating[pid]

    list_dates = sorted(ratable.get_column("list_date").unique().to_list())
    order = _GAME_ORDER if period == "game" else ["eff_date", "game_id"]
    if period == "game":
        ratable = _with_game_order(con, ratable)
    by_list = ratable.partition_by("list_date", as_dict=True)
    for ld in list_dates:
        part = by_list[(ld,)].sort(*order, "colour", nulls_last=True, descending=[False] * len(order) + [True])
        # one "batch" per period; in 'game' mode one batch per game, in game order
        batches = part.partition_by("game_id", maintain_order=True) if period == "game" else [part]
        played: dict[int, list[Any]] = {}
        for batch in batches:
            start = {
                pid: current(pid) for pid in set(batch["player_id"].to_list()) | set(batch["opponent_id"].to_list())
            }
            ks = {pid: schedule.k_for(start[pid], total[pid]) for pid in batch["player_id"]}
            acc: dict[int, list[float]] = {}
            for gid, tid, pid, oid, sc, tca in batch.select(
                "game_id", "tournament_id", "player_id", "opponent_id", "score", "tc_assumed"
            ).iter_rows():
                e = expected_score(start[pid], start[oid])
                acc.setdefault(pid, []).append(sc - e)
                change_rows.append(
                    {
                        "list_date": ld, "tournament_id": tid, "game_id": gid, "player_id": pid,
                        "opponent_id": oid, "ro": round_decimal(start[pid]),
                        "rc": round_decimal(start[oid]),
                        "d_raw": round_decimal(start[pid]) - round_decimal(start[oid]),
                        "pd": float(_two_decimals(e)), "score": sc,
                        "w_minus_pd": float(_two_decimals(sc - e)),
                        "k": ks[pid], "counted": True, "reason": None, "tc_assumed": tca,
                    }
                )  # fmt: skip
            for pid, diffs in acc.items():
                ch = round_one_decimal(ks[pid] * math.fsum(diffs))
                rating[pid] = start[pid] + ch
                total[pid] += len(diffs)
                p = played.setdefault(pid, [0, Decimal(0), ks[pid]])
                p[0] += len(diffs)
                p[1] += ch
        for pid in sorted(rating):
            n, ch, kk = played.get(pid, [0, None, None])
            list_rows.append(
                {
                    "list_date": ld, "player_id": pid, "rating": round_decimal(rating[pid]),
                    "rating_exact": float(rating[pid]), "games": n, "total_games": total[pid],
                    "k": kk, "change": round_decimal(ch) if ch is not None else None,
                    "change_exact": float(ch) if ch is not None else None,
                    "flags": "new" if source[pid] == "new" else None,
                    "source": "computed",
                }
            )  # fmt: skip
    changes = pl.concat(
        [
            pl.DataFrame(change_rows, infer_schema_length=None) if change_rows else pl.DataFrame(),
            _not_counted(rows),
        ],
        how="diagonal_relaxed",
    )
    lists = pl.DataFrame(list_rows, infer_schema_length=None) if list_rows else pl.DataFrame()
    frames = {
        "rating_lists": lists,
        "rating_changes": changes,
        "tournament_ratings": _event_rows(changes),
    }
    full_run.count(con, summary, frames, list_dates)
    if write:
        params = {"k": str(schedule), "period": period, "default_rating": default_rating,
                  "rate_class": rate_class, "unknown_tc": unknown_tc, "no_moves": no_moves}  # fmt: skip
        full_run.write(con, summary, frames, skips, params, through)
    return summary, frames


def _event_rows(changes: pl.DataFrame) -> pl.DataFrame:
    if changes.height == 0:
        return pl.DataFrame()
    c = changes.filter(pl.col("counted"))
    if c.height == 0:  # every game of the store left uncounted (forfeits, a --no-moves policy)
        return pl.DataFrame()
    has_pd = "pd" in c.columns
    aggs = [
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("score").sum().alias("score"),
        pl.col("ro").first().alias("ro"),
        ((pl.col("rc").sum() / pl.len()) + 0.5).floor().cast(pl.Int64).alias("ra"),
        pl.col("k").first().alias("k") if "k" in c.columns else pl.lit(None).alias("k"),
    ]
    if has_pd:
        aggs.append(pl.col("pd").cast(pl.Float64).sum().alias("we"))
    agg = c.group_by("list_date", "tournament_id", "player_id").agg(aggs)
    if has_pd:
        agg = agg.with_columns((pl.col("score") - pl.col("we")).alias("w_we"))
    return agg.sort("list_date", "tournament_id", "player_id")


# ---- Glicko-2 --------------------------------------------------------------------------


def _months_between(a: dt.date, b: dt.date) -> int:
    return (b.year - a.year) * 12 + (b.month - a.month)


def run_glicko2(
    con: duckdb.DuckDBPyConnection,
    params: GlickoParams = GlickoParams(),
    *,
    rate_class: str | None = "standard",
    unknown_tc: str = "standard",
    no_moves: str = "played",
    through: dt.date | None = None,
    write: bool = True,
    exclude: Mapping[int, str] | None = None,
    store_as: str = "glicko2",
) -> tuple[RateSummary, dict[str, pl.DataFrame]]:
    """Glicko-2 over monthly periods (see `elopipe.rating.generic.glicko`); lists are written for the
    months that have games, and an idle player's RD grows once per elapsed month.
    `exclude`: tournaments left out, {tournament_id: reason} (`elopipe.rating.faults`).
    `through`: last list (the stored lists after it are kept, a preview). `store_as`: the system
    key written ('glicko2', or a scenario 'glicko2@x', `elopipe.rating.scenarios`)."""
    rows = load_game_rows(
        con, scheme=get_scheme(params.period_scheme), rate_class=rate_class,
        unknown_tc=unknown_tc, no_moves=no_moves, skip_online=False,
    )  # fmt: skip
    summary = RateSummary(store_as)
    rows, skips = full_run.leave_out(rows, summary, exclude, through)
    ratable = rows.filter(pl.col("reason").is_null())
    starts = _starting_values(rows) if params.use_file_rating else {}
    start = pl.DataFrame(
        {
            "player_id": list(starts),
            "rating": [float(v) for v, _ in starts.values()],
            "rd": [params.file_rating_rd] * len(starts),
            "volatility": [params.initial_volatility] * len(starts),
        },
        schema={"player_id": pl.Int64, "rating": pl.Float64, "rd": pl.Float64,
                "volatility": pl.Float64},
    )  # fmt: skip
    list_dates = sorted(ratable.get_column("list_date").unique().to_list())
    # no list at all (no ratable game): no step either
    steps = [1] * bool(list_dates) + [_months_between(a, b) for a, b in zip(list_dates, list_dates[1:], strict=False)]
    res = rate_periods(
        ratable.select("list_date", "player_id", "opponent_id", "score"),
        start,
        list_dates,
        params,
        steps,
    )
    # ratings in force (start of each period) for the explanation rows
    prev = res.select(
        pl.col("player_id"),
        pl.col("list_date"),
        pl.col("r_old"),
    )
    ro = prev.select("list_date", "player_id", pl.col("r_old").alias("__ro"))
    rc = prev.select("list_date", pl.col("player_id").alias("opponent_id"), pl.col("r_old").alias("__rc"))
    counted = (
        ratable.join(ro, on=["list_date", "player_id"], how="left")
        .join(rc, on=["list_date", "opponent_id"], how="left")
        .select(
            "list_date",
            "tournament_id",
            "game_id",
            "player_id",
            "opponent_id",
            (pl.col("__ro") + 0.5).floor().cast(pl.Int64).alias("ro"),
            (pl.col("__rc") + 0.5).floor().cast(pl.Int64).alias("rc"),
            "score",
            pl.lit(True).alias("counted"),
            pl.lit(None, pl.Utf8).alias("reason"),
            "tc_assumed",
        )  # fmt: skip
        .with_columns((pl.col("ro") - pl.col("rc")).alias("d_raw"))
    )
    changes = pl.concat([counted, _not_counted(rows)], how="diagonal_relaxed")
    lists = res.select(
        "list_date",
        "player_id",
        (pl.col("rating") + 0.5).floor().cast(pl.Int64).alias("rating"),
        ((pl.col("rating") * 10 + 0.5).floor() / 10).alias("rating_exact"),
        "rd",
        "volatility",
        "games",
        "total_games",
        ((pl.col("rating") + 0.5).floor() - (pl.col("r_old") + 0.5).floor()).cast(pl.Int64).alias("change"),
        pl.lit("computed").alias("source"),
    )
    frames = {
        "rating_lists": lists,
        "rating_changes": changes,
        "tournament_ratings": _event_rows(changes),
    }
    full_run.count(con, summary, frames, list_dates)
    if write:
        full_run.write(con, summary, frames, skips,
                       {**params.as_params(), "rate_class": rate_class, "unknown_tc": unknown_tc, "no_moves": no_moves},
                       through)  # fmt: skip
    return summary, frames


# ---- entry points of the registry (elopipe.rating.systems) ----------------------------


_ELO_KEYS = ("default_rating", "k", "no_moves", "period", "rate_class", "unknown_tc")


def param_keys(system: str) -> list[str]:
    """The engine options of `rate_elo` ('elo') or `rate_glicko2` ('glicko2'), sorted."""
    if scenarios.split_system(system)[0] == "glicko2":
        return sorted(
            (set(GlickoParams.__dataclass_fields__) - {"period_scheme"}) | {"rate_class", "unknown_tc", "no_moves"}
        )
    return list(_ELO_KEYS)


def _check(system: str, params: dict[str, Any]) -> None:
    known = param_keys(system)
    if unknown := sorted(set(params) - set(known)):
        base = scenarios.split_system(system)[0]
        raise ValueError(f"unknown {base} parameter {', '.join(unknown)}; known: {', '.join(known)}")


def rate_elo(
    con: duckdb.DuckDBPyConnection,
    *,
    system: str = "elo",
    through: dt.date | None = None,
    rules: str | None = None,
    **params: Any,
) -> RateSummary:
    """Registry entry for 'elo'. Options: k (int or schedule text, e.g.
    '20,games<30:40,rating>=2400:10'), period ('month' | 'tournament' | 'game'),
    default_rating, rate_class ('standard' | 'rapid' | 'blitz' | 'any'), unknown_tc, no_moves.
    `rules` is not used by this system (must be None). Raises ValueError otherwise."""
    if rules is not None:
        raise ValueError("elo: --rules does not apply (use k / period options)")
    _check(system, params)
    opts = {k: v for k, v in params.items() if v is not None}
    k = opts.pop("k", 20)
    if isinstance(k, str):
        k = KSchedule.parse(k)
    if opts.get("rate_class") == "any":
        opts["rate_class"] = None
    if "period" in opts and opts["period"] not in ELO_PERIODS:
        raise ValueError(f"elo: period must be one of {ELO_PERIODS}")
    return full_run.rate(
        con,
        system,
        lambda exclude, write: run_elo(
            con, k=k, through=through, write=write, exclude=exclude, store_as=system, **opts
        ),
    )


def rate_glicko2(
    con: duckdb.DuckDBPyConnection,
    *,
    system: str = "glicko2",
    through: dt.date | None = None,
    rules: str | None = None,
    **params: Any,
) -> RateSummary:
    """Registry entry for 'glicko2'. Options: the fields of `GlickoParams` (tau, initial_rd,
    initial_volatility, rd_max, use_file_rating, file_rating_rd, initial_rating), rate_class,
    unknown_tc, no_moves. Raises ValueError for an unknown option or a `rules` value."""
    if rules is not None:
        raise ValueError("glicko2: --rules does not apply")
    fields = set(GlickoParams.__dataclass_fields__) - {"period_scheme"}
    _check(system, params)
    opts = {k: v for k, v in params.items() if v is not None}
    gp = GlickoParams(**{k: v for k, v in opts.items() if k in fields})
    rest = {k: v for k, v in opts.items() if k not in fields}
    if rest.get("rate_class") == "any":
        rest["rate_class"] = None
    return full_run.rate(
        con,
        system,
        lambda exclude, write: run_glicko2(
            con, gp, through=through, write=write, exclude=exclude, store_as=system, **rest
        ),
    )
