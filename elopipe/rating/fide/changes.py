"""The rating changes of a FIDE rating period: per game D = Ro − Rc, the 400-point rule of the
version (FIDE B.02 8.3.1), PD from table 8.1.2 and W − PD in hundredths, the games not rated and
why (the time minimum, 2024's rapid and blitz 600-point rule, unrated sides); per player K after
the 700 cap (8.3.3) and the change K × Σ(W − PD), rounded once (8.3.4); the period's rows of
`rating_changes` and `tournament_ratings` with Ra, p and Rp = Ra + dp (8.1.1, table 8.1.1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import polars as pl

from elopipe.rating.fide import b02
from elopipe.rating.fide.frames import ENGINE
from elopipe.rating.fide.params import FideParams, Prepared, rules_by_version
from elopipe.rating.lookup import IdLookup
from elopipe.rating.rounding import div_round_expr, round_x100_expr
from elopipe.rating.tables import dp_expr, pd_x100_expr

if TYPE_CHECKING:
    from polars.expr.whenthen import ChainedThen, Then


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


def sides_plan(sides: pl.LazyFrame, params: FideParams, versions: list[str]) -> pl.LazyFrame:
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


def period_sums(
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
        .collect(engine=ENGINE)
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


def period_rows(
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
    changes_t, tr_t = pl.collect_all([changes_plan, tr_plan], engine=ENGINE)
    return changes_t, tr_t
