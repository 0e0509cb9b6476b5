"""A rating list as a fixed-width text file laid out like FIDE's standard list download.

Layout (0-based character columns, as in FIDE's `standard_rating_list.txt`)::

    0   ID Number   15 chars      94  OTit      15 chars
    15  Name        61 chars      109 FOA        4 chars
    76  Fed          4 chars      113 MMMYY      6 chars  (rating; header = list month, e.g. JAN25)
    80  Sex          4 chars      119 Gms        4 chars
    84  Tit          5 chars      123 K          3 chars
    89  WTit         5 chars      126 B-day      6 chars  (birth year)
                                  132 Flag              ('w', 'i', 'wi')

The store keeps one title per player, so titles starting with 'W' (WGM, WIM, WFM, WCM) go to
WTit and the others to Tit; OTit and FOA stay blank. "ID Number" holds the FIDE ID only (blank for
a player without one; a national ID would be mistaken for a FIDE ID). Sex is written 'M' / 'F' as FIDE does.
K is FIDE's: every rated player's K for the next period (B.02 8.3.3, `rating_lists.k_next`), as
FIDE's lists give it also to a player without a game in the period, and as `elopipe lists import`
reads it back; Gms is the period's games.
Fields are cut to their width (a long name loses its tail) so columns never shift.

A list whose ratings keep a decimal (the generic Elo, `lists.published`: '2589.7') takes a rating
column of 8 characters (`DECIMAL_RATING_WIDTH`) so that a rating never touches Gms; the columns
after it move 2 to the right. FIDE's and FFE's lists (integers) keep FIDE's layout.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from elopipe.publish.atomic import write_text

# (header, width) in file order; the rating column's header is the list month.
_FIELDS = [
    ("ID Number", 15),
    ("Name", 61),
    ("Fed", 4),
    ("Sex", 4),
    ("Tit", 5),
    ("WTit", 5),
    ("OTit", 15),
    ("FOA", 4),
    (None, 6),
    ("Gms", 4),
    ("K", 3),
    ("B-day", 6),
    ("Flag", 0),
]

#: the rating column's width for ratings with one decimal ('2589.7' and two spaces)
DECIMAL_RATING_WIDTH = 8

_MONTHS = "JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split()


def rating_header(list_date: dt.date) -> str:
    """FIDE's rating-column header for a list: month and two-digit year, e.g. 'JAN25'."""
    return f"{_MONTHS[list_date.month - 1]}{list_date.year % 100:02d}"


def _cell(value: object, width: int) -> str:
    text = "" if value is None else str(value)
    return text if width == 0 else text[:width].ljust(width)


def _fields(rating_width: int) -> list[tuple[str | None, int]]:
    return [(h, rating_width if h is None else w) for h, w in _FIELDS]


def format_line(values: list[object], rating_width: int = 6) -> str:
    """One fixed-width line from 13 values in the order of the layout (`rating_width`: the
    rating column's, 6 as FIDE's, `DECIMAL_RATING_WIDTH` for ratings with a decimal)."""
    return "".join(_cell(v, w) for v, (_, w) in zip(values, _fields(rating_width), strict=True)).rstrip()


def to_fide_txt(df: pl.DataFrame, list_date: dt.date, rating_width: int = 6) -> str:
    """Text of the list `df` (columns of `lists.rating_list`), one player per line, LF endings.
    The lines are `format_line` of each row, built column-wise by Polars (a federation's list of
    30k players in milliseconds, outside Python's interpreter lock). `rating_width`: as for
    `format_line`."""
    fields = _fields(rating_width)
    header = format_line([h if h is not None else rating_header(list_date) for h, _ in fields], rating_width)
    if df.is_empty():
        return header + "\n"
    title = pl.col("title").fill_null("")
    women = title.str.to_uppercase().str.starts_with("W")
    values = [
        pl.col("fide_id"),  # FIDE IDs only: a national ID here would read as a FIDE ID
        pl.col("name"),
        pl.col("federation"),
        pl.col("sex").fill_null(""),  # M/F already (`lists.LIST_SEX`)
        pl.when(women).then(pl.lit("")).otherwise(title),
        pl.when(women).then(title).otherwise(pl.lit("")),
        pl.lit(""),
        pl.lit(""),
        pl.col("rating"),
        pl.col("games"),
        # FIDE's K: every rated player's K for the next period (`k_next`); the K used in the
        # period only where no such K is stored (another system, a list computed before it was)
        pl.coalesce("k_next", "k") if "k_next" in df.columns else pl.col("k"),
        pl.col("birth_year"),
        pl.col("fide_flag"),
    ]
    cells = [_cell_expr(v, w) for v, (_, w) in zip(values, fields, strict=True)]
    # str.rstrip() of format_line: whitespace off the end
    lines = df.select(pl.concat_str(cells).str.strip_chars_end().alias("line"))["line"]
    return header + "\n" + "\n".join(lines.to_list()) + "\n"


def _cell_expr(value: pl.Expr, width: int) -> pl.Expr:
    """`_cell` as a Polars expression: the value as text (null: empty), cut and padded to `width`."""
    text = value.cast(pl.String).fill_null("")
    return text if width == 0 else text.str.slice(0, width).str.pad_end(width)


def write_fide_txt(df: pl.DataFrame, list_date: dt.date, path: Path, rating_width: int = 6) -> Path:
    """Write `to_fide_txt` to `path` in UTF-8 and return the path."""
    return write_text(path, to_fide_txt(df, list_date, rating_width))
