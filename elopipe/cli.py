"""Entry point of the `elopipe` console script."""

from __future__ import annotations

import importlib
import sys

from elopipe.cli_app import app

# Importing a command module registers its commands on `app`; `elopipe --help` lists them in this order.
COMMAND_MODULES = [
    "run", "ingest", "rate", "publish", "report", "player", "sql", "export",
    "elo", "lists", "players", "watch", "serve",
]  # fmt: skip
for _name in COMMAND_MODULES:
    importlib.import_module(f"elopipe.commands.{_name}")


def main() -> None:
    """Run the CLI. Usage errors exit 2 (Click's convention)."""
    sys.exit(app())
