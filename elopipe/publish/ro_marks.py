"""Where a report row's Ro came from, and the mark of a Ro far from the file's rating.

FIDE B.02 (2024) 7.1.3: Ro is the rating on the list in force at the event's start. The store
knows that list from an imported official list or from its own computed lists, which drift when
it lacks the players' other games (`elopipe.rating.fide.ro`). A report says, per row, where its Ro
came from (``ro_source``: 'official', 'computed', 'file', 'standard') and marks with `MARK` a Ro
`RO_MARK_POINTS` or more from the rating the organiser's file gives (``file_rating``, the
crosstable's Rtg), so that a reader sees which expectations rest on a drifted list.
"""

from __future__ import annotations

import polars as pl

from elopipe.rating.summary import RO_MARK_POINTS

MARK = "!"

# the words of a source in a report's "src" column (the stored value is the key)
SOURCE_WORDS = {"official": "official", "computed": "computed", "file": "file", "standard": "standard"}


def ro_mark_expr() -> pl.Expr:
    """Boolean: Ro is `RO_MARK_POINTS` or more from ``file_rating`` (False where either is null).
    Only a Ro with a ``ro_source`` (the FIDE systems, rated by this version) is marked: the FFE and
    generic Elo lists are not FIDE's, so their Ro may differ from a FIDE rating in the file."""
    far = (pl.col("ro") - pl.col("file_rating")).abs() >= RO_MARK_POINTS
    return (far & pl.col("ro_source").is_not_null()).fill_null(False)


def ro_text(ro: int | None, marked: bool | None) -> str:
    """The Ro cell: the rating, `MARK` after it when marked; '' without a Ro."""
    if ro is None:
        return ""
    return f"{ro}{MARK}" if marked else str(ro)


def mark_meaning() -> str:
    """The legend's words for `MARK`."""
    return (
        f"Ro {RO_MARK_POINTS} or more points from the rating the organiser's file gives (Rtg): the store's list in "
        "force has drifted from FIDE's (the store lacks the player's other games) or the file is wrong; import the "
        "official list in force (`elopipe lists import`), or rate with `--ro-from file`"
    )
