"""A stage's progress off a terminal: a plain line now and then, never one per update."""

from __future__ import annotations

import io
import logging
import threading

import pytest
from rich.console import Console

from elopipe.cli.commands import live_status
from elopipe.cli.commands.live_status import PROGRESS_LINE_SECONDS, QUIET_LINE_SECONDS, LiveStatus
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


def test_a_busy_step_that_stays_quiet_off_a_terminal_says_it_is_still_working(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr(live_status.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    live = LiveStatus(Console(file=out, force_terminal=False, width=200))
    live.step("rate: fide ...")
    live._still_working()  # nothing yet: the step was just said
    now[0] += QUIET_LINE_SECONDS - 1
    live.line("ingest: 3 files loaded")
    now[0] += QUIET_LINE_SECONDS - 1
    live._still_working()  # nothing: a line came within QUIET_LINE_SECONDS
    now[0] += 1
    live._still_working()
    live._still_working()  # said just now: not twice
    now[0] += 65 - 2 * (QUIET_LINE_SECONDS - 1) - 1
    live._still_working()
    lines = [line.split(" | ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines == [
        "rate: fide ...",
        "ingest: 3 files loaded",
        f"rate: fide (still working, 0m {2 * int(QUIET_LINE_SECONDS) - 1:02d}s)",
        "rate: fide (still working, 1m 05s)",
    ]


def test_waiting_for_files_is_not_a_busy_step(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(live_status.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    live = LiveStatus(Console(file=out, force_terminal=False, width=200))
    live.step("rate: fide ...")
    live.step("waiting for files in inbox", busy=False)
    now[0] += 10 * QUIET_LINE_SECONDS
    live._still_working()
    lines = [line.split(" | ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines == ["rate: fide ...", "waiting for files in inbox"]


def test_after_a_stage_said_how_it_went_a_quiet_spell_is_still_said(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(live_status.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    logger = logging.getLogger(STAGE_LOGGER)
    with LiveStatus(Console(file=out, force_terminal=False, width=200)) as live:
        logger.info("ingest: 2 paths ...", extra={STEP_ATTR: True})
        logger.warning("ingest: rejected notes.txt: not a PGN or TRF file")
        logger.info("ingest: 1 file loaded")
        now[0] += QUIET_LINE_SECONDS
        live._still_working()
    lines = [line.split(" | ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines == [
        "ingest: 2 paths ...",
        "ingest: rejected notes.txt: not a PGN or TRF file",
        "ingest: 1 file loaded",
        f"still working (0m {int(QUIET_LINE_SECONDS):02d}s)",
    ]


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


def test_a_watch_shows_a_store_wide_rate_warning_once() -> None:
    """`watch` rates the store after each batch: the same Ro warning came after every file. A
    rate warning is shown once; a new one, and every other stage's warning, each time."""
    out = io.StringIO()
    logger = logging.getLogger(STAGE_LOGGER)
    with LiveStatus(Console(file=out, force_terminal=False, width=200), warn_once=("rate",)):
        for _batch in range(2):
            logger.warning("rate: fide: 3 players have a Ro 50 or more points from their file")
            logger.warning("publish: fide: 1 file kept before publishing over it")
        logger.warning("rate: fide: 4 players have a Ro 50 or more points from their file")
    lines = [line.split(" | ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines == [
        "rate: fide: 3 players have a Ro 50 or more points from their file",
        "publish: fide: 1 file kept before publishing over it",
        "publish: fide: 1 file kept before publishing over it",
        "rate: fide: 4 players have a Ro 50 or more points from their file",
    ]
