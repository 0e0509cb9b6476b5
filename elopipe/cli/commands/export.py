"""`elopipe export --parquet DIR [--db FILE]`."""

from __future__ import annotations

from pathlib import Path

import typer

from elopipe.cli.app import DB_OPTION_HELP, app, check_out_folder, console
from elopipe.jobs.requests import ExportRequest
from elopipe.jobs.store import DEFAULT_DB


@app.command()
def export(
    parquet: Path = typer.Option(..., "--parquet", help="Folder to write Parquet files into."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """Write every table as Parquet, partitioned by system and list date where it applies."""
    from elopipe.jobs.lists import export as export_job

    check_out_folder(parquet, "export to")
    paths = export_job(ExportRequest(db, parquet))
    console.print(f"{len(paths)} tables exported to {parquet}")
