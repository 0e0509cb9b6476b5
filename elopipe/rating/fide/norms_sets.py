"""Title norms decided in sets (FIDE B.01): the rows whose decision is certain without a search.

`elopipe.rating.fide.norms.evaluate` decides one applicant at a time; most applicants of a FIDE month
miss every norm on a clause that no drop of rounds (1.4.1e/f, `elopipe.rating.fide.norm_search`)
could rescue. This pass decides those rows for every applicant at once, in Polars, with the
same decision, clause, words and figures as `evaluate` on the full game set:

* an event the Title Regulations in force do not cover (no start date, before 1 July 2017: 0.2);
* a women's norm for a man (0.31);
* a norm missed on the full set (some clause of 1.4.1-1.4.8 fails) when no drop set can make a
  norm or an 'unknown': fewer than 10 counted games (a drop must leave 9, 1.4.1a); a round
  robin missed on the opponent mix (1.4.1f); or a bound over every subset S of at least 9
  counted games fails: Ra(S) is at most the mean of the 9 highest ratings raised to the floor
  (1.4.6b-c, 1.4.8a), p(S) at most the 9 best scores over 9 (so Rp, 1.4.8, and 35 %, 1.4.8b),
  and with every opponent's title known, the title-holders and norm titles of S at most those
  of all the games (1.4.5a-e: 5, and 3 or in a double round robin 5, are needed of 9 games).

A norm made on the full set, and an 'unknown' (no clause fails, a fact is missing) when the
same bounds rule every drop out, are decided here too. Every other applicant (a search that
could succeed, an unusual game set: no game counted, a round repeated or missing) is left to the
per-applicant rules.

The clauses' conditions and words on the full set are `elopipe.rating.fide.norm_clauses`; this
module aggregates each applicant's games, bounds every drop set and decides the rows.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools

import polars as pl

from elopipe.rating.fide import norm_clauses, norm_search, norms
from elopipe.rating.rounding import div_round_expr
from elopipe.rating.tables import dp, dp_expr

KEYS = ["tournament_id", "player_id"]
#: A drop set leaves at least this many counted games (1.4.1a).
MIN_GAMES = norm_search.MIN_GAMES
_DP_LOW, _DP_HIGH = dp(0), dp(100)
#: The clauses of the score alone (`norms.half_point_short`).
SCORE_CLAUSES = frozenset({"1.4.8", "1.4.8b"})


@functools.cache
def _p_min_array() -> pl.Series:
    """For a needed dp t (index t − dp(0), t clipped to dp(0) … dp(100) + 1): the smallest p
    (whole percent) with dp(p) ≥ t, 101 when none (dp grows with p, table 8.1.1)."""
    dps = [dp(p) for p in range(101)]  # non-decreasing: the first p reaching t is a bisection
    out = [bisect.bisect_left(dps, t) for t in range(_DP_LOW, _DP_HIGH + 2)]
    return pl.Series("p_min", out, dtype=pl.Int64)


def _applicants(ev: pl.DataFrame, games: pl.DataFrame, applicants: pl.DataFrame) -> pl.DataFrame:
    """One row per (event, player): the event's facts, the applicant's, and the aggregates of
    his counted games that the clauses and the bounds need."""
    g = (
        games.join(ev.select("tournament_id", "first_day"), on="tournament_id")
        .with_columns(
            counted=pl.col("excluded").is_null(),
            unrated_as=pl.when(pl.col("first_day") >= norms.ERAS[0].since)
            .then(pl.lit(norms.ERAS[0].unrated))
            .otherwise(pl.lit(norms.ERAS[1].unrated)),
        )
        .with_columns(value=pl.col("rating").cast(pl.Int64).fill_null(pl.col("unrated_as")))
    )
    # 1.4.6c: the lowest counted opponent, the earlier round on a tie (games left out sort last)
    g = g.with_columns(low_key=pl.when(pl.col("counted")).then(pl.col("value")).otherwise(pl.lit(1 << 40)))
    c = pl.col("counted")
    lowest = ("low_key", "round")
    aggs = [
        pl.len().alias("n_all"),
        pl.col("points_x2").cast(pl.Int64).sum().alias("pts_all"),
        (pl.col("round").is_null().any() | (pl.col("round").n_unique() < pl.len())).alias("odd_rounds"),
        pl.col("list_date").sort_by("round").first().alias("list_date"),
        (pl.col("list_date").n_unique() == 1).alias("one_list"),
        c.sum().cast(pl.Int64).alias("n"),
        pl.col("points_x2").filter(c).cast(pl.Int64).sum().alias("pts"),
        pl.col("opp_fed").filter(c).is_null().sum().alias("fed_nulls"),
        pl.col("opp_title").filter(c).is_null().sum().alias("title_nulls"),
        pl.col("opp_title").filter(c).is_in(list(norms.TITLE_HOLDERS)).sum().alias("th"),
        pl.col("value").filter(c).sum().alias("v_sum"),
        pl.col("value").sort_by(*lowest).first().alias("low_value"),
        pl.col("opponent_id").sort_by(*lowest).first().alias("low_id"),
        pl.col("rating").sort_by(*lowest).first().alias("low_rating"),
        pl.col("points_x2").filter(c).cast(pl.Int64).top_k(MIN_GAMES).sum().alias("top_pts"),
    ]
    for n in norms.NORM_TYPES:
        aggs.append(pl.col("opp_title").filter(c).is_in(list(norms.NORM_TITLES[n])).sum().alias(f"nt_{n}"))
        top = pl.col("value").filter(c).clip(lower_bound=norms.FLOOR[n]).top_k(MIN_GAMES).sum()
        aggs.append(top.alias(f"top_v_{n}"))
    out = g.group_by(KEYS).agg(aggs)
    facts = applicants.select(*KEYS, "title", "federation", "sex", "byes")
    return (
        out.join(facts, on=KEYS, how="left")
        .join(
            ev.select(
                "tournament_id",
                "first_day",
                "rounds",
                "round_robin",
                "double_rr",
                "swiss_143d",
                "maybe_national",
                "host",
                "is_team",
            ),
            on="tournament_id",
        )
        .join(_federations(games, applicants), on=KEYS, how="left")
        .with_columns(
            pl.col("title").fill_null(""),
            pl.col("byes").fill_null(0).cast(pl.Int64),
            pl.col("rounds").fill_null(0).cast(pl.Int64),
            pl.col("is_team").fill_null(False),
            pl.when(pl.col("swiss_143d")).then(pl.lit("1.4.3d")).otherwise(None).alias("exemption"),
            (pl.col("maybe_national") & (pl.col("federation") == pl.col("host"))).fill_null(False).alias("national"),
            pl.col("own").fill_null(0),
            pl.col("others").fill_null(0),
            pl.col("top_count").fill_null(0),
        )
    )


def _federations(games: pl.DataFrame, applicants: pl.DataFrame) -> pl.DataFrame:
    """Per (event, player): `own`, `others` (federations other than his), `top_fed`, `top_count`
    (the most frequent, the first in alphabetical order on a tie) of the counted opponents
    (FID is no federation, 1.4.2a)."""
    counts = (
        games.filter(
            pl.col("excluded").is_null() & pl.col("opp_fed").is_not_null() & (pl.col("opp_fed") != norms.NO_FEDERATION)
        )
        .group_by(*KEYS, "opp_fed")
        .len("count")
        .join(applicants.select(*KEYS, "federation"), on=KEYS, how="left")
    )
    return counts.group_by(KEYS).agg(
        pl.col("count").filter(pl.col("opp_fed") == pl.col("federation")).sum().alias("own"),
        (pl.col("opp_fed") != pl.col("federation")).fill_null(True).sum().alias("others"),
        pl.col("opp_fed")
        .sort_by(pl.col("count"), pl.col("opp_fed"), descending=[True, False])
        .first()
        .alias("top_fed"),
        pl.col("count").max().alias("top_count"),
    )


def _masks(values: pl.Series, clauses: list[str]) -> pl.DataFrame:
    """Per bit mask of failing clauses (bit i: `clauses[i]`): `failed` (the clauses in order),
    `clause` and `_first` (the first one and its index; null when none), `_mix` (a clause of the
    opponent mix, 1.4.1f), `_score_only` (only clauses of the score fail)."""
    rows = []
    for m in values.to_list():  # at most 2 ** len(clauses) values, a few in practice
        failed = [c for i, c in enumerate(clauses) if m >> i & 1]
        first = next((i for i in range(len(clauses)) if m >> i & 1), None)
        mix = bool(norm_search.MIX_CLAUSES & set(failed))
        rows.append((m, failed, failed[0] if failed else None, first, mix, set(failed) <= SCORE_CLAUSES))
    schema: dict[str, pl.DataType] = {
        "_mask": pl.Int64(),
        "failed": pl.List(pl.Utf8),
        "clause": pl.Utf8(),
        "_first": pl.Int64(),
        "_mix": pl.Boolean(),
        "_score_only": pl.Boolean(),
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def _norm_rows(a: pl.DataFrame, norm: str) -> pl.DataFrame:
    """Every applicant of `a` (an era in force, at least one counted game) for `norm`, with the
    full set's outcome and `settled` (True when the per-applicant rules would give this row)."""
    n, pts = pl.col("n"), pl.col("pts")
    floor = norms.FLOOR[norm]
    a = _performance(a, norm)
    fails = norm_clauses.clauses(norm)
    # the failing clauses as one bit mask; its few distinct values are named in `_masks`
    mask = pl.sum_horizontal([f[0].cast(pl.Int64) * (1 << i) for i, f in enumerate(fails)])
    a = a.with_columns(_mask=mask)
    a = a.join(_masks(a["_mask"].unique(), [f[1] for f in fails]), on="_mask", how="left")
    min_ra, min_rp = norms.MIN_RA[norm], norms.MIN_RP[norm]
    no_rescue = _no_rescue(norm)
    half_more = pts + 1
    half_point = (
        pl.col("_score_only")
        & (10 * half_more >= 7 * n)
        & (pl.col("ra") + dp_expr(div_round_expr(half_more * 100, 2 * n)) >= min_rp)
    )
    fed_known = pl.col("federation").is_not_null() & (pl.col("fed_nulls") == 0)
    titles_known = pl.col("title_nulls") == 0
    count = pl.col("failed").list.len()
    # the words of each outcome built on its rows only (the first failing clause's)
    first = pl.col("_first")
    unknown = norm_clauses.unknown(norm)
    passed = a.filter(first.is_null()).with_columns(_unknown=unknown)
    norm_made = pl.col("_unknown") == ""
    eight_for_nine = (pl.col("rounds") == 9) & (n == 8) & (pl.col("byes") >= 1)
    a = pl.concat(
        [
            # no clause fails: the norm, or 'unknown' when a fact is missing (1.4.1e/f are
            # tried only when no bound rules every drop out)
            passed.with_columns(
                decision=pl.when(norm_made).then(pl.lit("norm")).otherwise(pl.lit("unknown")),
                clause=pl.when(norm_made & eight_for_nine & (n < MIN_GAMES)).then(pl.lit("1.4.1c")),
                reason=pl.when(norm_made)
                .then(
                    pl.format(
                        "{} norm: Rp {} ≥ {}, Ra {} ≥ {}", pl.lit(norm), "rp", pl.lit(min_rp), "ra", pl.lit(min_ra)
                    )
                )
                .otherwise(pl.format("unknown: {}", "_unknown")),
                hint=pl.lit(None, pl.Utf8),
                settled=norm_made | no_rescue,
            ),
            *(
                a.filter(first == i).with_columns(
                    decision=pl.lit("missed"),
                    reason=pl.format("{}: {}", pl.col("clause"), why),
                    hint=hint,
                    settled=no_rescue,
                )
                for i, (_, _, why, hint) in enumerate(fails)
            ),
        ],
        how="diagonal_relaxed",
    )
    rows = a.with_columns(
        norm=pl.lit(norm),
        single_miss=count == 1,
        half_point=half_point & (count > 0),
        raised_id=pl.when(pl.col("low_value") < floor).then(pl.col("low_id")),
        raised_from=pl.when(pl.col("low_value") < floor).then(pl.col("low_rating")),
        title_holders=pl.when(titles_known).then(pl.col("th")).otherwise(0),
        norm_titles=pl.when(titles_known).then(pl.col(f"nt_{norm}")).otherwise(0),
        feds=pl.when(fed_known).then(pl.col("others")).otherwise(0),
        own_fed=pl.when(fed_known).then(pl.col("own")).otherwise(0),
        top_fed=pl.when(fed_known).then(pl.col("top_fed")),
        top_count=pl.when(fed_known).then(pl.col("top_count")).otherwise(0),
    )
    return _not_eligible(rows) if norm in ("WGM", "WIM") else rows


