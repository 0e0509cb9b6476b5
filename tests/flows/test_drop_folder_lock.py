"""A scheduled `drop_folder` run takes the inbox's lock (elopipe.ingest.watcher.lock), as
`elopipe watch` does: while a watch holds it, the run takes no file and says so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elopipe.ingest.watcher.lock import inbox_lock
from flows.drop_folder import drop_folder


def test_a_run_takes_no_file_from_an_inbox_another_process_watches(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "g.trf").write_text("012 a tournament\n")
    with inbox_lock(inbox), caplog.at_level("INFO", logger="elopipe.stages"):
        counts = drop_folder.fn(str(inbox), db=str(tmp_path / "s.duckdb"), out=str(tmp_path / "out"))
    assert set(counts.values()) == {0}
    assert sorted(os.listdir(inbox)) == [".elopipe", "g.trf"]
    assert not (tmp_path / "s.duckdb").exists()
    said = f"drop_folder: {inbox} is watched by another process (pid {os.getpid()}): this run takes no file"
    assert said in [r.getMessage() for r in caplog.records]
