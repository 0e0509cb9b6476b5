"""Parse tasks on a Dask cluster, through Prefect's `DaskTaskRunner` (prefect-dask).

`ingest_files` runs with `task_runner(spec)` when a command is given `--dask`; its ingest driver
then takes its batches from `cluster_parser(spec)`, whose units run as the Prefect task
`parse_unit` on the cluster's workers (elopipe.ingest.units). Each task is a Prefect task run (in
the UI) and a Dask task: a worker that dies has its tasks run again by Dask on another worker.

Imported only when `--dask` is given: prefect-dask and distributed are the optional
`elopipe[dask]` install.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
from collections.abc import Callable

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect_dask.task_runners import DaskTaskRunner

from elopipe.ingest.scaleout import CONNECT_SECONDS, quiet
from elopipe.ingest.units import Unit, UnitParser, UnitResult, run_unit
from elopipe.read.sources import Source


# No cache and no stored result: the result goes straight to the writer, and the inputs (file
# names) would not tell a changed file from its earlier version anyway.
@task(name="parse", cache_policy=NO_CACHE, persist_result=False)
def parse_unit(unit: Unit) -> UnitResult:
    """Parse one unit of files or one piece of a large PGN (elopipe.ingest.units.run_unit)."""
    return run_unit(unit)


def task_runner(address: str) -> DaskTaskRunner:
    """Prefect's task runner for the Dask scheduler at `address` (a local cluster's too: the
    command starts it, elopipe.ingest.scaleout.local_cluster, so that `watch` keeps one for all its
    batches)."""
    quiet()
    return DaskTaskRunner(address=address, client_kwargs={"timeout": f"{CONNECT_SECONDS * 2:g}s"})


def cluster_parser(stage: str | None, validate_moves: bool, workers: int) -> Callable[[list[Source]], UnitParser]:
    """The ingest driver's `parser` argument: sources -> a UnitParser submitting `parse_unit`
    tasks to the flow's task runner (call inside a flow run on `task_runner`). `stage`: the
    folder for this ingest's Parquet shards (None: games come back in the results); `workers`:
    the cluster's size when known (0 otherwise), for the summary."""

    def make(sources: list[Source]) -> UnitParser:
        return UnitParser(sources, validate_moves, parse_unit.submit, stage=stage, workers=workers)

    return make
