"""`elopipe serve INBOX --cron ... | --interval ...`: scheduled drop-folder runs on a Prefect server."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, cast
from uuid import UUID

import typer

from elopipe.cli.app import (
    DB_OPTION_HELP,
    app,
    check_db_outside,
    console,
    drop_folder_path,
    err_console,
    error_line,
    fail,
)
from elopipe.cli.commands.policies import check_policies
from elopipe.cli.commands.run import DEFAULT_SYSTEMS, SYSTEM_HELP, parse_systems
from elopipe.jobs.store import DEFAULT_DB, check_store_path
from elopipe.runtime.interrupt import Terminated
from elopipe.runtime.words import plural

if TYPE_CHECKING:
    from prefect.runner import Runner

DEPLOYMENT_NAME = "elopipe-inbox"
_PAGE = 100  # flow runs read a call (`drop_leftover_runs`)

NO_SERVER = """Scheduled runs need a Prefect server, and none is reachable: {detail}.
Start one in another terminal and point elopipe at it:

    prefect server start
    export PREFECT_API_URL=http://127.0.0.1:4200/api
    elopipe serve {inbox} ...

Or run the drop folder without any server:

    elopipe watch {inbox}"""


@app.command()
def serve(
    inbox: Path = typer.Argument(..., help="The drop folder (created if missing)."),
    cron: str | None = typer.Option(None, "--cron", help='Cron schedule, e.g. "*/10 * * * *".'),
    interval: float | None = typer.Option(None, "--interval", min=1, help="Run every SECONDS instead of a cron."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
    system: str = typer.Option(DEFAULT_SYSTEMS, "--system", "-s", help=SYSTEM_HELP),
    out: Path = typer.Option(Path("out"), "--out", "-o", help="Folder for lists and reports."),
    name: str = typer.Option(DEPLOYMENT_NAME, "--name", help="Deployment name."),
    settle: float = typer.Option(2.0, "--settle", min=0, help="Seconds a file must hold still to count as arrived."),
) -> None:
    """Run the drop folder on a schedule, as a Prefect deployment (needs a Prefect server).

    Serves the `drop_folder` flow as a deployment with a schedule (default: every 10
    minutes). Needs a Prefect server (PREFECT_API_URL); runs show in its UI. At most one run at a
    time. Ctrl-C stops `serve` and pauses the schedule; a run in progress stops at its next safe
    point (a second Ctrl-C, or a SIGTERM, cancels it at once). Exit 130 after a stop. Without a
    server, use `elopipe watch`."""
    if cron and interval:
        fail("give --cron or --interval, not both")
    if not cron and not interval:
        cron = "*/10 * * * *"
    check_store_path(db)  # a bad --db is a usage error before Prefect starts
    check_db_outside(db, inbox)
    systems = parse_systems(system)
    check_policies()  # ELOPIPE_NO_MOVES, _RO_FROM, _UNKNOWN_TC: before the deployment starts
    inbox = inbox.resolve()

    from flows.prefect_env import api_status, configure

    status = api_status()
    if not status.reachable:
        typer.echo(error_line(NO_SERVER.format(detail=status.detail, inbox=inbox)), err=True)  # plain: no wrapping
        raise typer.Exit(1)

    inbox, created = drop_folder_path(inbox)
    schedule = f"cron {cron!r}" if cron else f"every {interval:g} s"
    console.print(f"serving deployment drop_folder/{name} ({schedule}) on {status.url}; Ctrl-C to stop")
    if created:
        console.print(created, soft_wrap=True)
    configure()
    runner = _runner(name)
    stop = ServeStop(runner)
    try:
        # registered paused: a stop before the runner has started leaves it paused
        stop.deployment = _register(runner, inbox, cron, interval, db, systems, out, name, settle)
        left = asyncio.run(drop_leftover_runs(stop.deployment))
        if left:
            console.print(
                f"removed {plural(left, 'scheduled run')} an earlier serve of drop_folder/{name} left behind "
                "(due while no serve ran, or for its folder)"
            )
        with flow_runs_start_deaf_to_ctrl_c():
            asyncio.run(stop.serve())
    except KeyboardInterrupt as came:  # before the event loop's handlers were in place
        if stop.deployment is None:
            raise  # not registered: elopipe.cli.main says "interrupted" in one line
        stop.causes.append("SIGTERM" if isinstance(came, Terminated) else "Ctrl-C")
    except asyncio.CancelledError:  # a stop while the runner started: it never served
        pass
    finally:
        # the stop is decided: a signal now must not cut the line below short
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if stop.causes:
        cut = "the run was cut short; " if stop.cut_short else ""
        cause = "SIGTERM" if "SIGTERM" in stop.causes else "Ctrl-C"
        console.print(f"stopped: {cut}the schedule of drop_folder/{name} is paused ({cause})")
        raise typer.Exit(130)


class ServeStop:
    """How `serve` stops `runner`, whenever the stop comes; every way leaves the schedule paused.

    - before the runner has started: its start is cancelled (the deployment was registered paused
      and is resumed only once the runner has started, see `_runner`);
    - a first Ctrl-C while serving: no new run; the run in progress (the terminal's Ctrl-C reached
      it too) stops at its next safe point, then the runner stops, which pauses the schedule;
    - a second Ctrl-C, or a SIGTERM (a service manager's stop): the runner stops at once
      (`Runner.astop`: the run in progress is cancelled, the schedule paused);
    - anything after that: ignored, the stop is under way.

    Never a KeyboardInterrupt inside the event loop: asyncio then cancelled every task of
    Prefect's runner, whose control channel printed a CancelledError traceback, and the schedule
    stayed active (a hostile tester's finding)."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.deployment: UUID | None = None  # once registered
        self.causes: list[str] = []  # "Ctrl-C" or "SIGTERM", one per signal that came
        self.cut_short = False  # a run was in progress when the runner was stopped at once
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Task[Any] | None = None
        self._draining: asyncio.Task[None] | None = None
        self._stopping = False
        self._stop_task: asyncio.Task[None] | None = None
        # Runner.start installs `self.handle_sigterm` as the handler: the instance's attribute is this
        runner.handle_sigterm = self._on_sigterm  # type: ignore[method-assign]

    async def serve(self) -> None:
        """Run the runner until it is stopped."""
        self._loop = loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        # The loop's own handler: it wakes the loop whichever thread the signal lands on (asyncio's
        # default one only cancels the main task, which Prefect's runner outlived: the schedule went on).
        loop.add_signal_handler(signal.SIGINT, self.came, "Ctrl-C")
        try:
            await self.runner.start()
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            if self.causes:  # stopped: one more Ctrl-C must not cut short what is left of it
                signal.signal(signal.SIGINT, signal.SIG_IGN)

    def _on_sigterm(self, *_args: object) -> None:
        loop = self._loop
        if loop is None:  # before the event loop runs (Runner.start installs this handler in it)
            raise Terminated
        with contextlib.suppress(RuntimeError):  # the loop has closed: the stop is done
            loop.call_soon_threadsafe(self.came, "SIGTERM")

    def came(self, cause: str) -> None:
        """A stop request (`cause`: "Ctrl-C" or "SIGTERM"), in the event loop."""
        self.causes.append(cause)
        if self._stopping:
            return
        if not self.runner.started:
            self._stopping = True
            if self._main is not None:
                self._main.cancel()
            return
        if cause == "Ctrl-C" and self._draining is None:
            err_console.print(
                "stopping: no new runs; a run in progress stops at its next safe point (Ctrl-C again to abort now) ...",
                style="yellow",
            )
            # Not Runner.astop() at once: it would kill the run in progress mid-stage.
            stop_polling(self.runner)
            self._draining = asyncio.get_running_loop().create_task(self._stop_after_runs())
            return
        if self._draining is not None:
            self._draining.cancel()
        self._stop_now(at_once=True)

    async def _stop_after_runs(self) -> None:
        while _runs_in_progress():
            await asyncio.sleep(0.2)
        self._stop_now()

    def _stop_now(self, at_once: bool = False) -> None:
        self._stopping = True
        # its own task: a Ctrl-C cancelling the one that waited must not cut the runner's stop short
        self._stop_task = asyncio.get_running_loop().create_task(self._astop(at_once))

    async def _astop(self, at_once: bool) -> None:
        if at_once and self.deployment is not None:
            self.cut_short = await _runs_unfinished(self.deployment)
        await self.runner.astop()


async def _runs_unfinished(deployment: UUID) -> bool:
    """Whether a flow run of `deployment` is pending or running: the one a stop at once cancels
    (its process outlives its Completed state a little: it is not one)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType

    async with get_client() as client:
        count = await client.count_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment])),
            flow_run_filter=FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PENDING, StateType.RUNNING]))
            ),
        )
    return count > 0


def _runs_in_progress() -> bool:
    # the runner starts each flow run as a multiprocessing child of this process
    return any(p.is_alive() for p in multiprocessing.active_children())


def _runner(name: str) -> Runner:
    """Prefect's runner for deployment `name`, as `Flow.serve` builds it: at most one run at a
    time, the schedule paused when it stops; once it has started, it resumes the schedule of the
    deployment `_register` registered paused."""
    from prefect.client.orchestration import get_client
    from prefect.runner import Runner

    from flows.prefect_env import quiet_prefect_console

    class ServeRunner(Runner):
        async def __aenter__(self) -> Self:
            await super().__aenter__()
            # From here on a stop goes through Runner.astop, whose exit pauses the schedule again.
            async with get_client() as client:
                for deployment_id in self._deployment_registry.get_deployment_ids():
                    await client.resume_deployment(deployment_id)
            return self

    quiet_prefect_console(everything=True)
    # one run at a time: one writer per store. No prefetch: Prefect starts a prefetched run's
    # process at once (it then waits for its time), so a run due in the next 10 s (its default)
    # started after a first Ctrl-C had said "no new runs".
    return ServeRunner(name=name, pause_on_shutdown=True, limit=1, prefetch_seconds=0)


def _register(
    runner: Runner,
    inbox: Path,
    cron: str | None,
    interval: float | None,
    db: Path,
    systems: list[str],
    out: Path,
    name: str,
    settle: float,
) -> UUID:
    """Register `drop_folder` as deployment `name` of `runner`, paused (`_runner` resumes it once
    the runner has started: a stop before that leaves no active schedule behind, which it did
    when it came between this registration and the runner's start). Returns its id."""
    from prefect.types.entrypoint import EntrypointType

    from flows.drop_folder import drop_folder

    # called from synchronous code, Prefect's `async_dispatch` runs it to its end: a UUID
    return cast(
        UUID,
        runner.add_flow(
            drop_folder,
            name=name,
            cron=cron,
            interval=interval,
            paused=True,
            parameters={
                "inbox": str(inbox),
                "db": str(db.resolve()),
                "systems": systems,
                "out": str(out.resolve()),
                "settle_seconds": settle,
            },
            tags=["elopipe"],
            description=f"Ingest, rate and publish what arrives in {inbox}",
            entrypoint_type=EntrypointType.MODULE_PATH,
        ),
    )


async def drop_leftover_runs(deployment: UUID) -> int:
    """Delete the scheduled runs of `deployment` that its scheduler made for an earlier `serve`
    and that never started; returns how many. Called once registered (paused: the scheduler
    makes no new run until the runner resumes it). Prefect's own upsert drops only the future
    ones: a run due while no serve ran (a `serve` killed without its stop, which pauses the
    schedule) stayed, with that serve's parameters, and the new runner started it at once, on
    the earlier serve's drop folder. Runs a user created by hand are left alone."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.exceptions import ObjectNotFound

    dropped = kept = 0
    async with get_client() as client:
        while True:  # in pages: the server gives at most its default limit of runs a call
            runs = await client.read_flow_runs(
                deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment])),
                flow_run_filter=FlowRunFilter(
                    state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED]))
                ),
                limit=_PAGE,
                offset=kept,
            )
            for run in runs:
                if run.auto_scheduled and run.run_count == 0:
                    with contextlib.suppress(ObjectNotFound):  # gone meanwhile
                        await client.delete_flow_run(run.id)
                    dropped += 1
                else:
                    kept += 1
            if len(runs) < _PAGE:
                return dropped


def stop_polling(runner: Runner) -> bool:
    """Let `runner` start no new scheduled run, leaving the runs in progress alone. Prefect has no
    public call for it: its runner polls through a private `_scheduled_run_poller` whose
    `stopping` flag skips the next polls (tests/cli/test_serve_prefect.py fails when an installed
    Prefect no longer has it). False when this Prefect has no such poller."""
    poller = getattr(runner, "_scheduled_run_poller", None)
    if poller is None:
        return False
    poller.stopping = True
    return True


@contextlib.contextmanager
def flow_runs_start_deaf_to_ctrl_c() -> Iterator[None]:
    """Block SIGINT in this thread for the block: the flow runs the runner starts from it inherit
    the blocked signal, so the terminal's Ctrl-C cannot break one while it starts (a
    KeyboardInterrupt traceback); `drop_folder` takes it once its own handler is in place (see
    elopipe.runtime.interrupt.graceful_stop) and stops at its next safe point. A thread started
    first, with SIGINT open, receives it for this process.

    The resource tracker is started first: the runner spawns each flow run, and the first spawn
    started the tracker, whose start unblocks SIGINT in the thread that starts it (Python's
    multiprocessing.resource_tracker): that run took the terminal's first Ctrl-C before its
    handler was in place and crashed ("Crash detected" on the terminal)."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    receiver = threading.Event()
    threading.Thread(target=receiver.wait, name="elopipe-sigint", daemon=True).start()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        receiver.set()
