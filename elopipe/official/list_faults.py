"""The row checks of an official list import: which rows of a list file are not stored, and why.

All checks are Polars expressions over the whole file (no loop over rows). Reasons are the keys of
`list_base.SKIP_REASONS`:

* ``no_id``: no ID, or a placeholder written where there is none (`elopipe.read.ids`: ``0``,
  ``00000000``, nines only, ``-``, ``?``, ...; and a negative number, as FIDE IDs are positive),
  or a number of more than nine digits, which no FIDE ID has.
  Two rows are never linked on a placeholder: the row keeps only its national ID (FFE licence).
* ``bad_id``: an ID that is not a number.
* ``misaligned``: a FIDE TXT field longer than its column, which spills into the next one (found
  from the header's column positions), or an FFE CSV line with more or fewer fields than the header.
* ``duplicate_id``: a FIDE ID (or FFE licence) given by another row of the same file; the row kept
  is the first with no bad rating (FIDE lists), else the first.
* ``bad_rating``: a rating cell that is not a number or lies outside 0..`RATING_MAX`; only that
  rating is lost, the row's other ratings are stored.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from elopipe.read.ids import FIDE_ID_DIGITS, PLACEHOLDER_ID_PATTERN, TOO_LONG_ID_PATTERN

# Highest rating taken as real. Our bound, not a rule: above any rating a list has published (none
# has reached 2900), far below what a spilled or mistyped cell gives (999999).
RATING_MAX = 3500

# free-text columns a value may fill to the last character; every other column of FIDE's TXT
# layout is wider than anything it holds, so its last character is always blank
_FREE_TEXT = frozenset({"name", "otit"})

_RATE_LABELS = {"s": "standard", "r": "rapid", "b": "blitz"}


def no_id(raw: pl.Expr, number: pl.Expr) -> pl.Expr:
    """True where an ID cell (trimmed, '' as null) means "no ID": null, a placeholder
    (`elopipe.read.ids.PLACEHOLDER_ID_PATTERN`), a number of more than nine digits
    (`elopipe.read.ids.TOO_LONG_ID_PATTERN`), or a number below 1 (`number`: the cell as Int64)."""
    return (
        raw.is_null() | raw.str.contains(PLACEHOLDER_ID_PATTERN) | raw.str.contains(TOO_LONG_ID_PATTERN) | (number < 1)
    ).fill_null(False)


def no_licence(raw: pl.Expr) -> pl.Expr:
    """True where a national ID cell (trimmed, '' as null) means "no ID", as `no_id` reads a FIDE
    ID cell: null, a placeholder ('0', '-', '?', '00000000'), a number below 1 ('-3'), or a word
    without a digit. Kept, such a licence made one person of every row that wrote it. A licence is
    no number (FFE: a letter and digits), so no length makes it none."""
    return (
        raw.is_null()
        | raw.str.contains(PLACEHOLDER_ID_PATTERN)
        | ~raw.str.contains(r"\d")
        | (raw.cast(pl.Int64, strict=False) < 1).fill_null(False)
    ).fill_null(True)


def overflow_pattern(cols: list[tuple[str, int, int | None]]) -> str | None:
    """A regular expression matching a FIDE TXT line with a field that runs past its column:
    the last character of a column (other than a free-text one) and the first of the next are
    both non-blank. `cols`: (field, 1-based start, width or None for the last) from the header.
    None when the layout has no such column."""
    ends = [start - 1 + width for name, start, width in cols if width is not None and name not in _FREE_TEXT]
    if not ends:
        return None
    return "^(?:" + "|".join(f".{{{end - 1}}}\\S\\S" for end in ends) + ")"


def first_rows(key: pl.Expr) -> pl.Expr:
    """False on a row whose `key` (not null) an earlier row already has (rows in file order)."""
    return key.is_null() | key.is_first_distinct()


def fide_checked(
    wide: pl.DataFrame, present: set[str], misaligned: pl.Expr | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the rows of a wide FIDE frame to pass on, its faulty rows with ``_reason``/``_detail``).

    `wide`: cells trimmed, '' as null, in file order, with ``line_no``; `present`: its field names
    (``id``, ``s_rating``, ...); `misaligned`: an expression true on a line whose fields spill
    (TXT only). Rows passed on: ``id`` Int64 (null where the row has no usable ID: the store skips
    it, a comparison may still match it by name), the ratings Int32 (null where bad); misaligned
    and duplicate rows are left out. The faults are found with masks first: the reasons' text is
    built for the faulty rows only, not for the list."""
    rates = [x for x in "srb" if f"{x}_rating" in present]
    w = wide.with_columns(
        pl.col("id").cast(pl.Int64, strict=False).alias("_fid"),
        (misaligned if misaligned is not None else pl.lit(False)).alias("_mis"),
        *(pl.col(f"{x}_rating").cast(pl.Int32, strict=False).alias(f"_{x}") for x in rates),
    )
    w = w.with_columns(no_id(pl.col("id"), pl.col("_fid")).alias("_noid"))
    unusable = pl.col("_noid") | pl.col("_fid").is_null() | pl.col("_mis")
    bad = {x: pl.col(f"{x}_rating").is_not_null() & ~pl.col(f"_{x}").is_between(0, RATING_MAX).fill_null(False)
           for x in rates}  # fmt: skip
    w = w.with_columns(_dup=~first_rows(pl.when(~unusable).then(pl.col("_fid"))))
    if w["_dup"].any():  # a repeated ID (rare): keep its first row with no bad rating, if it has one
        clean = ~unusable & ~pl.any_horizontal(pl.lit(False), *bad.values())
        candidate = ~unusable & (clean | ~clean.any().over("_fid"))
        first = candidate & first_rows(pl.when(candidate).then(pl.col("_fid")))
        w = w.with_columns(_dup=~unusable & ~first)
    faults = w.filter(pl.any_horizontal(unusable, pl.col("_dup"), *bad.values()))
    firsts = kept_lines(w, ~unusable & ~pl.col("_dup"), faults.filter(pl.col("_dup")), "_fid", "line_no")
    faults = faults.join(firsts, on="_fid", how="left", maintain_order="left")
    faults = faults.with_columns(_fide_reason(bad))
    kept = w.filter(~pl.col("_mis") & ~pl.col("_dup")).with_columns(
        pl.when(~pl.col("_noid")).then(pl.col("_fid")).alias("id"),
        *(pl.when(~cond).then(pl.col(f"_{x}")).alias(f"{x}_rating") for x, cond in bad.items()),
    )
    helpers = ["_fid", "_mis", "_noid", "_dup", *(f"_{x}" for x in rates)]
    return kept.drop(helpers), faults.drop(*helpers, "_first")


