"""A stage's progress off a terminal: a plain line now and then, never one per update."""

from __future__ import annotations

import io
import logging

import pytest
from rich.console import Console

from elopipe.cli.commands import live_status
from elopipe.cli.commands.live_status import PROGRESS_LINE_SECONDS, LiveStatus
from flows.prefect_env import PROGRESS_ATTR, STAGE_LOGGER, STEP_ATTR


def test_progress_off_a_terminal_is_a_line_every_few_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(live_status.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    logger = logging.getLogger(STAGE_LOGGER)
    with LiveStatus(Console(file=out, force_terminal=False, width=200)):
        for done in range(1, 11):  # ten updates within a second: one line
            now[0] += 0.1
            logger.info(f"publish: fide {done}/30", extra={STEP_ATTR: True, PROGRESS_ATTR: True})
        now[0] += PROGRESS_LINE_SECONDS
        logger.info("publish: fide 11/30", extra={STEP_ATTR: True, PROGRESS_ATTR: True})
        logger.info("publish: fide: 30 files -> out")
    lines = [line.split(" | ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines == ["publish: fide 1/30", "publish: fide 11/30", "publish: fide: 30 files -> out"]
