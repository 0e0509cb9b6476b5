"""Classic FFE national Elo: the performance-based system of the French federation.

Sources: the project's French source document ("Le classement ELO FFE", seed 000) and the
implementable specification ``ffe-rating-rules.md`` Part A (which resolves its ambiguities,
with the BAF n°103 worked cases and the E02 rapid text as evidence). Section numbers below
("spec A.4") refer to that specification; every [C] choice is a parameter of `FfeRules`.

Rules of one rating period (spec A.7):

* **Ratings in force** (spec A.2): the list closing the previous period; FIDE (F) before
  national (N); an estimated value (E) is never a rating. Unrated opponents: policy
  ``unrated_opponents`` = 'ignore' (default: the game counts for nobody unless both players
  are rated) or 'iterative' (provisional performances, spec A.2).
* **Compatible games** (spec A.3, seed 000 §II): a win against an opponent at most
  `compat_limit` (350) below R, a loss against one at most 350 above; draws always count;
  upsets always count. ``strict_boundary`` excludes exactly 350 (BAF 103 reading, V7).
* **Performance** (spec A.4): X = mean rating of the compatible opponents (full precision),
  p = points / n, Z = dp(p) from FIDE table 8.1.1 interpolated linearly between whole
  percentages (mode 'table', default) or ``400 log10(p / (1 - p))`` (mode 'logistic');
  Z clamped to ±470; P = X + Z, raised to the floor 1000.
* **Update** (spec A.5, seed 000 §III.A): P < R -> (16 R + n P) / (16 + n); P > R -> P when a
  young player has n >= 8 or an adult n >= 16, else the brake (n P + (N - n) R) / N with
  N = 8 (young) or 16 (adult); rounded to the nearest 10, halves up.
* **First rating** (spec A.6, seed 000 §III.B): the compatibility loop around the player's
  own performance until the set of compatible games is stable; n >= 8 -> round10(P); fewer
  are archived until the end of the next season and combined as a weighted mean.

Exact arithmetic: in 'table' mode every quantity is a ratio of integers. The engine keeps
``pn = P x n`` (rating points x games) and the numerator/denominator of the new value as
Int64, so the final rounding is exact (V13's 1665.0 rounds up to 1670, never by a float
accident). 'logistic' mode is irrational by nature and uses Float64.

Events starting before the national rating began (`elopipe.rating.ffe.params.NATIONAL_RATING_FROM`,
1 September 1977, spec §1) are refused: see that module.

The parameters are `elopipe.rating.ffe.params.FfeRules`; the compatibility and performance
building blocks (spec A.3, A.4) are in `elopipe.rating.ffe.performance`; one player's period as
plain values (tests, reports) is `elopipe.rating.ffe.player_outcome.rate_player`.

The national rapid (E02, 2018) is the same engine with other parameters:
see `elopipe.rating.ffe.rapid`.
"""

from __future__ import annotations

import polars as pl

from elopipe.rating.ffe.params import FfeRules
from elopipe.rating.ffe.performance import (
    aggregate,
    compatible_expr,
    details,
    dp_table_frame,
    performance_frame,
    round10,
)

GAME_COLUMNS = {
    "player_id": pl.Int64,
    "opp_rating": pl.Int64,
    "score2": pl.Int64,
}


# ---- rated players (spec A.5) --------------------------------------------------------


