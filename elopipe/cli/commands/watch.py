"""`elopipe watch INBOX`: a long-running drop folder, no Prefect server needed."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from elopipe.cli.app import (
    DB_OPTION_HELP,
    app,
    check_db_outside,
    check_out_folder,
    check_out_not_input,
    console,
    drop_folder_path,
    err_console,
    fail,
)
from elopipe.cli.commands.dask_opts import (
    cluster_address,
    cluster_of,
    dask_option,
    dask_spec,
    dask_workers_option,
    stage_option,
)
from elopipe.cli.commands.policies import check_policies
from elopipe.cli.commands.run import (
    DEFAULT_SYSTEMS,
    LISTS_HELP,
    SYSTEM_HELP,
    THROUGH_HELP,
    exit_if_api_unreachable,
    parse_max_lists,
    parse_systems,
    parse_through,
)
from elopipe.ingest.scaleout import DaskSpec
from elopipe.jobs.requests import RunRequest
from elopipe.jobs.store import DEFAULT_DB, check_store
from elopipe.read.sources import path_param
from elopipe.runtime.errors import ElopipeError, first_line
from elopipe.runtime.words import plural

if TYPE_CHECKING:
    from elopipe.cli.commands.live_status import LiveStatus
    from elopipe.ingest.watcher.batch import WatchStats
    from elopipe.ingest.watcher.outcomes import FileOutcome
    from elopipe.ingest.watcher.recheck import FiledAway
    from flows.prefect_env import PrefectApi


_SIGTERM_LINE = (
    "stopped (SIGTERM): every file loaded so far is committed; files not yet moved stay in the inbox"
    " (the next watch takes them)"
)


@app.command()
def watch(
    inbox: Path = typer.Argument(..., help="The drop folder (created if missing)."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    system: str = typer.Option(DEFAULT_SYSTEMS, "--system", "-s", help=SYSTEM_HELP),
    out: Path = typer.Option(Path("out"), "--out", "-o", help="Folder for lists and reports."),
    through: str | None = typer.Option(None, "--through", help=THROUGH_HELP),
    interval: float = typer.Option(1.0, "--interval", min=0.1, help="Seconds between two looks at the folder."),
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
    looks, and, if it looks cut short, for --incomplete-wait seconds; upload names (.part,
    .tmp, .crdownload, .partial, .download, .filepart, ~) and dot files are ignored. A file
    that changes while it is loaded stays in the inbox, and one that changes after it was moved
    comes back to it: either is loaded again, as a correction. Ctrl-C
    finishes the current batch's transaction, if one runs, and exits (status 130). Runs appear in the Prefect UI
    when a server is configured; without one a temporary local server runs for the whole watch."""
    check_store(db)  # a bad --db (or another program's database) is a usage error before Prefect starts
    check_out_folder(out, "publish to")
    check_out_not_input(out, [inbox], "the drop folder")  # its pages would be taken as new files
    check_db_outside(db, inbox)
    systems = parse_systems(system)
    check_policies()  # ELOPIPE_NO_MOVES, _RO_FROM, _UNKNOWN_TC: before Prefect starts
    from elopipe.publish.folders import publish_folders

    check_out_folder(out, "publish to", publish_folders(*systems))  # before Prefect starts
    through_date = parse_through(through)
    max_lists = parse_max_lists(lists)
    spec = dask_spec(dask, dask_workers, stage)
    inbox, created = drop_folder_path(inbox)
    exit_if_api_unreachable()
    from elopipe.cli.commands.live_status import LiveStatus
    from elopipe.runtime.interrupt import graceful_stop, stop_requested
    from flows.prefect_env import configure, prefect_api

    db_s, out_s = str(db.resolve()), str(out.resolve())
    configure(quiet=not verbose)
    batch = _Batch()

    def on_first_stop(_msg: str) -> None:
        words = stopping_words(batch.running)
        if words:
            live.line(words, "yellow")

    try:
        with (
            _inbox_locked(inbox),  # before Prefect starts: a second watch is refused at once
            LiveStatus(err_console, warn_once=("rate",)) as live,
            graceful_stop(on_first=on_first_stop),
        ):
            filed = _inbox_checked(inbox, live)  # a bad INBOX/.elopipe is said before Prefect starts
            with prefect_api() as api:  # one server for all batches, started now
                live.line(f"watch: {inbox} -> store {db_s}, outputs {out_s} ({', '.join(systems)})")
                if created:
                    live.line(created)
                where = "starting Prefect" if api.server else f"connecting to the Prefect server at {api.url}"
                live.step(f"{where} ...")
                args = WatchArgs(inbox, db_s, out_s, systems, through_date, max_lists, interval, incomplete_wait, spec)
                stats = _watch(args, api, live, verbose, batch, filed)
    except KeyboardInterrupt:
        err_console.print(
            "aborted; every file loaded so far is committed; files not yet moved stay in the inbox", style="red"
        )
        raise typer.Exit(130) from None
    except ElopipeError:
        raise  # the CLI prints it with its exit code (elopipe.cli.app); the files stay in the inbox
    except (BrokenPipeError, typer.Exit):
        # the reader of its output went away (`| head`: 141, as `run`, elopipe.cli.app), or an
        # exit already decided; Click's Exit is a RuntimeError: caught below, it became exit 1
        raise
    except Exception as exc:  # a failed batch: say so, leave its files in the inbox
        from elopipe.jobs.store import is_interrupt
        from flows.prefect_env import is_termination

        if is_termination(exc):  # Prefect's clean-up failed on the SIGTERM it was handling
            err_console.print(_SIGTERM_LINE)
            raise typer.Exit(130) from None
        if is_interrupt(exc):  # a stop met a DuckDB statement: its error, not KeyboardInterrupt
            err_console.print(
                "aborted; every file loaded so far is committed; files not yet moved stay in the inbox", style="red"
            )
            raise typer.Exit(130) from None
        fail(f"batch failed: {first_line(exc)}; its files stay in {inbox}", 1)
    except BaseException as exc:  # re-raised unless it is Prefect's SIGTERM
        from flows.prefect_env import is_termination

        if not is_termination(exc):
            raise
        # a SIGTERM while a flow ran: Prefect's handler stops the flow where it is
        err_console.print(_SIGTERM_LINE)
        raise typer.Exit(130) from None
    if stats is not None:
        console.print(
            f"stopped: {plural(stats.batches, 'batch', 'batches')}, {stats.processed} processed,"
            f" {stats.quarantined} quarantined"
            + (f", {stats.left} left in the inbox" if stats.left else "")
            + (f", {stats.changed} changed while loaded (loaded again)" if stats.changed else "")
            + (f", {stats.returned} changed after the move (moved back)" if stats.returned else ""),
            soft_wrap=True,
        )
    elif stop_requested():  # while Prefect started: no batch yet
        from elopipe.runtime.interrupt import stop_cause

        console.print(f"stopped ({stop_cause()}) before watching began; nothing was read")
    if stop_requested():
        raise typer.Exit(130)  # stopped by Ctrl-C (or SIGTERM), as a shell expects


