"""`--dask [ADDRESS]`, `--dask-workers N` and `--stage DIR`, shared by `ingest`, `run` and `watch`.

`--dask` takes an optional value, which Click has no form for: `elopipe.cli.main.main` gives a bare
`--dask` the value 'local' before Click reads the command line (`optional_dask_value`).
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import typer

from elopipe.cli.app import err_console, fail
from elopipe.ingest.scaleout import (
    ENV_VAR,
    INSTALL_HINT,
    LOCAL,
    DaskSpec,
    ScaleOutError,
    check,
    local_cluster,
    looks_like_address,
    piece_bytes,
    spec_from,
    worker_count,
)
from elopipe.jobs.requests import Cluster

DASK_FLAG = "--dask"

DASK_HELP = (
    "Parse on a Dask cluster through Prefect's DaskTaskRunner: at ADDRESS (tcp://host:8786), or, with no"
    " address, on a local cluster. Needs the Dask packages (the locked set: .venv/bin/pip install"
    " --require-hashes -r requirements/dev.txt). Workers must see the input files at"
    f" the same path. Also {ENV_VAR}=ADDRESS or {ENV_VAR}=local."
)
dask_option = typer.Option(None, DASK_FLAG, envvar=ENV_VAR, metavar="[ADDRESS]", help=DASK_HELP, show_envvar=False)
dask_workers_option = typer.Option(
    None, "--dask-workers", min=1, help="Worker processes of the local Dask cluster (default: one per core)."
)
stage_option = typer.Option(
    None,
    "--stage",
    help="With --dask: a folder the workers and this machine share; parsed games go through it as Parquet"
    " instead of over the network.",
)


def optional_dask_value(argv: list[str]) -> list[str]:
    """`argv` with 'local' after each bare `--dask`: one at the end, or followed by an option or
    by a word that is not a scheduler address (a file to ingest)."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg != DASK_FLAG:
            continue
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if nxt is None or nxt.startswith("-") or (nxt != LOCAL and not looks_like_address(nxt)):
            out.append(LOCAL)
    return out


def dask_spec(value: str | None, workers: int | None, stage: Path | None) -> DaskSpec | None:
    """The command's DaskSpec, checked (elopipe.ingest.scaleout.check); None without `--dask`. Prints
    one red line and exits 1 when it cannot work, 2 for `--stage` or `--dask-workers` alone."""
    try:
        spec = spec_from(value, workers, str(stage.resolve()) if stage is not None else None)
        if spec is not None:
            piece_bytes()
    except ScaleOutError as exc:
        fail(f"{exc}")
    if spec is None:
        if stage is not None or workers is not None:
            flag = "--stage" if stage is not None else "--dask-workers"
            fail(f"{flag} goes with --dask")
        return None
    if spec.address is not None and workers is not None:
        fail("--dask-workers sizes a local cluster; a cluster at an address has its own")
    try:
        check(spec)
        if importlib.util.find_spec("prefect_dask") is None:  # the flows submit the parse tasks through it
            raise ScaleOutError(INSTALL_HINT)
    except ScaleOutError as exc:
        fail(f"{exc}", 1)
    return spec


@contextlib.contextmanager
def cluster_address(spec: DaskSpec | None) -> Iterator[DaskSpec | None]:
    """`spec` with a scheduler address: a local cluster is started for the block (and said so
    in a first line, since it takes a few seconds). The parse tasks on the workers report to this
    process's Prefect API (flows.prefect_env.api_for_workers)."""
    if spec is None:
        yield spec
        return
    from flows.prefect_env import api_for_workers

    with api_for_workers():
        if spec.address is not None:
            err_console.print(f"parsing on the Dask cluster at {spec.address}", style="dim")
            yield spec
            return
        err_console.print(f"starting {spec.where} ...", style="dim")
        with local_cluster(spec.workers) as address:
            yield DaskSpec(address, worker_count(spec.workers), spec.stage)


def cluster_of(spec: DaskSpec | None) -> Cluster | None:
    """The cluster the jobs' requests name for `spec` (once `cluster_address` gave it an address)."""
    if spec is None or spec.address is None:
        return None
    return Cluster(spec.address, spec.stage, spec.workers or 0)
