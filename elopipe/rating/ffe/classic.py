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

**When the national rating began** (`NATIONAL_RATING_FROM`, 1 September 1977): the FFE Elo
started in Normandy in 1971-73 and opened to all leagues from the 1977-78 season (spec §1
Timeline, source S9: C.-H. Rouah, FFE rating officer since 1982, echecs64.com, 11 March 2011).
Events starting before 1 September 1977, the first day of that season (spec A.1: a season runs
from 1 September), are refused (``rating_skips`` reason 'before_rating_from'), as the FIDE
systems refuse events before July 2009: no national list existed for them. Uncertain: S9 names
the season, not a day, and the first national list's date is not known; the regional Normandy
rating of 1971-77 is not a national one. The national rapid rating (`elopipe.rating.ffe.rapid`)
cannot be older; its own start is not known, so the same date bounds it.

The national rapid (E02, 2018) is the same engine with other parameters:
see `elopipe.rating.ffe.rapid`.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

import polars as pl

# ---- parameters ----------------------------------------------------------------------

#: The first day of the 1977-78 season, when the FFE Elo opened to all leagues (spec §1, S9):
#: events starting earlier are not rated by the FFE systems (see the module docstring).
NATIONAL_RATING_FROM = dt.date(1977, 9, 1)


@dataclass(frozen=True)
class FfeRules:
    """Parameters of the FFE performance engine (spec G.1 table).

    Classic standard defaults (spec Part A): compatibility 350, threshold 8, floor 1000,
    brake up 8 (young) / 16 (adult), brake down 16, bonus clamp ±470, periods of four months.

    Attributes:
        system: the ``system`` key written to the store ('ffe').
        compat_limit: rating points; spec A.3.
        threshold: compatible games for a first rating; spec A.6.
        floor: P below it is raised to it (rating points); spec A.4.
        brake_up_young / brake_up_adult: N of the upward brake; spec A.5.
        brake_down: weight of R when P < R; spec A.5.
        clamp: bound on Z (rating points); spec A.4.
        z_mode: 'table' (FIDE 8.1.1, interpolated) or 'logistic'; spec A.4.
        strict_boundary: exclude |d| = compat_limit; spec A.3, V7.
        unrated_opponents: 'ignore' or 'iterative'; spec A.2.
        young_max_category: oldest "young" category, 'U20' (default) or e.g. 'U18'; spec A.5.
        archive_seasons: seasons an archive survives after the one it was made in; spec A.6.4.
        period_scheme: name of the `elopipe.rating.periods` scheme ('ffe': Jan/May/Sep).
        rate_class: the rate of play rated ('standard': more than 60 minutes, seed 000).
        credit_standard: count a player without a rating of this rate at their standard
            rating (E02, rapid only).
        max_loops: bound on the first-rating and iterative loops.
        rating_from: events starting before it are not rated (`NATIONAL_RATING_FROM`).
    """

    system: str = "ffe"
    compat_limit: int = 350
    threshold: int = 8
    floor: int = 1000
    brake_up_young: int = 8
    brake_up_adult: int = 16
    brake_down: int = 16
    clamp: int = 470
    z_mode: str = "table"
    strict_boundary: bool = False
    unrated_opponents: str = "ignore"
    young_max_category: str = "U20"
    archive_seasons: int = 1
    period_scheme: str = "ffe"
    rate_class: str = "standard"
    credit_standard: bool = False
    max_loops: int = 50
    rating_from: dt.date = NATIONAL_RATING_FROM

    def __post_init__(self) -> None:
        if self.z_mode not in ("table", "logistic"):
            raise ValueError(f"z_mode {self.z_mode!r}: expected 'table' or 'logistic'")
        if self.unrated_opponents not in ("ignore", "iterative"):
            raise ValueError(f"unrated_opponents {self.unrated_opponents!r}: expected 'ignore' or 'iterative'")

    def with_options(self, **kw: Any) -> FfeRules:
        """A copy with some parameters changed (unknown names raise TypeError)."""
        return replace(self, **kw)

    def as_params(self) -> dict[str, Any]:
        return asdict(self)


CLASSIC = FfeRules()

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


