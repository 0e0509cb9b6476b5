"""Initial ratings: the games unrated players pool against rated opponents and their Ru
(FIDE B.02 7.1.4, 8.2: up to 26 months, a zero first event disregarded, at least 5 games, Ru not
below the floor).
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from elopipe.rating.fide import b02
from elopipe.rating.fide.params import FideParams, Prepared, rules_frame, version_expr, version_of
from elopipe.rating.periods import add_months
from elopipe.rating.rounding import div_round_expr
from elopipe.rating.tables import dp_expr


def initial_ratings(
    t: dt.date,
    state: pl.DataFrame,
    pool: pl.DataFrame,
    pool_new: pl.DataFrame | None,
    prep: Prepared,
    params: FideParams,
    list_rules: b02.RuleSet,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame | None]:
    """Ru of the unrated players with pooled games (B.02 7.1.4, 8.2).

    Returns (published: player_id, ru, pool_n — those with new games this period, N ≥ 5
    and Ru ≥ floor; pool rows: player_id, pool_games for every pooling player;
    per-tournament rows of this period's unrated players, or None).
    """
    active = (
        pool_new.select("player_id").unique() if pool_new is not None else pl.DataFrame(schema={"player_id": pl.Int64})
    )
    unrated = state.filter(pl.col("rating").is_null()).select("player_id", "pool_from")
    since = pool.join(unrated, on="player_id", how="inner").filter(
        pl.col("pool_from").is_null() | (pl.col("list_date") >= pl.col("pool_from"))
    )
    # first event(s): the earliest start among the events pooled since the player became
    # (or last became) unrated; a zero score there is disregarded (8.2.1)
    all_ev = since.group_by("player_id", "tournament_id").agg(
        pl.col("eff_start").first(), pl.col("score_x100").sum().alias("ev_score")
    )
    first_min = version_of(t, params).first_event_min_x100
    zero_first = (
        all_ev.filter(pl.col("eff_start") == pl.col("eff_start").min().over("player_id"))
        .filter(pl.col("ev_score").sum().over("player_id") < first_min)
        .select("player_id", "tournament_id")
    )
    # results of consecutive periods of at most 26 months are pooled (7.1.4)
    p = since.filter(pl.col("list_date") >= add_months(t, -25)).join(
        zero_first, on=["player_id", "tournament_id"], how="anti"
    )
    agg = (
        p.group_by("player_id")
        .agg(
            pl.len().cast(pl.Int64).alias("N"),
            pl.col("score_x100").sum().alias("W"),
            pl.col("rc").sum().alias("total"),
            pl.col("eff_start").max().alias("last_start"),
        )
        .with_columns(version_expr("last_start", params.rules).alias("version"))
        .join(rules_frame(params).select("version", "initial_rule", "ru_max"), on="version", how="left")
    )
    n, w, tot = pl.col("N"), pl.col("W"), pl.col("total")
    old = (
        pl.when(w > 50 * n)
        .then(div_round_expr(100 * tot + 40 * (w - 50 * n) * n, 100 * n))
        .when(w == 50 * n)
        .then(div_round_expr(tot, n))
        .otherwise(div_round_expr(tot + dp_expr(div_round_expr(w, n)) * n, n))
    )
    nn = n + 2
    new = div_round_expr(tot + 3600 + dp_expr(div_round_expr(w + 100, nn)) * nn, nn)
    ru = (
        pl.when(pl.col("initial_rule") == "unconfirmed")
        .then(pl.lit(None, pl.Int64))  # before 2014: no Ru under a rule that did not apply
        .when(pl.col("initial_rule") == "old")
        .then(old)
        .otherwise(new)
    )
    ru = pl.when(pl.col("ru_max").is_not_null()).then(pl.min_horizontal(ru, pl.col("ru_max"))).otherwise(ru)
    agg = agg.with_columns(ru.alias("ru"))
    published = (
        agg.join(active, on="player_id", how="semi")
        # before 2014 the rule is not confirmed (`fide` module docstring): nobody enters the list
        .filter((n >= 5) & (pl.col("ru") >= list_rules.floor) & (pl.col("initial_rule") != "unconfirmed"))
        .select("player_id", "ru", pl.col("N").alias("pool_n"))
    )
    pool_rows = agg.select("player_id", pl.col("N").alias("pool_games"))
    tr_unrated = None
    if pool_new is not None and pool_new.height:
        tr_unrated = (
            pool_new.join(prep.tournaments.select("tournament_id", "version"), on="tournament_id", how="left")
            .group_by("tournament_id", "player_id")
            .agg(
                pl.col("version").first().alias("rules_version"),
                pl.len().cast(pl.Int64).alias("n"),
                pl.col("score_x100").sum().alias("score_x100"),
                pl.col("rc").sum().alias("sum_rc"),
            )
            .with_columns(
                div_round_expr(pl.col("sum_rc"), pl.col("n")).alias("ra"),
                div_round_expr(pl.col("score_x100"), pl.col("n")).alias("p_x100"),
            )
            .with_columns(
                (pl.col("ra") + dp_expr(pl.col("p_x100"))).alias("rp"),
                pl.lit(True).alias("unrated"),
                pl.lit(None, pl.Int64).alias("ro"),
                pl.lit(None, pl.Int64).alias("we_x100"),
                pl.lit(None, pl.Int64).alias("wwe_x100"),
                pl.lit(None, pl.Int64).alias("k"),
                pl.lit(None, pl.Int64).alias("change_x100"),
            )
            .join(
                agg.select("player_id", pl.col("ru").alias("ru_provisional")),
                on="player_id",
                how="left",
            )
        )
    return published, pool_rows, tr_unrated
