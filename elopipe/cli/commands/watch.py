"""`elopipe watch INBOX`: a long-running drop folder, no Prefect server needed."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from elopipe.cli.app import DB_OPTION_HELP, app, console, err_console
from elopipe.cli.commands.dask_opts import (
    cluster_address,
    cluster_args,
    dask_option,
    dask_spec,
    dask_workers_option,
    stage_option,
)
from elopipe.cli.commands.run import (
    DEFAULT_SYSTEMS,
    LISTS_HELP,
    SYSTEM_HELP,
    exit_if_api_unreachable,
    parse_max_lists,
    parse_systems,
    parse_through,
)
from elopipe.ingest.scaleout import DaskSpec
from elopipe.read.sources import path_param
from elopipe.runtime.errors import ElopipeError, first_line
from elopipe.store.connect import DEFAULT_DB, check_store_path

if TYPE_CHECKING:
    from elopipe.ingest.watcher import FileOutcome


@app.command()
def watch(
    inbox: Path = typer.Argument(..., help="The drop folder (created if missing)."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    system: str = typer.Option(DEFAULT_SYSTEMS, "--system", "-s", help=SYSTEM_HELP),
    out: Path = typer.Option(Path("out"), "--out", "-o", help="Folder for lists and reports."),
    through: str | None = typer.Option(None, "--through", help="Rate up to the list of this date (YYYY-MM-DD)."),
    interval: float = typer.Option(5.0, "--interval", min=0.1, help="Seconds between two looks at the folder."),
    incomplete_wait: float = typer.Option(
        60.0,
        "--incomplete-wait",
        min=0,
        help="Seconds a file that looks cut short (a PGN whose last game has no result, a TRF whose "
        "last line is unfinished) must hold still before it is taken anyway, with a warning.",
    ),
    lists: str = typer.Option("all", "--lists", help=LISTS_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show Prefect's INFO logs too."),
    dask: str | None = dask_option,
    dask_workers: int | None = dask_workers_option,
    stage: Path | None = stage_option,
) -> None:
    """Watch a drop folder and run the main job on what arrives (no Prefect server needed).

    Each batch of arrived files runs the `pipeline` flow, then every file moves to
    INBOX/processed/ (loaded, partial, or already in the store) or INBOX/quarantine/ with a
    .reason.txt (rejected). A file counts as arrived when its size and mtime hold still over two
    looks, and, if it looks cut short, for --incomplete-wait seconds; .part/.tmp/.crdownload and
    dot files are ignored. A file that changes while it is loaded stays in the inbox, and one that
    changes after it was moved comes back to it: either is loaded again, as a correction. Ctrl-C
    finishes the current batch's transaction and exits. Runs appear in the Prefect UI when a server
    is configured; without one Prefect uses a temporary local server."""
    check_store_path(db)  # a bad --db is a usage error before Prefect starts
    systems = parse_systems(system)
    through_date = parse_through(through)
    max_lists = parse_max_lists(lists)
    spec = dask_spec(dask, dask_workers, stage)
    inbox = inbox.resolve()
    inbox.mkdir(parents=True, exist_ok=True)
    from elopipe.ingest.watcher import PROCESSED, QUARANTINE, inbox_folder

    for name in (PROCESSED, QUARANTINE):
        inbox_folder(inbox, name)

    from elopipe.ingest.watcher import outcomes_by_path
    from elopipe.ingest.watcher import watch as watch_loop
    from elopipe.runtime.interrupt import graceful_stop
    from elopipe.runtime.prefect_env import configure, local_run_settings, temporary_server_dies_with_us

    exit_if_api_unreachable()
    configure(quiet=not verbose)
    temporary_server_dies_with_us()
    from flows.pipeline import pipeline

    _show_watcher_warnings()
    db_s, out_s = str(db.resolve()), str(out.resolve())

    cluster: DaskSpec | None = None  # the cluster all batches parse on (started once, below)

    def run_batch(files: list[Path]) -> dict[Path, FileOutcome]:
        console.print(f"{len(files)} new file(s): {', '.join(f.name for f in files)}", soft_wrap=True)
        address, stage_dir, workers = cluster_args(cluster)
        summary = pipeline(
            [path_param(f) for f in files], db_s, systems, out_s, through_date,
            max_lists=max_lists, dask_address=address, stage=stage_dir, dask_workers=workers,
        )  # fmt: skip
        return outcomes_by_path(files, summary.ingest.files)

    console.print(
        f"watching {inbox} every {interval:g} s (Ctrl-C to stop); store {db_s}, outputs {out_s}\n"
        f"  loaded -> {inbox / 'processed'}, rejected -> {inbox / 'quarantine'}",
        soft_wrap=True,
    )
    try:
        with (
            graceful_stop(on_first=lambda msg: err_console.print(f"{msg}", style="yellow")),
            local_run_settings(),
            cluster_address(spec) as cluster,
        ):
            stats = watch_loop(inbox, run_batch, interval=interval, incomplete_wait=incomplete_wait)
    except KeyboardInterrupt:
        err_console.print("aborted; every file loaded so far is committed, the rest stay in the inbox", style="red")
        raise typer.Exit(130) from None
    except ElopipeError:
        raise  # the CLI prints it with its exit code (elopipe.cli.app); the files stay in the inbox
    except Exception as exc:  # a failed batch: say so, leave its files in the inbox
        err_console.print(f"batch failed: {first_line(exc)}; its files stay in {inbox}", style="red")
        raise typer.Exit(1) from None
    console.print(
        f"stopped: {stats.batches} batches, {stats.processed} processed, {stats.quarantined} quarantined"
        + (f", {stats.left} left in the inbox" if stats.left else "")
        + (f", {stats.changed} changed while loaded (loaded again)" if stats.changed else "")
        + (f", {stats.returned} changed after the move (moved back)" if stats.returned else ""),
        soft_wrap=True,
    )


class _ConsoleLines(logging.Handler):
    """The watcher's warnings (quarantined, incomplete, changed files) as plain lines for the
    officer, without Prefect's logger names and levels."""

    def emit(self, record: logging.LogRecord) -> None:
        err_console.print(record.getMessage(), style="yellow", soft_wrap=True, markup=False)


def _show_watcher_warnings() -> None:
    logger = logging.getLogger("elopipe.ingest.watcher")
    if not any(isinstance(h, _ConsoleLines) for h in logger.handlers):
        handler = _ConsoleLines(logging.WARNING)
        logger.addHandler(handler)
    logger.propagate = False
