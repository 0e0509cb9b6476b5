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
Fields are cut to their width (a long name loses its tail) so columns never shift.
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

_MONTHS = "JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split()


def rating_header(list_date: dt.date) -> str:
    """FIDE's rating-column header for a list: month and two-digit year, e.g. 'JAN25'."""
    return f"{_MONTHS[list_date.month - 1]}{list_date.year % 100:02d}"


def _cell(value: object, width: int) -> str:
    text = "" if value is None else str(value)
    return text if width == 0 else text[:width].ljust(width)


def format_line(values: list[object]) -> str:
    """One fixed-width line from 13 values in the order of the layout."""
    return "".join(_cell(v, w) for v, (_, w) in zip(values, _FIELDS, strict=True)).rstrip()


def to_fide_txt(df: pl.DataFrame, list_date: dt.date) -> str:
    """Text of the list `df` (columns of `lists.rating_list`), one player per line, LF endings."""
    header = format_line([h if h is not None else rating_header(list_date) for h, _ in _FIELDS])
    lines = [header]
    for row in df.iter_rows(named=True):
        title = row["title"] or ""
        tit, wtit = ("", title) if title.upper().startswith("W") else (title, "")
        sex = {"m": "M", "w": "F"}.get(row["sex"] or "", "")
        lines.append(
            format_line(
                [
                    row["fide_id"],  # FIDE IDs only: a national ID here would read as a FIDE ID
                    row["name"],
                    row["federation"],
                    sex,
                    tit,
                    wtit,
                    "",
                    "",
                    row["rating"],
                    row["games"],
                    row["k"],
                    row["birth_year"],
                    row["fide_flag"],
                ]
            )
        )
    return "\n".join(lines) + "\n"


def write_fide_txt(df: pl.DataFrame, list_date: dt.date, path: Path) -> Path:
    """Write `to_fide_txt` to `path` in UTF-8 and return the path."""
    return write_text(path, to_fide_txt(df, list_date))
