"""`elopipe ingest PATH... [--db FILE] [--validate-moves]`."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from elopipe.cli.app import DB_OPTION_HELP, app, console, err_console, error_line, fail, print_table
from elopipe.cli.commands.dask_opts import (
    cluster_address,
    cluster_of,
    dask_option,
    dask_spec,
    dask_workers_option,
    stage_option,
)
from elopipe.jobs.requests import IngestRequest
from elopipe.jobs.store import DEFAULT_DB, StoreBusyError
from elopipe.read.control_chars import escape_controls
from elopipe.runtime.heartbeat import Heartbeat
from elopipe.runtime.words import plural

if TYPE_CHECKING:
    from elopipe.ingest.driver import IngestSummary
    from elopipe.ingest.ledger import FileResult
    from elopipe.ingest.scaleout import DaskSpec


@app.command()
def ingest(
    paths: list[Path] = typer.Argument(..., help="Files or folders (read recursively); .pgn .trf .txt .gz .bz2 .zip"),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    validate_moves: bool = typer.Option(
        False,
        "--validate-moves",
        help="Replay every game; report illegal moves and results the final position contradicts.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the summary line."),
    wait: float = typer.Option(
        60,
        "--wait",
        min=0,
        help="While another process holds the store (a writer, or a long `elopipe sql` query), wait this many"
        " seconds for it (0: fail at once).",
    ),
    dask: str | None = dask_option,
    dask_workers: int | None = dask_workers_option,
    stage: Path | None = stage_option,
) -> None:
    """Read PGN and TRF files into the store. Exit 0: all loaded; 1: some partial or rejected; 2: usage."""
    from elopipe.jobs.ingest import ingest as ingest_job
    from elopipe.read.sources import path_param

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        fail(f"no such file or folder: {', '.join(missing)}")
    spec = dask_spec(dask, dask_workers, stage)
    if spec is not None:
        request = IngestRequest(tuple(path_param(p.resolve()) for p in paths), str(db.resolve()), validate_moves, wait)
        summary = _ingest_on_cluster(request, db, spec)
    else:
        # on a terminal a progress bar; elsewhere (a pipe, a log) a line every few seconds
        with ProgressLines(enabled=not quiet and not console.is_terminal) as lines:
            summary = ingest_job(
                IngestRequest(tuple(path_param(p) for p in paths), str(db), validate_moves, wait),
                progress=not quiet and console.is_terminal,
                on_wait=lambda msg: err_console.print(f"{msg}", style="yellow"),
                on_file=lines.file_done,
                on_sources=lines.start,
            )
    if not summary.files and not summary.failure:
        _say(
            err_console,
            f"no PGN or TRF file found under {', '.join(str(p) for p in paths)} (.pgn .trf .txt, or .gz .bz2 .zip)",
            style="yellow",
        )
    print_skipped(summary.skipped_paths, quiet)
    details = False  # the problems table's Details line names the query: the summary line does not repeat it
    if not quiet:
        details = print_file_problems(summary, db)
        for line in filter(None, (f.correction_line() for f in summary.files)):
            _say(console, line)
        for line in filter(None, (f.kept_line() for f in summary.files)):
            _say(console, line)
    # said even when quiet: the event will be missing from the lists until it is complete
    for line in filter(None, (f.in_progress_line() for f in summary.files)):
        _say(err_console, line, style="yellow")
    for line in summary.rerate_lines(db):
        _say(console, line)
    _say(console, summary_line(summary, db, hint=not details))
    if summary.failure:
        err_console.print(error_line(summary.failure), style="red", soft_wrap=True)
    raise typer.Exit(summary.exit_code)


PROGRESS_EVERY = 5.0  # seconds between two progress lines (`ProgressLines`)


class ProgressLines:
    """While a long ingest runs with its output not on a terminal, a line on standard error every
    `every` seconds: files read out of those found, games, time so far (a log shows it is alive).
    The first line comes after `every` seconds: a short ingest prints none."""

    def __init__(self, enabled: bool, every: float | None = None) -> None:
        self.enabled, self.every = enabled, PROGRESS_EVERY if every is None else every
        self.files = self.games = 0
        self.total: int | None = None  # not known until the files are found (`start`)
        self._heart = Heartbeat(self.every, self._line, enabled)
        self._t0 = time.monotonic()

    def __enter__(self) -> ProgressLines:
        self._heart.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._heart.__exit__(*exc)

    def start(self, total: int) -> None:
        self.total = total

    def file_done(self, result: FileResult) -> None:
        self.files += 1
        self.games += result.n_games

    def _line(self) -> None:
        seconds = int(time.monotonic() - self._t0)
        took = f"({seconds // 60}m {seconds % 60:02d}s)"
        # the files of a large folder or archive are still being found: '0 of 0 files' said wrong
        done = (
            "looking for the files to read"
            if self.total is None
            else f"{self.files:,} of {plural(self.total, 'file', thousands=True)} stored,"
            f" {plural(self.games, 'game', thousands=True)}"
        )
        err_console.print(f"ingesting: {done} {took}", soft_wrap=True, highlight=False)


def _ingest_on_cluster(request: IngestRequest, db: Path, spec: DaskSpec) -> IngestSummary:
    """`ingest` with `--dask`: the `ingest_files` flow on Prefect's Dask task runner (the parse
    tasks run on the cluster; this process is the store's one writer)."""
    import logging
    import os

    from elopipe.jobs.store import write_lock
    from elopipe.runtime.errors import first_line
    from elopipe.runtime.interrupt import graceful_stop
    from flows.prefect_env import STAGE_LOGGER, configure, loading_prefect, local_run_settings, prefect_api

    # This command prints its own table and summary: the flow's stage lines and Prefect's
    # warnings about the same files would repeat them. Errors still show.
    os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "ERROR")
    configure()
    logging.getLogger(STAGE_LOGGER).setLevel(logging.ERROR)
    try:
        # taken here, with the waiting said on the terminal; the flow re-enters it
        with (
            prefect_api() as api,  # the temporary server boots while the flows load
            write_lock(db, timeout=request.wait, on_wait=lambda msg: err_console.print(f"{msg}", style="yellow")),
            cluster_address(spec) as running,
            graceful_stop(on_first=lambda msg: err_console.print(f"{msg}", style="yellow")),
            local_run_settings(),
        ):
            with loading_prefect():
                from flows.ingest_files import ingest_flow

            api.wait_ready()
            cluster = cluster_of(running)
            return ingest_flow(cluster)(dataclasses.replace(request, cluster=cluster))
    except StoreBusyError:
        raise
    except KeyboardInterrupt:
        err_console.print("aborted; every batch loaded so far is committed", style="red")
        raise typer.Exit(130) from None
    except Exception as exc:  # Prefect logged the details; one line here
        fail(f"ingest failed: {first_line(exc)}; batches loaded before it stay loaded", 1)


