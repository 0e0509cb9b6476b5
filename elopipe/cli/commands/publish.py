"""`elopipe publish --system S [--list-date YYYY-MM[-DD] | --all] [--out DIR] [--format ...]`
and `elopipe publish --diff LIST_A LIST_B`."""

from __future__ import annotations

import datetime as dt
import functools
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from elopipe.cli.app import (
    DB_OPTION_HELP,
    app,
    check_out_folder,
    console,
    err_console,
    fail,
    print_table,
    say_set_aside,
)
from elopipe.jobs.requests import DiffRequest, PublishRequest
from elopipe.jobs.store import DEFAULT_DB
from elopipe.runtime.words import plural

if TYPE_CHECKING:
    from elopipe.jobs.publish import Diff


@app.command()
def publish(
    system: str = typer.Option("fide", "--system", help="Rating system: fide, ffe, ..."),
    list_date: str | None = typer.Option(
        None, "--list-date", help="YYYY-MM-DD, or YYYY-MM: that month's list; default latest."
    ),
    all_lists: bool = typer.Option(False, "--all", help="Every list of the system."),
    out: Path = typer.Option(Path("out"), "--out", help="Output folder."),
    formats: str = typer.Option("csv,parquet,txt,html", "--format", help="Comma-separated."),
    full: bool = typer.Option(
        False,
        "--full",
        help="As run publishes: every format, a report per tournament rated on these lists,"
        " the pages (with charts) of each list's 10 highest-ranked players, and the index.",
    ),
    diff: tuple[str, str] | None = typer.Option(
        None,
        "--diff",
        metavar="A B",
        help="Compare two lists, given as two values (--diff A B): list dates of the store"
        " (YYYY-MM-DD, or YYYY-MM for that month's list) or published CSV/Parquet files.",
    ),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    wait: float = typer.Option(
        60, "--wait", min=0, help="While another process writes the store, wait this many seconds for it (0: fail)."
    ),
) -> None:
    """Publish rating lists (CSV, Parquet, FIDE-style TXT, HTML) or diff two lists."""
    from elopipe.cli.commands.live_status import LiveStatus
    from elopipe.cli.commands.report import check_system
    from elopipe.jobs.publish import diff_lists, publish_lists
    from elopipe.jobs.store import StoreMissingError
    from elopipe.publish import LIST_FORMATS
    from elopipe.publish.folders import OutFolderError, publish_folders
    from elopipe.publish.lists import NoListError

    if list_date is not None and all_lists:
        fail("give --list-date or --all, not both")
    if diff is not None and (list_date is not None or all_lists or full):  # they were ignored in silence
        fail("--diff compares the two lists it names: leave out --list-date, --all and --full")
    fmts = [f.strip().lower() for f in formats.split(",") if f.strip()]
    bad = [f for f in fmts if f not in LIST_FORMATS]
    if bad or not fmts:
        what = f"unknown format {', '.join(bad)}" if bad else "--format names no format"
        fail(f"{what}; choose from {', '.join(LIST_FORMATS)} (comma-separated)")
    dates: list[dt.date] | None = None
    if list_date is not None:  # an empty value is refused, not read as 'not given'
        from elopipe.read.dates import parse_list_date

        dates = [parse_list_date(list_date)]  # another form or a date no list can have: one line, exit 2
    check_system(system)  # an unknown system is a usage error, as `report` says it
    if diff is not None:
        from elopipe.publish.diff import list_date_ref

        for ref in diff:  # a date no list can have ('2024-13'): one line naming --diff, exit 2
            list_date_ref(ref)
    # a --diff writes one file at the top of --out; a publish into its lists, reports and players
    check_out_folder(out, "publish to", None if diff is not None else publish_folders(system))
    on_wait = functools.partial(err_console.print, style="yellow")
    try:
        if diff is not None:
            try:
                compared = diff_lists(DiffRequest(db, system, diff[0], diff[1], out, wait), on_wait)
            except StoreMissingError:  # no store: refused as by every command (exit 1), not a usage error
                raise
            except FileNotFoundError as exc:  # a side that is neither a list date nor a file: usage
                fail(f"{exc}")
            _print_diff(compared, system, diff)
            return
        request = PublishRequest(
            db, system, out, None if dates is None else tuple(dates), all_lists, tuple(fmts), full, wait
        )
        with LiveStatus(err_console) as live:
            done = publish_lists(request, live.counter(f"publish {system}", "lists, reports and player pages"), on_wait)
    except NoListError as exc:  # a date asked for that has no list: a usage error, as `compare` says it
        fail(f"{exc}")
    except (LookupError, ValueError) as exc:
        fail(f"{exc}", 1)
    except OutFolderError as exc:  # a folder made a link since the check above: still a usage error
        fail(f"{exc}")
    except OSError as exc:
        fail(_write_failure(exc, out), 1)
    paths, kept, resumed = done.paths, done.kept, done.resumed
    if resumed:
        console.print(
            f"finished an interrupted publish: {plural(len(resumed), 'list')} ({resumed[0]} .. {resumed[-1]})"
        )
    console.print(f"{plural(len(paths), 'file')} written under {out}" + (f" ({kept:,} unchanged)" if kept else ""))
    for p in paths[:12]:
        console.print(f"  {p}")
    if len(paths) > 12:
        console.print(f"  ... and {len(paths) - 12} more")
    say_set_aside(done.set_aside)
    if done.retired:
        from elopipe.publish.kept_lines import retired_line

        err_console.print(retired_line(done.retired), style="yellow", soft_wrap=True)
    if done.gone is not None:
        err_console.print(f"publish: {done.gone.line(out)}", style="yellow", soft_wrap=True)
    if done.suspects:
        from elopipe.publish.list_suspects import suspects_line

        err_console.print(suspects_line(done.latest, done.suspects, db), style="yellow", soft_wrap=True)


