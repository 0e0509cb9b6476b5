"""FFE age categories and licence numbers (spec ffe-rating-rules.md, Parts C and D).

Age categories — FFE R01 2025-26 "Règles générales" §2.4 (spec C.1): a player's category is
fixed by their age on 31 December just before the January of the season. With Y = the
calendar year of the January inside the season (season 2025-26 -> Y = 2026), the age is
``a = (Y - 1) - birth_year``. The category does not change during a season; seasons start on
1 September (spec C.1, S12 ``age_category_change_month = 9``).

====  =====  ==========
Papi  FIDE   age a
====  =====  ==========
Ppo   U8     a < 8
Pou   U10    8-9
Pup   U12    10-11
Ben   U14    12-13
Min   U16    14-15
Cad   U18    16-17
Jun   U20    18-19
Sen   —      20-49
Sep   S50    50-64
Vet   S65    >= 65
====  =====  ==========

"Young" for the classic FFE brake (spec A.5 [C, I]) is every category up to
`young_max_category` (U20 by default; U18 is the plausible alternative).

Estimated values — FFE R01 2025-26 §5 (spec B.4, vectors F.4): the 'E' value of a new
licensee by category and rate of play; a pairing value only, never a rating.

Licence numbers — spec Part D: one upper-case letter followed by five digits (A01450,
K59857); Sharly-Chess (S12) also accepts a letter in second place (``^[A-Z][A-Z\\d]\\d{4}$``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from polars.expr.whenthen import ChainedThen, Then

#: (Papi code, FIDE/R01 name, lowest age a of the category), youngest first.
CATEGORIES: tuple[tuple[str, str, int], ...] = (
    ("Ppo", "U8", -1000),
    ("Pou", "U10", 8),
    ("Pup", "U12", 10),
    ("Ben", "U14", 12),
    ("Min", "U16", 14),
    ("Cad", "U18", 16),
    ("Jun", "U20", 18),
    ("Sen", "Sen", 20),
    ("Sep", "S50", 50),
    ("Vet", "S65", 65),
)
_CODES = [c[0] for c in CATEGORIES]
_NAMES = {c[1]: c[0] for c in CATEGORIES}
_YOUNG_CODES = _CODES[:7]  # Ppo .. Jun

SEASON_START_MONTH = 9


def season_year(d: dt.date) -> int:
    """Y of the FFE season containing `d`: the year of the season's January.

    Seasons run 1 September Y-1 .. 31 August Y (spec A.1, C.1).
    """
    return d.year + 1 if d.month >= SEASON_START_MONTH else d.year


def age_in_season(birth_year: int, season: int) -> int:
    """a = (Y - 1) - birth_year (spec C.1)."""
    return (season - 1) - birth_year


def category(birth_year: int, season: int) -> str:
    """Papi category code ('Ppo' .. 'Vet') for a player born in `birth_year`, season Y=`season`.

    Spec C.2 vectors (Y = 2025): 2017 -> Ppo, 2013 -> Pup, 2009 -> Min, 2005 -> Jun,
    1960 -> Sep. Edge (Y = 2026): 2005 -> Sen, 1975 -> Sep.
    """
    a = age_in_season(birth_year, season)
    code = _CODES[0]
    for c, _name, lo in CATEGORIES:
        if a >= lo:
            code = c
    return code


def fide_name(code: str) -> str:
    """'U8' .. 'U20', 'Sen', 'S50', 'S65' for a Papi code. Raises KeyError if unknown."""
    for c, name, _lo in CATEGORIES:
        if c == code:
            return name
    raise KeyError(code)


def _max_young_code(young_max_category: str) -> str:
    code = _NAMES.get(young_max_category, young_max_category)
    if code not in _YOUNG_CODES:
        raise ValueError(f"young_max_category {young_max_category!r}: expected one of U8..U20 (or Ppo..Jun)")
    return code


def is_young(birth_year: int | None, season: int, young_max_category: str = "U20") -> bool:
    """True when the player's category in season Y is at most `young_max_category` (spec A.5).

    Unknown birth year -> False (counted as an adult: the brake of 16 is the cautious choice).
    Raises ValueError for a `young_max_category` that is not U8..U20 / Ppo..Jun.
    """
    if birth_year is None:
        return False
    limit = _CODES.index(_max_young_code(young_max_category))
    return _CODES.index(category(birth_year, season)) <= limit


def category_expr(birth_year: str | pl.Expr, season: str | pl.Expr) -> pl.Expr:
    """Polars expression: Papi category code (Utf8, null when the birth year is null)."""
    by = pl.col(birth_year) if isinstance(birth_year, str) else birth_year
    se = pl.col(season) if isinstance(season, str) else season
    a = (se - 1) - by
    expr: Then | ChainedThen = pl.when(by.is_null()).then(pl.lit(None, pl.Utf8))
    for code, _name, lo in reversed(CATEGORIES[1:]):
        expr = expr.when(a >= lo).then(pl.lit(code))
    return expr.otherwise(pl.lit(CATEGORIES[0][0]))


def young_expr(birth_year: str | pl.Expr, season: str | pl.Expr, young_max_category: str = "U20") -> pl.Expr:
    """Polars expression: Boolean 'young' (False when the birth year is unknown)."""
    by = pl.col(birth_year) if isinstance(birth_year, str) else birth_year
    se = pl.col(season) if isinstance(season, str) else season
    max_code = _max_young_code(young_max_category)
    lowest_adult_age = CATEGORIES[_CODES.index(max_code) + 1][2]
    return (((se - 1) - by) < lowest_adult_age).fill_null(False)


def season_expr(date: str | pl.Expr) -> pl.Expr:
    """Polars expression: season year Y (Int32) of a Date column."""
    d = pl.col(date) if isinstance(date, str) else date
    return (d.dt.year() + (d.dt.month() >= SEASON_START_MONTH).cast(pl.Int32)).cast(pl.Int32)


# ---- licence numbers (spec Part D) -----------------------------------------------------

LICENCE_RE = re.compile(r"^[A-Z]\d{5}$")
LICENCE_LENIENT_RE = re.compile(r"^[A-Z][A-Z\d]\d{4}$")


def normalise_licence(text: str | None) -> str | None:
    """Strip and upper-case a licence number; None for blank."""
    if text is None:
        return None
    t = text.strip().upper()
    return t or None


def is_valid_licence(text: str | None, lenient: bool = False) -> bool:
    """FFE licence: one letter + five digits (spec Part D, e.g. 'A01450').

    `lenient` also accepts a letter in second place, as Sharly-Chess does (S12).
    """
    t = normalise_licence(text)
    if t is None:
        return False
    return bool((LICENCE_LENIENT_RE if lenient else LICENCE_RE).match(t))


# ---- estimated values (spec B.4, F.4): pairing values, never ratings --------------------

#: FFE R01 2025-26 §5 (spec B.4): standard estimate by category.
_STANDARD_ESTIMATE = {c: 1299 for c in _YOUNG_CODES} | {"Sen": 1399, "Sep": 1399, "Vet": 1399}
#: rapid (and blitz, S8) estimate by category.
_RAPID_ESTIMATE = {"Ppo": 799, "Pou": 799, "Pup": 999, "Ben": 999} | {
    c: 1199 for c in ("Min", "Cad", "Jun", "Sen", "Sep", "Vet")
}
FIDE_FLOOR_ESTIMATE = 1399


def estimated_rating(code: str, rate: str = "standard", below_fide_floor: bool = False) -> int:
    """The FFE estimate ('E' value) of a new licensee of category `code` (spec B.4, F.4).

    `rate`: 'standard', 'rapid' or 'blitz' (blitz = rapid, S8). `below_fide_floor`: a player
    whose FIDE standard rating fell below the FIDE floor is shown 1399E whatever the age
    (standard only). An estimate is a pairing value, never a rating (spec A.2).
    Raises ValueError for an unknown category or rate.
    """
    if code not in _CODES:
        raise ValueError(f"unknown FFE category {code!r}; expected one of {_CODES}")
    if rate == "standard":
        return FIDE_FLOOR_ESTIMATE if below_fide_floor else _STANDARD_ESTIMATE[code]
    if rate in ("rapid", "blitz"):
        return _RAPID_ESTIMATE[code]
    raise ValueError(f"rate {rate!r}: expected 'standard', 'rapid' or 'blitz'")


def is_valid_club_estimate(value: int) -> bool:
    """A club may ask for another estimate in steps of 50 ending in 49 or 99 (R01 §5, spec B.4)."""
    return value % 50 == 49
