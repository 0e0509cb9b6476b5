"""`elopipe run` as a user sees it: its first line before Prefect, the stages in elopipe's words,
a usage error for a negative --lock-timeout, and what an all-rejected run says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.paths import REPO
from tests.helpers.signals import signal_at_line

ELOPIPE = str(Path(sys.executable).with_name("elopipe"))
SMALL = REPO / "sample_pgn" / "fide_candidates_2022_madrid_spain.pgn"
# Prefect's own words, which a user must not see (run names, levels, crash reports).
INTERNALS = ("Flow run '", "Task run '", "| WARNING |", "| ERROR ", "Crash detected", "Traceback")


def test_a_negative_lock_timeout_is_a_one_line_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(SMALL), "--db", str(tmp_path / "s.duckdb"), "--lock-timeout", "-5"])
    assert result.exit_code == 2, result.output
    said = "elopipe run: invalid value for '--lock-timeout': -5.0 is not in the range x>=0 (try --help)\n"
    assert result.output == said
    assert "Traceback" not in result.output
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.parametrize("lists", ["0", "-1", "two"])
def test_lists_must_be_one_or_more_or_all(tmp_path: Path, lists: str) -> None:
    # --lists 0 used to run and publish nothing while reporting that no list changed
    result = CliRunner().invoke(app, ["run", str(SMALL), "--db", str(tmp_path / "s.duckdb"), "--lists", lists])
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"elopipe run: invalid value for --lists: {lists}: give a number of lists, 1 or more, or 'all' (try --help)\n"
    )
    assert not (tmp_path / "s.duckdb").exists()


def _run(tmp_path: Path, url: str, *paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ELOPIPE, "run", *map(str, paths), "--db", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "out")],
        env={**os.environ, "PREFECT_API_URL": url},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_run_says_what_it_does_from_its_first_line_in_elopipes_words(tmp_path: Path, prefect_harness: str) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("shopping list: milk, eggs\n", encoding="utf-8")
    proc = _run(tmp_path, prefect_harness, SMALL, bad)

    assert proc.returncode == 1, proc.stderr  # one file rejected
    lines = [line.split(" | ", 1)[1] for line in proc.stderr.splitlines() if " | " in line]
    # The first line names the job, before Prefect is imported; then Prefect, then each stage.
    assert lines[0] == f"run: {SMALL}, {bad} -> store {tmp_path / 's.duckdb'}, outputs {tmp_path / 'out'} " + (
        "(fide, fide-rapid, fide-blitz)"
    )
    assert lines[1] == f"connecting to the Prefect server at {prefect_harness} ..."
    starts = [line for line in lines if line.endswith(" ...")]
    assert starts[1:] == [
        "ingest: 2 paths ...",
        "rate: fide ...", "rate: fide-rapid ...", "rate: fide-blitz ...",
        "publish: fide ...", "publish: fide-rapid ...", "publish: fide-blitz ...",
    ]  # fmt: skip
    assert any(line.startswith("ingest: rejected ") and "notes.txt" in line for line in lines), lines
    # the ingest's progress off a terminal: files stored out of those found (the first one is said)
    assert any(line.startswith("ingest: [") and "/2 files, " in line for line in lines), lines
    assert "publish: fide: " in proc.stderr and "fide-blitz: no list in the store" in proc.stderr
    for internal in INTERNALS:
        assert internal not in proc.stderr + proc.stdout, proc.stderr
    assert "lists:" in proc.stdout


@pytest.mark.parametrize("count", [1, 2])
def test_a_first_run_whose_files_are_all_rejected_says_so(tmp_path: Path, prefect_harness: str, count: int) -> None:
    bad = []
    for i in range(count):
        bad.append(tmp_path / f"notes{i}.txt")
        bad[-1].write_text(f"shopping list {i}: milk, eggs\n", encoding="utf-8")
    # in this process (the session's server): `elopipe run` in a process of its own, a file
    # rejected among others, is the first test's
    args = ["run", *map(str, bad), "--db", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "out")]
    res = CliRunner().invoke(app, args)

    assert res.exit_code == 1, res.output
    said = "the file was rejected" if count == 1 else f"all {count} files were rejected"
    assert f"(nothing written: {said}, see above)" in res.stdout, res.output
    assert "nothing changed" not in res.stdout


def test_a_ctrl_c_while_prefect_starts_is_exit_130_not_a_failure(tmp_path: Path, monkeypatch) -> None:
    """A Ctrl-C before the first file is read ends the run with 130 and one line; it used to be
    caught as a failure ("pipeline failed: 130", exit 1). The Ctrl-C is simulated by the stop it
    requests, while the temporary server starts (patched on the class: a name imported elsewhere
    must not keep a stand-in after the test)."""
    from elopipe.runtime import interrupt
    from flows import prefect_env

    real_wait = prefect_env.PrefectApi.wait_ready

    def wait_then_ctrl_c(api: prefect_env.PrefectApi, stop: Callable[[], bool] | None = None) -> None:
        real_wait(api, stop=stop)
        interrupt.request_stop()

    monkeypatch.setattr(prefect_env.PrefectApi, "wait_ready", wait_then_ctrl_c)
    try:
        res = CliRunner().invoke(
            app, ["run", str(SMALL), "--db", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "o")]
        )
    finally:
        interrupt.clear_stop()
    assert res.exit_code == 130, res.output
    assert "stopped (Ctrl-C) before any file was read" in res.output
    assert "failed" not in res.output


def test_a_sigterm_while_a_stage_runs_ends_the_run_in_one_line(tmp_path: Path, prefect_harness: str) -> None:
    """A service manager's SIGTERM while a flow runs, where Prefect's own handler raises its
    TerminationSignal: one line and status 130, as a Ctrl-C (was a 129-line traceback, exit 1)."""
    import signal

    status, stdout, stderr = signal_at_line(
        [ELOPIPE, "run", str(REPO / "sample_pgn"), "--db", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "out")],
        "| rate: fide ...",
        signal.SIGTERM,
        tmp_path,
        env={**os.environ, "PREFECT_API_URL": prefect_harness},
    )
    assert status == 130, stderr
    assert "stopped (SIGTERM)" in stderr or "stopped (Ctrl-C)" in stderr + stdout, stderr
    for internal in INTERNALS + ("TerminationSignal",):
        assert internal not in stderr + stdout, stderr


def _run_stopped_in_rating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop: Callable[[], None]):  # noqa: ANN202
    """`elopipe run` on SMALL, its first system's rating followed by `stop` (a Ctrl-C simulated by
    what it does, no signal and no clock)."""
    import elopipe.rating.run as rating
    from elopipe.runtime import interrupt

    real_rate = rating.rate

    def rate_then_stop(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        summary = real_rate(*args, **kwargs)
        stop()
        return summary

    monkeypatch.setattr(rating, "rate", rate_then_stop)
    try:
        args = ["run", str(SMALL), "--db", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "o")]
        return CliRunner().invoke(app, args)
    finally:
        interrupt.clear_stop()


def test_a_run_a_ctrl_c_stopped_says_it_stopped_never_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefect_harness: str
) -> None:
    """The first Ctrl-C asks the run to stop at its next safe point (`request_stop`, what the
    signal handler does): the run used to close with 'done in 20.8 s' beside its stop line."""
    from elopipe.runtime import interrupt

    res = _run_stopped_in_rating(tmp_path, monkeypatch, interrupt.request_stop)
    assert res.exit_code == 130, res.output
    assert "done in" not in res.output, res.output
    said = r"^stopped \(Ctrl-C\) after \d+\.\d s: what was committed stays; the next run rates"
    assert re.search(said, res.output, re.M), res.output
    for internal in INTERNALS:
        assert internal not in res.output, res.output


def test_a_run_aborted_by_a_second_ctrl_c_does_not_say_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefect_harness: str
) -> None:
    def second_ctrl_c() -> None:  # the handler's answer to a Ctrl-C after the first
        raise KeyboardInterrupt

    res = _run_stopped_in_rating(tmp_path, monkeypatch, second_ctrl_c)
    assert res.exit_code == 130, res.output
    assert "done in" not in res.output and "aborted; what was committed stays" in res.output