@contextmanager
def _inbox_locked(inbox: Path) -> Iterator[None]:
    """Hold the inbox's lock (elopipe.ingest.watcher.lock) while the block runs; another process
    holding it is a usage error, one line naming the command (InboxError: exit 2)."""
    from elopipe.ingest.watcher.filing import InboxError
    from elopipe.ingest.watcher.lock import InboxBusyError, inbox_lock

    stack = ExitStack()
    try:
        stack.enter_context(inbox_lock(inbox))
    except InboxBusyError as exc:
        raise InboxError(str(exc)) from None  # the CLI names the command (app.error_line)
    with stack:
        yield


@dataclass
class _Batch:
    """Whether a batch runs now: set around its flow run, read by the Ctrl-C handler."""

    running: bool = False


def new_files_line(files: list[Path]) -> str:
    """The line that opens a batch: its files' names, each as `filing.shown` writes it (a newline or
    a byte that is not UTF-8 in a name would split the line or reach the terminal raw)."""
    from elopipe.ingest.watcher.filing import shown

    return f"{plural(len(files), 'new file')}: {', '.join(shown(f.name) for f in files)}"


def stopping_words(batch_running: bool) -> str | None:
    """What a first Ctrl-C gets said at once: while a batch runs, that the watch stops once its
    transaction is committed, and how to abort; between batches, nothing (no batch to finish:
    the watch stops at once, and its last line says so, 'stopped: 2 batches, ...')."""
    from elopipe.runtime.interrupt import stopping_line

    return stopping_line("stopping after the current batch's transaction") if batch_running else None


@dataclass(frozen=True)
class WatchArgs:
    """The arguments of one `watch`, checked."""

    inbox: Path
    db: str
    out: str
    systems: list[str]
    through: dt.date | None
    max_lists: int | None
    interval: float
    incomplete_wait: float
    spec: DaskSpec | None


