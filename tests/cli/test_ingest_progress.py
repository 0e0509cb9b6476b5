"""`elopipe ingest` off a terminal (a pipe, a log): a long ingest says how far it is, a line every
few seconds (issue 26, item 5: a 3,000-member zip printed nothing for ten minutes)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

import elopipe.cli.commands.ingest as ingest_cmd
import elopipe.ingest.driver as driver
from elopipe.cli.main import app
from tests.ingest.test_small_files import TATA, split_games

COUNTED = re.compile(r"ingesting: \d+ of 12 files stored, \d+ games? \(0m \d\ds\)")
LOOKING = re.compile(r"ingesting: looking for the files to read \(0m \d\ds\)")


def test_an_ingest_off_a_terminal_prints_how_far_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    split_games(TATA, tmp_path / "live", 12)
    printed = threading.Event()
    lines: list[str] = []

    def record(text: str, **_: object) -> None:
        lines.append(text)
        if COUNTED.fullmatch(text):
            printed.set()

    real_write = driver._write_batch

    def write_after_a_line(*args, **kwargs):  # type: ignore[no-untyped-def]
        printed.wait()  # the ingest does not end before a line counting its files came
        return real_write(*args, **kwargs)

    monkeypatch.setattr(ingest_cmd, "PROGRESS_EVERY", 0.01)
    monkeypatch.setattr(ingest_cmd.err_console, "print", record)
    monkeypatch.setattr(driver, "_write_batch", write_after_a_line)
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "live"), "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 0, result.output
    # before the files are found (on a loaded machine), a line says so: never '0 of 0 files'
    counted = [x for x in lines if not LOOKING.fullmatch(x)]
    assert counted and all(COUNTED.fullmatch(x) for x in counted)
    assert "12 files: 12 loaded" in result.output


def test_a_quiet_ingest_prints_no_progress_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    split_games(TATA, tmp_path / "live", 3)
    monkeypatch.setattr(ingest_cmd, "PROGRESS_EVERY", 0.0)
    started: list[bool] = []
    monkeypatch.setattr(ingest_cmd.ProgressLines, "_line", lambda self: started.append(True))
    result = CliRunner().invoke(app, ["ingest", "-q", str(tmp_path / "live"), "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 0, result.output
    assert started == []
