"""Ctrl-C at any moment of a long command: one line, exit 130, never a traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elopipe.ingest import ingest_paths
from elopipe.rating.run import rate
from elopipe.store import open_writer

SAMPLE = Path(__file__).resolve().parents[1] / "sample_pgn"


@pytest.mark.slow
def test_ctrl_c_during_publish_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest_paths([SAMPLE], db)
    with open_writer(db) as con:
        rate(con, "fide")
    elopipe = Path(sys.executable).with_name("elopipe")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [str(elopipe), "publish", "--system", "fide", "--all", "--full", "--db", str(db), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's Ctrl-C
    )
    try:
        deadline = time.monotonic() + 120
        # interrupt once lists are being written, in the middle of the work
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and sum(1 for _ in out.rglob("*.csv")) >= 20:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err and "Error" not in err, err
    if proc.returncode == 0:
        pytest.skip("publish finished before the signal came")
    assert proc.returncode == 130 and err.strip() == "interrupted (Ctrl-C)", err
