"""`elopipe run PATH... [--db FILE] [--system fide,ffe] [--out DIR]`: the main job, through Prefect."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from elopipe.cli.app import (
    DB_OPTION_HELP,
    app,
    check_out_folder,
    check_out_not_input,
    console,
    err_console,
    error_line,
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
from elopipe.cli.commands.policies import (
    checked_no_moves,
    checked_ro_from,
    checked_unknown_tc,
    no_moves_option,
    ro_from_option,
    unknown_tc_option,
)
from elopipe.ingest.scaleout import DaskSpec
from elopipe.jobs.requests import RunRequest
from elopipe.jobs.store import DEFAULT_DB, check_store_path, is_disk_full, is_interrupt
from elopipe.rating import systems as registry
from elopipe.read.sources import path_param
from elopipe.runtime.errors import ElopipeError, first_line
from elopipe.runtime.words import plural

if TYPE_CHECKING:
    from elopipe.cli.commands.live_status import LiveStatus
    from flows.pipeline import PipelineSummary

# FIDE rates three rates of play; each event lands in the list of its own (standard, rapid, blitz).
DEFAULT_SYSTEMS = ",".join(registry.DEFAULT_SYSTEMS)
SYSTEM_HELP = "Rating systems, comma-separated: fide, fide-rapid, fide-blitz, ffe, ffe-rapid, elo, glicko2."


def exit_if_api_unreachable() -> None:
    """A PREFECT_API_URL that nothing answers on: say so and exit 1 before any flow starts."""
    from flows.prefect_env import api_status

    status = api_status()
    if status.url and not status.reachable:
        fail(
            f"{status.detail}\nStart it (`prefect server start`), or unset PREFECT_API_URL to let "
            "Prefect start a temporary server for this command.",
            1,
        )


def parse_systems(text: str) -> list[str]:
    """'fide, FFE' -> ['fide', 'ffe'] (order kept, duplicates dropped). Raises typer.BadParameter
    when nothing is left or a name is not a known rating system (elopipe.rating.systems)."""

    systems = list(dict.fromkeys(s.strip().lower() for s in text.split(",") if s.strip()))
    if not systems:
        raise typer.BadParameter("give at least one rating system, e.g. --system fide")
    unknown = [s for s in systems if s not in registry.names()]
    if unknown:
        raise typer.BadParameter(f"unknown rating system {', '.join(unknown)}; known: {', '.join(registry.names())}")
    return systems


def parse_max_lists(text: str) -> int | None:
    """'12' -> 12, 'all' -> None (no limit). Raises typer.BadParameter (usage error, exit 2)
    otherwise, 0 included: writing no list would leave the changed lists unpublished."""
    if text.strip().lower() == "all":
        return None
    if text.strip().isdigit() and int(text) >= 1:
        return int(text)
    raise typer.BadParameter(f"{text.strip()}: give a number of lists, 1 or more, or 'all'", param_hint="--lists")


LISTS_HELP = (
    "Changed lists to write per system: 'all', or only the N most recent (older changed lists then "
    "stay in the store, and are rewritten only if this output folder already has them)."
)


THROUGH_HELP = "Rate up to the list of this month (YYYY-MM), a preview as `rate --through`."


def parse_through(text: str | None) -> dt.date | None:
    """`--through` of `run` and `watch`: a list month, as `rate --through` reads it
    (`elopipe.rating.run.parse_month`); anything else is a usage error (one line, exit 2)."""
    from elopipe.rating.run import parse_month

    try:
        return parse_month(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


@app.command()
def run(
    paths: list[Path] = typer.Argument(..., help="Files or folders of PGN/TRF (and .zip/.gz/.bz2 of those)."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    system: str = typer.Option(DEFAULT_SYSTEMS, "--system", "-s", help=SYSTEM_HELP),
    out: Path = typer.Option(Path("out"), "--out", "-o", help="Folder for lists and reports."),
    through: str | None = typer.Option(None, "--through", help=THROUGH_HELP),
    validate_moves: bool = typer.Option(
        False,
        "--validate-moves",
        help="Replay every game; report illegal moves and results the final position contradicts.",
    ),
    lock_timeout: float | None = typer.Option(
        None, "--lock-timeout", min=0, help="Seconds to wait for another run writing the same store (default: wait)."
    ),
    lists: str = typer.Option("all", "--lists", help=LISTS_HELP),
    no_moves: str | None = no_moves_option,
    ro_from: str | None = ro_from_option,
    unknown_tc: str | None = unknown_tc_option,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show Prefect's INFO logs too."),
    dask: str | None = dask_option,
    dask_workers: int | None = dask_workers_option,
    stage: Path | None = stage_option,
) -> None:
    """Run the main job: ingest, rate, publish (Prefect flow `pipeline`); print where outputs went.

    Without a Prefect server (PREFECT_API_URL unset) a temporary one runs for the command. Ctrl-C
    stops at the next safe point (after the current batch's transaction, or between two systems'
    rating or publishing). Exit 0: done and every file loaded; 1: done but some files
    partial/rejected, or failed; 130: stopped by Ctrl-C.
    """
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        fail(f"no such file or folder: {', '.join(missing)}")
    check_store_path(db)  # a bad --db is a usage error before Prefect starts
    check_out_folder(out, "publish to")  # ... and so is an --out that is a file: not after the rating
    check_out_not_input(out, paths, "an input folder")  # never read again once it holds the manifest
    systems = parse_systems(system)
    from elopipe.publish.folders import publish_folders

    check_out_folder(out, "publish to", publish_folders(*systems))  # before Prefect starts
    through_date = parse_through(through)
    max_lists = parse_max_lists(lists)
    policy = checked_no_moves(no_moves)
    ro_policy = checked_ro_from(ro_from)
    tc_policy = checked_unknown_tc(unknown_tc)
    spec = dask_spec(dask, dask_workers, stage)
    exit_if_api_unreachable()

    from elopipe.cli.commands.live_status import LiveStatus
    from elopipe.jobs.store import write_lock

    # The first line comes before Prefect is imported or started (that takes seconds).
    with LiveStatus(err_console) as live:
        live.line(f"run: {', '.join(str(p) for p in paths)} -> store {db}, outputs {out} ({', '.join(systems)})")
        # The lock is taken before Prefect starts (the flow re-enters it in this process): a busy
        # store is reported at once, in one line, without Prefect's start-up or its traceback.
        with write_lock(db, timeout=lock_timeout, on_wait=lambda msg: live.line(msg, "yellow")):
            request = RunRequest(
                tuple(path_param(p.resolve()) for p in paths),
                str(db.resolve()),
                tuple(systems),
                str(out.resolve()),
                through_date,
                validate_moves,
                lock_timeout,
                max_lists,
                policy,
                ro_policy,
                unknown_tc=tc_policy,
            )
            summary, timing = _run_pipeline(request, spec, live, verbose)
    _report(summary, db, timing)


@dataclass(frozen=True)
class Timing:
    """Wall-clock marks (time.time()) of one `run`: start, flows loaded, Prefect's API ready, end."""

    start: float
    imported: float
    api_ready: float
    end: float


