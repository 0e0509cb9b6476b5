"""FIDE rating rules (B.02 Rating Regulations), one rule set per version.

Versions (spec ``fide-rating-rules.md`` §1; before 2014, the sources of issue 15 below):

* ``V2009`` — FIDE Rating Regulations as amended by the 2008 General Assembly, effective
  1 Jul 2009: 400-point rule on every game for both players; K 25 until 30 games, 15 below
  2400, 10 once 2400 is reached with 30 games ("The K values stay as they are", FIDE news
  of 13 Jul 2009; handbook 2002-03 §10.54); no junior K, no 700 cap; floor 1200 (GA-2008
  text §0.6).
* ``V2011`` — from 1 Jul 2011: K 30 for a player with fewer than 30 games (FIDE Ratings
  Meeting, Athens, June 2010, recommended 25 -> 30; in force from 2011 per secondary sources,
  the 1 July date by the effective-date principle of §0.1); 15 and 10 as before (handbook
  id=161 §8.56, "rules in force until 1 July 2014").
* ``V2012`` — V2011 with the floor lowered to 1000 from 1 Jul 2012 (FIDE Presidential Board,
  Al Ain, June 2011).
* ``V2014`` — from 1 Jul 2014: K 40 / 20 / 10 and K 40 for juniors until their 18th birthday
  while under 2300 (handbook id=172 §8.56); floor 1000; initial rating from 5 games as in
  V2017; no 700 cap (it dates from 2017).
* ``V2017`` — FIDE B.02 effective 1 Jul 2017 (to 31 Dec 2021): 400-point rule on every
  game for both players (8.3.1); floor 1000 (7.1.4); initial rating by the old rule
  (8.2.3: 50 % → Ra, +20 per half point above 50 %, else Ra + dp); K 40 for juniors
  until their 18th birthday while < 2300 (8.3.3).
* ``V2022`` — FIDE B.02 effective 1 Jan 2022 (to 29 Feb 2024): 8.3.1 "one upgrade per
  event": the higher-rated player's largest gap > 400 is capped, the others use the raw
  difference; the lower-rated side follows `RuleSet.v2022_cap_lower` (default False =
  raw difference, FIDE's practice reported by Sonas 2023; NOT VERIFIED).  Juniors until the
  end of the year they turn 18.
* ``V2024`` — FIDE B.02 effective 1 Mar 2024: cap every game, both players (8.3.1); floor
  1400 (7.1.4); initial rating with two hypothetical 1800 draws, Ru = Ra + dp(p), max 2200
  (8.2.2–8.2.3); 1 Mar 2024 one-off adjustment R + 0.4 × (2000 − R) below 2000.
* ``V2024A`` — V2024 as amended from 1 Oct 2025: a player rated ≥ 2650 uses the raw
  difference in every game (8.3.1); players below 2650 keep the cap.

**Which version applies.**  The version is chosen by the **tournament's start date**
(old FIDE principle: new rules apply to tournaments starting on or after the effective
date; spec §3.2 boundary note, NOT VERIFIED).  Rules that belong to a list rather than a
tournament (floor, K, initial-rating formula, compression) use the version in force on the
list date.  `rules_for_date` implements both; a forced version (``--rules``) replaces both
choices.

**Not rated.** Events starting before `RATED_FROM` (1 July 2009): quarterly lists closing
"usually one month" before, a 350-point rule from about April 2006 and averaged expected
scores before it, a floor not found for 2005-2009 — rules that cannot be confirmed. The
engine refuses them unless a version is forced for a what-if run. Initial ratings before
1 July 2014 (9 games, three rated opponents and one point per event, 12.5 a half point above
50 % in 2009; the 2011-2014 value and the pooling window not found) are not computed: such a
player stays unrated on those lists (`initial_rule` 'unconfirmed').

The scalar functions here are the reference formulas used by the tests and by the
pure-Python baseline of ``bench/rate.py``; the vectorised engine is `elopipe.rating.fide.engine`.
Units: ratings and differences in rating points (int); scores, PD and W − PD in
hundredths (int); K × Σ(W − PD) in hundredths (int).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace

from elopipe.rating.rounding import div_round, round_x100
from elopipe.rating.tables import dp, pd_x100

# online play is read with the rest of the rate-of-play evidence (`elopipe.read.rate_evidence`)
from elopipe.read.rate_evidence import ONLINE_SITES as ONLINE_SITES
from elopipe.read.rate_evidence import online_platform_expr as online_platform_expr

# The earliest start date whose rules are confirmed and implemented (module docstring); rapid
# and blitz: the 2018-2021 rules of `RB_RULES` are the earliest checked (FIDE's lists of those
# began in 2012).
RATED_FROM = dt.date(2009, 7, 1)
RB_RATED_FROM = dt.date(2018, 1, 1)
V2011_FROM = dt.date(2011, 7, 1)
V2012_FROM = dt.date(2012, 7, 1)
V2014_FROM = dt.date(2014, 7, 1)
V2017_FROM = dt.date(2017, 7, 1)
V2022_FROM = dt.date(2022, 1, 1)
V2024_FROM = dt.date(2024, 3, 1)
V2024A_FROM = dt.date(2025, 10, 1)
#: The one-off adjustment of FIDE B.02 (2024) (announced in FIDE news 2538) on this list.
COMPRESSION_LIST = dt.date(2024, 3, 1)
#: Rapid/blitz: games with a gap ≥ 600 involving a player > 2600 are not rated (R&B 2024, from 1 Dec 2024).
RB_600_FROM = dt.date(2024, 12, 1)


@dataclass(frozen=True)
class RuleSet:
    """Parameters of one version of the FIDE rules (spec §15).

    Attributes:
        name: 'V2017' | 'V2022' | 'V2024' | 'V2024A'.
        floor: publication minimum; a rating below it makes the player unrated (7.1.4/7.2.1).
        cap_mode: 'all' (every game, both players), 'one_upgrade' (V2022 8.3.1) or
            'all_below_2650' (V2024 as amended 1 Oct 2025).
        v2022_cap_lower: V2022 only: cap the lower-rated side in every game (True) or use
            its raw difference (False, default, FIDE's practice; NOT VERIFIED).
        junior_rule: 'birthday' (V2017: until the 18th birthday, checked against the
            birth date when the store has one) or 'year_end' (until the end of the year of
            the 18th birthday).  With only a birth year both are read as list year − birth
            year ≤ 18 (spec §4.2 [R]); see `is_junior`.
        initial_rule: 'old' (8.2.3 of V2017/V2022), 'v2024' (two 1800 draws, max 2200) or
            'unconfirmed' (before 2014: no initial rating is computed).
        k_new, k_low: K with fewer than 30 rated games, and below 2400 (8.3.3; 10 once 2400).
        k_junior: K 40 for juniors under 2300 (from 2014).
        k10_needs_30: K 10 also needs 30 games (V2009's wording).
        cap_700: K limited so that K × games of the period ≤ 700 (from 2017).
        ru_max: maximum initial rating (None: no maximum).
        time_thresholds: (rating for 120 min, rating for 90 min) minimum time rule (1.3).
        k_fixed: one K for everybody before the 700 cap (rapid/blitz 2018-2021: 20).
        first_event_min_x100: least score (hundredths) a newcomer's first event needs not
            to be disregarded (standard 8.2.1: more than zero, i.e. 50; rapid/blitz
            2018-2021: one point, 100).
        cap_mode may also be 'none' (rapid/blitz 2018-2021: full table, no cap).
    """

    name: str
    floor: int
    cap_mode: str
    v2022_cap_lower: bool = False
    junior_rule: str = "year_end"
    initial_rule: str = "v2024"
    ru_max: int | None = 2200
    time_thresholds: tuple[int, int] = (2400, 1800)
    k_fixed: int | None = None
    first_event_min_x100: int = 50
    k_new: int = 40
    k_low: int = 20
    k_junior: bool = True
    k10_needs_30: bool = False
    cap_700: bool = True


# the 2014 text and V2017 differ, for this engine, only by the 700 cap (2017)
_V2017 = RuleSet(
    "V2017",
    floor=1000,
    cap_mode="all",
    junior_rule="birthday",
    initial_rule="old",
    ru_max=None,
    time_thresholds=(2200, 1600),
)
_V2009 = replace(
    _V2017, name="V2009", floor=1200, initial_rule="unconfirmed", k_new=25, k_low=15, k_junior=False,
    k10_needs_30=True, cap_700=False,
)  # fmt: skip
RULES: dict[str, RuleSet] = {
    "V2009": _V2009,
    "V2011": replace(_V2009, name="V2011", k_new=30, k10_needs_30=False),
    "V2012": replace(_V2009, name="V2012", k_new=30, k10_needs_30=False, floor=1000),
    "V2014": replace(_V2017, name="V2014", cap_700=False),
    "V2017": _V2017,
    "V2022": RuleSet("V2022", floor=1000, cap_mode="one_upgrade", initial_rule="old", ru_max=None),
    "V2024": RuleSet("V2024", floor=1400, cap_mode="all"),
    "V2024A": RuleSet("V2024A", floor=1400, cap_mode="all_below_2650"),
}

#: (first day, version) in date order: the version in force on a date is the last one begun
#: (before `RATED_FROM`, the first: the engine refuses those dates).
ERAS: tuple[tuple[dt.date, str], ...] = (
    (RATED_FROM, "V2009"),
    (V2011_FROM, "V2011"),
    (V2012_FROM, "V2012"),
    (V2014_FROM, "V2014"),
    (V2017_FROM, "V2017"),
    (V2022_FROM, "V2022"),
    (V2024_FROM, "V2024"),
    (V2024A_FROM, "V2024A"),
)

VERSION_NAMES = ("V2017", "V2022", "V2024")


def version_name(text: str) -> str:
    """The rules version `text` names, case-insensitively ('v2024' -> 'V2024'), one of
    `VERSION_NAMES`. Raises ValueError naming them for anything else."""
    name = text.strip().upper()
    if name not in VERSION_NAMES:
        raise ValueError(f"unknown FIDE rules version {text.strip()}; known: {', '.join(VERSION_NAMES)}")
    return name


def rated_from(system: str) -> dt.date:
    """The earliest event start date `system` rates under confirmed rules."""
    return RB_RATED_FROM if system in ("fide-rapid", "fide-blitz") else RATED_FROM


def version_for_date(d: dt.date) -> str:
    """Name of the version in force on `d` (tournament start or list date): `ERAS`."""
    name = ERAS[0][1]
    for start, version in ERAS[1:]:
        if d >= start:
            name = version
    return name


def rules_for_date(d: dt.date, forced: str | None = None, v2022_cap_lower: bool = False) -> RuleSet:
    """The rule set for date `d`, or the forced version.

    `forced` 'V2024' keeps the 2025-10-01 amendment by date (V2024A from then on), as the
    amendment is part of the V2024 chapter.  Raises ValueError for an unknown name.
    """
    if forced is None:
        name = version_for_date(d)
    elif forced == "V2024":
        name = "V2024A" if d >= V2024A_FROM else "V2024"
    elif forced in RULES:
        name = forced
    else:
        raise ValueError(f"unknown FIDE rules version {forced!r}; known: {VERSION_NAMES}")
    rs = RULES[name]
    return replace(rs, v2022_cap_lower=v2022_cap_lower) if v2022_cap_lower else rs


#: Rapid and blitz (FIDE rapid & blitz rating regulations; spec §11).  From 2022 the
#: standard rules apply (V2022); from 1 Mar 2024 the V2024 rules but with the cap on every
#: game (no 2650 exemption in the R&B chapter); 2018-2021: K 20 for all, no 400 cap, and a
#: newcomer needs one point in the first event.
RB_RULES: dict[str, RuleSet] = {
    "V2017": replace(_V2017, cap_mode="none", time_thresholds=(0, 0), k_fixed=20, first_event_min_x100=100),
    "V2022": replace(RULES["V2022"], time_thresholds=(0, 0)),
    "V2024": replace(RULES["V2024"], time_thresholds=(0, 0)),
    "V2024A": replace(RULES["V2024"], name="V2024A", time_thresholds=(0, 0)),
}


def rules_for_system(system: str, d: dt.date, forced: str | None = None, v2022_cap_lower: bool = False) -> RuleSet:
    """`rules_for_date` for 'fide', the rapid/blitz variant for 'fide-rapid'/'fide-blitz'."""
    rs = rules_for_date(d, forced, v2022_cap_lower)
    if system in ("fide-rapid", "fide-blitz"):
        # rapid and blitz lists before 2017: the 2018-2021 rules (not checked against older texts)
        rb = RB_RULES.get(rs.name, RB_RULES["V2017"])
        return replace(rb, v2022_cap_lower=v2022_cap_lower) if v2022_cap_lower else rb
    return rs


# ---- one game ---------------------------------------------------------------


def cap_400(d: int) -> int:
    """The 400-point rule: D limited to −400…+400 (B.02 8.3.1)."""
    return max(-400, min(400, d))


def d_used(d_raw: int, own: int, rules: RuleSet, *, is_largest_upgrade: bool = True) -> int:
    """Difference used for PD under `rules` (B.02 8.3.1 of each version).

    `is_largest_upgrade` matters for V2022 only: True when this game is the player's
    single upgraded game of the event (the largest D > 400).
    """
    if rules.cap_mode == "all":
        return cap_400(d_raw)
    if rules.cap_mode == "none":
        return d_raw
    if rules.cap_mode == "all_below_2650":
        return d_raw if own >= 2650 else cap_400(d_raw)
    # V2022 one-upgrade rule
    if d_raw > 400:
        return 400 if is_largest_upgrade else d_raw
    if d_raw < -400:
        return -400 if rules.v2022_cap_lower else d_raw
    return d_raw


def game_change_x100(own: int, opp: int, score_x100: int, k: int, rules: RuleSet) -> int:
    """K × (W − PD) in hundredths for one game between rated players (B.02 8.3.2)."""
    return k * (score_x100 - pd_x100(d_used(own - opp, own, rules)))


# ---- K ----------------------------------------------------------------------


def k_factor(
    *,
    ever_2400: bool,
    ever_2300: bool,
    junior: bool,
    total_games: int | None,
    n_period: int = 0,
) -> int:
    """K for a period (B.02 8.3.3, order of spec §4.2), then the 700 cap.

    1. ever published ≥ 2400 → 10; 2. junior and never ≥ 2300 → 40; 3. fewer than 30
    rated games (None = history unknown, counted as ≥ 30) → 40; 4. otherwise 20.
    Then K = floor(700 / n) when K × n > 700 (n = games rated in the period).
    """
    if ever_2400:
        k = 10
    elif junior and not ever_2300:
        k = 40
    elif total_games is not None and total_games < 30:
        k = 40
    else:
        k = 20
    return cap_k(k, n_period)


def cap_k(k: int, n: int) -> int:
    """The 700 cap of B.02 8.3.3: the largest K' ≤ K with K' × n ≤ 700."""
    if n > 0 and k * n > 700:
        return 700 // n
    return k


def is_junior(
    list_date: dt.date, birth_year: int | None, birth_date: dt.date | None = None, rule: str = "year_end"
) -> bool:
    """Junior on a list dated `list_date` (FIDE B.02 8.3.3, spec §4.1–4.2).

    rule 'year_end' (V2022, V2024: until the end of the year of the 18th birthday): list
    year − birth year ≤ 18.  rule 'birthday' (V2017: until the 18th birthday): before the
    18th birthday when the birth date is known; with only a birth year the year-based rule
    (spec §4.2 [R]: the lists carry only the year, and FIDE's practice looks year-based).
    A birth year after the list's year (or a birth date after the list) is a typo: not a junior.
    """
    if rule == "birthday" and birth_date is not None:
        return birth_date <= list_date < eighteenth_birthday(birth_date)
    return birth_year is not None and 0 <= list_date.year - birth_year <= 18


def eighteenth_birthday(birth_date: dt.date) -> dt.date:
    """The 18th birthday (29 February → 28 February in a common year)."""
    try:
        return birth_date.replace(year=birth_date.year + 18)
    except ValueError:
        return birth_date.replace(year=birth_date.year + 18, day=28)


# ---- a period ---------------------------------------------------------------


def period_change(sum_w_minus_pd_x100: int, k: int) -> int:
    """Rounded change of a period: K × Σ(W − PD), halves away from zero (B.02 8.3.4)."""
    return round_x100(k * sum_w_minus_pd_x100)


# ---- initial rating -------------------------------------------------------------


def p_x100(points_x100: int, games: int) -> int:
    """Fractional score p in hundredths, rounded half up (spec §2.1). games > 0."""
    return div_round(points_x100, games)


def initial_rating(opponents: Sequence[int], points_x100: int, rules: RuleSet) -> int | None:
    """Ru for an unrated player (B.02 8.2), or None when there is no rated opponent.

    `opponents`: the rated opponents' ratings (one per game); `points_x100`: W in
    hundredths.  Old rule (V2017/V2022 8.2.3): 50 % → Ra; above → Ra + 40 × (W − N/2);
    below → Ra + dp(p).  V2024 (8.2.2–8.2.3): two extra 1800 draws, Ru = Ra + dp(p), at
    most 2200.  Ra is not rounded before use; Ru is rounded half up.  Publication
    conditions (N ≥ 5, Ru ≥ floor) are checked by the caller.
    """
    n = len(opponents)
    if n == 0:
        return None
    total = sum(opponents)
    if rules.initial_rule == "old":
        # Ra + 40 × (W − N/2) = (total + 40 × (W − N/2) × N) / N, all in hundredths
        half_x100 = 50 * n
        if points_x100 > half_x100:
            ru = div_round(100 * total + 40 * (points_x100 - half_x100) * n, 100 * n)
        elif points_x100 == half_x100:
            ru = div_round(total, n)
        else:
            ru = div_round(100 * total + dp(p_x100(points_x100, n)) * 100 * n, 100 * n)
    else:
        nn = n + 2
        p = p_x100(points_x100 + 100, nn)
        ru = div_round(total + 2 * 1800 + dp(p) * nn, nn)
    if rules.ru_max is not None:
        ru = min(ru, rules.ru_max)
    return ru


# ---- performance --------------------------------------------------------------


def performance(opponents: Sequence[int], points_x100: int) -> int | None:
    """Rp = Ra + dp(p), no 400-point cap (spec §10): Ra rounded half up, p to hundredths.

    None when there is no opponent.
    """
    n = len(opponents)
    if n == 0:
        return None
    return div_round(sum(opponents), n) + dp(p_x100(points_x100, n))


# ---- 1 March 2024 ------------------------------------------------------------


def compress_2024(r: int) -> int:
    """The 1 Mar 2024 adjustment: R + 0.40 × (2000 − R) below 2000, else R.

    The increment 2 × (2000 − R) / 5 is rounded half away from zero (no tie can occur for
    integer R; 1001 → 1401).  NOT VERIFIED against FIDE's rounding (spec §9).
    """
    if r >= 2000:
        return r
    return r + div_round(2 * (2000 - r), 5)
