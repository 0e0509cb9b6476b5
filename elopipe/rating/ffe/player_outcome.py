"""One player's FFE period as plain values (spec A.4-A.6), for tests and reports.

Source: the implementable specification ``ffe-rating-rules.md`` Part A (seed 000): `rate_player`
runs one player's games through the Polars engine of `elopipe.rating.ffe.classic` and returns
X, p, Z, P as exact Fractions in 'table' mode; `logistic_z` is the 'logistic' Z of spec A.4
(seed 000 Nb 1) on one score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import polars as pl

from elopipe.rating.ffe.classic import rate_rated, rate_unrated
from elopipe.rating.ffe.params import CLASSIC, FfeRules


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
