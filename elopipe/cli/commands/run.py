"""`elopipe run PATH... [--db FILE] [--system fide,ffe] [--out DIR]`: the main job, through Prefect."""

from __future__ import annotations

import datetime as dt
import time
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
from elopipe.cli.commands.no_moves_opt import checked_no_moves, no_moves_option
from elopipe.ingest.scaleout import DaskSpec
from elopipe.rating import systems as registry
from elopipe.read.sources import path_param
from elopipe.runtime.errors import ElopipeError, first_line
from elopipe.store.connect import DEFAULT_DB, check_store_path, is_disk_full, is_interrupt

if TYPE_CHECKING:
    from flows.pipeline import PipelineSummary

# FIDE rates three rates of play; each event lands in the list of its own (standard, rapid, blitz).
DEFAULT_SYSTEMS = ",".join(registry.DEFAULT_SYSTEMS)
SYSTEM_HELP = "Rating systems, comma-separated: fide, fide-rapid, fide-blitz, ffe, ffe-rapid, elo, glicko2."


def exit_if_api_unreachable() -> None:
    """A PREFECT_API_URL that nothing answers on: say so and exit 1 before any flow starts."""
    from elopipe.runtime.prefect_env import api_status

    status = api_status()
    if status.url and not status.reachable:
        err_console.print(
            f"{status.detail}\nStart it (`prefect server start`), or unset PREFECT_API_URL to let "
            "Prefect start a temporary server for this command.",
            style="red",
            soft_wrap=True,
        )
        raise typer.Exit(1)


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
    """'12' -> 12, 'all' -> None (no limit). Raises typer.BadParameter otherwise."""
    if text.strip().lower() == "all":
        return None
    if text.strip().isdigit():
        return int(text)
    raise typer.BadParameter(f"{text!r}: give a number of lists or 'all'")


LISTS_HELP = (
    "Changed lists to write per system: 'all', or only the N most recent (older changed lists then "
    "stay in the store, and are rewritten only if this output folder already has them)."
)


def parse_through(text: str | None) -> dt.date | None:
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a date (YYYY-MM-DD)") from None