def _write_failure(exc: OSError, out: Path) -> str:
    """The line for a write that failed once `check_out_folder` let the command start: a folder
    of `out` that could not be made is said as the output folder's failure, in words
    ('cannot publish to /proc/x: no such file or directory'); a file's failure as `describe` says it."""
    from elopipe.publish.atomic import WriteError, describe

    if isinstance(exc, WriteError) or not exc.filename or not Path(exc.filename).is_relative_to(out):
        return describe(exc)
    reason = exc.strerror or "cannot be written"
    where = "" if Path(exc.filename) == out else f" ({exc.filename})"
    return f"cannot publish to {out}: {reason[:1].lower()}{reason[1:]}{where}"


def _print_diff(done: Diff, system: str, refs: tuple[str, str]) -> None:
    df = done.frame
    counts = {s: df.filter(df["status"] == s).height for s in ("new", "changed", "delisted", "dropped")}
    from elopipe.publish.diff import side_title

    table = Table(title=f"{system}: {side_title(refs[0])} -> {side_title(refs[1])}")
    for col in ("status", "fide_id", "name", "rating_a", "rating_b", "delta", "games_b", "change_b"):
        table.add_column(col, justify="left" if col in ("status", "name") else "right")
    for r in df.filter(df["status"] != "unchanged").iter_rows(named=True):
        delta = r["delta"]
        table.add_row(
            r["status"],
            "" if r["fide_id"] is None else str(r["fide_id"]),
            r["name"] or "",
            "" if r["rating_a"] is None else str(r["rating_a"]),
            "" if r["rating_b"] is None else str(r["rating_b"]),
            "" if delta is None else f"{delta:+d}",
            "" if r["games_b"] is None else str(r["games_b"]),
            "" if r["change_b"] is None else f"{r['change_b']:+d}",
        )
    print_table(table)
    console.print(", ".join(f"{v} {k}" for k, v in counts.items()))
    console.print(f"diff written to {done.path}")
    say_set_aside(done.set_aside)
