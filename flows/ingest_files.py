"""`ingest_files` flow: the library's ingest driver (`elopipe.ingest.driver.ingest_paths`) as a flow.

Parsing runs in worker processes when it pays and each batch of files is written in one DuckDB
transaction (see elopipe.ingest.driver and elopipe.ingest.loader). Between batches the driver checks
`stop_requested()`, so Ctrl-C ends after the current batch's transaction.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import os
from typing import TYPE_CHECKING, Any

from prefect import Flow, flow

from elopipe.ingest.driver import IngestSummary, ingest_paths
from elopipe.ingest.loader import FileResult
from elopipe.ingest.scaleout import stage_folder
from elopipe.read.sources import path_from_param
from elopipe.runtime.interrupt import stop_requested
from elopipe.store.connect import DEFAULT_DB
from flows._stages import stage_line, stage_warning

if TYPE_CHECKING:
    from prefect.task_runners import TaskRunner


def _warn_rejected(result: FileResult) -> None:
    if result.status == "rejected":
        stage_warning("ingest", f"rejected {result.name}: {result.reason}")
    elif result.removed_games:  # a correction that deletes stored games says so (the watch log)
        stage_warning("ingest", result.correction_line() or "")


@flow(name="ingest_files", validate_parameters=False)
def ingest_files(
    paths: list[str | os.PathLike[str]],
    db: str | os.PathLike[str] = DEFAULT_DB,
    validate_moves: bool = False,
    dask_address: str | None = None,
    stage: str | None = None,
    dask_workers: int = 0,
    wait: float | None = None,
) -> IngestSummary:
    """Ingest files, folders and archives under `paths` into `db` (see module docstring).

    With `dask_address` (run the flow from `ingest_flow(dask_address)`), the files are parsed on
    that Dask scheduler's workers (flows/dask_parse.py); `stage`: a folder they and this process
    share, for the parsed games as Parquet; `dask_workers`: the cluster's size, when known.
    `wait`: seconds to wait for another process holding the store (None: for ever).
    Returns an IngestSummary (loaded / partial / rejected / skipped files, games, errors).
    Raises StoreBusyError if another process holds the store's write lock and does not let go.
    """
    with stage_folder(stage) as run_stage:
        parser = None
        if dask_address is not None:
            from flows.dask_parse import cluster_parser

            parser = cluster_parser(run_stage, validate_moves, dask_workers)
        summary = ingest_paths(
            [path_from_param(os.fspath(p)) for p in paths],
            db,
            validate_moves=validate_moves,
            on_file=_warn_rejected,
            # another program holding DuckDB's own lock (a long `elopipe sql` query): said, not silent
            on_wait=lambda msg: stage_warning("ingest", msg),
            stop=stop_requested,
            parser=parser,
            wait=wait,
        )
    if dask_address is not None:
        summary.parallel_workers = dask_workers
    for missing in summary.missing:
        stage_warning("ingest", f"no such file or folder: {missing}")
    for path, why in summary.refused:
        stage_warning("ingest", f"skipped {path}: {why}")
    if summary.failure:
        stage_warning("ingest", summary.failure)
        # the file that did not fit gets no outcome: a watched file stays in the inbox, not
        # quarantined, for the next batch
        summary.files = [f for f in summary.files if f.reason != summary.failure]
    stage_line("ingest", summary.line())
    return summary


def ingest_flow(dask_address: str | None) -> Flow[..., IngestSummary]:
    """`ingest_files`, on Prefect's Dask task runner for the scheduler at `dask_address` when
    given (its parse tasks then run on that cluster)."""
    if dask_address is None:
        return ingest_files
    from flows.dask_parse import task_runner

    # any task runner: `with_options` asks for a TaskRunner[PrefectFuture[Any]], invariant in its
    # future type, which DaskTaskRunner (a TaskRunner[PrefectConcurrentFuture[Any]]) is not
    runner: TaskRunner[Any] = task_runner(dask_address)
    return ingest_files.with_options(task_runner=runner)