def _round10(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """round(num / den / 10) x 10, halves up, exact for Int64 (floor((2num + 10den) / 20den))."""
    return ((num * 2 + den * 10) // (den * 20) * 10).cast(pl.Int64)


def _aggregate(games: pl.DataFrame, mask: pl.Expr) -> pl.DataFrame:
    return (
        games.filter(mask)
        .group_by("player_id")
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("opp_rating").sum().alias("s_opp"),
            pl.col("score2").sum().cast(pl.Int64).alias("pts2"),
        )
    )


GAME_COLUMNS = {
    "player_id": pl.Int64,
    "opp_rating": pl.Int64,
    "score2": pl.Int64,
}


def _details(rules: FfeRules, df: pl.DataFrame) -> pl.DataFrame:
    """Display values (2 decimals) of X, p, Z, P for ``ffe_details``."""
    n = pl.col("n").cast(pl.Float64)
    return df.with_columns(
        (pl.col("s_opp").cast(pl.Float64) / n).alias("x"),
        (pl.col("pts2").cast(pl.Float64) / (2.0 * n)).alias("p"),
        (pl.col("zn").cast(pl.Float64) / n).alias("z"),
        (pl.col("pn").cast(pl.Float64) / n).alias("perf"),
    )


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
    agg = _aggregate(g, pl.col("compatible").fill_null(False))
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
        _round10(num, den).alias("r_new"),
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
    out = pl.concat([_details(rules, with_games), without], how="diagonal_relaxed")
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
        agg = _aggregate(g, pl.col("compatible").fill_null(False))
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
            agg = _aggregate(g, pl.col("compatible").fill_null(False))
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
        .then(_round10(pl.col("pn"), pl.col("n")))
        .when(combined)
        .then(_round10(pl.col("pn") + apn, n + an))
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
    out = pl.concat([_details(rules, has), res.filter(pl.col("n") == 0)], how="diagonal_relaxed")
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


# ---- scalar conveniences (tests, reports) --------------------------------------------


@dataclass(frozen=True)
class PlayerOutcome:
    """One player's period, as plain values. Ratings in rating points; x, p, z, perf exact
    Fractions in 'table' mode (floats in 'logistic'); r_new None while archived."""

    r_old: int | None
    n: int
    n_incompatible: int
    x: Fraction | float | None
    p: Fraction | None
    z: Fraction | float | None
    perf: Fraction | float | None
    method: str
    r_new: int | None
    archive_pn: Fraction | float | None = None
    archive_n: int | None = None


def _score2(result: str | float | Decimal) -> int:
    key = str(result).strip().upper()
    table = {"W": 2, "1": 2, "1.0": 2, "D": 1, "0.5": 1, "=": 1, "L": 0, "0": 0, "0.0": 0}
    if key not in table:
        raise ValueError(f"result {result!r}: expected W, D or L")
    return table[key]


def _frac(v: Any, n: int) -> Fraction | float:
    if isinstance(v, float):
        return v / n
    return Fraction(int(v), n)


def rate_player(
    r_old: int | None,
    games: Sequence[tuple[int | float, str | float]],
    *,
    young: bool = False,
    rules: FfeRules = CLASSIC,
    archive: tuple[Fraction | float, int] | None = None,
) -> PlayerOutcome:
    """One player's period through the Polars engine (`rate_rated` / `rate_unrated`).

    `games`: ``[(opponent_rating, 'W' | 'D' | 'L'), ...]``; opponents here are all rated.
    `archive`: (P, Na) of an archived first-rating performance. Raises ValueError on a bad
    result letter.
    """
    gf = pl.DataFrame(
        {
            "player_id": [1] * len(games),
            "opp_rating": [o for o, _ in games],
            "score2": [_score2(s) for _, s in games],
        },
        schema={"player_id": pl.Int64, "opp_rating": pl.Int64, "score2": pl.Int64}
        if all(isinstance(o, int) for o, _ in games)
        else {"player_id": pl.Int64, "opp_rating": pl.Float64, "score2": pl.Int64},
    )
    if r_old is not None:
        pf = pl.DataFrame(
            {"player_id": [1], "r_old": [r_old], "young": [young]},
            schema={"player_id": pl.Int64, "r_old": pl.Int64, "young": pl.Boolean},
        )
        _g, res = rate_rated(rules, gf, pf)
    else:
        pa, na = archive if archive else (None, None)
        if isinstance(pa, Fraction):
            assert na is not None  # pa came from `archive`, and so did na
            if pa * na != int(pa * na):
                raise ValueError("archive P x Na must be whole in 'table' mode")
            pa_num: int | float | None = int(pa * na)
        else:
            pa_num = pa * na if pa is not None and na else None
        pf = pl.DataFrame(
            {"player_id": [1], "young": [young], "archive_pn": [pa_num], "archive_n": [na]},
            schema={
                "player_id": pl.Int64,
                "young": pl.Boolean,
                "archive_pn": pl.Float64 if isinstance(pa_num, float) else pl.Int64,
                "archive_n": pl.Int64,
            },
        )
        _g, res = rate_unrated(rules, gf, pf)
    row = res.row(0, named=True)
    n = int(row["n"] or 0)
    if n == 0:
        return PlayerOutcome(
            r_old, 0, int(row["n_incompatible"] or 0), None, None, None, None, row["method"], row.get("r_new")
        )
    apn, an = row.get("archive_pn"), row.get("archive_n")
    return PlayerOutcome(
        r_old=r_old,
        n=n,
        n_incompatible=int(row["n_incompatible"]),
        x=_frac(row["s_opp"], n),
        p=Fraction(int(row["pts2"]), 2 * n),
        z=_frac(row["zn"], n),
        perf=_frac(row["pn"], n),
        method=row["method"],
        r_new=row["r_new"],
        archive_pn=(_frac(apn, an) if apn is not None and an else None),
        archive_n=an,
    )


def logistic_z(p: float, clamp: int = 470) -> float:
    """Z = 400 log10(p / (1 - p)) clamped to ±clamp (spec A.4, 'logistic' mode; seed 000 Nb 1)."""
    if p >= 1:
        return float(clamp)
    if p <= 0:
        return -float(clamp)
    return max(-clamp, min(clamp, 400 * math.log10(p / (1 - p))))
