"""`elopipe serve INBOX --cron ... | --interval ...`: scheduled drop-folder runs on a Prefect server."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from elopipe.cli.app import DB_OPTION_HELP, app, console, drop_folder_path, err_console
from elopipe.cli.commands.run import DEFAULT_SYSTEMS, SYSTEM_HELP, parse_systems
from elopipe.jobs.store import DEFAULT_DB, check_store_path
from elopipe.runtime.interrupt import Terminated

if TYPE_CHECKING:
    from prefect.runner import Runner

DEPLOYMENT_NAME = "elopipe-inbox"

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
    time. Ctrl-C (or SIGTERM) stops `serve` and pauses the schedule; a run in progress stops at its
    next safe point (exit 130 after Ctrl-C). Without a server, use `elopipe watch`."""
    if cron and interval:
        err_console.print("give --cron or --interval, not both", style="red")
        raise typer.Exit(2)
    if not cron and not interval:
        cron = "*/10 * * * *"
    check_store_path(db)  # a bad --db is a usage error before Prefect starts
    systems = parse_systems(system)
    inbox = inbox.resolve()

    from flows.prefect_env import api_status, configure

    status = api_status()
    if not status.reachable:
        typer.echo(NO_SERVER.format(detail=status.detail, inbox=inbox), err=True)  # plain: no wrapping
        raise typer.Exit(1)

    inbox, created = drop_folder_path(inbox)
    schedule = f"cron {cron!r}" if cron else f"every {interval:g} s"
    console.print(f"serving deployment drop_folder/{name} ({schedule}) on {status.url}; Ctrl-C to stop")
    if created:
        console.print(created, soft_wrap=True)
    configure()
    runner = _runner(inbox, cron, interval, db, systems, out, name, settle)
    ctrl_c: list[float] = []
    terminated = said_on_sigterm(runner)
    try:
        with flow_runs_start_deaf_to_ctrl_c():
            asyncio.run(_serve_until_stopped(runner, ctrl_c))
    except KeyboardInterrupt as stop:  # before the runner started, or a second Ctrl-C cut its shutdown short
        said = "aborted; its schedule may still be active" if len(ctrl_c) > 1 else "stopped before serving began"
        why = " (SIGTERM)" if isinstance(stop, Terminated) else ""
        err_console.print(f"drop_folder/{name}: {said}{why}", style="red")
        raise typer.Exit(130) from None
    if ctrl_c or terminated:
        console.print(
            f"stopped: the schedule of drop_folder/{name} is paused ({'SIGTERM' if terminated else 'Ctrl-C'})"
        )
        raise typer.Exit(130)


def said_on_sigterm(runner: Runner) -> list[bool]:
    """A SIGTERM stops `runner` as Prefect's runner stops it (the runs in progress cancelled, the
    schedule paused), but `serve` then says so and exits 130, as `run` and `watch` do; Prefect
    exited 0 in silence. Before the runner started, it raises `Terminated` (one line). Returns the
    list that gets True when a SIGTERM came."""
    came: list[bool] = []
    prefects = runner.handle_sigterm

    def on_sigterm(*args: object) -> None:
        came.append(True)
        if not runner.started or runner.stopping:
            raise Terminated
        prefects(*args)

    # Runner.start installs `self.handle_sigterm` as the handler: the instance's attribute is this
    runner.handle_sigterm = on_sigterm  # type: ignore[method-assign]
    return came


def _runner(
    inbox: Path,
    cron: str | None,
    interval: float | None,
    db: Path,
    systems: list[str],
    out: Path,
    name: str,
    settle: float,
) -> Runner:
    """Prefect's runner serving `drop_folder` as deployment `name`, as `Flow.serve` builds it:
    at most one run at a time, the schedule paused when it stops."""
    from prefect.runner import Runner
    from prefect.types.entrypoint import EntrypointType

    from flows.drop_folder import drop_folder
    from flows.prefect_env import quiet_prefect_console

    quiet_prefect_console(everything=True)
    runner = Runner(name=name, pause_on_shutdown=True, limit=1)  # one run at a time: one writer per store
    runner.add_flow(
        drop_folder,
        name=name,
        cron=cron,
        interval=interval,
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
    )
    return runner


async def _serve_until_stopped(runner: Runner, ctrl_c: list[float]) -> None:
    """Run `runner` until it is stopped. The first Ctrl-C lets no new run start, waits for the run
    in progress (the terminal's Ctrl-C reached it too: it stops at its next safe point), then
    stops the runner, which pauses the schedule; a second Ctrl-C raises KeyboardInterrupt."""
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []

    def on_ctrl_c() -> None:
        ctrl_c.append(loop.time())
        if len(ctrl_c) > 1 or not runner.started:
            raise KeyboardInterrupt
        err_console.print(
            "stopping: no new runs; a run in progress stops at its next safe point (Ctrl-C again to abort now) ...",
            style="yellow",
        )
        # Not Runner.astop() at once: it would kill the run in progress mid-stage.
        stop_polling(runner)
        stopping.append(loop.create_task(_stop_after_runs(runner)))

    # The loop's own handler: it wakes the loop whichever thread the signal lands on (asyncio's
    # default one only cancels the main task, which Prefect's runner outlived: the schedule went on).
    loop.add_signal_handler(signal.SIGINT, on_ctrl_c)
    try:
        await runner.start()
    finally:
        loop.remove_signal_handler(signal.SIGINT)


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


async def _stop_after_runs(runner: Runner) -> None:
    # the runner starts each flow run as a multiprocessing child of this process
    while any(p.is_alive() for p in multiprocessing.active_children()):
        await asyncio.sleep(0.2)
    await runner.astop()


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