def _inbox_checked(inbox: Path, live: LiveStatus) -> FiledAway:
    """INBOX/processed/ and INBOX/quarantine/ (created if missing) and the files an earlier watch
    filed away (INBOX/.elopipe/filed-away.jsonl), checked before Prefect starts: a symbolic link
    in their place is refused at once (InboxError), not after the seconds of Prefect's start.
    The watcher's lines go to `live` from here on (a line of that file it cannot read is one)."""
    from elopipe.ingest.watcher.filing import inbox_folder
    from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE
    from elopipe.ingest.watcher.recheck import FiledAway

    for name in (PROCESSED, QUARANTINE):
        inbox_folder(inbox, name)
    _show_watcher_warnings(live)
    return FiledAway(inbox)


def _watch(
    args: WatchArgs, api: PrefectApi, live: LiveStatus, verbose: bool, batch: _Batch, filed: FiledAway
) -> WatchStats | None:
    """Load the flows, wait for Prefect's API, then watch until a stop is requested, `batch`
    saying when a batch runs, `filed` the files filed away so far. None when the stop came
    before the watching began."""
    from elopipe.ingest.watcher.loop import watch as watch_loop
    from elopipe.ingest.watcher.outcomes import outcomes_by_path
    from elopipe.runtime.interrupt import stop_requested
    from flows.prefect_env import loading_prefect, local_run_settings, quiet_prefect_console

    with loading_prefect():
        from flows.pipeline import pipeline

        _load_stage_modules()
    quiet_prefect_console(everything=not verbose)
    api.wait_ready(stop=stop_requested)
    if stop_requested():
        return None

    inbox = args.inbox
    waiting = f"watching {inbox} every {args.interval:g} s (Ctrl-C to stop) ..."
    # one cluster for all batches (started once, here), when --dask is given
    with local_run_settings(), cluster_address(args.spec) as cluster:

        def run_batch(files: list[Path]) -> dict[Path, FileOutcome]:
            live.line(new_files_line(files))
            request = RunRequest(
                tuple(path_param(f) for f in files), args.db, tuple(args.systems), args.out, args.through,
                max_lists=args.max_lists, cluster=cluster_of(cluster),
            )  # fmt: skip
            batch.running = True
            try:
                summary = pipeline(request)
            finally:
                batch.running = False
            if not stop_requested():  # a stopping watch watches no more
                live.step(waiting, busy=False)
            return outcomes_by_path(files, summary.ingest.files, stopped=summary.stopped)

        live.line(f"ready: loaded -> {inbox / 'processed'}, rejected -> {inbox / 'quarantine'}")
        live.step(waiting, busy=False)
        return watch_loop(inbox, run_batch, interval=args.interval, incomplete_wait=args.incomplete_wait, filed=filed)


def _load_stage_modules() -> None:
    """Import, while Prefect's server starts, what the first batch would otherwise import on first
    use (about a second of a small file's latency): Prefect's flow and task engines, the TRF
    reader, the FIDE engine, the rating and publishing modules (a publish draws its charts as
    SVG, without matplotlib, and reads the store without pyarrow) and the slug's transliteration."""
    import prefect.flow_engine  # noqa: F401
    import prefect.task_engine  # noqa: F401
    import slugify  # noqa: F401

    import elopipe.ingest.execution  # noqa: F401
    import elopipe.publish.outputs  # noqa: F401
    import elopipe.rating.fide.run  # noqa: F401
    import elopipe.rating.run  # noqa: F401
    import elopipe.read.trf.reader  # noqa: F401


class _ConsoleLines(logging.Handler):
    """The watcher's lines (where a batch's files went) and warnings (quarantined, incomplete,
    changed files) as plain lines for the officer, without Prefect's logger names and levels."""

    def __init__(self, live: LiveStatus) -> None:
        super().__init__(logging.INFO)
        self.live = live

    def emit(self, record: logging.LogRecord) -> None:
        from elopipe.cli.commands.live_status import lines_to_a_closed_pipe

        with lines_to_a_closed_pipe():
            self.live.line(record.getMessage(), "yellow" if record.levelno >= logging.WARNING else None)


def _show_watcher_warnings(live: LiveStatus) -> None:
    logger = logging.getLogger("elopipe.ingest.watcher")
    for old in [h for h in logger.handlers if isinstance(h, _ConsoleLines)]:
        logger.removeHandler(old)
    logger.addHandler(_ConsoleLines(live))
    logger.setLevel(logging.INFO)
    logger.propagate = False
