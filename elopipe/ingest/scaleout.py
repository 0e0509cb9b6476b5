"""Where parsing runs when it is scaled out on Dask (`--dask [ADDRESS]`, `ELOPIPE_DASK`).

The settings of one command (`DaskSpec`), the checks made before anything starts (Dask
installed, scheduler reachable, stage folder writable), and the local cluster started when no
address is given. What the parse tasks run is elopipe.ingest.units; who submits them (the
flows, as Prefect tasks) is not this package's business. Nothing here imports Dask at module
level, and nothing here knows Prefect: without the optional `elopipe[dask]` install, only
`--dask` fails.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from elopipe.runtime.errors import ElopipeError

ENV_VAR = "ELOPIPE_DASK"
LOCAL = "local"  # `--dask` without an address: a cluster on this machine
INSTALL_HINT = (
    "--dask needs the optional Dask packages: .venv/bin/pip install --require-hashes -r requirements/dev.txt"
    " (the locked versions; pip install 'elopipe[dask]' outside a clone)"
)
CONNECT_SECONDS = 5.0
# `host:port`, or a Dask URL (`tcp://host:8786`, `tls://...`)
_ADDRESS = re.compile(r"^([a-z][a-z0-9+.-]*://)?[^\s/:]+:\d+$|^[a-z][a-z0-9+.-]*://\S+$", re.IGNORECASE)


class ScaleOutError(ElopipeError):
    """A `--dask` setting that cannot work (Dask not installed, scheduler unreachable, stage
    folder not writable); the message is one line for the user."""


@dataclass(frozen=True)
class DaskSpec:
    """How one command scales its parsing out.

    `address`: the scheduler (`tcp://host:8786`), None for a `LocalCluster` of `workers`
    processes (None: one per core). `stage`: a folder every worker and this process share; the
    workers write each parsed file's games there as Parquet and this process reads them back,
    instead of receiving them over the network (None)."""

    address: str | None = None
    workers: int | None = None
    stage: str | None = None

    @property
    def where(self) -> str:
        """The cluster, as the user named it."""
        if self.address:
            return self.address
        n = worker_count(self.workers)
        return f"a local Dask cluster of {n} worker{'s' if n > 1 else ''}"


def worker_count(workers: int | None) -> int:
    """The worker processes of a local cluster: `workers`, or one per core."""
    return workers or os.cpu_count() or 1


def looks_like_address(text: str) -> bool:
    """Whether `text` is a scheduler address (`host:port` or a URL) rather than a file name."""
    return bool(_ADDRESS.match(text.strip()))


def spec_from(value: str | None, workers: int | None = None, stage: str | None = None) -> DaskSpec | None:
    """The spec for `--dask [VALUE]` (or `ELOPIPE_DASK`): None (not scaled out) for None, '',
    '0', 'no', 'off'; a local cluster for 'local', '1', 'yes', 'on'; else VALUE is the scheduler's
    address. Raises ScaleOutError for a value that is neither."""
    if value is None:
        return None
    text = value.strip()
    if text.lower() in ("", "0", "no", "off", "false"):
        return None
    if text.lower() in (LOCAL, "1", "yes", "on", "true"):
        return DaskSpec(None, workers, stage)
    if not looks_like_address(text):
        raise ScaleOutError(f"--dask {text}: not a scheduler address (tcp://host:8786) nor 'local'")
    return DaskSpec(text if "://" in text else f"tcp://{text}", workers, stage)


PIECE_VAR = "ELOPIPE_PIECE_BYTES"
MIN_PIECE_BYTES = 1 << 20


def piece_bytes() -> int:
    """The size of the pieces a large PGN is cut into (`ELOPIPE_PIECE_BYTES`, default 64 MiB).
    Raises ScaleOutError for a value that is not a whole number of at least 1 MiB."""
    text = os.environ.get(PIECE_VAR, "").strip()
    if not text:
        return 64 * 1024 * 1024
    if not text.isdigit() or int(text) < MIN_PIECE_BYTES:
        raise ScaleOutError(f"{PIECE_VAR}={text}: give a number of bytes, at least {MIN_PIECE_BYTES}")
    return int(text)


def check(spec: DaskSpec) -> None:
    """Fail at once, in one line, when `spec` cannot work: Dask not installed, a scheduler that
    does not answer within CONNECT_SECONDS, a stage folder that cannot be written. Raises
    ScaleOutError."""
    if not dask_installed():
        raise ScaleOutError(INSTALL_HINT)
    piece_bytes()
    if spec.address is not None:
        check_reachable(spec.address)
    if spec.stage is not None:
        check_stage(spec.stage)


def dask_installed() -> bool:
    """Whether Dask's `distributed` is installed."""
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


