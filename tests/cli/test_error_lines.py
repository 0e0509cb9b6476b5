"""elopipe's own error lines (its checks, not Click's usage errors) name the command as the usage
errors do ('elopipe rate: no such option: ...'): 'elopipe rate: error: ...', one line, no traceback,
no exception class, no dict; and they are all said in one place (`elopipe.cli.app.fail`, and
`error_line` for the library's refusals that the CLI catches once)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.paths import REPO
from tests.helpers.publish_store import build_store

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
        # the run policies are options, not --param keys (docs/commands.md, "What-if runs")
        (
            ["rate", "--scenario", "s", "--param", "unknown_tc=rapid"],
            2,
            "elopipe rate: error: --param unknown_tc: use --unknown-tc",
        ),
        (
            ["rate", "--scenario", "s", "--param", "no_moves=skip"],
            2,
            "elopipe rate: error: --param no_moves: use --no-moves",
        ),
        (["rate"], 1, "elopipe rate: error: no database at "),
        # a refused value shown as written, its escape codes and newlines as \xNN, never run by the
        # terminal nor splitting the line; one rendering for every policy (hostile tester)
        (
            ["rate", "--unknown-tc", "\x1b[31mred\x1b[0m"],
            2,
            "elopipe rate: error: --unknown-tc: must be one of standard, rapid, blitz, not '\\x1b[31mred\\x1b[0m'",
        ),
        (
            ["rate", "--unknown-tc", "ra\npid"],
            2,
            "elopipe rate: error: --unknown-tc: must be one of standard, rapid, blitz, not 'ra\\x0apid'",
        ),
        (
            ["rate", "--no-moves", "a\tb"],
            2,
            "elopipe rate: error: --no-moves: must be played, forfeit or unrated, not 'a\\x09b'",
        ),
        (["rate", "--ro-from", "it's"], 2, "elopipe rate: error: --ro-from: must be list or file, not 'it's'"),
        (
            ["rate", "--scenario", "s", "--system", "elo", "--param", "period=  "],
            2,
            "elopipe rate: error: --param period=  : period must be one of month, tournament, game, not '  '",
        ),
        # the advice for ro_from is no dead end where --ro-from does not apply either
        (
            ["rate", "--scenario", "s", "--system", "glicko2", "--param", "ro_from=list"],
            2,
            "elopipe rate: error: --param ro_from: Ro's source is a FIDE rule: it applies to the FIDE systems, not",
        ),
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
    # a red line printed by a command is `error_line`'s, or the line of a Ctrl-C ('aborted; ...')
    red = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / "elopipe" / "cli" / "commands").glob("*.py"))
        for n, text in enumerate(path.read_text().splitlines(), 1)
        if 'style="red"' in text and "error_line(" not in text and "aborted" not in text and "ABORTED" not in text
    ]
    assert red == []


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


# the refusals a hostile tester met without the command's name, one per command at least;
# {db}: a store with one tournament and FIDE lists; {none}: no store; {file}: a file; {tmp}: a folder
HOSTILE = [
    (["ingest", "{tmp}/nope.pgn"], 2, "elopipe ingest: error: no such file or folder: "),
    (["run", "{tmp}/nope.pgn", "--db", "{none}"], 2, "elopipe run: error: no such file or folder: "),
    (["run", "{tmp}", "--out", "{tmp}", "--db", "{none}"], 2, "elopipe run: error: cannot publish to "),
    (["publish", "--db", "{none}"], 1, "elopipe publish: error: no database at "),
    (["publish", "--out", "{file}", "--db", "{db}"], 2, "elopipe publish: error: cannot publish to "),
    (["publish", "--list-date", "2030-01-01", "--db", "{db}"], 2, "elopipe publish: error: no rating list for"),
    (["player", "1", "--db", "{none}"], 1, "elopipe player: error: no database at "),
    (["player", "Nobody", "--db", "{db}"], 1, "elopipe player: error: no player matches 'Nobody'"),
    (["player", "1", "--compare", "official:ffe", "--db", "{db}"], 2, "elopipe player: error: the store has no"),
    (["sql", "SELECT 1", "--db", "{none}"], 1, "elopipe sql: error: no database at "),
    (["sql", "SELECT nosuch", "--db", "{db}"], 1, "elopipe sql: error: the query failed: "),
    (["sql", "SELECT 1; SELECT 2", "--db", "{db}"], 2, "elopipe sql: error: the query holds 2 statements"),
    (["scenarios", "list", "--db", "{none}"], 1, "elopipe scenarios list: error: no database at "),
    (["scenarios", "show", "x", "--db", "{db}"], 1, "elopipe scenarios show: error: no scenario 'x'"),
    (["compare", "fide", "ffe", "--db", "{none}"], 1, "elopipe compare: error: no database at "),
    (["compare", "fide", "ffe", "--db", "{db}"], 2, "elopipe compare: error: the store has no list for 'ffe'"),
    (["report", "--db", "{db}"], 2, "elopipe report: error: give --tournament ID|NAME or --all"),
    (
        ["report", "--all", "-t", "x", "--db", "{db}"],
        2,
        "elopipe report: error: give --tournament ID|NAME or --all, not both",
    ),
    # a system no official list has is a usage error (it was exit 1, and '' read "unknown list system ;")
    (
        ["lists", "import", "{file}", "--system", "", "--db", "{db}"],
        2,
        "elopipe lists import: error: --system: an official",
    ),
    (
        ["lists", "import", "{file}", "--system", "fide-blitz-foo", "--db", "{db}"],
        2,
        "elopipe lists import: error: --system",
    ),
    # a text argument with bytes that are not UTF-8: a usage error, not an internal one or a store fault
    (["sql", "select 1 as \udce9", "--db", "{db}"], 2, "elopipe sql: error: the query holds bytes that are not UTF-8"),
    (["report", "-t", "\udce9", "--db", "{db}"], 2, "elopipe report: error: --tournament holds bytes that are not"),
    # an escape code in a query's words or in the engine's is shown, not run
    (
        ["sql", 'select 1 from "t\x1b[31m"', "--db", "{db}"],
        1,
        "elopipe sql: error: the query failed: Table with name t\\x1b[31m",
    ),
    (["report", "-t", "Nosuch", "--db", "{db}"], 1, "elopipe report: error: no tournament matches 'Nosuch'"),
    (["lists", "import", "{file}", "--system", "fide", "--db", "{db}"], 1, "elopipe lists import: error: "),
    # a folder of the user's is refused as a folder that is a file is: a usage error (it was exit 1)
    (["export", "--parquet", "{tmp}", "--db", "{db}"], 2, "elopipe export: error: "),
    (["export", "--parquet", "{file}", "--db", "{db}"], 2, "elopipe export: error: cannot export to "),
    (["watch", "{file}", "--db", "{none}", "--out", "{tmp}/o"], 2, "elopipe watch: error: not a folder: "),
    (["serve", "{tmp}", "--cron", "* * * * *", "--interval", "5"], 2, "elopipe serve: error: give --cron or"),
    (["players", "split", "1", "--name", "Z", "--reason", "x", "--db", "{db}"], 1, "elopipe players split: error: "),
    (["ingest", "{tmp}", "--stage", "{tmp}", "--db", "{none}"], 2, "elopipe ingest: error: --stage goes with"),
]


@pytest.mark.parametrize(("args", "code", "start"), HOSTILE, ids=[" ".join(a[:2]) for a, _, _ in HOSTILE])
def test_every_refusal_names_its_command(store: Path, tmp_path: Path, args: list[str], code: int, start: str) -> None:
    """One line, the command's name and 'error:' first, the refusal's words and exit code kept."""
    (tmp_path / "afile").write_text("keep me\n")
    where = {"db": store, "none": tmp_path / "none.duckdb", "file": tmp_path / "afile", "tmp": tmp_path}
    line = _line([a.format(**where) for a in args], code)
    assert line.startswith(start), line
    assert (tmp_path / "afile").read_text() == "keep me\n"


def test_an_environment_setting_refused_before_any_command_names_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from elopipe.cli.main import main

    monkeypatch.setenv("ELOPIPE_CHUNK_BYTES", "abc")
    monkeypatch.setattr(sys, "argv", ["elopipe", "players", "merge", "1", "2"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("elopipe players merge: error: ELOPIPE_CHUNK_BYTES ("), err


def test_a_bug_is_one_line_naming_the_file_that_holds_its_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An error elopipe did not foresee (a bug: `lists import` met DuckDB's new relation API)
    printed Python's traceback and the exception's class in the user's terminal. It is one line
    with the error's words and the file holding the traceback, exit 1."""
    import elopipe.cli.main as cli_main

    def broken(_name: object) -> object:
        raise AttributeError("Relations no longer have fetchone()\nmore lines")

    monkeypatch.setattr(cli_main, "load_app", broken)
    # a file name that is no UTF-8 (a surrogate) must not break the report: it did, with two tracebacks
    monkeypatch.setattr(sys, "argv", ["elopipe", "lists", "import", "x\udce9.csv"])
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("ELOPIPE_TRACEBACK", raising=False)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR read again
    with pytest.raises(SystemExit) as done:
        cli_main.main()
    assert done.value.code == 1
    err = capsys.readouterr().err.splitlines()
    said = "elopipe lists import: error: internal error, a bug of elopipe: Relations no longer have fetchone();"
    assert len(err) == 1 and err[0].startswith(said), err
    assert "Traceback" not in err[0] and "AttributeError" not in err[0]
    (report,) = tmp_path.glob("elopipe-error-*.txt")
    assert report.name in err[0] and "Traceback" in report.read_text(encoding="utf-8")
    assert "x\\udce9.csv" in report.read_text(encoding="utf-8")


def test_an_error_line_is_cut_where_an_argument_is_very_long(store: Path) -> None:
    """`report --tournament` of 100,000 characters was echoed whole: a 100 KB error line."""
    line = _line(["report", "-t", "x" * 100_000, "--db", str(store)], 1)
    assert line.startswith("elopipe report: error: no tournament matches 'xxx") and len(line) < 2_200
    assert line.endswith("... (cut: 100,024 characters)"), line[-60:]  # the message, the name and its quotes


def test_a_split_with_an_empty_name_is_a_usage_error(store: Path) -> None:
    # `--name ""` names no entry, as no --name at all: exit 2 before the store is opened (it was exit 1)
    line = _line(["players", "split", "1", "--name", "", "--reason", "x", "--db", str(store)], 2)
    assert (
        line == "elopipe players split: error: split needs --name or --tournament: which entries move to the new player"
    )