_ABORTED_LINE = "aborted; what was committed stays, and the next run rates and publishes the rest"
_SIGTERM_LINE = "stopped (SIGTERM): what was committed stays; the next run rates and publishes the rest"


def _run_pipeline(
    request: RunRequest, spec: DaskSpec | None, live: LiveStatus, verbose: bool
) -> tuple[PipelineSummary, Timing]:
    """`run` once the store's write lock is held: Prefect's API (a temporary server, started now,
    unless one is configured), then the `pipeline` flow on `request`; parsing on the Dask cluster
    of `spec` if given. A Ctrl-C stops it at the next safe point (exit 130, see `_report`); a
    second one aborts at once."""
    from elopipe.runtime.interrupt import graceful_stop, stop_cause, stop_requested, stopping_line
    from flows.prefect_env import (
        configure,
        is_termination,
        loading_prefect,
        local_run_settings,
        prefect_api,
        quiet_prefect_console,
    )

    start = time.time()
    configure(quiet=not verbose)
    try:
        with (
            graceful_stop(on_first=lambda _msg: live.line(stopping_line("stopping at the next safe point"), "yellow")),
            prefect_api(fork=True) as api,  # forked once Prefect is imported: it shares that import
        ):
            live.step("starting Prefect ..." if api.server else f"connecting to the Prefect server at {api.url} ...")
            api.launch()
            with loading_prefect():
                from flows.pipeline import pipeline

            quiet_prefect_console(everything=not verbose)
            imported = time.time()
            api.wait_ready(stop=stop_requested)
            api_ready = time.time()
            if stop_requested():  # Ctrl-C while Prefect started: nothing read yet, nothing to wait for
                err_console.print(f"stopped ({stop_cause()}) before any file was read", style="yellow")
                raise typer.Exit(130)
            with local_run_settings(), cluster_address(spec) as cluster:
                summary = pipeline(dataclasses.replace(request, cluster=cluster_of(cluster)))
    except (ElopipeError, typer.Exit):
        raise  # the CLI prints it (elopipe.cli.app); an Exit is a status already said
    except KeyboardInterrupt:
        err_console.print(_ABORTED_LINE, style="red")
        raise typer.Exit(130) from None
    except Exception as exc:  # end with one clear line (Prefect's own log is in its UI, or -v)
        if is_disk_full(exc):
            raise  # the CLI says which disk is full, as for every command
        if is_interrupt(exc):  # a second Ctrl-C met a DuckDB statement: its error, not KeyboardInterrupt
            err_console.print(_ABORTED_LINE, style="red")
            raise typer.Exit(130) from None
        if is_termination(exc):  # Prefect's clean-up failed on the SIGTERM it was handling
            err_console.print(_SIGTERM_LINE)
            raise typer.Exit(130) from None
        fail(f"pipeline failed: {first_line(exc)}; files loaded before the failure stay loaded", 1)
    except BaseException as exc:
        if not is_termination(exc):
            raise
        # a SIGTERM while a flow ran: Prefect's handler stops the flow where it is
        err_console.print(_SIGTERM_LINE)
        raise typer.Exit(130) from None
    return summary, Timing(start, imported, api_ready, time.time())


