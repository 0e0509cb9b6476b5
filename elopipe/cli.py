"""Entry point of the `elopipe` console script."""

from __future__ import annotations

import sys

from elopipe.cli_app import app

# Each import registers its commands on `app`.
from elopipe.commands import ingest  # noqa: F401
from elopipe.commands import run  # noqa: F401
from elopipe.commands import watch  # noqa: F401
from elopipe.commands import serve  # noqa: F401
from elopipe.commands import elo  # noqa: F401
from elopipe.commands import publish  # noqa: F401
from elopipe.commands import report  # noqa: F401
from elopipe.commands import player  # noqa: F401
from elopipe.commands import sql  # noqa: F401
from elopipe.commands import export  # noqa: F401
from elopipe.commands import players  # noqa: F401
from elopipe.commands import lists  # noqa: F401
from elopipe.commands import rate  # noqa: F401


def main() -> None:
    """Run the CLI. Usage errors exit 2 (Click's convention)."""
    sys.exit(app())
