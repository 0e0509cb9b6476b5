"""Run the FFE engines ('ffe' classic, 'ffe-rapid' E02) over the store, period by period.

Rules: `elopipe.rating.ffe.classic` (spec ffe-rating-rules.md Part A) and `elopipe.rating.ffe.rapid`
(Part B.2). This module only feeds them and writes the store contract
(`elopipe.rating.result_tables.write_results`), keyed by ``system``:

* ``rating_lists``: at every list with games, every player rated so far (a full list:
  carried-forward ratings have games = 0), plus players holding an archive (rating NULL,
  flags 'archived'). ``flags`` 'N' = national value computed here; 'new' = first rating.
* ``ffe_details``: per player and period: r_old (rating in force) and where it came from
  (``r_source``: 'F' FIDE rating in the file, 'N' national list of this run, 'N-file'
  national rating written in the file, 'standard' the standard rating credited by E02;
  'below_floor' for an unrated player whose file gives a value under the floor, spec A.4),
  n_compatible, n_incompatible, X, p, Z, P, young, category, method, r_new, the archive, and for
  an unrated player the passes of the A.6 loop and ``cycled`` (the loop cycled between sets:
  the spec's gap, `elopipe.rating.ffe.classic.performance_loop`).
* ``rating_changes``: one row per player and game of the period, counted = TRUE for
  compatible games; otherwise ``reason`` = 'incompatible' (spec A.3), 'unrated_opponent'
  (spec A.2, policy 'ignore'), 'forfeit', 'no_result' or 'no_player'. ro / rc / d_raw give the
  ratings in force, so ``SELECT * FROM rating_changes WHERE system = 'ffe' AND NOT counted``
  explains every game that did not count.
* ``tournament_ratings``: per event and player: n compatible games, score, Ra (mean of the
  compatible opponents, rounded half up), Ro.
* ``rating_skips``: events out of scope (variant, rate of play, no dates, online, in progress, and
  'before_rating_from': events before the national rating began, `elopipe.rating.ffe.params`).

Ratings in force at a period's start (spec A.2): FIDE (the player's FIDE rating written in
the file of their first event of the period, when `fide_priority`), else the national value
of this run's previous list, else the national rating written in the file (TRF-26 NRS; flag
'E' is never a rating). A file's value under the floor (1000; 800 rapid) is never a rating
either (spec A.4: no published rating falls below the floor). For the rapid list, else the
standard rating (E02), taken from the latest 'ffe' list of the store, else the latest 'fide' list.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from elopipe.rating import full_run, scenarios, store_io
from elopipe.rating.ffe.ages import category_expr, season_year, young_expr
from elopipe.rating.ffe.classic import rate_period
from elopipe.rating.ffe.params import CLASSIC, FfeRules
from elopipe.rating.ffe.performance import dp_table_frame
from elopipe.rating.ffe.rapid import RAPID
from elopipe.rating.game_rows import SCOPE_REASONS, load_game_rows, refuse_before
from elopipe.rating.periods import get_scheme
from elopipe.rating.summary import RateSummary

if TYPE_CHECKING:
    from polars.expr.whenthen import ChainedThen, Then


def _first_per_player(p: pl.DataFrame, col: str, where: pl.Expr | None = None) -> pl.DataFrame:
    q = p.filter(pl.col(col).is_not_null())
    if where is not None:
        q = q.filter(where)
    return (
        q.sort("event_start", "tournament_id", nulls_last=True)
        .group_by("player_id", maintain_order=True)
        .first()
        .select("player_id", col)
    )


def _standard_lists(con: duckdb.DuckDBPyConnection, system: str) -> pl.DataFrame:
    """Standard ratings to credit in rapid (E02): the store's 'ffe' lists, else 'fide'; for a
    scenario of `system`, those of the same scenario ('ffe@x', else 'fide@x')."""
    for standard in ("ffe", "fide"):
        lists = store_io.load_lists(con, scenarios.companion(system, standard))
        lists = lists.filter(pl.col("rating").is_not_null())
        if lists.height:
            return lists.select(
                pl.col("list_date").cast(pl.Date),
                pl.col("player_id").cast(pl.Int64),
                pl.col("rating").cast(pl.Int64).alias("standard"),
            ).sort("list_date")
    return pl.DataFrame(schema={"list_date": pl.Date, "player_id": pl.Int64, "standard": pl.Int64})


def run_ffe(
    con: duckdb.DuckDBPyConnection,
    rules: FfeRules = CLASSIC,
    *,
    unknown_tc: str | None = None,
    fide_priority: bool = True,
    by_event_end: bool = False,
    no_moves: str = "played",
    through: dt.date | None = None,
    write: bool = True,
    exclude: Mapping[int, str] | None = None,
    store_as: str | None = None,
) -> tuple[RateSummary, dict[str, pl.DataFrame]]:
    """Rate every period of the store with `rules` and write the results (when `write`).

    `unknown_tc`: rate class assumed for a game whose time control is unknown ('standard'
    for 'ffe', 'standard' — i.e. not rapid, so excluded — for 'ffe-rapid'; pass 'rapid' to
    include them). `no_moves`: the policy for the games of a results export
    (`store_io.load_games`). `through`: last list to compute (None = all; the stored lists after
    it are kept, a preview). `store_as`: the system key written (default ``rules.system``; a
    scenario 'ffe@x', `elopipe.rating.scenarios`). Returns the summary and
    the frames written. Needs a writer connection when `write`. `exclude`: tournaments left
    out, {tournament_id: reason} (recorded in ``rating_skips``; see `elopipe.rating.faults`).
    """
    scheme = get_scheme(rules.period_scheme)
    rows = load_game_rows(
        con,
        scheme=scheme,
        rate_class=rules.rate_class,
        unknown_tc=unknown_tc or "standard",
        by_event_end=by_event_end,
        no_moves=no_moves,
    )
    rows = refuse_before(rows, rules.rating_from)
    summary = RateSummary(store_as or rules.system)
    rows, skips = full_run.leave_out(rows, summary, exclude)
    # events out of scope (online, in progress, before the national rating ...) open no period
    in_scope = rows.filter(~pl.col("reason").is_in(list(SCOPE_REASONS)).fill_null(False))
    std = _standard_lists(con, summary.system) if rules.credit_standard else None
    exact = rules.z_mode == "table" and rules.unrated_opponents == "ignore"
    num_dtype = pl.Int64 if exact else pl.Float64
    dp = dp_table_frame() if rules.z_mode == "table" else None

    national: dict[int, int] = {}  # computed national ratings of this run
    archives: dict[int, tuple[Any, int, int]] = {}  # player -> (pn, n, last usable season)
    out_lists, out_details, out_changes, out_events = [], [], [], []
    list_dates = sorted(in_scope.get_column("list_date").unique().to_list())
    if through is not None:
        list_dates = [x for x in list_dates if x <= through]
    for ld in list_dates:
        period = in_scope.filter(pl.col("list_date") == ld)
        season = season_year(ld - dt.timedelta(days=1))
        archives = {k: v for k, v in archives.items() if v[2] >= season}
        ratable = period.filter(pl.col("reason").is_null())
        ids = pl.concat(
            [ratable.select("player_id"), ratable.select(pl.col("opponent_id").alias("player_id"))]
        ).unique()
        players = _ratings_in_force(ratable, ids, national, fide_priority, std, ld, season, rules).with_columns(
            pl.Series(
                "archive_pn",
                [archives.get(p, (None,))[0] for p in ids["player_id"].to_list()],
                dtype=num_dtype,
            ),
            pl.Series(
                "archive_n",
                [archives.get(p, (None, None))[1] for p in ids["player_id"].to_list()],
                dtype=pl.Int64,
            ),
        )
        g = ratable.select(
            "game_id", "tournament_id", "player_id", "opponent_id", "score2", "score",
            "tc_assumed",
        )  # fmt: skip
        if not exact:
            players = players.with_columns(pl.col("archive_pn").cast(pl.Float64))
        gout, res = rate_period(rules, g, players, dp)
        res = res.join(players.select("player_id", "r_source", "category"), on="player_id")

        # state for the next period
        for pid, r_new, method, apn, an in res.select(
            "player_id", "r_new", "method", "archive_pn", "archive_n"
        ).iter_rows():
            if r_new is not None:
                national[pid] = int(r_new)
                archives.pop(pid, None)
            if method == "archived":
                archives[pid] = (apn, int(an), season + rules.archive_seasons)
        summary.new_ratings += res.filter(pl.col("method").str.starts_with("first")).height

        out_details.append(_details_frame(res, ld))
        out_changes.append(_changes_frame(gout, period, players, ld))
        out_events.append(_events_frame(gout, players, ld))
        out_lists.append(_list_frame(res, national, archives, ld))

    frames = {
        "rating_lists": _concat(out_lists),
        "ffe_details": _concat(out_details),
        "rating_changes": _concat(out_changes),
        "tournament_ratings": _concat(out_events),
    }
    # the lists stored, not the periods looked at (a period whose games all go uncounted stores no list)
    stored = frames["rating_lists"]
    stored_dates = sorted(stored.get_column("list_date").unique().to_list()) if stored.height else []
    full_run.count(con, summary, frames, stored_dates, rated_only=True)
    det = frames["ffe_details"]
    if det.height:
        summary.loop_cycles = det.filter(pl.col("cycled").fill_null(False)).get_column("player_id").n_unique()
    if write:
        params = {**rules.as_params(), "fide_priority": fide_priority, "unknown_tc": unknown_tc,
                  "by_event_end": by_event_end, "no_moves": no_moves}  # fmt: skip
        full_run.write(con, summary, frames, skips, params, through)
    return summary, frames


# ---- entry points of the registry (elopipe.rating.systems) --------------------------

_RULE_OPTIONS = {
    "z_mode", "strict_boundary", "unrated_opponents", "young_max_category", "archive_seasons",
    "compat_limit", "threshold", "floor", "period_scheme",
}  # fmt: skip
_RUN_OPTIONS = {"unknown_tc", "fide_priority", "by_event_end", "no_moves"}


def param_keys(system: str) -> list[str]:
    """The engine options of `rate_ffe` (rule options of `FfeRules` and run options), sorted."""
    return sorted(_RULE_OPTIONS | _RUN_OPTIONS)


def rules_with_params(base: FfeRules, rules: str | None, params: dict[str, Any]) -> FfeRules:
    """`base` with the options of `elopipe rate` applied.

    `rules`: None, or 'table' / 'logistic' (the Z mode, spec A.4). Raises ValueError for an
    unknown option or value.
    """
    if unknown := sorted(set(params) - _RULE_OPTIONS - _RUN_OPTIONS):
        raise ValueError(f"unknown FFE parameter {', '.join(unknown)}; known: {', '.join(param_keys(base.system))}")
    opts = {k: v for k, v in params.items() if k in _RULE_OPTIONS and v is not None}
    if rules is not None:
        if rules not in ("table", "logistic"):
            raise ValueError(f"{base.system}: --rules must be 'table' or 'logistic', got {rules!r}")
        opts["z_mode"] = rules
    try:
        return base.with_options(**opts)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def rate_ffe(
    con: duckdb.DuckDBPyConnection,
    *,
    system: str = "ffe",
    through: dt.date | None = None,
    rules: str | None = None,
    **params: Any,
) -> RateSummary:
    """Registry entry for 'ffe' and 'ffe-rapid', and their scenarios ('ffe@x', stored under that
    key; see `elopipe.rating.systems` and `elopipe.rating.scenarios`)."""
    base_system, _ = scenarios.split_system(system)
    if base_system not in ("ffe", "ffe-rapid"):
        raise ValueError(f"rate_ffe rates 'ffe' or 'ffe-rapid', not {system!r}")
    base = RAPID if base_system == "ffe-rapid" else CLASSIC
    r = rules_with_params(base, rules, params)
    run_opts = {k: v for k, v in params.items() if k in _RUN_OPTIONS and v is not None}
    return full_run.rate(
        con,
        system,
        lambda exclude, write: run_ffe(
            con, r, through=through, write=write, exclude=exclude, store_as=system, **run_opts
        ),
    )


# ---- helpers -------------------------------------------------------------------------


def _concat(frames: list[pl.DataFrame]) -> pl.DataFrame:
    frames = [f for f in frames if f.height]
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def _ratings_in_force(
    ratable: pl.DataFrame,
    ids: pl.DataFrame,
    national: dict[int, int],
    fide_priority: bool,
    std: pl.DataFrame | None,
    ld: dt.date,
    season: int,
    rules: FfeRules,
) -> pl.DataFrame:
    """player_id, r_old Int64, r_source Utf8, young Boolean, category Utf8 (spec A.2, A.5).

    A rating written in the file below `rules.floor` (1000 classic, 800 rapid) is no rating
    (spec A.4: no published rating falls below the floor): the player is unrated unless another
    source rates them, and an unrated player with such a value has r_source 'below_floor'."""
    # spec A.4: a published rating is never below the floor (P >= floor, the new rating a weighted
    # mean of R and P), so a file's value under it (an Irish '0471') is no rating: unrated here
    usable = {c: pl.col(c) >= rules.floor for c in ("rating_in_file", "national_rating")}
    not_estimate = pl.col("national_rating_flag").is_null() | (pl.col("national_rating_flag") != "E")
    fide = _first_per_player(ratable, "rating_in_file", usable["rating_in_file"])
    nat_file = _first_per_player(ratable, "national_rating", not_estimate & usable["national_rating"])
    below = (
        ratable.filter(~usable["rating_in_file"] | (not_estimate & ~usable["national_rating"]))
        .select("player_id", pl.lit(True).alias("__below"))
        .unique()
    )
    by = _first_per_player(ratable, "birth_year")
    state = pl.DataFrame(
        {"player_id": list(national), "r_state": list(national.values())},
        schema={"player_id": pl.Int64, "r_state": pl.Int64},
    )
    p = (
        ids.join(fide, on="player_id", how="left")
        .join(state, on="player_id", how="left")
        .join(nat_file, on="player_id", how="left")
        .join(by, on="player_id", how="left")
        .join(below, on="player_id", how="left")
    )
    order: list[tuple[str, str]] = [("r_state", "N"), ("national_rating", "N-file")]
    if fide_priority:
        order.insert(0, ("rating_in_file", "F"))
    else:
        order.append(("rating_in_file", "F"))
    if std is not None:
        before = std.filter(pl.col("list_date") < ld)
        latest = before.group_by("player_id").agg(pl.col("standard").sort_by("list_date").last())
        p = p.join(latest, on="player_id", how="left")
        order.append(("standard", "standard"))
    r_old = pl.coalesce([pl.col(c) for c, _ in order])
    src: Then | ChainedThen = pl.when(pl.lit(False)).then(pl.lit(None, pl.Utf8))
    for c, label in order:
        src = src.when(pl.col(c).is_not_null()).then(pl.lit(label))
    src = src.when(pl.col("__below").fill_null(False)).then(pl.lit("below_floor"))
    return p.with_columns(pl.lit(season).alias("season")).select(
        "player_id",
        r_old.cast(pl.Int64).alias("r_old"),
        src.otherwise(pl.lit(None, pl.Utf8)).alias("r_source"),
        young_expr("birth_year", "season", rules.young_max_category).alias("young"),
        category_expr("birth_year", "season").alias("category"),
    )


def _details_frame(res: pl.DataFrame, ld: dt.date) -> pl.DataFrame:
    n = pl.col("archive_n")
    return res.select(
        pl.lit(ld).alias("list_date"),
        "player_id",
        "r_old",
        "r_source",
        "n_compatible",
        "n_incompatible",
        pl.col("x").round(2),
        pl.col("p").round(4),
        pl.col("z").round(2),
        pl.col("perf").round(2),
        "young",
        "category",
        "method",
        "r_new",
        n.alias("archive_n"),
        (pl.col("archive_pn").cast(pl.Float64) / n).round(2).alias("archive_perf"),
        pl.col("passes").cast(pl.Int64) if "passes" in res.columns else pl.lit(None, pl.Int64),
        pl.col("cycled").cast(pl.Boolean) if "cycled" in res.columns else pl.lit(None, pl.Boolean),
    )


def _changes_frame(gout: pl.DataFrame, period: pl.DataFrame, players: pl.DataFrame, ld: dt.date) -> pl.DataFrame:
    ro = players.select("player_id", pl.col("r_old").alias("ro"))
    rated = gout.join(ro, on="player_id", how="left").select(
        pl.lit(ld).alias("list_date"),
        "tournament_id",
        "game_id",
        "player_id",
        "opponent_id",
        "ro",
        pl.col("opp_rating").round(0).cast(pl.Int64).alias("rc"),
        (pl.col("ro") - pl.col("opp_rating").round(0).cast(pl.Int64)).alias("d_raw"),
        "score",
        pl.col("compatible").fill_null(False).alias("counted"),
        pl.when(pl.col("compatible").is_null())
        .then(pl.lit("unrated_opponent"))
        .when(~pl.col("compatible"))
        .then(pl.lit("incompatible"))
        .alias("reason"),
        "tc_assumed",
    )
    other = period.filter(pl.col("reason").is_not_null()).join(ro, on="player_id", how="left")
    other = other.select(
        pl.lit(ld).alias("list_date"),
        "tournament_id",
        "game_id",
        "player_id",
        "opponent_id",
        "ro",
        pl.lit(None, pl.Int64).alias("rc"),
        pl.lit(None, pl.Int64).alias("d_raw"),
        "score",
        pl.lit(False).alias("counted"),
        "reason",
        "tc_assumed",
    )
    return pl.concat([rated, other], how="diagonal_relaxed")


def _events_frame(gout: pl.DataFrame, players: pl.DataFrame, ld: dt.date) -> pl.DataFrame:
    counted = gout.filter(pl.col("compatible").fill_null(False))
    agg = counted.group_by("tournament_id", "player_id").agg(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("score").sum().alias("score"),
        pl.col("opp_rating").sum().cast(pl.Float64).alias("__s"),
    )
    agg = agg.with_columns(
        # Ra = mean of the compatible opponents, rounded half up (ratings are positive)
        ((pl.col("__s") / pl.col("n")) + 0.5).floor().cast(pl.Int64).alias("ra")
    ).drop("__s")
    return agg.join(players.select("player_id", pl.col("r_old").alias("ro")), on="player_id").select(
        pl.lit(ld).alias("list_date"),
        "tournament_id",
        "player_id",
        "ro",
        "n",
        "score",
        "ra",
        pl.col("ro").is_null().alias("unrated"),
    )


def _list_frame(
    res: pl.DataFrame,
    national: dict[int, int],
    archives: dict[int, tuple[Any, int, int]],
    ld: dt.date,
) -> pl.DataFrame:
    played = res.select(
        "player_id",
        pl.col("n_compatible").alias("games"),
        (pl.col("r_new") - pl.col("r_old")).alias("change"),
        pl.col("method").str.starts_with("first").alias("__new"),
    )
    full = pl.DataFrame(
        {
            "player_id": list(national) + [p for p in archives if p not in national],
            "rating": list(national.values()) + [None for p in archives if p not in national],
        },
        schema={"player_id": pl.Int64, "rating": pl.Int64},
    )
    arch = pl.DataFrame(
        {"player_id": list(archives), "__an": [v[1] for v in archives.values()]},
        schema={"player_id": pl.Int64, "__an": pl.Int64},
    )
    out = full.join(played, on="player_id", how="left").join(arch, on="player_id", how="left")
    return out.select(
        pl.lit(ld).alias("list_date"),
        "player_id",
        "rating",
        pl.col("games").fill_null(0),
        pl.col("__an").alias("total_games"),
        "change",
        pl.when(pl.col("rating").is_null())
        .then(pl.lit("archived"))
        .when(pl.col("__new").fill_null(False))
        .then(pl.lit("N new"))
        .otherwise(pl.lit("N"))
        .alias("flags"),
        pl.lit("computed").alias("source"),
    )
