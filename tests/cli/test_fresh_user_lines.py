"""What a fresh user met at the terminal (issue 27): each bad input or stop is said in one line of
plain words (no DuckDB class names, no OS error text, no rich panels), with the exit code the
README gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.publish_store import build_store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize(
    ("query", "words", "position"),
    [
        ("SELECT x FROM players", 'Referenced column "x" not found in FROM clause!', "(line 1, column 8)"),
        ("SELEC 1", 'syntax error at or near "SELEC"', "(line 1, column 1)"),
        ("SELECT name,\n  nosuch\nFROM players", 'Referenced column "nosuch" not found', "(line 2, column 3)"),
        ("SELECT * FROM nosuch", "Table with name nosuch does not exist!", "(line 1, column 15)"),
        ("SELECT (SELECT 1 UNION SELECT 2)", "More than one row returned by a subquery", ""),
        # DuckDB quotes a long line cut on the left ('LINE 1: ... c59, zz'): its carets give no column
        ("SELECT " + ", ".join(f"{i} AS c{i}" for i in range(60)) + ", zz FROM players", '"zz" not found', "(line 1)"),
    ],
)
def test_a_failed_query_is_one_line_without_duckdbs_class_name(db: Path, query: str, words: str, position: str) -> None:
    """`sql` said 'query failed: Binder Error: ...' and drew DuckDB's caret block under the query."""
    res = _run("sql", query, "--db", str(db))
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sql: the query failed: "), res.output
    assert words in lines[0] and position in lines[0], res.output
    assert "Error" not in res.output and "LINE" not in res.output and "^" not in res.output, res.output
