"""Values no command can use are refused in one line, exit 2, naming what is expected (issue 17):
a K that is not positive, an empty --format, a list date before any FIDE list, a byte count in
the environment that is not a number."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app, main
from elopipe.runtime.settings import BYTE_SETTINGS
from tests.helpers.publish_store import build_store

RANGE = "list date 1900-01-01 is out of range: give a date from 1971-01-01 to 2100-12-31 (FIDE's first list is of 1971)"


def _one_line(args: list[str]) -> str:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, res.output
    return lines[0]


@pytest.mark.parametrize(("k", "bad"), [("-10", "-10"), ("0", "0"), ("20,games<30:-40", "-40"), ("1001", "1001")])
def test_elo_refuses_a_k_that_is_not_positive(k: str, bad: str) -> None:
    assert _one_line(["elo", "1500", "--vs", "1600:W", "--k", k]) == (
        f"elopipe elo: error: K must be a whole number from 1 to 1000, not {bad}"
    )


def test_publish_refuses_an_empty_format_list_and_names_the_formats(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    out = tmp_path / "out"
    for fmts in ("", " , "):
        line = _one_line(["publish", "--db", str(db), "--out", str(out), "--format", fmts])
        assert (
            line
            == "elopipe publish: error: --format names no format; choose from csv, parquet, txt, html (comma-separated)"
        )
    assert not out.exists()
    line = _one_line(["publish", "--db", str(db), "--out", str(out), "--format", "csv,pdf"])
    assert line == "elopipe publish: error: unknown format pdf; choose from csv, parquet, txt, html (comma-separated)"


def test_list_dates_before_any_fide_list_are_refused(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    listed = tmp_path / "standard_mar24frl.txt"
    listed.write_text("ID Number      Name\n1              A, B\n", encoding="utf-8")
    assert _one_line(["publish", "--db", str(db), "--out", str(tmp_path / "o"), "--list-date", "1900-01-01"]) == (
        "elopipe publish: error: --list-date: " + RANGE  # the option named, as for a malformed date
    )
    compare = ["lists", "compare", str(listed), "--system", "fide", "--list-date", "1900-01-01", "--db", str(db)]
    assert _one_line(compare) == "elopipe lists compare: error: --list-date: " + RANGE
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["ELOPIPE_MAX_FILE_BYTES", "ELOPIPE_STREAM_BYTES", "ELOPIPE_CHUNK_BYTES"])
@pytest.mark.parametrize("value", ["abc", "-5", "0", "1.5"])
def test_a_bad_byte_count_in_the_environment_is_one_line(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "argv", ["elopipe", "--help"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"elopipe: error: {name} (")
    assert f"must be a whole number of bytes, 1 or more, not {value}; unset it for the default" in err[0]


@pytest.mark.parametrize("name", ["ELOPIPE_MAX_FILE_BYTES", "ELOPIPE_STREAM_BYTES", "ELOPIPE_CHUNK_BYTES"])
def test_a_bad_byte_count_is_one_line_in_a_fresh_process(name: str) -> None:
    """In a process that has loaded no command yet, as a user's: saying the error loaded the
    commands, one of which reads ELOPIPE_MAX_FILE_BYTES on import, and a traceback followed."""
    done = subprocess.run(
        [sys.executable, "-c", "from elopipe.cli.main import main; main()", "--version"],
        env={**os.environ, name: "abc"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"elopipe: error: {name} ({BYTE_SETTINGS[name]}) must be a whole number of bytes, 1 or more, not abc;"
        " unset it for the default"
    ]


def test_a_good_byte_count_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from elopipe.runtime.settings import check_environment, env_bytes

    monkeypatch.setenv("ELOPIPE_CHUNK_BYTES", " 1_000_000 ")
    check_environment()
    assert env_bytes("ELOPIPE_CHUNK_BYTES", 5) == 1_000_000
    monkeypatch.setenv("ELOPIPE_CHUNK_BYTES", "")
    assert env_bytes("ELOPIPE_CHUNK_BYTES", 5) == 5


EMPTY = "an empty path; name a file or folder ('.' for the current folder)"


@pytest.mark.parametrize(
    "args",
    [
        ["ingest", ""],
        ["ingest", "g.pgn", "--db", ""],
        ["run", "", "--db", "s.duckdb"],
        ["rate", "--db", ""],
        ["publish", "--db", "s.duckdb", "--out", ""],
        ["publish", "--db", "s.duckdb", "--out", "   "],
        ["players", "suspects", "--db", ""],
    ],
)
def test_an_empty_path_is_a_usage_error_not_the_current_folder(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`elopipe ingest "$INBOX"` with INBOX unset read every file under the current folder, and
    `--out ""` published into it: "" names no path."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.pgn").write_text('[White "A, B"]\n[Black "C, D"]\n[Result "1-0"]\n\n1. e4 1-0\n', encoding="utf-8")
    line = _one_line(args)
    assert line.endswith(f"{EMPTY} (try --help)"), line
    assert line.startswith(f"elopipe {' '.join(a for a in args[:2] if a and not a.startswith('-') and a != 'g.pgn')}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.pgn"]  # nothing read, nothing written


def test_a_list_date_is_a_day_or_a_month_in_one_spelling(tmp_path: Path) -> None:
    """`--list-date 2024-02` is the list of February 2024, as `rate --through 2024-02` reads a month
    (publish wanted YYYY-MM-DD only); another spelling that `date.fromisoformat` would take for a
    date ('20240201', '2024-W05') or a one-digit month is refused in one line, exit 2."""
    db = build_store(tmp_path / "s.duckdb")
    out = tmp_path / "o"
    month = CliRunner().invoke(app, ["publish", "--db", str(db), "--out", str(out), "--list-date", "2024-02"])
    assert month.exit_code == 0, month.output
    assert sorted(p.name for p in (out / "lists").glob("fide_*.csv")) == ["fide_2024-02-01.csv"]
    # an empty value is refused, not read as "not given" (publish took the latest list); digits are ASCII
    for text in ("20240201", "2024-W05", "2024-2", "Feb 2024", "", "２０２４-02"):
        for command in (["publish", "--out", str(out)], ["compare", "fide", "fide"]):
            line = _one_line([*command, "--db", str(db), "--list-date", text])
            assert line == (
                f"elopipe {command[0]}: error: --list-date must be a list date YYYY-MM-DD or a list month YYYY-MM"
                f" (2024-03: the list of March 2024), not '{text}'"
            )
    # the right form for a day the calendar lacks: said so, not "must be a list date YYYY-MM-DD"
    for text in ("2024-13", "2024-02-30", "2024-00"):
        for command in (["publish", "--out", str(out)], ["compare", "fide", "fide"]):
            line = _one_line([*command, "--db", str(db), "--list-date", text])
            assert line == f"elopipe {command[0]}: error: --list-date: '{text}' is no day of the calendar"
