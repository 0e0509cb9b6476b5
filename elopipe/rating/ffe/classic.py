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
  are archived until the end of the next season and combined as a weighted mean. The spec's
  gap **[C]**: a loop that cycles (a set seen at an earlier pass comes back) keeps the games in
  every set of the cycle (the intersection), P recomputed on them, and flags the player
  (``ffe_details.cycled``; `performance_loop`).

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
    games compatible with the previous pass's P, until no player's set changes.

    A player's sets can cycle instead (e.g. L2346 D2107 D2153 L2147: over all four P = 1995.25,
    so L2346 is 350.75 above and out; over the other three P = 2013.33 and it is back in). The
    spec says "repeat until the set stops changing" and is silent on a cycle **[C]**: when a
    pass's new set is one the player had at an earlier pass, the cycle is those passes' sets and
    a game counts only if it is in every one of them (compatible with every performance of the
    cycle: the intersection); P is recomputed on that set and the player is flagged ``cycled``.
    `rules.max_loops` bounds the loop (a player still moving then, with no set seen twice, keeps
    only the games in both of his last two sets and is flagged too).

    Returns (games with ``compatible`` Boolean, null for an unrated opponent; one row per
    player with at least one compatible game: ``player_id``, ``n``, ``s_opp``, ``pts2``,
    ``zn``, ``pn``, ``passes`` = the pass at which the player's set stopped changing, or at
    which the cycle showed (a set seen before), ``cycled`` Boolean).
    """
    dp = dp if dp is not None or rules.z_mode != "table" else dp_table_frame()
    g = games.with_columns(
        pl.when(pl.col("opp_rating").is_null())
        .then(pl.lit(None, pl.Boolean))
        .otherwise(pl.lit(True))
        .alias("compatible"),
        pl.int_range(pl.len(), dtype=pl.Int64).alias("__row"),
    )
    passes = 0
    stable = pl.DataFrame(schema={"player_id": games.schema["player_id"], "passes": pl.Int64, "cycled": pl.Boolean})
    cyclers = pl.Series("player_id", [], games.schema["player_id"])  # their set is chosen: it no longer moves
    # the set of every pass of the players still moving: __row, pass, flag (in the set)
    hist = pl.DataFrame(schema={"__row": pl.Int64, "pass": pl.Int64, "flag": pl.Boolean})
    perf = pl.DataFrame()
    while True:
        passes += 1
        agg = aggregate(g, pl.col("compatible").fill_null(False))
        perf = performance_frame(rules, agg.filter(pl.col("n") > 0), dp)
        ref = g.join(perf.select("player_id", "pn", "n"), on="player_id", how="left")
        new = (
            pl.when(pl.col("opp_rating").is_null())
            .then(pl.lit(None, pl.Boolean))
            .when(pl.col("player_id").is_in(cyclers.implode()))
            .then(pl.col("compatible"))
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
        stable = pl.concat([stable, _settled(newly, passes, False)])
        moving = per_player.filter(pl.col("__changed")).select("player_id")
        if moving.height == 0:
            g = ref.drop("pn", "n", "__new")
            break
        if passes >= rules.max_loops:
            g = ref.drop("pn", "n").with_columns(pl.col("compatible") & pl.col("__new")).drop("__new")
            agg = aggregate(g, pl.col("compatible").fill_null(False))
            perf = performance_frame(rules, agg.filter(pl.col("n") > 0), dp)
            stable = pl.concat([stable, _settled(moving, passes, True)])
            break
        ref, found = _close_cycles(ref, moving, hist, passes)
        if found.height:
            cyclers = pl.concat([cyclers, found.get_column("player_id")])
            stable = pl.concat([stable, _settled(found, passes, True)])
        hist = _record_sets(ref, moving.join(found, on="player_id", how="anti"), hist, passes)
        g = ref.drop("pn", "n", "compatible").rename({"__new": "compatible"})
    g = g.drop("__row")
    perf = perf.join(stable, on="player_id", how="left").with_columns(
        pl.col("passes").fill_null(passes), pl.col("cycled").fill_null(False)
    )
    return g, perf


def _settled(players: pl.DataFrame, passes: int, cycled: bool) -> pl.DataFrame:
    """`players` (``player_id``) whose set settled at pass `passes`: player_id, passes, cycled."""
    return players.select("player_id", pl.lit(passes, pl.Int64).alias("passes"), pl.lit(cycled).alias("cycled"))


def _record_sets(ref: pl.DataFrame, moving: pl.DataFrame, hist: pl.DataFrame, passes: int) -> pl.DataFrame:
    """`hist` with the set of pass `passes` (``compatible``) of the `moving` players, less the rows of
    the players no longer moving (a stable or cycling player's history is no longer needed)."""
    rows = ref.join(moving, on="player_id", how="semi").select("__row", "compatible")
    this = rows.select(
        "__row", pl.lit(passes, pl.Int64).alias("pass"), pl.col("compatible").fill_null(False).alias("flag")
    )
    kept = hist.join(rows.select("__row"), on="__row", how="semi")
    return pl.concat([kept, this])


def _close_cycles(
    ref: pl.DataFrame, moving: pl.DataFrame, hist: pl.DataFrame, passes: int
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The cycles of spec A.6's loop [C] (see `performance_loop`): a moving player whose new set
    (``__new``) is the set of an earlier pass s cycles over the sets of passes s .. `passes`
    (`hist`, plus this pass's ``compatible``). Returns (`ref` with ``__new`` of those players set
    to the intersection of the cycle's sets, the players found: ``player_id``)."""
    rows = ref.join(moving, on="player_id", how="semi").select(
        "__row", "player_id", pl.col("compatible").fill_null(False).alias("__cur"), pl.col("__new").fill_null(False)
    )
    past = rows.join(hist, on="__row")
    seen = (
        past.group_by("player_id", "pass")
        .agg((pl.col("flag") == pl.col("__new")).all().alias("__same"))
        .filter(pl.col("__same"))
        .group_by("player_id")
        .agg(pl.col("pass").min().alias("__from"))
    )
    if seen.height == 0:
        return ref, seen.select("player_id")
    in_cycle = past.join(seen, on="player_id").filter(pl.col("pass") >= pl.col("__from"))
    # the set of this pass belongs to the cycle too (its successor is the set of pass __from)
    kept = in_cycle.group_by("__row").agg(pl.col("flag").all().alias("__all"))
    kept = kept.join(rows.select("__row", "__cur"), on="__row").select(
        "__row", (pl.col("__all") & pl.col("__cur")).alias("__kept")
    )
    ref = (
        ref.join(kept, on="__row", how="left")
        .with_columns(
            pl.when(pl.col("__kept").is_null() | pl.col("opp_rating").is_null())
            .then(pl.col("__new"))
            .otherwise(pl.col("__kept"))
            .alias("__new")
        )
        .drop("__kept")
    )
    return ref, seen.select("player_id")


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
