"""A stage's progress off a terminal: a plain line now and then, never one per update."""

from __future__ import annotations

import io
import logging
import threading

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


def _redrawing_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if type(t).__module__ == "rich.live"]


def test_the_status_line_stops_across_a_fork_and_comes_back_in_the_parent_only() -> None:
    """On a terminal a thread of rich's redraws the status line; a fork while it writes would
    leave the child (a forked Prefect server) with the terminal's stream locked. Before each fork
    it is stopped; after it, it starts again in the parent, never in the child."""
    with LiveStatus(Console(file=io.StringIO(), force_terminal=True, width=80)) as live:
        live.step("starting Prefect ...")
        assert _redrawing_threads()
        live_status._stop_for_fork()
        for thread in _redrawing_threads():
            thread.join(5)
        assert not _redrawing_threads()
        live_status._start_after_fork()
        assert _redrawing_threads()
        live_status._stop_for_fork()
        live_status._forget_after_fork()  # as in the child: nothing to draw there
        assert live_status._animated == []
        live_status._start_after_fork()
        for thread in _redrawing_threads():
            thread.join(5)
        assert not _redrawing_threads()
    assert live_status._animated == []