def summary_line(summary: IngestSummary, db: Path, hint: bool = True) -> str:
    return f"{summary.line(db, hint)} -> {db}"


def print_file_problems(summary: IngestSummary, db: Path) -> bool:
    """The table of the partial and rejected files, each with its first problem, followed by the
    command that lists every problem (`problems_hint`); False when no file had one (nothing
    printed)."""
    from elopipe.ingest.driver import problems_hint

    bad = [f for f in summary.files if f.status in ("partial", "rejected")]
    if not bad:
        return False
    table = Table(title="Files with problems", show_lines=False)
    table.add_column("file", overflow="fold")
    table.add_column("status")
    table.add_column("games", justify="right")
    table.add_column("errors", justify="right")
    table.add_column("first problem (line: reason)", overflow="fold")
    for f in bad:
        first = f.first_issues[0] if f.first_issues else None
        where = ""
        if first is not None:
            where = f"line {first.line}: " if first.line else ""
            if first.game_index is not None:
                where += f"game {first.game_index + 1}: "
        problem = where + (first.message if first else f.reason or "")
        table.add_row(
            Text(escape_controls(f.name)), f.status, str(f.n_games), str(f.n_errors), Text(escape_controls(problem))
        )
    print_table(table)
    details = problems_hint(db, summary.problem_file_ids)
    _say(console, f"Details: {details}")
    return True


def print_skipped(skipped: list[tuple[str, str]], quiet: bool = False) -> None:
    """Name each folder entry that was not opened for a reason other than its suffix (symbolic
    links, FIFOs, devices), even when quiet: a link left out may be a file the user expected to
    load. Unless quiet, count the files passed over for their suffix in one line."""
    from elopipe.read.sources import refused

    named = refused(skipped)
    for path, why in named:
        _say(err_console, f"skipped {path}: {why}", style="yellow")
    passed = [Path(path).name for path, why in skipped if (path, why) not in named]
    if passed and not quiet:
        shown = ", ".join(passed[:3]) + (f" and {len(passed) - 3} more" if len(passed) > 3 else "")
        _say(
            console,
            f"{plural(len(passed), 'file')} passed over ({shown}): not .pgn .trf .txt (or .gz .bz2 .zip of those)",
        )


def _say(to: Console, line: str, style: str | None = None) -> None:
    """Print one line that names the user's files: their control characters written \\xNN
    (`escape_controls`: a file name holding an escape code or a newline changed the terminal or
    split the line) and no Rich markup read in them (a name in square brackets is text)."""
    to.print(escape_controls(line), style=style, soft_wrap=True, markup=False, highlight=False)
