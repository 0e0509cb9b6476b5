"""What a fresh user met at the terminal (issue 27): each bad input or stop is said in one line of
plain words (no DuckDB class names, no OS error text, no rich panels), with the exit code the
README and docs/commands.md give."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.paths import REPO
from tests.helpers.publish_store import build_store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


SMALL_PGN = REPO / "sample_pgn" / "wchcand22.pgn"


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
    assert len(lines) == 1 and lines[0].startswith("elopipe sql: error: the query failed: "), res.output
    assert words in lines[0] and position in lines[0], res.output
    assert "Error" not in res.output and "LINE" not in res.output and "^" not in res.output, res.output


@pytest.mark.parametrize(
    "args",
    [["publish"], ["publish", "--full"], ["publish", "--diff", "2024-01-01", "2024-02-01"]],
    ids=["lists", "full", "diff"],
)
def test_publish_to_a_file_says_it_is_a_file_not_a_folder(db: Path, tmp_path: Path, args: list[str]) -> None:
    """`publish --out FILE` printed the system's words: 'Not a directory: FILE/lists' (exit 1)."""
    out = tmp_path / "a_file"
    out.write_text("keep me\n")
    res = _run(*args, "--out", str(out), "--db", str(db))
    assert (res.exit_code, res.output) == (
        2,
        f"elopipe publish: error: cannot publish to {out}: it is a file, not a folder\n",
    )
    inside = out / "lists"
    res = _run(*args, "--out", str(inside), "--db", str(db))
    assert (res.exit_code, res.output) == (
        2,
        f"elopipe publish: error: cannot publish to {inside}: {out} is a file, not a folder\n",
    )
    assert out.read_text() == "keep me\n"


def test_publish_where_it_may_not_write_says_permission_denied(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder the user may not write (tests run as root too: the system's answer is stood in)."""
    import os

    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.access

    def access(path: Path, mode: int, **kw: object) -> bool:
        return not (Path(path) == locked and mode & os.W_OK) and real(path, mode, **kw)

    monkeypatch.setattr(os, "access", access)
    res = _run("publish", "--out", str(locked), "--db", str(db))
    assert (res.exit_code, res.output) == (
        2,
        f"elopipe publish: error: cannot publish to {locked}: permission denied\n",
    )
    new = locked / "new" / "out"
    res = _run("publish", "--out", str(new), "--db", str(db))
    assert (res.exit_code, res.output) == (
        2,
        f"elopipe publish: error: cannot publish to {new}: permission denied in {locked}\n",
    )
    assert list(locked.iterdir()) == []


def test_an_output_folder_that_cannot_be_made_is_said_in_words(tmp_path: Path) -> None:
    """A folder the check let through and the system refused to make (`/proc/x` as root)."""
    import errno

    from elopipe.cli.commands.publish import _write_failure

    out = tmp_path / "out"
    failed = OSError(errno.ENOENT, "No such file or directory", str(out / "lists"))
    assert _write_failure(failed, out) == f"cannot publish to {out}: no such file or directory ({out / 'lists'})"
    elsewhere = OSError(errno.ENOENT, "No such file or directory", str(tmp_path / "a.csv"))
    assert _write_failure(elsewhere, out) == f"No such file or directory: {tmp_path / 'a.csv'}"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["rate", "--sytem", "fide"], "elopipe rate: no such option: --sytem; did you mean --system? (try --help)"),
        (["rate", "--xyz"], "elopipe rate: no such option: --xyz (try --help)"),
        (["rate", "--system"], "elopipe rate: option '--system' requires an argument (try --help)"),
        (["sql"], "elopipe sql: missing argument 'query' (try --help)"),
        (["sql", "SELECT 1", "x"], "elopipe sql: got unexpected extra argument(s) (x) (try --help)"),
        (
            ["sql", "SELECT 1", "--limit", "0"],
            "elopipe sql: invalid value for '--limit': 0 is not in the range x>=1 (try --help)",
        ),
        (["players", "merge", "1"], "elopipe players merge: missing argument 'merged_id' (try --help)"),
        (["frob"], "elopipe: no such command 'frob' (try --help)"),
        (["--frob"], "elopipe: no such option: --frob (try --help)"),
    ],
)
def test_a_usage_error_is_one_line_in_elopipes_style(args: list[str], line: str) -> None:
    """Click's usage errors came as 'Usage: ...', 'Try ... --help' and a rich panel around the reason."""
    res = _run(*args)
    assert (res.exit_code, res.output) == (2, line + "\n"), res.output


def test_a_store_path_that_is_a_folder_is_one_line_too(tmp_path: Path) -> None:
    res = _run("sql", "SELECT 1", "--db", str(tmp_path))
    assert res.exit_code == 2 and res.output.startswith("elopipe sql: invalid value for '--db': "), res.output
    assert len(res.output.splitlines()) == 1 and "is a folder" in res.output, res.output


