"""The Typer application every `elopipe` command registers on (see elopipe/commands/)."""

from __future__ import annotations

import typer
from rich.console import Console

app = typer.Typer(
    name="elopipe",
    help="Chess tournament files (PGN, TRF) to FIDE/FFE rating lists, in DuckDB.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=False)
err_console = Console(stderr=True)

DB_OPTION_HELP = "DuckDB file of the store."