@app.command()
def run(
    paths: list[Path] = typer.Argument(..., help="Files or folders of PGN/TRF (and .zip/.gz/.bz2 of those)."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    system: str = typer.Option(DEFAULT_SYSTEMS, "--system", "-s", help=SYSTEM_HELP),
    out: Path = typer.Option(Path("out"), "--out", "-o", help="Folder for lists and reports."),
    through: str | None = typer.Option(None, "--through", help="Rate up to the list of this date (YYYY-MM-DD)."),
    validate_moves: bool = typer.Option(
        False,
        "--validate-moves",
        help="Replay every game; report illegal moves and results the final position contradicts.",
    ),
    lock_timeout: float | None = typer.Option(
        None, "--lock-timeout", help="Seconds to wait for another run writing the same store (default: wait)."
    ),
    lists: str = typer.Option("all", "--lists", help=LISTS_HELP),
    no_moves: str | None = no_moves_option,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show Prefect's INFO logs too."),
    dask: str | None = dask_option,
    dask_workers: int | None = dask_workers_option,
    stage: Path | None = stage_option,
) -> None:
    """Run the main job: ingest, rate, publish (Prefect flow `pipeline`); print where outputs went.

    Without a Prefect server (PREFECT_API_URL unset) Prefect starts a temporary one for the run.
    Exit 0: done and every file loaded; 1: done but some files partial/rejected, or failed.
    """
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        err_console.print(f"no such file or folder: {', '.join(missing)}", style="red")
        raise typer.Exit(2)
    check_store_path(db)  # a bad --db is a usage error before Prefect starts
    systems = parse_systems(system)
    through_date = parse_through(through)
    max_lists = parse_max_lists(lists)
    policy = checked_no_moves(no_moves)
    spec = dask_spec(dask, dask_workers, stage)

    # The lock is taken before Prefect starts (the flow re-enters it in this process): a busy
    # store is reported at once, in one line, without Prefect's start-up or its traceback.
    from elopipe.store.connect import write_lock

    with write_lock(db, timeout=lock_timeout, on_wait=lambda msg: err_console.print(f"{msg}", style="yellow")):
        _run_pipeline(
            paths, db, out, systems, through_date, validate_moves, lock_timeout, max_lists, verbose, spec, policy
        )


def _run_pipeline(
    paths: list[Path],
    db: Path,
    out: Path,
    systems: list[str],
    through_date: dt.date | None,
    validate_moves: bool,
    lock_timeout: float | None,
    max_lists: int | None,
    verbose: bool,
    spec: DaskSpec | None = None,
    no_moves: str = "played",
) -> None:
    """`run` once the store's write lock is held; parsing on the Dask cluster of `spec` if given."""
    from elopipe.runtime.interrupt import graceful_stop
    from elopipe.runtime.prefect_env import configure, local_run_settings, start_api_early

    exit_if_api_unreachable()
    t0 = time.time()
    configure(quiet=not verbose)
    api_ready = start_api_early()
    from flows.pipeline import pipeline

    t_imported = time.time()
    api_ready()

    try:
        with (
            graceful_stop(on_first=lambda msg: err_console.print(f"{msg}", style="yellow")),
            local_run_settings(),
            cluster_address(spec) as cluster,
        ):
            summary = pipeline(
                [path_param(p.resolve()) for p in paths],
                str(db.resolve()),
                systems,
                str(out.resolve()),
                through_date,
                validate_moves,
                lock_timeout,
                max_lists,
                *cluster_args(cluster),
                no_moves=no_moves,
            )
    except ElopipeError:
        raise  # the CLI prints it (elopipe.cli.app)
    except KeyboardInterrupt:
        err_console.print("aborted; every file loaded so far is committed", style="red")
        raise typer.Exit(130) from None
    except Exception as exc:  # Prefect has logged the details above; end with one clear line
        if is_disk_full(exc):
            raise  # the CLI says which disk is full, as for every command
        if is_interrupt(exc):  # a second Ctrl-C met a DuckDB statement: its error, not KeyboardInterrupt
            err_console.print("aborted; every file loaded so far is committed", style="red")
            raise typer.Exit(130) from None
        err_console.print(
            f"pipeline failed: {first_line(exc)}; files loaded before the failure stay loaded", style="red"
        )
        raise typer.Exit(1) from None
    t_end = time.time()
    print_where(summary, db, t_end - t0)
    for line in summary.publish_failures:
        err_console.print(f"publish failed: {line}", style="red", soft_wrap=True)
    prefect_start = summary.body_started - t0
    job = summary.body_ended - summary.body_started
    console.print(
        f"  of which Prefect: {prefect_start:.1f} s to start (import {t_imported - t0:.1f} s, "
        f"API server and flow run {summary.body_started - t_imported:.1f} s), "
        f"{t_end - summary.body_ended:.1f} s to finish; the job itself {job:.1f} s",
        soft_wrap=True,
        style="dim",
    )
    failed = summary.stopped or summary.publish_failures
    raise typer.Exit(1 if failed or summary.ingest.count("partial") or summary.ingest.count("rejected") else 0)


def print_where(summary: PipelineSummary, db: Path, elapsed: float) -> None:
    """The closing lines: store, lists, reports, index pages."""
    console.print(f"store:   {db}", soft_wrap=True)
    groups = summary.where()
    labels = {"lists": "lists", "reports": "reports", "players": "players", "index": "index"}
    for kind, label in labels.items():
        files = groups.get(kind, [])
        if not files:
            continue
        folder = files[0].parent if kind == "index" else summary.out / kind
        shown = ", ".join(p.name for p in files) if kind == "index" else f"{len(files)} files"
        console.print(f"{label + ':':8} {folder}  ({shown})", soft_wrap=True)
    if not summary.published and not summary.stopped and not summary.publish_failures:
        console.print(f"outputs: {summary.out} (nothing changed since the last run)", soft_wrap=True)
    console.print(f"done in {elapsed:.1f} s")
