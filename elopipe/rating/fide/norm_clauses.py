"""The clauses of the FIDE title norms (B.01 1.4.1-1.4.8) on an applicant's full game set, as Polars expressions.

`clauses` gives, for one norm type and in the order of `elopipe.rating.fide.norms.evaluate`,
each clause's failure condition with its words and hint (1.4.1 games, 1.4.3-1.4.4 federations,
1.4.5 titles, 1.4.8a Ra, 1.4.8b the 35 % score, 1.4.8 Rp); `unknown` the facts `evaluate`
misses (0.31 sex, 1.4.1b team event, 1.4.3-1.4.4 federations, 1.4.3a-b national championship,
1.4.5 titles). They read the aggregates of `elopipe.rating.fide.norms_sets` (one row per event
and applicant) and give `evaluate`'s words, so the set-based rows equal the per-applicant ones.
"""

from __future__ import annotations

import polars as pl

from elopipe.rating.fide import norms
from elopipe.rating.fide.norm_search import MIN_GAMES


def _s(plural: pl.Expr) -> pl.Expr:
    """'s' where `plural`, else ''."""
    return pl.when(plural).then(pl.lit("s")).otherwise(pl.lit(""))


def _fmt_points(x2: pl.Expr) -> pl.Expr:
    """`norms._fmt_points`: half points in words ('half a point', '1 point', '2½ points')."""
    whole, half = x2 // 2, x2 % 2
    text = pl.format(
        "{}{} point{}",
        whole,
        pl.when(half == 1).then(pl.lit("½")).otherwise(pl.lit("")),
        _s(x2 > 2),
    )
    return pl.when((whole == 0) & (half == 1)).then(pl.lit("half a point")).otherwise(text)


