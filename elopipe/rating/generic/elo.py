"""Generic K-factor Elo, the system calculators and clubs use (project seed 001, Portuguese).

Rule (seed 001, "Calculadora de Elo", steps 1-6):

* expected score of A against B: ``E = 1 / (1 + 10^((Rb - Ra) / 400))`` (the logistic
  formula, not FIDE table 8.1.2);
* change over a rating period: ``K x sum(S - E)``, with S = 1 / 0.5 / 0 for a win / draw / loss,
  every E computed from the ratings in force at the start of the period;
* ratings are kept to one decimal ("Normalmente, arredondamos as classificações Elo para um
  dígito decimal"): the period's change is rounded to 0.1, halves away from zero.

The seed's vectors: 1750 vs 1810, win, K 20 -> E 0.414, +11.7 -> 1761.7; adding a draw against
the same opponent in the same period -> +13.4 in total.

K is configurable (default 20) with an optional schedule by rating or by games played
(`KSchedule`). Periods are 'game' (each game updates at once, in game order), 'month' or
'tournament' (see `elopipe.rating.generic.run`).

Units: rating points, as `Decimal` with one decimal place.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

ONE_DECIMAL = Decimal("0.1")
# A rating is at most a few thousand points; far above, the arithmetic stops meaning anything.
RATING_MAX = 10_000
DEFAULT_K = 20


def expected_score(ra: float | Decimal, rb: float | Decimal) -> float:
    """Expected score of a player rated `ra` against one rated `rb` (seed 001, steps 1-4).

    Returns a float in (0, 1); the formula is irrational, so no exact form exists.
    """
    return 1.0 / (1.0 + math.pow(10.0, (float(rb) - float(ra)) / 400.0))


def round_one_decimal(x: float | Decimal) -> Decimal:
    """Round to one decimal, halves away from zero (never Python's round(), which is half-even).

    A float is converted exactly (Decimal(float)) before rounding, so 0.05 written as the float
    0.05000000000000000277 rounds up as it should.
    """
    d = x if isinstance(x, Decimal) else Decimal(x)
    return d.quantize(ONE_DECIMAL, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class KSchedule:
    """K factor: `default`, overridden by the first matching rule.

    * `by_games`: ``((games_below, k), ...)`` — a player with fewer than `games_below` rated
      games so far gets `k` (e.g. ``((30, 40),)`` for FIDE-like newcomers);
    * `by_rating`: ``((rating_at_least, k), ...)`` — a player rated at least that gets `k`
      (e.g. ``((2400, 10),)``). The highest matching threshold wins.

    `by_games` is checked before `by_rating`.
    """

    default: int = DEFAULT_K
    by_games: tuple[tuple[int, int], ...] = field(default_factory=tuple)
    by_rating: tuple[tuple[float, int], ...] = field(default_factory=tuple)

    def k_for(self, rating: float | Decimal, games_so_far: int = 0) -> int:
        """K for a player with `rating` (rating points) and `games_so_far` rated games."""
        for below, k in sorted(self.by_games):
            if games_so_far < below:
                return k
        best: tuple[float, int] | None = None
        for at_least, k in self.by_rating:
            if float(rating) >= at_least and (best is None or at_least > best[0]):
                best = (at_least, k)
        return best[1] if best else self.default

    @classmethod
    def parse(cls, text: str) -> KSchedule:
        """Parse ``"20"`` or ``"20,games<30:40,rating>=2400:10"`` (comma separated).

        Raises ValueError on anything else.
        """
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts:
            raise ValueError("empty K schedule")
        try:
            return cls._parse(parts)
        except ValueError as exc:
            if str(exc).startswith("K rule"):
                raise
            raise ValueError(f"K {text!r}: expected a whole number, or rules such as 'games<30:40'") from None

    @classmethod
    def _parse(cls, parts: list[str]) -> KSchedule:
        default = int(parts[0])
        games: list[tuple[int, int]] = []
        rating: list[tuple[float, int]] = []
        for part in parts[1:]:
            cond, sep, k = part.partition(":")
            if not sep:
                raise ValueError(f"K rule {part!r}: expected 'games<N:K' or 'rating>=R:K'")
            if cond.startswith("games<"):
                games.append((int(cond[6:]), int(k)))
            elif cond.startswith("rating>="):
                at = float(cond[8:])
                if not math.isfinite(at):
                    raise ValueError(f"K rule {part!r}: {cond[8:]!r} is not a rating")
                rating.append((at, int(k)))
            else:
                raise ValueError(f"K rule {part!r}: expected 'games<N:K' or 'rating>=R:K'")
        return cls(default, tuple(games), tuple(rating))


@dataclass(frozen=True)
class EloResult:
    """Outcome of one period for one player.

    `expected`: sum of E over the games; `score`: sum of S (points); `change`: K x (S - E)
    rounded to 0.1; `change_exact`: unrounded (float); `new_rating` = rating + change.
    """

    rating: Decimal
    k: int
    games: int
    score: Decimal
    expected: float
    change_exact: float
    change: Decimal
    new_rating: Decimal


def score_value(result: str | float | Decimal) -> Decimal:
    """Map 'W'/'1'/'win', 'D'/'0.5'/'½'/'=', 'L'/'0'/'loss' (or a number in {0, 0.5, 1}) to S.

    Raises ValueError for anything else.
    """
    if isinstance(result, int | float | Decimal) and not isinstance(result, bool):
        s = Decimal(str(result))
    else:
        key = str(result).strip().lower()
        table = {
            "w": "1", "win": "1", "1": "1", "1.0": "1", "+": "1",
            "d": "0.5", "draw": "0.5", "0.5": "0.5", "½": "0.5", "=": "0.5", "1/2": "0.5",
            "l": "0", "loss": "0", "0": "0", "0.0": "0", "-": "0",
        }  # fmt: skip
        if key not in table:
            raise ValueError(f"result {result!r}: expected W, D or L (or 1, 0.5, 0)")
        s = Decimal(table[key])
    if s not in (Decimal(0), Decimal("0.5"), Decimal(1)):
        raise ValueError(f"result {result!r}: a game scores 0, 0.5 or 1")
    return s


def rate_period(
    rating: float | Decimal,
    games: Sequence[tuple[float | Decimal, str | float | Decimal]],
    k: int | KSchedule = DEFAULT_K,
    games_so_far: int = 0,
) -> EloResult:
    """Apply one rating period to one player (seed 001).

    `games`: ``[(opponent_rating, result), ...]`` with ratings in rating points and results as
    accepted by `score_value`. `k`: a fixed K or a `KSchedule` (evaluated at the start of the
    period). Raises ValueError on a bad result.
    """
    r = Decimal(str(rating)) if not isinstance(rating, Decimal) else rating
    kk = k.k_for(r, games_so_far) if isinstance(k, KSchedule) else int(k)
    scores = [score_value(res) for _, res in games]
    expected = math.fsum(expected_score(r, opp) for opp, _ in games)
    total = sum(scores, Decimal(0))
    change_exact = kk * (float(total) - expected)
    change = round_one_decimal(change_exact)
    return EloResult(r, kk, len(games), total, expected, change_exact, change, r + change)


def parse_vs(spec: str) -> tuple[Decimal, Decimal]:
    """Parse a calculator argument ``OPP:RESULT`` (e.g. ``1810:W``, ``1810:0.5``).

    Raises ValueError with the offending text.
    """
    opp, sep, res = spec.partition(":")
    if not sep:
        raise ValueError(f"--vs {spec!r}: expected OPPONENT_RATING:RESULT, e.g. 1810:W")
    try:
        opp_rating = Decimal(opp.strip())
    except ArithmeticError:
        raise ValueError(f"--vs {spec!r}: {opp!r} is not a rating") from None
    if not opp_rating.is_finite() or not 0 <= opp_rating <= RATING_MAX:
        raise ValueError(f"--vs {spec!r}: {opp!r} is not a rating (0 to {RATING_MAX})")
    return opp_rating, score_value(res)


def calculator(rating: float | Decimal, vs: Iterable[str], k: int | KSchedule = DEFAULT_K) -> EloResult:
    """The quick calculator behind `elopipe elo`: one player, one period, games as ``OPP:RESULT``."""
    return rate_period(rating, [parse_vs(v) for v in vs], k)
