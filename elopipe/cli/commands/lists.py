"""`elopipe lists import|compare`: official rating lists as the base, and reconciliation (issue 7)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING, overload

import typer
from rich.table import Table

from elopipe.cli.app import DB_OPTION_HELP, console, err_console, fail, print_table, sub_app
from elopipe.jobs.requests import ListCompareRequest, ListImportRequest
from elopipe.jobs.store import DEFAULT_DB
from elopipe.publish.csvsafe import write_csv
from elopipe.read.control_chars import escape_controls, shown_value
from elopipe.runtime.words import plural

if TYPE_CHECKING:
    from elopipe.official.list_import import ListImportResult

lists_app = sub_app("lists", "Official rating lists: import, compare with the computed list.")


@overload
def _date(value: str) -> dt.date: ...
@overload
def _date(value: None) -> None: ...
def _date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    from elopipe.read.dates import parse_list_date

    return parse_list_date(value)


# the systems an official list holds rows of (FIDE's three rates, the FFE's three columns)
_LIST_SYSTEMS = ("fide", "fide-rapid", "fide-blitz", "ffe", "ffe-rapid", "ffe-blitz")


def _list_system(system: str) -> str:
    """`system` (any case, blanks around it dropped) when it is a system an official list holds
    (`_LIST_SYSTEMS`); else a usage error, exit 2, before the store is opened ('fide-blitz-foo'
    was read as FIDE's standard list)."""
    if (found := system.strip().lower()) in _LIST_SYSTEMS:
        return found
    fail(f"--system: an official list is one of {', '.join(_LIST_SYSTEMS)}, not {shown_value(system)}")


@lists_app.command("import")
def import_cmd(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="FIDE TXT/XML or FFE CSV list"),
    system: str = typer.Option(..., "--system", help="fide | ffe (or an exact system: fide-rapid, ...)"),
    list_date: str = typer.Option(
        None, "--list-date", help="YYYY-MM-DD or YYYY-MM; default: from the file name or header"
    ),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """Import an official list as the list in force on its date (replaces that date's rows)."""
    from elopipe.jobs.lists import import_official
    from elopipe.jobs.store import is_interrupt

    committed: list[ListImportResult] = []
    request = ListImportRequest(db, file, _list_system(system), _date(list_date))
    try:
        import_official(request, lambda m: err_console.print(f"{m}", style="yellow"), committed.append)
        _print_import(committed[0], file, db)
    except BaseException as exc:
        # a Ctrl-C once the import committed (closing the store, printing) stops nothing: say so
        if not committed or not (isinstance(exc, KeyboardInterrupt) or is_interrupt(exc)):
            raise
        res = committed[0]
        err_console.print(
            f"Ctrl-C came after the import was committed: {file.name} is stored as the list of {res.list_date}"
            f" ({plural(sum(res.rows.values()), 'row', thousands=True)}) -> {db}",
            style="yellow",
            soft_wrap=True,
        )


def _print_import(res: ListImportResult, file: Path, db: Path) -> None:
    for system, (n, source) in res.replaced.items():
        # stored rows removed: said, with what was there, so a wrong file can be imported back
        err_console.print(
            f"replaced the {system} list of {res.list_date} imported before: {plural(n, 'row', thousands=True)}"
            f" from {source}; now {res.rows.get(system, 0):,}",
            style="yellow",
            soft_wrap=True,
        )
    rows = ", ".join(f"{s}: {n:,}" for s, n in res.rows.items()) or "no rated players"
    console.print(
        f"{file.name} ({res.file_format}) as the list of {res.list_date}: {rows}; "
        f"{plural(res.players_linked, 'player', thousands=True)} linked, {res.players_created:,} created -> {db}"
    )
    for warning in res.warnings:
        err_console.print(warning, style="yellow")
    if res.unrated:
        lines = "line" if res.unrated == 1 else "lines"
        console.print(f"{res.unrated:,} {lines} with no rating of any kind: not on a rating list")
    _print_skips(res, db)


# skipped rows shown in the terminal; all are in the store's list_import_skips
_SKIPS_SHOWN = 5


def _print_skips(res: ListImportResult, db: Path) -> None:
    """'18 rows skipped: 17 no FIDE ID ..., 1 ...' and the first few, with line, reason and text,
    then the command that lists them all (with `--db` for a store `db` that is not the default)."""
    from elopipe.official.list_import import SKIP_REASONS
    from elopipe.runtime.hints import command_hint

    if not res.skips.height:
        return
    counts = "; ".join(f"{n:,} {SKIP_REASONS.get(r, r)}" for r, n in res.skip_counts().items())
    err_console.print(
        f"{plural(res.skips.height, 'row', thousands=True)} skipped, not stored: {counts}", style="yellow"
    )
    for line, reason, detail, raw in res.skips.head(_SKIPS_SHOWN).iter_rows():
        where = f"line {line}" if line is not None else "a line"
        why = SKIP_REASONS.get(reason, reason) + (f" ({detail})" if detail else "")
        err_console.print(f"  {where}: {why}: {escape_controls((raw or '').strip())}", style="yellow")
    more = res.skips.height - _SKIPS_SHOWN
    tail = f"{more:,} more; " if more > 0 else ""
    query = f"sql \"SELECT * FROM list_import_skips WHERE list_date = DATE '{res.list_date}'\""
    err_console.print(
        f"  {tail}all: {command_hint(query, db)}", style="yellow", markup=False, highlight=False, soft_wrap=True
    )


@lists_app.command("compare")
def compare_cmd(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="official list for the date"),
    system: str = typer.Option(..., "--system", help="system compared: fide, fide-rapid, fide-blitz, ffe, ..."),
    list_date: str = typer.Option(..., "--list-date", help="YYYY-MM-DD or YYYY-MM"),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    out: Path = typer.Option(None, "--out", help="Write the full report (CSV) to this new file."),
    limit: int = typer.Option(
        50, "--limit", min=0, help="Rows shown: the players who differ (largest first), then those on one side only."
    ),
) -> None:
    """Compare the store's computed list for a date with an official list: matches, differences
    (official − computed) with their causes (missing_tournament, extra_tournament, k_mismatch,
    base_correction, unknown), players on one side only."""
    from elopipe.jobs.lists import compare_official

    if out is not None and os.path.lexists(out):
        # the report goes to a new file: an existing one may be the user's (the store itself was
        # overwritten by a report, so was the list compared)
        fail(
            f"--out {escape_controls(str(out))} exists: give a new file for the report"
            " (elopipe never overwrites a file)"
        )
    if out is not None and not (folder := out.absolute().parent).is_dir():  # said before the work, not after it
        fail(f"--out {escape_controls(str(out))}: its folder {escape_controls(str(folder))} does not exist")
    cmp = compare_official(ListCompareRequest(db, file, _list_system(system), _date(list_date)))
    counts = cmp.counts()
    for warning in cmp.warnings:  # as `lists import` says them of the same file
        err_console.print(warning, style="yellow", soft_wrap=True)
    if cmp.skips.height:
        from elopipe.official.list_import import SKIP_REASONS

        by = dict(cmp.skips.group_by("reason").len().sort("reason").iter_rows())
        numbers = cmp.skips["line"].drop_nulls().head(5).to_list()
        lines = ("line " if len(numbers) == 1 else "lines ") + (", ".join(str(n) for n in numbers) or "unknown")
        err_console.print(
            f"{plural(cmp.skips.height, 'row', thousands=True)} of {file.name} not compared: "
            + "; ".join(f"{n:,} {SKIP_REASONS.get(r, r)}" for r, n in by.items())
            + f" ({lines}{', ...' if cmp.skips.height > 5 else ''})",
            style="yellow",
        )
    parts = [f"{status} {n:,}" for status, n in counts.items()]
    causes = cmp.cause_counts()
    if causes:  # each player once: the causes break the 'differs' count down
        parts[0] += " (" + ", ".join(f"{c} {n:,}" for c, n in causes.items()) + ")"
    console.print(f"{system} {cmp.list_date}: " + ", ".join(parts))
    # the report is ordered: real differences (largest first), then players on one side only
    unmatched = cmp.report.filter(cmp.report["status"] != "match")
    diffs = unmatched.head(max(limit, 0))
    if diffs.height:
        table = Table(title="Differences (official − computed)")
        cols = ["fide_id", "name", "official_rating", "computed_rating", "official_minus_computed", "official_k",
                "computed_k", "official_games", "computed_games", "status", "cause", "matched_by"]  # fmt: skip
        for c in cols:
            table.add_column(c, justify="right" if diffs.schema[c].is_numeric() else "left")
        for row in diffs.select(cols).iter_rows():
            table.add_row(*["" if v is None else str(v) for v in row])
        print_table(table)
    if unmatched.height > diffs.height:
        more = unmatched.height - diffs.height
        console.print(
            f"… {more:,} more {'row' if more == 1 else 'rows'} (--limit {unmatched.height} shows all; "
            "--out FILE writes every row)"
        )
    weak = cmp.report.filter(cmp.report["matched_by"].is_in(["national_id", "name_birth_year"]))
    if weak.height:
        by = dict(weak.group_by("matched_by").len().iter_rows())
        console.print(
            "matched without a FIDE ID: "
            + ", ".join(f"{n:,} by {k.replace('_', ' ')}" for k, n in sorted(by.items()))
            + " (column matched_by)"
        )
    if out is not None:
        write_csv(cmp.report, out)
        console.print(f"report -> {out}")
