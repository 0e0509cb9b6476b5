"""A tournament report's tables for the terminal (`elopipe report`): the FIDE performance rows
(`reports.performance_frame`) and the FFE period working (`reports.ffe_frame`) as rich Tables."""

from __future__ import annotations

import polars as pl
from rich import box
from rich.table import Table
from rich.text import Text

from elopipe.publish.ro_marks import ro_text


def rich_table(perf: pl.DataFrame, title: str) -> Table:
    """The performance rows as a rich Table for the terminal.

    Title and cells are `rich.text.Text`, so a name such as `[/i]Evil` is shown as written
    whatever Console prints the table (never read as markup or emoji codes)."""
    table = Table(title=Text(title), show_lines=False, box=box.SIMPLE_HEAD)
    heads = ["SNo", "Name", "Fed", "Title", "Ro", "src", "Rtg", "N", "W", "Ra", "We", "W−We", "K", "K×(W−We)"]
    for h in [*heads, "Chg", "Rp"]:
        if h == "Name":
            table.add_column(h, no_wrap=True, max_width=30, overflow="ellipsis")
        elif h in ("Fed", "Title", "src"):
            table.add_column(h, no_wrap=True)
        else:
            table.add_column(h, justify="right", no_wrap=True)
    table.add_column("Ru / note")

    def s(v: object) -> str:
        return "" if v is None else str(v)

    for r in perf.iter_rows(named=True):
        chg = r["change_rounded"]
        _add_text_row(
            table,
            s(r["start_rank"]),
            s(r["name"]),
            s(r["federation"]),
            s(r["title"]),
            ro_text(r["ro"], r["ro_mark"]),
            s(r["ro_source"]),
            s(r["file_rating"]),
            s(r["n"]),
            s(r["score"]),
            s(r["ra"]),
            s(r["we"]),
            s(r["w_we"]),
            s(r["k"]),
            s(r["k_w_we"]),
            "" if chg is None or r["unrated"] else f"{chg:+d}",
            s(r["rp"]),
            s(r["note"]),
        )
    return table


def rich_ffe_table(ffe: pl.DataFrame, title: str) -> Table:
    """The FFE period working (`ffe_frame` rows) as a rich Table for the terminal: Ro and its
    source, compatible/incompatible games, X (mean opponent rating), p (score fraction), Z,
    P (performance), the method and the new rating (FFE rules, spec A.3-A.6). The FIDE
    columns We/K/Chg/Rp do not exist in FFE rating."""
    table = Table(title=Text(title), show_lines=False, box=box.SIMPLE_HEAD)
    heads = ["SNo", "Name", "List", "Ro", "src", "N", "N inc.", "X", "p", "Z", "P", "method", "New"]
    for h in heads:
        if h == "Name":
            table.add_column(h, no_wrap=True, max_width=30, overflow="ellipsis")
        else:
            table.add_column(h, justify="left" if h in ("src", "method") else "right", no_wrap=True)

    def s(v: object) -> str:
        return "" if v is None else str(v)

    for r in ffe.iter_rows(named=True):
        _add_text_row(
            table,
            s(r["start_rank"]),
            s(r["name"]),
            s(r["list_date"]),
            s(r["r_old"]),
            s(r["r_source"]),
            s(r["n_compatible"]),
            s(r["n_incompatible"]),
            s(r["x"]),
            s(r["p"]),
            s(r["z"]),
            s(r["perf"]),
            s(r["method"]),
            s(r["r_new"]),
        )
    return table


def _add_text_row(table: Table, *cells: str) -> None:
    table.add_row(*(Text(c) for c in cells))
