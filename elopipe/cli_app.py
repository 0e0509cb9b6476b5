"""The Typer application every `elopipe` command registers on (see elopipe/commands/)."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console

app = typer.Typer(
    name="elopipe",
    help="Chess tournament files (PGN, TRF) to FIDE/FFE rating lists, in DuckDB.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def plain_console(**kwargs: Any) -> Console:
    """A rich Console that prints text as it is: data (player names, file paths, SQL results)
    may hold `[/b]`, `[x]` or `:smile:`, which must never be read as markup, emoji codes or
    highlighted. Colour is given with `style=`, never with inline markup."""
    return Console(markup=False, emoji=False, highlight=False, **kwargs)


console = plain_console(stderr=False)
err_console = plain_console(stderr=True)

DB_OPTION_HELP = "DuckDB file of the store."
