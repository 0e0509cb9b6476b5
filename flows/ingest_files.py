"""`ingest_files` flow: the ingest job (`elopipe.jobs.ingest`, over the library's ingest driver
`elopipe.ingest.driver.ingest_paths`) as a flow.

Parsing runs in worker processes when it pays and each batch of files is written in one DuckDB
transaction (see elopipe.ingest.driver and elopipe.ingest.loader). Between batches the driver checks
`stop_requested()`, so Ctrl-C ends after the current batch's transaction.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
from typing import TYPE_CHECKING, Any

from prefect import Flow, flow, task
from prefect.cache_policies import NO_CACHE

from elopipe.ingest.driver import IngestSummary
from elopipe.ingest.ledger import FileResult
from elopipe.ingest.scaleout import stage_folder
from elopipe.jobs.ingest import ingest
from elopipe.jobs.requests import Cluster, IngestRequest
from elopipe.read.sources import GONE
from elopipe.runtime.interrupt import stop_requested
from elopipe.runtime.words import bar, plural
from flows._stages import stage_line, stage_progress, stage_warning

if TYPE_CHECKING:
    from prefect.task_runners import TaskRunner


class _FileLines:
    """Each stored file: its warning if rejected or correcting, and the stage's progress (files
    stored out of those found, games)."""

    def __init__(self) -> None:
        self.total = self.files = self.games = 0

    def sources(self, total: int) -> None:
        self.total = total

    def file_done(self, result: FileResult) -> None:
        if result.status == "rejected":
            stage_warning("ingest", f"rejected {result.name}: {result.reason}")
        elif result.status == "skipped" and result.reason == GONE:  # another process took it
            stage_line("ingest", f"skipped {result.name}: {GONE}")
        elif result.removed_games:  # a correction that deletes stored games says so (the watch log)
            stage_warning("ingest", result.correction_line() or "")
        elif result.replaced_file_ids:  # stored rows replaced: said, as every removal is
            stage_line("ingest", result.correction_line() or "")
        kept = result.kept_line()
        if kept:  # a changed file at a known path that is not a correction: both versions stay
            stage_line("ingest", kept)
        in_progress = result.in_progress_line()
        if in_progress:  # its event is missing from the lists until it is complete
            stage_warning("ingest", in_progress)
        self.files += 1
        self.games += result.n_games
        total = max(self.total, self.files)
        stage_progress("ingest", f"{bar(self.files, total)} files, {plural(self.games, 'game', thousands=True)}")


@flow(name="ingest_files", validate_parameters=False)
def ingest_files(request: IngestRequest) -> IngestSummary:
    """The ingest job (`elopipe.jobs.ingest.ingest`) for `request` (see module docstring).

    With `request.cluster` (run the flow from `ingest_flow(request.cluster)`), the files are
    parsed on that Dask scheduler's workers (flows/dask_parse.py), the parsed games passing
    through its stage folder as Parquet.
    Returns an IngestSummary (loaded / partial / rejected / skipped files, games, errors).
    Raises StoreBusyError if another process holds the store's write lock and does not let go.
    """
    cluster = request.cluster
    with stage_folder(None if cluster is None else cluster.stage) as run_stage:
        parser = None
        if cluster is not None:
            from flows.dask_parse import cluster_parser

            parser = cluster_parser(run_stage, request.validate_moves, cluster.workers)
        lines = _FileLines()
        summary = ingest(
            request,
            on_file=lines.file_done,
            on_sources=lines.sources,
            # another program holding DuckDB's own lock (a long `elopipe sql` query): said, not silent
            on_wait=lambda msg: stage_warning("ingest", msg),
            stop=stop_requested,
            parser=parser,
        )
    if cluster is not None:
        summary.parallel_workers = cluster.workers
    for missing in summary.missing:
        stage_warning("ingest", f"no such file or folder: {missing}")
    for path, why in summary.refused:
        stage_warning("ingest", f"skipped {path}: {why}")
    if summary.failure:
        stage_warning("ingest", summary.failure)
        # the file that did not fit gets no outcome: a watched file stays in the inbox, not
        # quarantined, for the next batch
        summary.files = [f for f in summary.files if f.reason != summary.failure]
    stage_line("ingest", summary.line(request.db))
    return summary


# No cache and no stored result: the summary goes straight back to the calling flow.
@task(name="ingest", task_run_name="ingest", cache_policy=NO_CACHE, persist_result=False)
def ingest_task(request: IngestRequest) -> IngestSummary:
    """`ingest_files`' body as a task of the flow run that calls it (`pipeline`): a task run in the
    UI, with its state, duration and lines, without a flow run of its own (see flows.pipeline)."""
    return ingest_files.fn(request)


def ingest_step(request: IngestRequest) -> IngestSummary:
    """`pipeline`'s ingest: `ingest_task`; with `request.cluster`, the `ingest_files` flow on that
    cluster's task runner (a subflow: the parse tasks need the flow's Dask task runner)."""
    if request.cluster is None:
        return ingest_task(request)
    return ingest_flow(request.cluster)(request)


def ingest_flow(cluster: Cluster | None) -> Flow[..., IngestSummary]:
    """`ingest_files`, on Prefect's Dask task runner for the scheduler of `cluster` when given
    (its parse tasks then run on that cluster)."""
    if cluster is None:
        return ingest_files
    from flows.dask_parse import task_runner

    # any task runner: `with_options` asks for a TaskRunner[PrefectFuture[Any]], invariant in its
    # future type, which DaskTaskRunner (a TaskRunner[PrefectConcurrentFuture[Any]]) is not
    runner: TaskRunner[Any] = task_runner(cluster.address)
    return ingest_files.with_options(task_runner=runner)