def kept_lines(rows: pl.DataFrame, kept: pl.Expr, dups: pl.DataFrame, key: str, line: str) -> pl.DataFrame:
    """`key` and ``_first`` Int64 (the line of the row kept) of each key of `dups` (the rows that
    repeat a key), looked up in the `rows` where `kept` is true: the few repeated keys are looked
    up, the list is not grouped."""
    wanted = dups[key].drop_nulls()
    found = rows.filter(kept & pl.col(key).is_in(wanted.implode())) if wanted.len() else rows.clear()
    return found.group_by(key).agg(pl.col(line).min().cast(pl.Int64).alias("_first"))


def _fide_reason(bad: dict[str, pl.Expr]) -> list[pl.Expr]:
    """`_reason` and `_detail` of the faulty rows (`fide_checked`), the first fault found in this
    order: no ID, an ID not a number, a spilling field, a placeholder ID, a repeated ID, a bad rating."""
    fid = pl.col("id")
    reason: Any = pl.when(fid.is_null()).then(pl.lit("no_id"))
    detail: Any = pl.when(fid.is_null()).then(pl.lit(None, dtype=pl.Utf8))
    placeholder = pl.format("ID {}: a placeholder", fid)
    too_long = pl.format(f"ID {{}}: more than {FIDE_ID_DIGITS} digits, which no FIDE ID has", fid)
    steps = [
        (pl.col("_noid") & pl.col("_fid").is_null(), "no_id", placeholder),  # '-', '?', 'n/a'
        (pl.col("_fid").is_null(), "bad_id", pl.format("ID {}", fid)),
        (pl.col("_mis"), "misaligned", pl.lit("a field runs into the next column")),
        (pl.col("_noid") & fid.str.contains(TOO_LONG_ID_PATTERN), "no_id", too_long),
        (pl.col("_noid"), "no_id", placeholder),
        (pl.col("_dup"), "duplicate_id", pl.format("FIDE ID {} as on line {}", pl.col("_fid"), pl.col("_first"))),
        *((cond, "bad_rating", pl.format(f"{_RATE_LABELS[x]} rating {{}}", pl.col(f"{x}_rating")))
          for x, cond in bad.items()),
    ]  # fmt: skip
    for cond, why, text in steps:
        reason = reason.when(cond).then(pl.lit(why))
        detail = detail.when(cond).then(text)
    return [reason.otherwise(None).alias("_reason"), detail.otherwise(None).alias("_detail")]
