"""`rate` on a federation's store computes for many seconds before it prints its summary: it
printed nothing at all meanwhile, on a terminal too (hostile tester: 11 s). A first line says it
started (on a terminal), then a line every few seconds that it is still at work."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from elopipe.cli.commands import rate as rate_cmd


class _Lines:
    """A terminal or a log in place of the command's standard error: the lines it got."""

    def __init__(self, terminal: bool) -> None:
        self.lines: list[str] = []
        self.beat = threading.Event()
        self.is_terminal = terminal

    def print(self, text: str, **_: object) -> None:
        self.lines.append(text)
        if "still computing" in text:
            self.beat.set()


@pytest.mark.parametrize("terminal", [True, False])
def test_a_long_rating_says_it_started_and_that_it_is_still_at_work(
    monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    lines = _Lines(terminal)
    monkeypatch.setattr(rate_cmd, "err_console", lines)
    with rate_cmd.rating_progress("fide", Path("s.duckdb"), every=0.01):
        assert lines.beat.wait(60)  # the heartbeat's line came while the block ran
    started = ["rating fide in s.duckdb ..."] if terminal else []
    assert lines.lines[: len(started)] == started
    assert lines.lines[len(started)].startswith("rating fide: still computing (0m 0")