def test_no_arguments_still_show_the_help() -> None:
    res = _run()
    assert res.exit_code == 2 and "Usage:" in res.output and "Commands" in res.output, res.output


def test_a_name_finds_players_by_whole_words_of_their_name(db: Path, tmp_path: Path) -> None:
    """'Nobody' found the player 'bboynobody' (a substring); a name now matches whole words of a
    player's name or spelling, in any order ('Carlsen' and 'Magnus' find 'Carlsen, Magnus'), a
    word of one or two letters may be an initial ('Carlsen, M')."""
    import duckdb

    from elopipe.publish.history import find_player

    con = duckdb.connect(str(db))
    con.execute("UPDATE players SET name = 'bboynobody', name_key = 'bboynobody' WHERE player_id = 4")
    con.execute("UPDATE players SET name = 'Carlsen, Magnus', name_key = 'carlsen magnus' WHERE player_id = 5")
    con.close()
    ro = duckdb.connect(str(db), read_only=True)
    try:
        for ref in ("Carlsen", "magnus", "MAGNUS carlsen", "Carlsen, M", "M Carlsen", "100005"):
            assert find_player(ro, ref) == 5, ref
        assert find_player(ro, "bboynobody") == 4
        for ref in ("Nobody", "boy", "Carl", "Magnu", "Carlsen, Ma Xyz"):
            with pytest.raises(LookupError, match="no player matches"):
                find_player(ro, ref)
    finally:
        ro.close()
    res = _run("player", "Nobody", "--db", str(db), "--out", str(tmp_path / "o"))
    assert (res.exit_code, res.output) == (1, "elopipe player: error: no player matches 'Nobody'\n")


def test_a_ctrl_c_of_an_idle_watch_promises_no_batch() -> None:
    """An idle `watch` answered Ctrl-C with 'stopping after the current batch's transaction'; with
    no batch running it now says nothing at once and its last line says it stopped."""
    from elopipe.cli.commands.watch import stopping_words

    assert stopping_words(batch_running=True) == (
        "stopping after the current batch's transaction (Ctrl-C again to abort now) ..."
    )
    assert stopping_words(batch_running=False) is None


@pytest.mark.parametrize("command", ["run", "watch"])
def test_run_and_watch_refuse_an_out_that_is_a_file_before_any_work(tmp_path: Path, command: str) -> None:
    """`run` ingested and rated, then failed to publish with the system's 'Not a directory'; the
    folder is now checked first, as `publish` checks it: nothing is read or written."""
    out = tmp_path / "a_file"
    out.write_text("keep me\n")
    db = tmp_path / "s.duckdb"
    target = [str(tmp_path / "inbox")] if command == "watch" else [str(Path(__file__))]
    res = _run(command, *target, "--out", str(out), "--db", str(db))
    assert (res.exit_code, res.output) == (
        2,
        f"elopipe {command}: error: cannot publish to {out}: it is a file, not a folder\n",
    )
    assert out.read_text() == "keep me\n" and not db.exists() and not (tmp_path / "inbox").exists()


def test_player_names_the_latest_ten_events_and_counts_the_earlier_ones() -> None:
    """A player of 478 events got them all on one line of 10,000 characters."""
    from elopipe.cli.commands.player import tournaments_line

    names = [f"Event {i}" for i in range(1, 13)]
    assert tournaments_line(names[:2]) == "2 tournaments played: Event 1; Event 2"
    assert tournaments_line(names) == (
        "12 tournaments played, the last 10: " + "; ".join(names[2:]) + "; and 2 earlier"
    )


def test_out_folders_that_cannot_be_made_are_one_line_before_any_work(db: Path, tmp_path: Path) -> None:
    """A hostile tester's paths: a loop of symbolic links (a traceback from `run`), a link to
    nothing (`run` made its target and published there), a folder no one can make (/proc)."""
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "dir")
    cases = {
        tmp_path / "loop1": "too many levels of symbolic links",
        tmp_path / "dangling": f"it is a symbolic link to {tmp_path / 'nowhere' / 'dir'}, which does not exist",
        tmp_path / "dangling" / "sub": (
            f"{tmp_path / 'dangling'} is a symbolic link to {tmp_path / 'nowhere' / 'dir'}, which does not exist"
        ),
    }
    if Path("/proc/self").is_dir():
        cases[Path("/proc/elopipe-test")] = "no folder can be made in /proc (no such file or directory)"
    for out, reason in cases.items():
        res = _run("publish", "--out", str(out), "--db", str(db))
        assert (res.exit_code, res.output) == (2, f"elopipe publish: error: cannot publish to {out}: {reason}\n")
    assert not (tmp_path / "nowhere").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".elopipe-probe")]


