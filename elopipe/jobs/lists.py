"""The jobs on lists as wholes: an official list imported, a computed list reconciled with an
official one (`elopipe.official`), two sides compared player by player (`elopipe.publish.compare`),
the store exported as Parquet (`elopipe.publish.export`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from elopipe.jobs.requests import CompareRequest, ExportRequest, ListCompareRequest, ListImportRequest

if TYPE_CHECKING:
    from elopipe.official.list_compare import Comparison as ListComparison
    from elopipe.official.list_import import ListImportResult
    from elopipe.publish.compare import Comparison


def import_official(
    request: ListImportRequest,
    on_wait: Callable[[str], None] | None = None,
    on_committed: Callable[[ListImportResult], None] | None = None,
) -> ListImportResult:
    """Import the official list of `request` as the list in force on its date, in one
    transaction (`elopipe.official.list_import.import_list`); `on_committed` hears of it as
    soon as it is committed, before the store is closed (a Ctrl-C then stops nothing)."""
    from elopipe.official.list_import import import_list
    from elopipe.store.connect import open_writer_undone

    # a file refused before anything is stored leaves no new empty store behind
    with open_writer_undone(request.db, on_wait=on_wait) as (con, keep):
        result = import_list(con, request.file, request.system, request.list_date)
        keep()
        if on_committed is not None:
            on_committed(result)
    return result


def compare_official(request: ListCompareRequest) -> ListComparison:
    """The store's computed list against the official one (`elopipe.official.list_compare`), read-only."""
    from elopipe.official.list_compare import compare_lists
    from elopipe.store.connect import open_reader

    con = open_reader(request.db)
    try:
        return compare_lists(con, request.system, request.list_date, request.file)
    finally:
        con.close()


def compare_sides(request: CompareRequest, on_sides: Callable[[str, str, dt.date], None]) -> Comparison:
    """Two sides' lists of one date compared (`elopipe.publish.compare`), read-only; `on_sides`
    hears the sides and the date first: on a large store the comparison itself takes a while.
    Raises LookupError for a side or a date the store does not hold."""
    from elopipe.publish.compare import compare, resolve
    from elopipe.store.connect import open_reader

    con = open_reader(request.db)
    try:
        side_a, side_b, date = resolve(con, request.side_a, request.side_b, request.list_date)
        on_sides(side_a, side_b, date)
        return compare(con, side_a, side_b, date)
    finally:
        con.close()


def export(request: ExportRequest) -> list[Path]:
    """Every table as Parquet (`elopipe.publish.export.export_parquet`), read-only; the files written."""
    from elopipe.publish.export import export_parquet
    from elopipe.store.connect import open_reader

    con = open_reader(request.db)
    try:
        return export_parquet(con, request.folder)
    finally:
        con.close()
