"""`report --all` tells how far it got, as a publish does (`LiveStatus.counter` over the reports'
`Ticker`): off a terminal a line at least every few seconds, where it printed nothing until its
last line (fresh user). Real TRF files from ../shared/data, rated under FIDE rules."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.commands import live_status
from elopipe.cli.main import app
from elopipe.publish import reports
from tests.helpers.progress import rated_store


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rated_store(tmp_path_factory.mktemp("report-progress"))


def test_report_all_prints_progress_lines_off_a_terminal(db: Path, tmp_path: Path, monkeypatch) -> None:
    told = threading.Event()
    real_write, real_progress = reports.write_report, live_status.LiveStatus.progress

    def slow_write(*args: object, **kwargs: object) -> list[Path]:
        # the first report lasts until the command has said how far it is (the ticker's heartbeat);
        # if nothing says it meanwhile, the wait ends unanswered and the test fails
        assert told.wait(60), "no progress line while a report was written"
        return real_write(*args, **kwargs)  # type: ignore[arg-type]

    def progress(self: live_status.LiveStatus, text: str) -> None:
        real_progress(self, text)
        told.set()

    monkeypatch.setattr(reports, "write_report", slow_write)
    monkeypatch.setattr(live_status.LiveStatus, "progress", progress)
    res = CliRunner().invoke(app, ["report", "--all", "--db", str(db), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    total = int(lines[-1].split()[0])  # "1 report, N files written under ..."
    assert total >= 1 and " written under " in lines[-1]
    assert f" | report fide [--------------------] 0/{total} reports" in res.output  # before the first was done