def test_a_store_path_in_a_loop_of_links_is_one_line(tmp_path: Path) -> None:
    """`run --db LOOP` printed pathlib's RuntimeError with its traceback."""
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    res = _run("watch", str(tmp_path / "inbox"), "--db", str(tmp_path / "loop1"), "--out", str(tmp_path / "out"))
    assert res.exit_code == 2, res.output
    assert res.output.endswith(f"elopipe watch: error: {tmp_path / 'loop1'}: too many levels of symbolic links\n"), (
        res.output
    )
    assert "Traceback" not in res.output


def test_watch_refuses_to_publish_into_its_drop_folder(tmp_path: Path) -> None:
    """`watch INBOX --out INBOX` took its own pages as new files and quarantined them."""
    inbox = tmp_path / "inbox"
    res = _run("watch", str(inbox), "--out", str(inbox), "--db", str(tmp_path / "s.duckdb"))
    assert (res.exit_code, res.output) == (
        2,
        f"elopipe watch: error: cannot publish to {inbox}: it is the drop folder; give another --out\n",
    )
    assert not inbox.exists()


@pytest.mark.parametrize("out", ["data", "link", "data/."])
def test_run_refuses_to_publish_into_an_input_folder(tmp_path: Path, out: str) -> None:
    """`run DIR --out DIR` published into DIR, which then held elopipe's manifest and was never
    read again (a folder holding it is skipped as output)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.pgn").write_bytes((SMALL_PGN).read_bytes())
    (tmp_path / "link").symlink_to(data)
    args = ["run", str(tmp_path / "other.pgn"), str(data), "--out", str(tmp_path / out), "--db", str(tmp_path / "s.db")]
    (tmp_path / "other.pgn").write_bytes(SMALL_PGN.read_bytes())
    res = _run(*args)
    named = f" ({data})" if out == "link" else ""  # pathlib drops a trailing "/."
    assert (res.exit_code, res.output) == (
        2,
        f"elopipe run: error: cannot publish to {tmp_path / out}: it is an input folder{named}; give another --out\n",
    )
    assert sorted(os.listdir(data)) == ["a.pgn"] and not (tmp_path / "s.db").exists()


def test_an_output_folder_inside_an_input_folder_is_allowed(tmp_path: Path) -> None:
    """`run DIR --out DIR/out` stays allowed: the folder is skipped as elopipe's output."""
    from elopipe.cli.app import check_out_not_input

    data = tmp_path / "data"
    data.mkdir()
    check_out_not_input(data / "out", [data, tmp_path / "x.pgn"], "an input folder")
    check_out_not_input(tmp_path, [data], "an input folder")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["publish", "--system", "bogus"], "elopipe publish: error: unknown rating system 'bogus': use one of "),
        (
            ["publish", "--diff", "a", "b"],
            "elopipe publish: error: a is neither a list date (YYYY-MM-DD or YYYY-MM) nor a file",
        ),
        (["report", "-t", ""], "elopipe report: error: give --tournament ID|NAME or --all"),
        (["players", "suspects", "--limit", "-1"], "elopipe players suspects: invalid value for '--limit'"),
    ],
)
def test_usage_errors_a_hostile_tester_found_exit_2(db: Path, args: list[str], said: str) -> None:
    """These exited 1 (or accepted -1 and showed 200 rows), unlike every other usage error."""
    res = _run(*args, "--db", str(db))
    assert res.exit_code == 2 and res.output.startswith(said) and res.output.count("\n") == 1, res.output


@pytest.mark.parametrize("command", ["run", "watch"])
def test_run_and_watch_take_through_as_rate_does(tmp_path: Path, command: str) -> None:
    """`rate --through` takes a list month and refuses a day; `run` and `watch` took the day and
    refused the month. Now the three read it alike, before any work."""
    from elopipe.cli.commands.run import parse_through

    assert parse_through("2022-08") == parse_through(" 2022-08 ")
    assert str(parse_through("2022-08")) == "2022-08-01" and parse_through(None) is None
    db = tmp_path / "s.duckdb"
    target = [str(tmp_path / "inbox")] if command == "watch" else [str(Path(__file__))]
    res = _run(command, *target, "--through", "2022-08-15", "--out", str(tmp_path / "out"), "--db", str(db))
    assert res.exit_code == 2 and "expected a list month YYYY-MM such as 2024-03, got '2022-08-15'" in res.output
    assert not db.exists() and not (tmp_path / "inbox").exists()


def test_the_batch_line_of_watch_escapes_the_names_as_its_other_lines_do() -> None:
    """A dropped `caf\\xe9\\nnl.trf` (a byte not UTF-8 and a newline) was printed raw on the batch's
    first line, split over two lines, while the 'moved to' line escaped it."""
    import os

    from elopipe.cli.commands.watch import new_files_line

    odd = Path(os.fsdecode(b"caf\xe9\nnl.trf"))
    line = new_files_line([Path("bad.pgn"), odd])
    assert line == "2 new files: bad.pgn, caf\\xe9\\x0anl.trf" and "\n" not in line