def check_reachable(address: str, timeout: float = CONNECT_SECONDS) -> None:
    """Raises ScaleOutError naming `address` when nothing accepts a connection there."""
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise ScaleOutError(f"cannot reach the Dask scheduler at {address}: not host:port")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        why = exc.strerror or str(exc) or "no answer"
        if isinstance(exc, TimeoutError | socket.timeout):
            why = f"no answer in {timeout:g} s"
        raise ScaleOutError(f"cannot reach the Dask scheduler at {address}: {why}") from None
    if not _is_scheduler(address, min(timeout, 3.0)):
        raise ScaleOutError(
            f"{address} answers, but not as a Dask scheduler (a dashboard or another service?); "
            "give the address `dask scheduler` prints, tcp://host:8786 by default"
        )


def _is_scheduler(address: str, timeout: float) -> bool:
    """Whether a Dask scheduler answers Dask's `identity` call at `address` within `timeout`
    seconds. Another service there (a web server, Dask's own dashboard) may answer with bytes
    that Dask's protocol reads as anything, or not answer at all: any failure is a no."""
    import asyncio

    from distributed.comm.core import connect

    async def ask() -> bool:
        comm = await connect(address, timeout=timeout)  # type: ignore[no-untyped-call]  # unannotated in distributed
        try:
            await comm.write({"op": "identity", "reply": True})
            reply = await comm.read()
        finally:
            comm.abort()
        return isinstance(reply, dict) and reply.get("type") == "Scheduler"

    async def bounded() -> bool:
        return await asyncio.wait_for(ask(), timeout + 1)

    quiet()
    try:
        return asyncio.run(bounded())
    except Exception:  # noqa: BLE001 - whatever the other end sent, it is not a scheduler
        return False


def check_stage(stage: str) -> None:
    """Raises ScaleOutError when `stage` is not a folder this process can write to."""
    if os.path.exists(stage) and not os.path.isdir(stage):
        raise ScaleOutError(f"--stage {stage}: not a folder")
    try:
        os.makedirs(stage, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=stage, prefix=".elopipe-check-"):
            pass
    except OSError as exc:
        raise ScaleOutError(f"--stage {stage}: cannot write there ({exc.strerror or exc})") from None


@contextlib.contextmanager
def stage_folder(stage: str | None) -> Iterator[str | None]:
    """A fresh folder for one ingest's Parquet shards under `stage` (None: no staging), removed
    with what is left in it once the ingest ends."""
    if stage is None:
        yield None
        return
    import shutil

    run = os.path.join(os.path.abspath(stage), f"elopipe-{uuid.uuid4().hex[:12]}")
    os.makedirs(run)
    try:
        yield run
    finally:
        shutil.rmtree(run, ignore_errors=True)


@contextlib.contextmanager
def local_cluster(workers: int | None) -> Iterator[str]:
    """A Dask `LocalCluster` of `workers` processes (one thread each: parsing is pure Python and
    holds the GIL) for the length of the block; yields its scheduler's address."""
    import distributed

    quiet()
    with distributed.LocalCluster(  # type: ignore[no-untyped-call]  # LocalCluster.__init__ is unannotated
        n_workers=worker_count(workers),
        threads_per_worker=1,
        processes=True,
        # a free port: Dask's default 8787 may be another cluster's (Dask would warn in the terminal)
        dashboard_address=":0",
        silence_logs=logging.ERROR,
        preload=["elopipe.ingest.dask_worker"],  # Ctrl-C is the writer's to handle
    ) as cluster:
        yield cluster.scheduler_address


def quiet() -> None:
    """Keep Dask's own log (a restarted worker, a rescheduled task, a lost connection) out of the
    user's terminal: what matters to the user reaches it as elopipe's own lines (a batch the
    cluster lost says why). Dask's logging config gives some of its loggers their own level, so
    each is set, not only the parent."""
    names = [n for n in logging.root.manager.loggerDict if n.startswith(("distributed", "dask"))]
    for name in ["distributed", "dask", *names]:
        logging.getLogger(name).setLevel(logging.CRITICAL)
