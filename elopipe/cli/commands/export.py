"""`elopipe export --parquet DIR [--db FILE]`."""

from __future__ import annotations

from pathlib import Path

import typer

from elopipe.cli.app import DB_OPTION_HELP, app, console
from elopipe.store.connect import DEFAULT_DB, open_reader


@app.command()
def export(
    parquet: Path = typer.Option(..., "--parquet", help="Folder to write Parquet files into."),
    db: Path = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP),
) -> None:
    """Write every table as Parquet, partitioned by system and list date where it applies."""
    from elopipe.publish.export import export_parquet

    con = open_reader(db)
    try:
        paths = export_parquet(con, parquet)
    finally:
        con.close()
    console.print(f"{len(paths)} tables exported to {parquet}")
