"""The FFE performance (spec A.3, A.4) as Polars building blocks of the classic engine.

Source: the implementable specification ``ffe-rating-rules.md`` Part A (seed 000 §II): which
games are compatible with a reference rating (spec A.3), the performance P = X + Z of the
compatible games with Z from FIDE table 8.1.1 or the logistic curve (spec A.4), the aggregates
and the rounding to 10 the updates share (spec A.5, A.6). Used by `elopipe.rating.ffe.classic`.

Exact arithmetic: in 'table' mode every column is Int64 (``zn`` = Z x n, ``pn`` = P x n),
so nothing is rounded before `round10`; 'logistic' mode uses Float64.
"""

from __future__ import annotations

import polars as pl

from elopipe.rating.ffe.params import FfeRules

# ---- table 8.1.1 ---------------------------------------------------------------------


def dp_table_frame() -> pl.DataFrame:
    """FIDE table 8.1.1 as a frame: ``pct`` Int64 (0..100, whole percentages), ``dp`` Int64
    (rating points), ``dp_next`` Int64 (dp of pct + 1; equal to dp at 100), for the linear
    interpolation of spec A.4. Read from the shared tables module (CSV data file)."""
    from elopipe.rating import tables

    pct = list(range(101))
    vals = [tables.dp(k) for k in pct]
    return pl.DataFrame(
        {"pct": pct, "dp": vals, "dp_next": [*vals[1:], vals[-1]]},
        schema={"pct": pl.Int64, "dp": pl.Int64, "dp_next": pl.Int64},
    )


# ---- Polars building blocks ----------------------------------------------------------


def _zn_table(rules: FfeRules, dp: pl.DataFrame, df: pl.DataFrame) -> pl.DataFrame:
    """Add ``zn`` = Z x n (Int64, exact) from ``pts2`` (half-points) and ``n``.

    p x 100 = 50 pts2 / n = k + r / n with k whole; Z = dp[k] + (r / n)(dp[k+1] - dp[k]),
    so Z x n = n dp[k] + r (dp[k+1] - dp[k]). Clamp to ±clamp x n (spec A.4).
    """
    q = pl.col("pts2") * 50
    df = df.with_columns((q // pl.col("n")).alias("pct"), (q % pl.col("n")).alias("__r"))
    df = df.join(dp, on="pct", how="left")
    zn = pl.col("dp") * pl.col("n") + pl.col("__r") * (pl.col("dp_next") - pl.col("dp"))
    lim = pl.col("n") * rules.clamp
    return df.with_columns(pl.min_horizontal(pl.max_horizontal(zn, -lim), lim).alias("zn")).drop(
        "pct", "__r", "dp", "dp_next"
    )


def _zn_logistic(rules: FfeRules, df: pl.DataFrame) -> pl.DataFrame:
    """Add ``zn`` = Z x n (Float64), Z = 400 log10(p / (1 - p)) clamped (spec A.4)."""
    won, lost = pl.col("pts2"), pl.col("n") * 2 - pl.col("pts2")
    z = (
        pl.when(lost == 0)
        .then(pl.lit(float(rules.clamp)))
        .when(won == 0)
        .then(pl.lit(-float(rules.clamp)))
        .otherwise(400.0 * (won.cast(pl.Float64) / lost.cast(pl.Float64)).log10())
    )
    z = z.clip(-float(rules.clamp), float(rules.clamp))
    return df.with_columns((z * pl.col("n")).alias("zn"))


def performance_frame(rules: FfeRules, agg: pl.DataFrame, dp: pl.DataFrame | None = None) -> pl.DataFrame:
    """Spec A.4 over aggregated games.

    `agg` columns: ``n`` Int64 (compatible games, > 0), ``s_opp`` (sum of the opponents'
    ratings, Int64 or Float64 with provisional values), ``pts2`` Int64 (points x 2).
    Adds ``zn`` (Z x n) and ``pn`` (P x n, floored at floor x n). Integer columns stay
    Int64 in 'table' mode (exact).
    """
    if rules.z_mode == "table":
        agg = _zn_table(rules, dp if dp is not None else dp_table_frame(), agg)
    else:
        agg = _zn_logistic(rules, agg)
    pn = pl.max_horizontal(pl.col("s_opp") + pl.col("zn"), pl.col("n") * rules.floor)
    return agg.with_columns(pn.alias("pn"))


def compatible_expr(rules: FfeRules, opp: pl.Expr, score2: pl.Expr, ref_num: pl.Expr, ref_den: pl.Expr) -> pl.Expr:
    """Spec A.3 with the reference rating R = ref_num / ref_den (ratio, to stay exact).

    d = opp - R. Win (score2 = 2): d >= -limit; loss (score2 = 0): d <= +limit; draw: always.
    `strict_boundary` makes both inequalities strict (spec V7).
    """
    d_num = opp * ref_den - ref_num  # d x ref_den; ref_den > 0
    lim = ref_den * rules.compat_limit
    if rules.strict_boundary:
        win_ok, loss_ok = d_num > -lim, d_num < lim
    else:
        win_ok, loss_ok = d_num >= -lim, d_num <= lim
    return pl.when(score2 == 1).then(pl.lit(True)).when(score2 == 2).then(win_ok).otherwise(loss_ok)


def round10(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """round(num / den / 10) x 10, halves up, exact for Int64 (floor((2num + 10den) / 20den))."""
    return ((num * 2 + den * 10) // (den * 20) * 10).cast(pl.Int64)


def aggregate(games: pl.DataFrame, mask: pl.Expr) -> pl.DataFrame:
    """Per player, the games `mask` keeps: ``n`` Int64, ``s_opp`` (sum of ``opp_rating``), ``pts2`` Int64."""
    return (
        games.filter(mask)
        .group_by("player_id")
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("opp_rating").sum().alias("s_opp"),
            pl.col("score2").sum().cast(pl.Int64).alias("pts2"),
        )
    )


def details(rules: FfeRules, df: pl.DataFrame) -> pl.DataFrame:
    """Display values (2 decimals) of X, p, Z, P for ``ffe_details``."""
    n = pl.col("n").cast(pl.Float64)
    return df.with_columns(
        (pl.col("s_opp").cast(pl.Float64) / n).alias("x"),
        (pl.col("pts2").cast(pl.Float64) / (2.0 * n)).alias("p"),
        (pl.col("zn").cast(pl.Float64) / n).alias("z"),
        (pl.col("pn").cast(pl.Float64) / n).alias("perf"),
    )
