"""One summary line per stage: to the Prefect run log (UI) and to the terminal."""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import logging

from prefect import get_run_logger
from prefect.exceptions import MissingContextError

from elopipe.runtime.prefect_env import STAGE_LOGGER

_terminal = logging.getLogger(STAGE_LOGGER)


def stage_line(stage: str, text: str) -> None:
    """Log `stage: text` once on the terminal and once in the flow run's log."""
    line = f"{stage}: {text}"
    _terminal.info(line)
    try:
        # INFO reaches the API (the UI) but not the console: Prefect's console handler is at WARNING.
        get_run_logger().info(line)
    except MissingContextError:
        pass


def stage_warning(stage: str, text: str) -> None:
    line = f"{stage}: {text}"
    try:
        get_run_logger().warning(line)
    except MissingContextError:
        _terminal.warning(line)
