"""`elopipe elo`: the quick calculator of one player's period: generic Elo of seed 001 (logistic,
the default) or, with `--fide`, FIDE's table 8.1.2 and 400-point rule (`elopipe.rating.fide.calc`)."""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Annotated

import typer

from elopipe.cli.app import app, console, fail
from elopipe.rating.generic.elo import DEFAULT_K, RATING_MAX, KSchedule, calculator, expected_score


@app.command("elo")
def elo_command(
    rating: Annotated[float, typer.Argument(help="The player's rating (rating points).")],
    vs: Annotated[
        list[str],
        typer.Option(
            "--vs",
            help="One game as OPPONENT_RATING:RESULT, RESULT = W, D or L (or 1, 0.5, 0). Repeat.",
        ),
    ],
    k: Annotated[
        str,
        typer.Option(
            "--k",
            help="K factor (default 20), or a schedule such as '20,games<30:40,rating>=2400:10'.",
        ),
    ] = str(DEFAULT_K),
    games_so_far: Annotated[
        int | None, typer.Option("--games", help="Rated games played before (a K schedule; FIDE's K).", min=0)
    ] = None,
    fide: Annotated[
        bool, typer.Option("--fide", help="FIDE: PD from table 8.1.2, the 400-point rule, FIDE's K.")
    ] = False,
    rules: Annotated[
        str | None, typer.Option("--rules", help="--fide: V2017, V2022 or V2024 (default: the version in force).")
    ] = None,
    on: Annotated[
        str | None, typer.Option("--date", help="--fide: the period's date YYYY-MM-DD (default today).")
    ] = None,
    born: Annotated[int | None, typer.Option("--born", help="--fide: year of birth (junior K).")] = None,
    ever_2400: Annotated[
        bool, typer.Option("--ever-2400", help="--fide: a published rating once reached 2400.")
    ] = False,
) -> None:
    """Generic K-factor Elo: new rating = rating + K x sum(S - E), kept to one decimal. With --fide,
    FIDE's rules: K x sum(W - PD), rounded to a whole point."""
    if not math.isfinite(rating) or not 0 <= rating <= RATING_MAX:
        fail(f"the rating must be a number from 0 to {RATING_MAX}")
    if fide:
        _fide(rating, vs, k, games_so_far, rules, on, born, ever_2400)
        return
    if rules is not None or on is not None or born is not None or ever_2400:
        fail("--rules, --date, --born and --ever-2400 go with --fide")
    try:
        schedule = KSchedule.parse(k)
        _check_k(schedule)
        kk = schedule.k_for(rating, games_so_far or 0)
        res = calculator(rating, vs, kk)
    except ValueError as exc:
        fail(str(exc))
    for spec in vs:
        opp, _, result = spec.partition(":")
        e = expected_score(rating, float(opp))
        console.print(f"  vs {opp.strip():>7}  {result.strip():<4} E = {e:.4f}")
    sign = "+" if res.change >= 0 else ""
    console.print(
        f"K = {res.k}, games = {res.games}, score = {res.score}, "
        f"expected = {res.expected:.4f}, change = {sign}{res.change}"
    )
    console.print(f"new rating: {res.new_rating}")


def _hundredths(x100: int, sign: bool = True) -> str:
    """A value in hundredths as '+11.60' (exact: no float)."""
    q, r = divmod(abs(x100), 100)
    prefix = ("-" if x100 < 0 else "+") if sign else ("-" if x100 < 0 else "")
    return f"{prefix}{q}.{r:02d}"


def _score(w_x100: int) -> str:
    return {100: "1", 50: "0.5", 0: "0"}[w_x100]


