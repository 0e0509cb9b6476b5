"""The ingest job: files, folders and archives into the store, through the one ingest driver
(`elopipe.ingest.driver.ingest_paths`), which owns the store's write connection."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from elopipe.jobs.requests import IngestRequest
from elopipe.read.sources import path_from_param

if TYPE_CHECKING:
    from elopipe.ingest.driver import BatchParser, IngestSummary
    from elopipe.ingest.ledger import FileResult
    from elopipe.read.sources import Source


def ingest(
    request: IngestRequest,
    *,
    progress: bool = False,
    on_file: Callable[[FileResult], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
    on_sources: Callable[[int], None] | None = None,
    stop: Callable[[], bool] | None = None,
    parser: Callable[[list[Source]], BatchParser] | None = None,
) -> IngestSummary:
    """Ingest `request.paths` into `request.db` (`ingest_paths`): `progress` shows a bar,
    `on_file` hears of each stored file, `on_wait` of a store another process holds,
    `on_sources` of the number of sources found; `stop` is asked between batches; `parser`
    parses a batch elsewhere (a Dask cluster). Raises StoreBusyError when the store stays busy
    past `request.wait` seconds."""
    from elopipe.ingest.driver import ingest_paths

    return ingest_paths(
        [path_from_param(p) for p in request.paths],
        request.db,
        validate_moves=request.validate_moves,
        progress=progress,
        on_file=on_file,
        on_wait=on_wait,
        wait=request.wait,
        stop=stop,
        parser=parser,
        on_sources=on_sources,
    )