def _performance(a: pl.DataFrame, norm: str) -> pl.DataFrame:
    """`a` with Ra (the lowest opponent raised to the norm's floor, B.01 1.4.6), p, dp, Rp and
    `p_min` (the score in hundredths the norm's Rp needs at this Ra)."""
    n, pts = pl.col("n"), pl.col("pts")
    floor = norms.FLOOR[norm]
    raise_ = pl.max_horizontal(pl.lit(floor) - pl.col("low_value"), pl.lit(0))
    a = a.with_columns(ra=div_round_expr(pl.col("v_sum") + raise_, n)).with_columns(
        p=div_round_expr(pts * 100, 2 * n),
    )
    a = a.with_columns(dp=dp_expr(pl.col("p"))).with_columns(
        rp=pl.col("ra") + pl.col("dp"),
        p_min=pl.lit(_p_min_array()).gather(
            (pl.lit(norms.MIN_RP[norm]) - pl.col("ra")).clip(_DP_LOW, _DP_HIGH + 1) - _DP_LOW
        ),
    )
    return a


def _no_rescue(norm: str) -> pl.Expr:
    """True where no subset of 9 counted games or more can make the norm (bounds over every such
    subset, see the module's docstring): the full set's outcome is then the applicant's."""
    n = pl.col("n")
    min_ra, min_rp = norms.MIN_RA[norm], norms.MIN_RP[norm]
    # bounds over every subset of ≥ 9 counted games (see the module's docstring)
    ub_ra = div_round_expr(pl.col(f"top_v_{norm}"), pl.lit(MIN_GAMES))
    ub_p = div_round_expr(pl.col("top_pts") * 100, pl.lit(2 * MIN_GAMES))
    titles_known = pl.col("title_nulls") == 0
    # of 9 games or more: ceil(9 / 2) title-holders (1.4.5a), 3 norm titles (5 in a double RR)
    few_titles = (pl.col("th") < norm_clauses.ceil_div(pl.lit(MIN_GAMES), 2)) | (
        pl.col(f"nt_{norm}")
        < pl.when(pl.col("double_rr")).then(norm_clauses.ceil_div(pl.lit(MIN_GAMES), 2)).otherwise(3)
    )
    return (
        (n <= MIN_GAMES)
        | (pl.col("round_robin") & pl.col("_mix"))
        | (ub_ra < min_ra)
        | (ub_ra + dp_expr(ub_p) < min_rp)
        | (10 * pl.col("top_pts") < 7 * MIN_GAMES)
        | (titles_known & few_titles)
    )