def _report(summary: PipelineSummary, db: Path, timing: Timing) -> None:
    """The closing lines and the exit status: 130 after a Ctrl-C (the run says it stopped, and
    after how long, never that it is done), 1 when a file was partial or rejected or a stage
    failed, 0 otherwise."""
    print_where(summary, db)
    for line in summary.publish_failures:
        err_console.print(error_line(f"publish failed: {line}"), style="red", soft_wrap=True)
    elapsed = timing.end - timing.start
    if summary.interrupted:
        from elopipe.runtime.interrupt import stop_cause

        err_console.print(
            f"stopped ({stop_cause()}) after {elapsed:.1f} s: what was committed stays; the next run rates and "
            "publishes the rest",
            style="yellow",
        )
    else:
        console.print(f"done in {elapsed:.1f} s")
    job = summary.body_ended - summary.body_started
    console.print(
        f"  of which Prefect: {summary.body_started - timing.start:.1f} s to start (flows loaded after "
        f"{timing.imported - timing.start:.1f} s, API ready after {timing.api_ready - timing.start:.1f} s, "
        f"first flow run {summary.body_started - timing.api_ready:.1f} s), "
        f"{timing.end - summary.body_ended:.1f} s to finish; the job itself {job:.1f} s",
        soft_wrap=True,
        style="dim",
    )
    if summary.interrupted:
        raise typer.Exit(130)
    failed = summary.stopped or summary.publish_failures
    raise typer.Exit(1 if failed or summary.ingest.count("partial") or summary.ingest.count("rejected") else 0)


def print_where(summary: PipelineSummary, db: Path) -> None:
    """The closing lines but the last (`_report`): store, lists, reports, index pages."""
    console.print(f"store:   {db}", soft_wrap=True)
    groups = summary.where()
    labels = {"lists": "lists", "reports": "reports", "players": "players", "index": "index"}
    for kind, label in labels.items():
        files = groups.get(kind, [])
        if not files:
            continue
        folder = files[0].parent if kind == "index" else summary.out / kind
        # every system's publish rewrites the top index.html: named once
        shown = ", ".join(dict.fromkeys(p.name for p in files)) if kind == "index" else plural(len(files), "file")
        console.print(f"{label + ':':8} {folder}  ({shown})", soft_wrap=True)
    if not summary.published and not summary.stopped and not summary.publish_failures:
        console.print(f"outputs: {summary.out} ({_why_nothing_written(summary)})", soft_wrap=True)


def _why_nothing_written(summary: PipelineSummary) -> str:
    ing = summary.ingest
    taken = ing.count("loaded") + ing.count("partial")
    if not taken and ing.count("rejected") and not ing.count("skipped"):
        n = ing.count("rejected")
        return f"nothing written: {'the file was' if n == 1 else f'all {n} files were'} rejected, see above"
    if not ing.files:
        return "nothing written: no PGN or TRF file found"
    if not taken:
        return "nothing written: no new file, and nothing changed since the last run"
    return "nothing written: no rating list changed"
