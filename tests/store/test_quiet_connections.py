"""DuckDB's own progress bar never reaches elopipe's output (it landed inside `sql --format csv`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from elopipe.store.connect import open_writer

_SETTING = "SELECT current_setting('enable_progress_bar') AS bar"


def test_the_writer_and_elopipe_sql_draw_no_progress_bar(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    with open_writer(db) as con:
        assert con.execute(_SETTING).fetchone() == (False,)
    # a separate process, as a user runs it: the setting the sandboxed reader really has
    out = subprocess.run(
        [sys.executable, "-m", "elopipe.cli.main", "sql", _SETTING, "--db", str(db), "--format", "csv"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split() == ["bar", "false"]
