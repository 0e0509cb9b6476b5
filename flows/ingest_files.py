"""`ingest_files` flow: the library's ingest driver (`elopipe.ingest.ingest_paths`) as a flow.

Parsing runs in worker processes when it pays and each batch of files is written in one DuckDB
transaction (see elopipe.ingest and elopipe.loader). Between batches the driver checks
`stop_requested()`, so Ctrl-C ends after the current batch's transaction.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import os

from prefect import flow

from elopipe.ingest import FileResult, IngestSummary, ingest_paths
from elopipe.interrupt import stop_requested
from elopipe.sources import path_from_param
from elopipe.store import DEFAULT_DB
from flows._stages import stage_line, stage_warning


def _warn_rejected(result: FileResult) -> None:
    if result.status == "rejected":
        stage_warning("ingest", f"rejected {result.name}: {result.reason}")


@flow(name="ingest_files", validate_parameters=False)
def ingest_files(
    paths: list[str | os.PathLike[str]],
    db: str | os.PathLike[str] = DEFAULT_DB,
    validate_moves: bool = False,
) -> IngestSummary:
    """Ingest files, folders and archives under `paths` into `db` (see module docstring).

    Returns an IngestSummary (loaded / partial / rejected / skipped files, games, errors).
    Raises StoreBusyError if another process holds the store's write lock and does not let go.
    """
    summary = ingest_paths(
        [path_from_param(os.fspath(p)) for p in paths],
        db,
        validate_moves=validate_moves,
        on_file=_warn_rejected,
        # another program holding DuckDB's own lock (a long `elopipe sql` query): said, not silent
        on_wait=lambda msg: stage_warning("ingest", msg),
        stop=stop_requested,
    )
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
