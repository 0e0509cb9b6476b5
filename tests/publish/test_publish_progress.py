"""A publish tells how far it got from its first query on: while the digests of its pages are
taken (seconds on a federation's folder) the progress callback keeps being called, so a log off a
terminal never goes quiet (issue 27). Real TRF files from ../shared/data, rated under FIDE rules."""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import pytest

from elopipe.publish import outputs
from elopipe.publish.lists import list_dates
from tests.helpers.progress import rated_store


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rated_store(tmp_path_factory.mktemp("progress"))


def test_progress_is_told_while_the_report_digests_are_taken(db: Path, tmp_path: Path, monkeypatch) -> None:
    told = threading.Event()
    calls: list[tuple[int, int]] = []
    real = outputs.report_digests

    def slow_digests(*args: object, **kwargs: object) -> dict[int, str]:
        # the digests last until the publish has told its progress (the heartbeat's line); if
        # nothing tells it meanwhile, the wait ends unanswered and the test fails
        assert told.wait(60), "no progress while the report digests were taken"
        return real(*args, **kwargs)  # type: ignore[arg-type]

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        told.set()

    monkeypatch.setattr(outputs, "report_digests", slow_digests)
    con = duckdb.connect(str(db), read_only=True)
    try:
        dates = list_dates(con, "fide")
        paths = outputs.publish_outputs(con, "fide", tmp_path / "out", dates, progress=progress, workers=2)
    finally:
        con.close()
    assert any(p.suffix == ".html" and p.parent.name == "fide" and "reports" in p.parts for p in paths)
    assert calls[0][0] == 0  # told before any page was made
    done, total = calls[-1]
    assert done == total and total >= len(dates)  # the last call counts every page


def test_a_quiet_publish_prints_a_line_at_least_every_five_seconds_off_a_terminal(monkeypatch) -> None:
    """A job that keeps the count still for 30 s: the ticker's heartbeat and the status's plain
    lines (a pipe, not a terminal) leave no gap over 3.5 s on an idle machine, so a loaded one
    (threads late by a second) still prints a line within 5 s. With a heartbeat of 2 s every other
    beat fell within the status's 3 s and the lines came 4 s apart (5 s on a loaded machine).
    Driven by a clock of its own, beat by beat as the heartbeat's thread would (every quarter of
    its period), not by the wall clock."""
    import io

    from rich.console import Console

    from elopipe.cli.commands import live_status
    from elopipe.publish import workers
    from elopipe.runtime.words import bar

    now = [0.0]
    monkeypatch.setattr(workers.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(live_status.time, "monotonic", lambda: now[0])
    printed: list[float] = []
    status = live_status.LiveStatus(Console(file=io.StringIO(), force_terminal=False))
    monkeypatch.setattr(status, "line", lambda text, style=None: printed.append(now[0]))
    ticker = workers.Ticker(10, lambda done, total: status.progress(bar(done, total)))
    step = ticker._heartbeat / 4
    while now[0] < 30.0:
        now[0] += step
        ticker._beat()
    gaps = [b - a for a, b in zip([0.0, *printed], printed, strict=False)]
    assert len(printed) >= 8 and max(gaps) <= 3.5, gaps
