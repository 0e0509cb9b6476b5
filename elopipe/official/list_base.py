"""What the official list readers share: the error, the skipped rows' reasons and columns, the
read list (`ListRead`), and small helpers. The readers are one module per format
(`list_fide_txt`, `list_fide_xml`, `list_ffe_csv`); `list_store` stores what they read;
`list_import` chooses the reader and runs both steps."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

import duckdb
import polars as pl

from elopipe.official.list_faults import RATING_MAX
from elopipe.runtime.errors import ElopipeError


class ListFormatError(ElopipeError, ValueError):
    """The file is not a list this module can read, or the list date cannot be known."""


# Why a row of a list file is not stored (`list_import_skips.reason`), as a user reads it.
SKIP_REASONS = {
    "no_id": "no FIDE ID nor national ID",
    "bad_id": "FIDE ID not a number",
    "bad_rating": f"rating not a number from 0 to {RATING_MAX}",
    "misaligned": "not aligned with the header",
    "duplicate_id": "ID already given on an earlier line",
}


# the columns of a list's skipped rows: `ListRead.skips`, `list_import_skips` (less file and date)
SKIP_SCHEMA = {"line": pl.Int64, "reason": pl.Utf8, "detail": pl.Utf8, "raw": pl.Utf8}


@dataclass
class ListRead:
    """One list file as read (`list_import.read_list`), nothing stored.

    `rel`: the `official_lists` columns except list_date/player_id/source_file, and ``line``
    Int64 (the row's 1-based line in the file, as in `skips`), one row per player and system with a
    rating, rows without an ID included (`lists compare` may pair one with a player by name).
    `skips`: the rows with a fault, none of them in `rel` but those with no ID (columns
    ``line`` Int64 (1-based line of the file; NULL when a CSV's quoted field spans lines),
    ``reason`` Utf8 (a key of `SKIP_REASONS`), ``detail`` Utf8 (the cell at fault), ``raw`` Utf8
    (the line as written, at most 500 characters)). `unrated`: lines with no rating of any kind
    (most of FIDE's combined list), which a list of ratings leaves out by design. `warnings`:
    faults of the file as a whole, as one line each (an XML list that ends before its closing tag).
    `other_month`: see the field's comment."""

    rel: duckdb.DuckDBPyRelation
    file_format: str  # 'fide-txt' | 'fide-xml' | 'ffe-csv'
    list_date: dt.date
    skips: pl.DataFrame
    unrated: int = 0
    warnings: list[str] = field(default_factory=list)
    # the file's own month, when its name or header names one and --list-date is another (one
    # line, the file named): `lists import` warns (an explicit --list-date is its override),
    # `lists compare` refuses (its --list-date names the computed list, not the file's month)
    other_month: str | None = None


MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}  # fmt: skip
# a FIDE TXT header's month code ('MAR24'): the rating column of old standard lists, and the list's month
MONTH_CODE = re.compile(r"^([A-Za-z]{3})(\d{2})$")


def register(con: duckdb.DuckDBPyConnection, name: str, obj: object) -> None:
    """`con.register`, after completing any result the caller left open on `con` (DuckDB refuses
    to register while a statement's result is unfinished)."""
    con.execute("SELECT 1").fetchall()
    con.register(name, obj)


def clip_raw(expr: pl.Expr) -> pl.Expr:
    """A skipped row's text as `list_import_skips.raw` keeps it: at most 500 characters."""
    return expr.str.slice(0, 500)


def single_rate(filename: str, system: str) -> str:
    """Rate prefix ('s', 'r', 'b') of a single-rate file whose header does not say it."""
    s = system.lower()
    low = filename.lower()
    if s.endswith("rapid") or "rapid" in low:
        return "r"
    if s.endswith("blitz") or "blitz" in low:
        return "b"
    return "s"