def rate_rated(
    rules: FfeRules,
    games: pl.DataFrame,
    players: pl.DataFrame,
    dp: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One period for rated players (spec A.3-A.5).

    Args:
        games: one row per (player, game): ``player_id`` Int64, ``opp_rating`` (Int64 rating
            points, or Float64 provisional; null = unrated opponent, the row is ignored),
            ``score2`` Int64 (2 win, 1 draw, 0 loss), plus any other columns (kept).
        players: ``player_id`` Int64, ``r_old`` Int64 (rating in force, not null),
            ``young`` Boolean.

    Returns:
        (games with a Boolean ``compatible`` column (null when the opponent is unrated),
        one row per player with games: ``player_id``, ``r_old``, ``young``, ``n_compatible``,
        ``n_incompatible``, ``n``, ``s_opp``, ``pts2``, ``zn``, ``pn`` (see
        `performance_frame`), ``x``, ``p``, ``z``, ``perf`` Float64 (display), ``method``
        Utf8 ('down' | 'up_full' | 'up_brake' | 'equal' | 'none'), ``r_new`` Int64).
    """
    g = games.join(players.select("player_id", "r_old", "young"), on="player_id", how="inner")
    g = g.with_columns(
        pl.when(pl.col("opp_rating").is_null())
        .then(pl.lit(None, pl.Boolean))
        .otherwise(compatible_expr(rules, pl.col("opp_rating"), pl.col("score2"), pl.col("r_old"), pl.lit(1)))
        .alias("compatible")
    )
    counts = g.group_by("player_id").agg(
        pl.col("compatible").fill_null(False).sum().cast(pl.Int64).alias("n_compatible"),
        (pl.col("compatible") == False).sum().cast(pl.Int64).alias("n_incompatible"),  # noqa: E712
    )
    agg = aggregate(g, pl.col("compatible").fill_null(False))
    res = counts.join(players.select("player_id", "r_old", "young"), on="player_id")
    res = res.join(agg, on="player_id", how="left")
    with_games = performance_frame(rules, res.filter(pl.col("n") > 0), dp)
    r, n, pn = pl.col("r_old"), pl.col("n"), pl.col("pn")
    big_n = pl.when(pl.col("young")).then(rules.brake_up_young).otherwise(rules.brake_up_adult)
    down = pn < r * n
    up = pn > r * n
    full = up & (n >= big_n)
    num = (
        pl.when(down)
        .then(r * rules.brake_down + pn)
        .when(full)
        .then(pn)
        .when(up)
        .then(pn + (big_n - n) * r)
        .otherwise(r)
    )
    den = pl.when(down).then(n + rules.brake_down).when(full).then(n).when(up).then(big_n).otherwise(pl.lit(1))
    with_games = with_games.with_columns(
        round10(num, den).alias("r_new"),
        pl.when(down)
        .then(pl.lit("down"))
        .when(full)
        .then(pl.lit("up_full"))
        .when(up)
        .then(pl.lit("up_brake"))
        .otherwise(pl.lit("equal"))
        .alias("method"),
    )
    without = res.filter(pl.col("n").is_null()).with_columns(
        pl.lit(0, pl.Int64).alias("n"),
        pl.col("r_old").alias("r_new"),
        pl.lit("none").alias("method"),
    )
    out = pl.concat([details(rules, with_games), without], how="diagonal_relaxed")
    return g.drop("r_old", "young"), out.sort("player_id")


# ---- unrated players: the first rating (spec A.6) ------------------------------------


def performance_loop(
    rules: FfeRules, games: pl.DataFrame, dp: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The compatibility loop around a player's own performance (spec A.6 steps 1-2).

    `games`: ``player_id``, ``opp_rating`` (null = unrated opponent: never counted),
    ``score2``. Pass 1 uses every game against a rated opponent; each next pass keeps the
    games compatible with the previous pass's P, until no player's set changes (at most
    `rules.max_loops` passes; a player still cycling then keeps only the games compatible
    with both performances of the cycle, and P is recomputed on them).

    Returns (games with ``compatible`` Boolean, null for an unrated opponent; one row per
    player with at least one compatible game: ``player_id``, ``n``, ``s_opp``, ``pts2``,
    ``zn``, ``pn``, ``passes`` = the pass at which the player's set stopped changing).
    """
    dp = dp if dp is not None or rules.z_mode != "table" else dp_table_frame()
    g = games.with_columns(
        pl.when(pl.col("opp_rating").is_null())
        .then(pl.lit(None, pl.Boolean))
        .otherwise(pl.lit(True))
        .alias("compatible")
    )
    passes = 0
    stable = pl.DataFrame(schema={"player_id": pl.Int64, "passes": pl.Int64})
    perf = pl.DataFrame()
    while True:
        passes += 1
        agg = aggregate(g, pl.col("compatible").fill_null(False))
        perf = performance_frame(rules, agg.filter(pl.col("n") > 0), dp)
        ref = g.join(perf.select("player_id", "pn", "n"), on="player_id", how="left")
        new = (
            pl.when(pl.col("opp_rating").is_null())
            .then(pl.lit(None, pl.Boolean))
            .when(pl.col("n").is_null())
            .then(pl.lit(False))  # empty set: stays empty
            .otherwise(compatible_expr(rules, pl.col("opp_rating"), pl.col("score2"), pl.col("pn"), pl.col("n")))
        )
        ref = ref.with_columns(new.alias("__new"))
        per_player = ref.group_by("player_id").agg(
            (pl.col("__new").fill_null(False) != pl.col("compatible").fill_null(False)).any().alias("__changed")
        )
        # a player whose set did not change is stable for good (same set -> same P)
        newly = per_player.filter(~pl.col("__changed")).join(stable, on="player_id", how="anti")
        stable = pl.concat([stable, newly.select("player_id", pl.lit(passes, pl.Int64).alias("passes"))])
        changed = per_player.get_column("__changed").any()
        if not changed:
            g = ref.drop("pn", "n", "__new")
            break
        if passes >= rules.max_loops:
            # A cycle (e.g. a loss 349.5 above one P and 381 above the other): the spec is
            # silent [C]. A game counts only if compatible with both performances of the
            # cycle (the intersection); P is recomputed on that set. passes = max_loops.
            g = (
                ref.drop("pn", "n")
                .with_columns((pl.col("compatible") & pl.col("__new")).alias("compatible"))
                .drop("__new")
            )
            agg = aggregate(g, pl.col("compatible").fill_null(False))
            perf = performance_frame(rules, agg.filter(pl.col("n") > 0), dp)
            break
        g = ref.drop("pn", "n", "compatible").rename({"__new": "compatible"})
    perf = perf.join(stable, on="player_id", how="left").with_columns(pl.col("passes").fill_null(passes))
    return g, perf


def rate_unrated(
    rules: FfeRules,
    games: pl.DataFrame,
    players: pl.DataFrame,
    dp: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One period for unrated players (spec A.6).

    Args:
        games: as for `rate_rated` (only the unrated players' rows).
        players: ``player_id`` Int64, ``young`` Boolean, ``archive_pn`` (P x n of the
            archive, same dtype as pn; null = none), ``archive_n`` Int64 (null = none).

    Returns:
        (games with ``compatible``; one row per player with games: ``n_compatible``,
        ``n_incompatible``, ``n``, ``s_opp``, ``pts2``, ``zn``, ``pn``, ``x``, ``p``, ``z``,
        ``perf``, ``method`` ('first' | 'first_combined' | 'archived' | 'none'),
        ``r_new`` Int64 (null unless rated now), ``archive_pn``/``archive_n`` after the
        period (null when used up), ``passes``).
    """
    g, perf = performance_loop(rules, games, dp)
    counts = g.group_by("player_id").agg(
        pl.col("compatible").fill_null(False).sum().cast(pl.Int64).alias("n_compatible"),
        (pl.col("compatible") == False).sum().cast(pl.Int64).alias("n_incompatible"),  # noqa: E712
    )
    res = counts.join(
        players.select("player_id", "young", "archive_pn", "archive_n"),
        on="player_id",
        how="left",
    ).join(perf, on="player_id", how="left")
    n = pl.col("n").fill_null(0)
    an = pl.col("archive_n").fill_null(0)
    apn = pl.col("archive_pn").fill_null(0)
    enough = n >= rules.threshold
    combined = (~enough) & (an > 0) & (n + an >= rules.threshold) & (n > 0)
    archived = (~enough) & (~combined) & (n > 0)
    res = res.with_columns(
        pl.when(enough)
        .then(round10(pl.col("pn"), pl.col("n")))
        .when(combined)
        .then(round10(pl.col("pn") + apn, n + an))
        .otherwise(pl.lit(None, pl.Int64))
        .alias("r_new"),
        pl.when(enough)
        .then(pl.lit("first"))
        .when(combined)
        .then(pl.lit("first_combined"))
        .when(archived)
        .then(pl.lit("archived"))
        .otherwise(pl.lit("none"))
        .alias("method"),
        # spec A.6.4 [C]: a new partial performance merges into the old archive (weighted).
        pl.when(archived)
        .then(pl.col("pn") + apn)
        .when(enough | combined)
        .then(pl.lit(None))
        .otherwise(pl.col("archive_pn"))
        .alias("archive_pn"),
        pl.when(archived)
        .then(n + an)
        .when(enough | combined)
        .then(pl.lit(None, pl.Int64))
        .otherwise(pl.col("archive_n"))
        .alias("archive_n"),
        n.alias("n"),
    )
    has = res.filter(pl.col("n") > 0)
    out = pl.concat([details(rules, has), res.filter(pl.col("n") == 0)], how="diagonal_relaxed")
    return g, out.sort("player_id")


# ---- one whole period ------------------------------------------------------------------


def rate_period(
    rules: FfeRules,
    games: pl.DataFrame,
    players: pl.DataFrame,
    dp: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One rating period for everyone (spec A.7), with the unrated-opponent policy.

    Args:
        games: one row per (player, played game): ``player_id`` Int64, ``opponent_id``
            Int64, ``score2`` Int64 (2/1/0) and any other columns (kept, e.g. game_id).
        players: every player of the period: ``player_id`` Int64, ``r_old`` Int64 (rating in
            force, null = unrated), ``young`` Boolean, ``archive_pn``, ``archive_n``.

    Returns:
        (games with ``opp_rating`` (the value used), ``opp_provisional`` Boolean,
        ``compatible`` Boolean (null: unrated opponent ignored);
        one row per player who has games, the union of `rate_rated` and `rate_unrated`
        outputs plus ``rated_before`` Boolean).
    """
    if rules.z_mode == "table" and dp is None:
        dp = dp_table_frame()
    opp = players.select(pl.col("player_id").alias("opponent_id"), pl.col("r_old").alias("opp_rating"))
    g = games.join(opp, on="opponent_id", how="left").with_columns(pl.lit(False).alias("opp_provisional"))
    rated_ids = players.filter(pl.col("r_old").is_not_null()).select("player_id")
    unrated_ids = players.filter(pl.col("r_old").is_null()).select("player_id")

    if rules.unrated_opponents == "iterative":
        g = _provisional_opponents(rules, g, players, unrated_ids, dp)

    g_r, res_r = rate_rated(rules, g.join(rated_ids, on="player_id", how="semi"), players, dp)
    g_u, res_u = rate_unrated(rules, g.join(unrated_ids, on="player_id", how="semi"), players, dp)
    res_r = res_r.with_columns(pl.lit(True).alias("rated_before"))
    res_u = res_u.with_columns(pl.lit(False).alias("rated_before"))
    games_out = pl.concat([g_r, g_u], how="diagonal_relaxed")
    return games_out, pl.concat([res_r, res_u], how="diagonal_relaxed").sort("player_id")


def _provisional_opponents(
    rules: FfeRules,
    g: pl.DataFrame,
    players: pl.DataFrame,
    unrated_ids: pl.DataFrame,
    dp: pl.DataFrame | None,
) -> pl.DataFrame:
    """Policy 'iterative' (spec A.2 [C]): give unrated opponents their provisional performance.

    1. each unrated player's P by the A.6 loop against rated opponents only;
    2. recompute with those values for unrated opponents; 3. repeat until no provisional
    value moves by 0.5 or more, at most 20 passes. Values are Float64 (P = pn / n).
    """
    base = g.select(pl.exclude("opp_provisional"))
    prov = pl.DataFrame(schema={"opponent_id": pl.Int64, "prov": pl.Float64})
    for _ in range(20):
        cur = base.join(prov, on="opponent_id", how="left").with_columns(
            pl.col("opp_rating").cast(pl.Float64).fill_null(pl.col("prov")).alias("opp_rating"),
            (pl.col("opp_rating").is_null() & pl.col("prov").is_not_null()).alias("opp_provisional"),
        )
        _g, perf = performance_loop(rules, cur.join(unrated_ids, on="player_id", how="semi").drop("prov"), dp)
        new = perf.select(
            pl.col("player_id").alias("opponent_id"),
            (pl.col("pn").cast(pl.Float64) / pl.col("n")).alias("prov"),
        )
        moved = (
            new.join(prov, on="opponent_id", how="full", coalesce=True, suffix="_old")
            .select(((pl.col("prov") - pl.col("prov_old")).abs() >= 0.5).fill_null(True).any())
            .item()
        )
        prov = new
        if not moved:
            break
    return (
        base.join(prov, on="opponent_id", how="left")
        .with_columns(
            pl.col("opp_rating").cast(pl.Float64).fill_null(pl.col("prov")).alias("opp_rating"),
            (pl.col("opp_rating").is_null() & pl.col("prov").is_not_null()).alias("opp_provisional"),
        )
        .drop("prov")
    )
