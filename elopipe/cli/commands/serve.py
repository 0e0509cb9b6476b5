"""`elopipe serve INBOX --cron ... | --interval ...`: scheduled drop-folder runs on a Prefect server."""

from __future__ import annotations

from pathlib import Path

import typer

from elopipe.cli.app import DB_OPTION_HELP, app, console, err_console
from elopipe.cli.commands.run import DEFAULT_SYSTEMS, SYSTEM_HELP, parse_systems
from elopipe.store.connect import DEFAULT_DB, check_store_path

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
    time; stopping `serve` pauses the schedule. Without a server, use `elopipe watch`."""
    if cron and interval:
        err_console.print("give --cron or --interval, not both", style="red")
        raise typer.Exit(2)
    if not cron and not interval:
        cron = "*/10 * * * *"
    check_store_path(db)  # a bad --db is a usage error before Prefect starts
    systems = parse_systems(system)
    inbox = inbox.resolve()

    from elopipe.runtime.prefect_env import api_status, configure

    status = api_status()
    if not status.reachable:
        typer.echo(NO_SERVER.format(detail=status.detail, inbox=inbox), err=True)  # plain: no wrapping
        raise typer.Exit(1)

    inbox.mkdir(parents=True, exist_ok=True)
    configure()
    from prefect.types.entrypoint import EntrypointType

    from flows.drop_folder import drop_folder

    schedule = f"cron {cron!r}" if cron else f"every {interval:g} s"
    console.print(f"serving deployment drop_folder/{name} ({schedule}) on {status.url}; Ctrl-C to stop")
    drop_folder.serve(
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
        limit=1,  # one run at a time: one writer per store
        entrypoint_type=EntrypointType.MODULE_PATH,
        print_starting_message=False,
    )