def _not_eligible(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` of a women's title with the rows of applicants who are not women (sex known)
    decided `not_eligible` (B.01 0.31)."""
    not_eligible = (pl.col("sex") != "w").fill_null(False)
    zero = pl.lit(0)
    null = pl.lit(None)
    return rows.with_columns(
        pl.when(not_eligible).then(pl.lit(True)).otherwise(pl.col("settled")).alias("settled"),
        *(
            pl.when(not_eligible).then(v).otherwise(pl.col(k)).alias(k)
            for k, v in {
                "decision": pl.lit("not_eligible"),
                "clause": pl.lit("0.31"),
                "reason": pl.lit("a women's title"),
                "hint": null,
                "failed": pl.lit([], dtype=pl.List(pl.Utf8)),
                "single_miss": pl.lit(False),
                "half_point": pl.lit(False),
                "n": zero,
                "pts": zero,
                "ra": null,
                "p": null,
                "dp": null,
                "rp": null,
                "raised_id": null,
                "raised_from": null,
                "title_holders": zero,
                "norm_titles": zero,
                "feds": zero,
                "own_fed": zero,
                "top_fed": null,
                "top_count": zero,
                "exemption": null,
            }.items()
        ),
    )


def _era_refused(a: pl.DataFrame, system: str) -> pl.DataFrame:
    """Rows of events no era covers (`norms.era_for`): the reason, every game of the applicant."""
    reason = (
        pl.when(pl.col("first_day").is_null())
        .then(pl.lit(norms.era_for(None)))
        .otherwise(pl.lit(norms.era_for(dt.date.min)))
    )
    return pl.concat(
        [
            a.select(
                pl.lit(system).alias("system"),
                *KEYS,
                "list_date",
                pl.lit(n).alias("norm"),
                reason.str.split(":").list.first().alias("decision"),
                reason.alias("reason"),
                pl.lit([], dtype=pl.List(pl.Utf8)).alias("failed"),
                pl.lit([], dtype=pl.List(pl.Int32)).alias("dropped"),
                pl.col("title").is_in(list(norms.HOLDS[n])).alias("holds_title"),
                pl.col("n_all").alias("games"),
                pl.col("pts_all").alias("points_x2"),
            )
            for n in norms.NORM_TYPES
        ]
    )


def decide(
    system: str, ev: pl.DataFrame, games: pl.DataFrame, applicants: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows, rest): `rows` the norm rows decided here, columns of `norms_store.NORM_SCHEMA`
    but `code` (any order, dtypes to cast); `rest` the (tournament_id, player_id) of the
    applicants whose four rows the per-applicant rules must decide.

    `ev`, `games`, `applicants` are `norm_inputs.prepare`'s frames."""
    a = _applicants(ev, games, applicants)
    no_era = pl.col("first_day").is_null() | (pl.col("first_day") < norms.ERAS[-1].since)
    # the per-applicant rules date the row by its first round: certain when the rounds are
    # distinct or the games all of one list
    refused = _era_refused(a.filter(no_era & (~pl.col("odd_rounds") | pl.col("one_list"))), system)
    live = a.filter(~no_era & (pl.col("n") > 0) & ~pl.col("odd_rounds")).with_columns(
        era=pl.when(pl.col("first_day") >= norms.ERAS[0].since)
        .then(pl.lit(norms.ERAS[0].name))
        .when(pl.col("first_day") >= norms.ERAS[1].since)
        .then(pl.lit(norms.ERAS[1].name))
        .otherwise(pl.lit(norms.ERAS[2].name))
    )
    cols = ["system", *KEYS, "list_date", "norm", "era", "decision", "clause", "reason", "hint", "failed"]
    cols += ["single_miss", "half_point", "holds_title", "games", "points_x2", "ra", "p", "dp", "rp"]
    cols += ["raised_id", "raised_from", "title_holders", "norm_titles", "feds", "own_fed", "top_fed"]
    cols += ["top_count", "dropped", "exemption"]
    per_norm = pl.concat(
        [
            _norm_rows(live, n).with_columns(holds_title=pl.col("title").is_in(list(norms.HOLDS[n])))
            for n in norms.NORM_TYPES
        ],
        how="diagonal_relaxed",
    )
    settled = per_norm.group_by(KEYS).agg(pl.col("settled").all())
    done = settled.filter(pl.col("settled")).select(KEYS)
    rows = (
        per_norm.join(done, on=KEYS, how="semi")
        .with_columns(
            system=pl.lit(system),
            games=pl.col("n"),
            points_x2=pl.col("pts"),
            dropped=pl.lit([], dtype=pl.List(pl.Int32)),
        )
        .select(cols)
    )
    rest = a.select(KEYS).join(done, on=KEYS, how="anti").join(refused.select(KEYS).unique(), on=KEYS, how="anti")
    return pl.concat([rows, refused], how="diagonal_relaxed"), rest
