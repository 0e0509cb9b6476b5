"""What the terminal says at a few edges (issue 26, item 10): a Ctrl-C once `lists import` has
committed, and `publish --wait` while another process writes the store."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

import elopipe.store.connect as connect
from elopipe.cli.main import app
from tests.helpers.publish_store import build_store

XML = (
    '<?xml version="1.0"?>\n<playerslist>\n<player>\n<fideid>2500001</fideid>\n<name>Named, File</name>\n'
    "<country>ESP</country>\n<rating>1700</rating>\n</player>\n</playerslist>\n"
)


def test_a_ctrl_c_after_lists_import_committed_says_it_is_stored(tmp_path: Path, monkeypatch) -> None:
    f, db = tmp_path / "standard_aug22frl.xml", tmp_path / "g.duckdb"
    f.write_text(XML)
    real = connect.open_writer

    @contextlib.contextmanager
    def writer_interrupted_at_close(*args: object, **kwargs: object) -> Iterator[duckdb.DuckDBPyConnection]:
        with real(*args, **kwargs) as con:  # type: ignore[arg-type]
            yield con
        raise KeyboardInterrupt  # Ctrl-C while the store closes, after the import's COMMIT

    monkeypatch.setattr(connect, "open_writer", writer_interrupted_at_close)
    res = CliRunner().invoke(app, ["lists", "import", str(f), "--system", "fide", "--db", str(db)])
    out = " ".join(res.output.split())
    assert res.exit_code == 0, res.output
    assert "interrupted" not in out and "committed" in out and "2022-08-01" in out, res.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT fide_id FROM official_lists").fetchall() == [(2500001,)]
    finally:
        con.close()


def test_a_ctrl_c_before_lists_import_committed_is_an_interruption(tmp_path: Path, monkeypatch) -> None:
    f, db = tmp_path / "standard_aug22frl.xml", tmp_path / "g.duckdb"
    f.write_text(XML)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("elopipe.official.list_import.import_list", interrupted)
    res = CliRunner().invoke(app, ["lists", "import", str(f), "--system", "fide", "--db", str(db)])
    assert res.exit_code == 130 and "interrupted" in res.output


def test_publish_waits_for_a_writer_as_long_as_wait_says(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ok', flush=True); sys.stdin.readline()", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
        res = CliRunner().invoke(app, ["publish", "--db", str(db), "--out", str(tmp_path / "o"), "--wait", "1"])
        out = " ".join(res.output.split())
        assert res.exit_code == 1, res.output
        assert "waiting up to 1 s" in out and f"PID {holder.pid}" in out, res.output
    finally:
        holder.kill()
        holder.wait()
    res = CliRunner().invoke(app, ["publish", "--db", str(db), "--out", str(tmp_path / "o"), "--wait", "0"])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("value", ["-1", "soon"])
def test_a_bad_wait_is_a_usage_error(tmp_path: Path, value: str) -> None:
    res = CliRunner().invoke(app, ["publish", "--db", str(tmp_path / "s.duckdb"), "--wait", value])
    assert res.exit_code == 2
