"""elopipe's own error lines (its checks, not Click's usage errors) name the command as the usage
errors do ('elopipe rate: no such option: ...'): 'elopipe rate: error: ...', one line, no traceback,
no exception class, no dict; and they are all said in one place (`elopipe.cli.app.fail`)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.paths import REPO

# what a user must never read
INTERNALS = ("Traceback", "Error(", "ValueError", "ParamError", "ScenarioError", "{", "__")


def _line(args: list[str], code: int) -> str:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == code, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1, res.output
    assert not any(word in lines[0] for word in INTERNALS), lines[0]
    return lines[0]


@pytest.mark.parametrize(
    ("args", "code", "start"),
    [
        (["rate", "--param", "foo"], 2, "elopipe rate: error: --param 'foo': expected KEY=VALUE"),
        (["rate", "--through", "2023-1"], 2, "elopipe rate: error: --through: expected a list month"),
        (["rate", "--system", "nope"], 2, "elopipe rate: error: unknown system 'nope'"),
        (["rate", "--scenario", "s", "--rules", "V1999"], 2, "elopipe rate: error: unknown FIDE rules version V1999"),
        (["rate", "--rules", "V2017"], 2, "elopipe rate: error: --rules changes the rules"),
        (["rate", "--ro-from", "x"], 2, "elopipe rate: error: --ro-from: must be list or file"),
        (["rate"], 1, "elopipe rate: error: no database at "),
        (["elo", "1500", "--vs", "1600:W", "--k", "0"], 2, "elopipe elo: error: K must be a whole number"),
        (["elo", "1500.5", "--vs", "1600:W", "--fide"], 2, "elopipe elo: error: 1500.5: a FIDE rating is a whole"),
        (["players", "merge", "1", "1", "--reason", "x"], 2, "elopipe players merge: error: cannot merge player 1"),
        (["players", "split", "1", "--reason", "x"], 2, "elopipe players split: error: split needs --name"),
    ],
)
def test_an_error_line_names_its_command(tmp_path: Path, args: list[str], code: int, start: str) -> None:
    db = ["--db", str(tmp_path / "none.duckdb")] if args[0] != "elo" else []
    assert _line([*args, *db], code).startswith(start)


def test_run_names_itself_too(tmp_path: Path) -> None:
    line = _line(["run", str(tmp_path), "--db", str(tmp_path / "s.duckdb"), "--ro-from", "x"], 2)
    assert line == "elopipe run: error: --ro-from: must be list or file, not 'x'"


def test_the_console_script_names_the_command_as_its_usage_errors_do(tmp_path: Path) -> None:
    def stderr(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "elopipe.cli.main", *args], capture_output=True, text=True, cwd=tmp_path, check=False
        )
        assert done.returncode == 2 and done.stdout == "", done
        return done.stderr.strip()

    usage = stderr("rate", "--sytem", "fide")
    own = stderr("rate", "--param", "foo")
    assert usage.startswith("elopipe rate: no such option") and own.startswith("elopipe rate: error: --param 'foo'")


def test_every_error_line_of_the_commands_is_said_in_one_place() -> None:
    said = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / "elopipe" / "cli").rglob("*.py"))
        for n, text in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"""["']error: """, text) and path.name != "app.py"
    ]
    assert said == []  # each goes through `fail`, which names the command