def _fide(
    rating: float,
    vs: list[str],
    k: str,
    games_so_far: int | None,
    rules: str | None,
    on: str | None,
    born: int | None,
    ever_2400: bool,
) -> None:
    """`elopipe elo --fide`: one period of a rated player by FIDE B.02 (`fide_period`)."""
    from elopipe.rating.fide.calc import fide_period
    from elopipe.rating.generic.elo import parse_vs

    try:
        if rating != int(rating):
            raise ValueError(f"{rating:g}: a FIDE rating is a whole number")
        games = [parse_vs(v) for v in vs]
        if bad := [f"{opp}" for opp, _ in games if opp != int(opp)]:
            raise ValueError(f"{bad[0]}: a FIDE rating is a whole number")
        if not k.strip().isdigit() or not 1 <= int(k) <= K_MAX:
            raise ValueError(f"--k {k.strip()}: with --fide, K is a whole number from 1 to {K_MAX}")
        date = _period_date(on, rules)
        if born is not None and not date.year - 120 <= born <= date.year:
            raise ValueError(
                f"--born {born}: a year of birth from {date.year - 120} to {date.year} (the period's year)"
            )
        res = fide_period(
            int(rating),
            [(int(opp), s) for opp, s in games],
            on=date,
            rules=rules,
            k=int(k),
            total_games=games_so_far,
            birth_year=born,
            ever_2400=ever_2400,
        )
    except ValueError as exc:
        fail(str(exc))
    for g in res.games:
        capped = f" -> {g.d_used} (400-point rule)" if g.d_used != g.d_raw else ""
        console.print(
            f"  vs {g.rc:>5}  W = {_score(g.w_x100)}  D = {g.d_raw}{capped}  "
            f"PD {_hundredths(g.pd_x100, sign=False)}  W - PD {_hundredths(g.w_minus_pd_x100)}  "
            f"K x (W - PD) {_hundredths(g.change_x100)}"
        )
    if res.k_source == "rules":
        why = "FIDE's rules, B.02 8.3.3"
    else:
        why = "--k; give --games, --born or --ever-2400 for FIDE's K"
    capped_k = f", {res.k_before_cap} before the 700 cap" if res.k != res.k_before_cap else ""
    console.print(
        f"FIDE {_version_label(res.rules)}: K = {res.k} ({why}{capped_k}), games = {len(res.games)}, "
        f"sum(W - PD) = {_hundredths(res.sum_w_minus_pd_x100)}"
    )
    sign = "+" if res.change >= 0 else ""
    console.print(
        f"change = K x sum(W - PD) = {_hundredths(res.change_x100)} -> {sign}{res.change} (halves away from zero)"
    )
    console.print(f"new rating: {res.new_rating}")


def _period_date(on: str | None, rules: str | None) -> dt.date:
    """The period's date of `--date` (default today). ValueError, in the user's words, for a date
    not written YYYY-MM-DD, one after the last list date elopipe takes (`read.dates.LAST_LIST_DATE`),
    or one before FIDE's rules elopipe can confirm (1 July 2009, as `rate`
    refuses: `elopipe.rating.fide.b02` RATED_FROM) unless `--rules` forces a version."""
    from elopipe.rating.fide.b02 import RATED_FROM
    from elopipe.read.dates import LAST_LIST_DATE

    if on is None:
        return dt.date.today()
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", on.strip()):
            raise ValueError(on)
        date = dt.date.fromisoformat(on.strip())
    except ValueError:
        raise ValueError(f"--date {on}: expected YYYY-MM-DD") from None
    if date > LAST_LIST_DATE:
        raise ValueError(f"--date {date.isoformat()}: a date up to {LAST_LIST_DATE.isoformat()}, as for a list")
    if date < RATED_FROM and rules is None:
        raise ValueError(
            f"--date {date.isoformat()}: FIDE's rules before {RATED_FROM.isoformat()} cannot be confirmed "
            "(quarterly lists, a 350-point rule, K and floor of that era); force a version (--rules V2017) "
            "for a what-if"
        )
    return date


def _version_label(name: str) -> str:
    """The rules version as `--rules` names it: V2024A is V2024 as amended from 1 Oct 2025 (the
    amendment belongs to the V2024 chapter: `--rules V2024` applies it from that date on); the
    versions before V2017 (V2009, V2011, V2012, V2014) come only by date, and say so."""
    from elopipe.rating.fide.b02 import VERSION_NAMES

    if name == "V2024A":
        return "V2024 as amended from 1 Oct 2025"
    if name not in VERSION_NAMES:
        return f"{name} (by date; --rules takes {', '.join(VERSION_NAMES)})"
    return name


# A K of 0 rates nothing and a negative K turns a win into a loss; above this a single game
# moves a rating by hundreds of points, which no Elo system does.
K_MAX = 1000


def _check_k(schedule: KSchedule) -> None:
    """ValueError (shown in one line, exit 2) for a K outside 1..K_MAX anywhere in `schedule`."""
    ks = [schedule.default, *(k for _, k in schedule.by_games), *(k for _, k in schedule.by_rating)]
    bad = [k for k in ks if not 1 <= k <= K_MAX]
    if bad:
        raise ValueError(f"K must be a whole number from 1 to {K_MAX}, not {bad[0]}")
