"""CSV files that a spreadsheet opens without running a formula written in the data.

A player or tournament name such as `=HYPERLINK("http://x","click")`, `+cmd`, `-2+3` or
`@SUM(A1)` is run as a formula by Excel/LibreOffice when the CSV is opened (CSV formula
injection, OWASP). Every CSV that `elopipe` publishes (lists, reports, crosstables, diffs,
list comparisons) is written through `write_csv`: a text cell that starts with `=`, `+`, `-`,
`@`, a tab or a carriage return gets a leading `'`, which spreadsheets show as text. A text
cell that is a plain number (`-46.40`, `+54`) is left as it is: it is no formula.
Only CSV files are changed: Parquet, HTML, the store and `elopipe sql --format csv` (raw
query output for scripts) keep the text as written.
"""

from __future__ import annotations

import os

import polars as pl

from elopipe.publish.atomic import write_bytes

_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = r"^[+-]?\d+(\.\d+)?$"


def csv_safe(df: pl.DataFrame) -> pl.DataFrame:
    """`df` with a leading `'` on every String cell a spreadsheet would read as a formula (one that
    starts with = + - @, a tab or a carriage return and is not a plain number); other dtypes unchanged."""
    fixes = [
        pl.when(pl.any_horizontal(pl.col(name).str.starts_with(c) for c in _TRIGGERS))
        .then(
            pl.when(pl.col(name).str.contains(_PLAIN_NUMBER)).then(pl.col(name)).otherwise(pl.lit("'") + pl.col(name))
        )
        .otherwise(pl.col(name))
        .alias(name)
        for name, dtype in df.schema.items()
        if dtype == pl.String
    ]
    return df.with_columns(fixes) if fixes else df


def write_csv(df: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write `df` as CSV (polars' layout: header line, comma, quoted when needed) to `path`,
    text cells neutralized (see the module docstring)."""
    write_bytes(path, csv_safe(df).write_csv().encode("utf-8"))
