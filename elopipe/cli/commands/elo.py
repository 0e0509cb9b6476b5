"""`elopipe elo`: the quick generic-Elo calculator of seed 001 (one player, one period)."""

from __future__ import annotations

import math
from typing import Annotated

import typer

from elopipe.cli.app import app, console, err_console
from elopipe.rating.elo import DEFAULT_K, RATING_MAX, KSchedule, calculator, expected_score


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
    games_so_far: Annotated[int, typer.Option("--games", help="Rated games played before (for a K schedule).")] = 0,
) -> None:
    """Generic K-factor Elo: new rating = rating + K x sum(S - E), kept to one decimal."""
    if not math.isfinite(rating) or not 0 <= rating <= RATING_MAX:
        err_console.print(f"error: the rating must be a number from 0 to {RATING_MAX}", style="red")
        raise typer.Exit(2)
    try:
        schedule = KSchedule.parse(k)
        _check_k(schedule)
        kk = schedule.k_for(rating, games_so_far)
        res = calculator(rating, vs, kk)
    except ValueError as exc:
        err_console.print(f"error: {exc}", style="red")
        raise typer.Exit(2) from None
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


# A K of 0 rates nothing and a negative K turns a win into a loss; above this a single game
# moves a rating by hundreds of points, which no Elo system does.
K_MAX = 1000


def _check_k(schedule: KSchedule) -> None:
    """ValueError (shown in one line, exit 2) for a K outside 1..K_MAX anywhere in `schedule`."""
    ks = [schedule.default, *(k for _, k in schedule.by_games), *(k for _, k in schedule.by_rating)]
    bad = [k for k in ks if not 1 <= k <= K_MAX]
    if bad:
        raise ValueError(f"K must be a whole number from 1 to {K_MAX}, not {bad[0]}")
