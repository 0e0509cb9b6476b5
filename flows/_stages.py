"""The lines a run shows per stage: on the terminal through the `elopipe.stages` logger, and in
the flow run's log (the UI) through Prefect's run logger, never twice on the terminal."""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import logging

from prefect import get_run_logger
from prefect.exceptions import MissingContextError

from flows.prefect_env import PROGRESS_ATTR, STAGE_LOGGER, STEP_ATTR, quiet_prefect_console

_terminal = logging.getLogger(STAGE_LOGGER)
# Prefect's console handler must not print the run-log copy (records marked `elopipe_stage`).
quiet_prefect_console()


def _to_run_log(level: int, line: str) -> None:
    try:
        get_run_logger().log(level, line, extra={"elopipe_stage": True})
    except MissingContextError:
        pass


def stage_start(stage: str, text: str) -> None:
    """Say that `stage` begins (`text`: what it works on); the CLI's live status shows it."""
    _terminal.info(f"{stage}: {text} ...", extra={STEP_ATTR: True})


def stage_progress(stage: str, text: str) -> None:
    """How far `stage` got (`text`, e.g. a bar): the live status line on a terminal; elsewhere a
    line every few seconds (elopipe.cli.commands.live_status). Not in the flow run's log."""
    _terminal.info(f"{stage}: {text}", extra={STEP_ATTR: True, PROGRESS_ATTR: True})


def stage_line(stage: str, text: str) -> None:
    """Log `stage: text` once on the terminal and once in the flow run's log."""
    line = f"{stage}: {text}"
    _terminal.info(line)
    _to_run_log(logging.INFO, line)


def stage_notice(stage: str, text: str) -> None:
    """Say `stage: text` on the terminal only. For a signal handler (the first Ctrl-C of a flow
    run): the run log's worker takes locks that are not reentrant, and the code the signal
    interrupted may hold one of them (a flow run of `serve` hung there)."""
    _terminal.info(f"{stage}: {text}")


def stage_warning(stage: str, text: str) -> None:
    """A warning of `stage`: on the terminal in elopipe's words, in the run's log as a warning."""
    line = f"{stage}: {text}"
    _terminal.warning(line)
    _to_run_log(logging.WARNING, line)


class _WatcherLines(logging.Handler):
    """The drop folder's lines (`elopipe.ingest.watcher`: where a file went, why it was
    quarantined or left) as `stage`'s lines, not in the format of Prefect's console handler
    (its time in milliseconds, level and logger name)."""

    def __init__(self, stage: str) -> None:
        super().__init__(logging.INFO)
        self.stage = stage

    def emit(self, record: logging.LogRecord) -> None:
        say = stage_warning if record.levelno >= logging.WARNING else stage_line
        say(self.stage, record.getMessage())


def watcher_lines_as(stage: str) -> None:
    """Show the drop folder's lines as `stage`'s (a flow run of `elopipe serve`), unless this
    process already shows them its own way (`elopipe watch` prints them plainly)."""
    logger = logging.getLogger("elopipe.ingest.watcher")
    if logger.handlers:
        return
    logger.addHandler(_WatcherLines(stage))
    logger.setLevel(logging.INFO)
    logger.propagate = False
