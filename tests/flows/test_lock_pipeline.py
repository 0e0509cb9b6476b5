"""`elopipe run` as users run it, twice at once on one store: each waits its turn with a message,
prints where its lists and reports went, and nothing is lost. (The runs use the session's Prefect
server through PREFECT_API_URL, so they do not each start a temporary one.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO
from tests.helpers.progress import is_progress

SAMPLE = REPO / "sample_pgn"
ELOPIPE = str(Path(sys.executable).with_name("elopipe"))

# Holds the store's write lock until told to let go (a line on stdin), like a long run would.
HOLDER = textwrap.dedent(
    """
    import sys
    from elopipe.store.connect import write_lock
    with write_lock(sys.argv[1]):
        print("HELD", flush=True)
        sys.stdin.readline()
    """
)


class _Tail:
    """Collects a stream's lines in a thread so the test can wait for one."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self._t = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._t.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line)

    def join(self) -> None:
        self._t.join(30)

    def text(self) -> str:
        return "".join(self.lines)


def test_two_concurrent_runs_wait_for_the_writer_then_both_land(tmp_path: Path, prefect_harness: str) -> None:
    db = tmp_path / "store.duckdb"
    env = {**os.environ, "PREFECT_API_URL": prefect_harness}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    runs: list[subprocess.Popen[str]] = []
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "HELD"
        # Two events months apart: few rating periods, so the test is about the lock, not the engine.
        inputs = ["wchcand22.pgn", "fide_grand_swiss_2021_riga.pgn"]
        for i, name in enumerate(inputs):
            runs.append(
                subprocess.Popen(
                    [ELOPIPE, "run", str(SAMPLE / name), "--db", str(db), "--out", str(tmp_path / f"out{i}")],
                    env=env,
                    cwd=tmp_path,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        tails = [_Tail(r.stderr) for r in runs]
        deadline = time.monotonic() + 180
        while not all("waiting for another elopipe process" in t.text() for t in tails):
            assert time.monotonic() < deadline, [t.text() for t in tails]
            assert all(r.poll() is None for r in runs), [t.text() for t in tails]
            time.sleep(0.2)
        assert f"pid {holder.pid}" in tails[0].text()
        holder.communicate("go\n", timeout=30)  # the long writer finishes
        for r in runs:
            r.wait(300)
        outs = [r.stdout.read() if r.stdout else "" for r in runs]
        for t in tails:
            t.join()
    finally:
        for p in (holder, *runs):
            if p.poll() is None:
                p.kill()
                p.wait(10)
    assert [r.returncode for r in runs] == [0, 0], [t.text() for t in tails]
    for i, (text, tail) in enumerate(zip(outs, tails, strict=True)):
        out = tmp_path / f"out{i}"
        assert f"lists:   {out / 'lists'}" in text and f"reports: {out / 'reports'}" in text, text
        assert "of which Prefect:" in text
        assert any((out / "lists").glob("fide_*.csv"))
        # Quiet: one summary line per stage (and the status lines saying each stage begins, which
        # end in "...", and how far a long one is), no Prefect INFO chatter ("Finished in state ...").
        lines = tail.text().splitlines()
        # neither file says its rate of play: one warning names the store's events, beside the summaries
        assumed = [line for line in lines if "went to the standard list as nothing in" in line]
        assert len(assumed) == 1 and "rate: fide: " in assumed[0], tail.text()
        summaries = [line for line in lines if not (line.endswith(" ...") or is_progress(line) or line in assumed)]
        for stage in ("ingest: ", "rate: ", "publish: "):
            assert sum(stage in line for line in summaries) == 1, tail.text()
        assert "Finished in state" not in tail.text() + text
    con = open_reader(db)
    try:
        loaded = {
            Path(p).name for (p,) in con.execute("SELECT path FROM source_files WHERE status = 'loaded'").fetchall()
        }
        n_events = con.execute("SELECT count(*) FROM tournaments").fetchone()[0]
    finally:
        con.close()
    assert loaded == set(inputs)
    assert n_events == 2