def ceil_div(a: pl.Expr, b: int) -> pl.Expr:
    """a / b rounded up, for whole numbers (b > 0)."""
    return -(-a // b)


def _fail(cond: pl.Expr, clause: str, why: pl.Expr, hint: pl.Expr) -> tuple[pl.Expr, str, pl.Expr, pl.Expr]:
    return cond, clause, why, hint


def clauses(norm: str) -> list[tuple[pl.Expr, str, pl.Expr, pl.Expr]]:
    """The clauses of `norms.evaluate` on the full set, in its order: (True when it fails, the
    clause, why, the hint)."""
    n, pts = pl.col("n"), pl.col("pts")
    eight_for_nine = (pl.col("rounds") == 9) & (n == 8) & (pl.col("byes") >= 1)
    short = (n < MIN_GAMES) & ~eight_for_nine
    team_unknown = short & (n >= 7) & pl.col("is_team") & (pl.col("rounds") <= 9)
    more = MIN_GAMES - n
    fed_known = pl.col("federation").is_not_null() & (pl.col("fed_nulls") == 0)
    own_cap, top_cap = 3 * n // 5, 2 * n // 3
    fed_rule = fed_known & pl.col("exemption").is_null() & ~pl.col("national")
    others, own, top = pl.col("others"), pl.col("own"), pl.col("top_count")
    titles_known = pl.col("title_nulls") == 0
    th, nt = pl.col("th"), pl.col(f"nt_{norm}")
    half = ceil_div(n, 2)
    need_t = pl.when(pl.col("double_rr")).then(half).otherwise(pl.max_horizontal(ceil_div(n, 3), pl.lit(3)))
    one, many = norms.TITLE_WORDS[norm]
    ra, min_ra, min_rp = pl.col("ra"), norms.MIN_RA[norm], norms.MIN_RP[norm]
    x2_min = pl.max_horizontal(pl.lit(0), ceil_div(n * (2 * pl.col("p_min") - 1), 100))
    extra_hint = (
        pl.when(pl.col("p_min") > 100)
        .then(pl.lit("not reachable on these games"))
        .otherwise(pl.format("{} more", _fmt_points(x2_min - pts)))
    )
    return [
        _fail(
            short & ~team_unknown,
            "1.4.1",
            pl.format("{} game{} counted, 9 needed", n, _s(n != 1)),
            pl.format("{} more game{}", more, _s(more > 1)),
        ),
        _fail(
            fed_rule & (others < 2),
            "1.4.3",
            pl.format(
                "{} federation{} besides the applicant's among the opponents, 2 needed",
                others,
                _s(others != 1),
            ),
            pl.when(others == 1)
            .then(pl.lit("one more opponent from another federation"))
            .otherwise(pl.lit("two more opponents from another federation")),
        ),
        _fail(
            fed_rule & (own > own_cap),
            "1.4.4",
            pl.format("{} opponents from the applicant's federation, at most {} (3/5 of {})", own, own_cap, n),
            pl.format(
                "{} more foreign opponent{} in place of {} ones",
                own - own_cap,
                _s(own - own_cap > 1),
                pl.col("federation"),
            ),
        ),
        _fail(
            fed_rule & (top > top_cap),
            "1.4.4",
            pl.format("{} opponents from {}, at most {} (2/3 of {})", top, pl.col("top_fed"), top_cap, n),
            pl.format(
                "{} opponent{} from another federation in place of {} ones",
                top - top_cap,
                _s(top - top_cap > 1),
                pl.col("top_fed"),
            ),
        ),
        _fail(
            titles_known & (th < half),
            "1.4.5a",
            pl.format("{} title-holders among the opponents, {} needed", th, half),
            pl.format("{} more titled opponent{}", half - th, _s(half - th > 1)),
        ),
        _fail(
            titles_known & (nt < need_t),
            "1.4.5",
            pl.format("{} {} among the opponents, {} needed", nt, pl.lit(many), need_t),
            pl.format("{} more {}", need_t - nt, pl.when(need_t - nt == 1).then(pl.lit(one)).otherwise(pl.lit(many))),
        ),
        _fail(
            ra < min_ra,
            "1.4.8a",
            pl.format("Ra {}, {} needed", ra, pl.lit(min_ra)),
            pl.format("opponents {} points stronger on average", min_ra - ra),
        ),
        _fail(
            10 * pts < 7 * n,
            "1.4.8b",
            pl.format("{} of {} is under 35 %", _fmt_points(pts), n),
            pl.format("{} more", _fmt_points(pl.max_horizontal(ceil_div(7 * n, 10) - pts, pl.lit(1)))),
        ),
        _fail(
            pl.col("rp") < min_rp,
            "1.4.8",
            pl.format(
                "Rp {} (Ra {} + dp {} at {} %), {} needed", pl.col("rp"), ra, pl.col("dp"), pl.col("p"), pl.lit(min_rp)
            ),
            extra_hint,
        ),
    ]


def unknown(norm: str) -> pl.Expr:
    """The facts `norms.evaluate` misses on the full set, in its words and order ('; ' between,
    '' when none)."""
    n = pl.col("n")
    eight_for_nine = (pl.col("rounds") == 9) & (n == 8) & (pl.col("byes") >= 1)
    team = (n < MIN_GAMES) & ~eight_for_nine & (n >= 7) & pl.col("is_team") & (pl.col("rounds") <= 9)
    app_fed = pl.col("federation").is_not_null()
    fed_known = app_fed & (pl.col("fed_nulls") == 0)
    no_exemption = pl.col("exemption").is_null()
    fed_fails = (pl.col("others") < 2) | (pl.col("own") > 3 * n // 5) | (pl.col("top_count") > 2 * n // 3)
    national = (
        pl.when(pl.col("is_team"))
        .then(pl.lit("team championship (1.4.3b)"))
        .otherwise(pl.lit("championship's final (1.4.3a)"))
    )
    parts = [
        pl.when(pl.col("sex").is_null()).then(pl.lit("the applicant's sex (0.31: women's title)"))
        if norm in ("WGM", "WIM")
        else pl.lit(None, pl.Utf8),
        pl.when(team).then(
            pl.format(
                "whether the event is a World or Continental team or club championship"
                " or the World Cup (1.4.1b: {} games)",
                n,
            )
        ),
        pl.when(~fed_known & no_exemption).then(
            pl.when(~app_fed)
            .then(pl.lit("the applicant's federation (1.4.3, 1.4.4)"))
            .otherwise(pl.format("the federation of {} opponent(s) (1.4.3, 1.4.4)", "fed_nulls"))
        ),
        pl.when(fed_known & fed_fails & no_exemption & pl.col("national")).then(
            pl.format("whether the event is the national {}", national)
        ),
        pl.when(pl.col("title_nulls") > 0).then(pl.format("the title of {} opponent(s) (1.4.5)", "title_nulls")),
    ]
    return pl.concat_str(parts, separator="; ", ignore_nulls=True).fill_null("")
