"""The FIDE calculator behind `elopipe elo --fide`: one rated player, one period, by the FIDE tables.

Rules (FIDE B.02, the version in force on `on`, `elopipe.rating.fide.b02`): each game against a rated
opponent gives W − PD, PD read from table 8.1.2 for D = Ro − Rc after the 400-point rule of the
version (8.3.1: every game; V2022 one upgrade per event; from 1 Oct 2025 none for a player rated
2650 or more); the change is K × Σ(W − PD), rounded once, halves away from zero (8.3.4). K comes
from the FIDE rules (8.3.3 and the 700 cap) when the player's data allow it: a rating of 2400 or
more (or `ever_2400`), a birth year, or the number of rated games so far; otherwise the `k` given
(default 20, then the 700 cap). The logistic formula is not used (that is `elopipe.rating.generic.elo`).

Units: ratings and D in rating points (int); PD, W − PD and the change in hundredths (int), exact.
Spec: ``fide-rating-rules.md`` §3 and the test vectors of §12.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from elopipe.rating.fide.b02 import (
    RuleSet,
    cap_k,
    d_used,
    is_junior,
    k_factor,
    period_change,
    rules_for_date,
    version_name,
)
from elopipe.rating.tables import pd_x100


@dataclass(frozen=True)
class FideGame:
    """One game: opponent's Rc, score W in hundredths (100, 50, 0), D raw and used, PD and
    W − PD in hundredths, and K × (W − PD) in hundredths."""

    rc: int
    w_x100: int
    d_raw: int
    d_used: int
    pd_x100: int
    w_minus_pd_x100: int
    change_x100: int


@dataclass(frozen=True)
class FideCalc:
    """The period: rules version, K and where it came from ('rules' or 'given'), the K before the
    700 cap, the games, Σ(W − PD) and K × Σ(W − PD) in hundredths, the rounded change and Rn."""

    ro: int
    rules: str
    k: int
    k_source: str
    k_before_cap: int
    games: tuple[FideGame, ...]
    sum_w_minus_pd_x100: int
    change_x100: int
    change: int
    new_rating: int


def fide_period(
    ro: int,
    games: Sequence[tuple[int, Decimal]],
    *,
    on: dt.date,
    rules: str | None = None,
    k: int | None = None,
    total_games: int | None = None,
    birth_year: int | None = None,
    ever_2400: bool = False,
    ever_2300: bool = False,
) -> FideCalc:
    """Rate one period of a rated player with rating `ro` (see the module docstring).

    `games`: ``[(opponent_rating, score), ...]`` with scores 1, 0.5 or 0 (Decimal). `on`: the
    period's date (it picks the rules version unless `rules` names one: 'V2017', 'V2022',
    'V2024'). `k`: the K to use when the data do not give FIDE's; an explicit `k` always wins when
    no data is given. Raises ValueError for an unknown version or an empty game list.
    """
    if not games:
        raise ValueError("give at least one game")
    if rules is not None:
        rules = version_name(rules)
    rs = rules_for_date(on, rules)
    has_data = ever_2400 or ro >= 2400 or birth_year is not None or total_games is not None
    if has_data:
        base, source = _rules_k(rs, on, ro, total_games, birth_year, ever_2400, ever_2300), "rules"
    else:
        base, source = (20 if k is None else k), "given"
    n = len(games)
    kk = cap_k(base, n) if rs.cap_700 else base
    diffs = [ro - rc for rc, _ in games]
    # V2022 8.3.1: one upgrade per event, for the game with the largest D above 400
    upgraded = diffs.index(max(diffs))
    rows = []
    for i, ((rc, score), d) in enumerate(zip(games, diffs, strict=True)):
        used = d_used(d, ro, rs, is_largest_upgrade=i == upgraded)
        w = int(score * 100)
        pd = pd_x100(used)
        rows.append(FideGame(rc, w, d, used, pd, w - pd, kk * (w - pd)))
    total = sum(g.w_minus_pd_x100 for g in rows)
    change = period_change(total, kk)
    return FideCalc(ro, rs.name, kk, source, base, tuple(rows), total, kk * total, change, ro + change)


def _rules_k(
    rs: RuleSet,
    on: dt.date,
    ro: int,
    total_games: int | None,
    birth_year: int | None,
    ever_2400: bool,
    ever_2300: bool,
) -> int:
    """K of B.02 8.3.3 before the 700 cap, by version: from 2014 `k_factor` (10 once 2400, 40 for a
    junior never 2300, 40 under 30 games, else 20); before, `k_new` under 30 games, `k_low`, 10 once
    2400 (V2009: with 30 games). Games unknown (None) count as 30 or more."""
    reached = ever_2400 or ro >= 2400
    few = total_games is not None and total_games < 30
    if not rs.k_junior:  # the rules before July 2014
        if reached and not (rs.k10_needs_30 and few):
            return 10
        return rs.k_new if few else rs.k_low
    junior = is_junior(on, birth_year, rule=rs.junior_rule)
    return k_factor(ever_2400=reached, ever_2300=ever_2300 or ro >= 2300, junior=junior, total_games=total_games)
