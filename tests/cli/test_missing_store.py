"""A `--db` that names no store: the commands that bring files in create it (`ingest`, `run`, `watch`,
`serve`, `lists import`); every other command refuses in one line, `elopipe CMD: error: no database
at PATH`, and creates nothing (`players merge` on a mistyped path created an empty store and its
lock file, and said `no player 1`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from elopipe.cli.main import app

# the commands whose job is to bring files (games, an official list) into a store, new or not
CREATE = {"ingest", "run", "watch", "serve", "lists import"}

# each other command with --db, and arguments it would otherwise run with
REFUSE = {
    "players merge": ["1", "2", "--reason", "x"],
    "players split": ["1", "--reason", "x", "--tournament", "1"],
    "players suspects": [],
    "scenarios drop": ["x"],
    "scenarios list": [],
    "scenarios show": ["x"],
    "rate": [],
    "publish": [],
    "report": ["--tournament", "x"],
    "player": ["1"],
    "compare": ["fide", "ffe"],
    "lists compare": ["{tmp}/official.txt", "--system", "fide", "--list-date", "2024-03-01"],
    "export": ["--parquet", "{tmp}/parquet"],
    "sql": ["SELECT 1"],
}


def _with_db(command: Any, path: str = "") -> list[str]:
    """The commands of the CLI that take --db, as 'group sub'."""
    subs = getattr(command, "commands", None)
    if subs is not None:  # a group
        return [name for sub in subs.values() for name in _with_db(sub, f"{path} {sub.name}".strip())]
    return [path] if any("--db" in p.opts for p in command.params) else []


def test_every_command_with_a_db_either_creates_it_or_is_checked_here() -> None:
    assert sorted(_with_db(typer.main.get_command(app))) == sorted(CREATE | REFUSE.keys())


@pytest.mark.parametrize("name", REFUSE)
def test_a_missing_store_is_refused_and_nothing_is_created(tmp_path: Path, name: str) -> None:
    (tmp_path / "official.txt").write_text("ID Number Name SRtng\n")
    before = sorted(tmp_path.rglob("*"))
    db = tmp_path / "typo" / "s.duckdb"
    args = [*name.split(), *(a.format(tmp=tmp_path) for a in REFUSE[name]), "--db", str(db)]
    res = CliRunner().invoke(app, args)
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    said = f"no database at {db}; run `elopipe ingest --db {db}` first"  # the hint names the store
    assert res.exit_code == 1 and lines == [f"elopipe {name}: error: {said}"]
    assert sorted(tmp_path.rglob("*")) == before


def test_a_diff_on_a_missing_store_is_refused_like_the_others(tmp_path: Path) -> None:
    # `publish --diff A B` exited 2 (a usage error) where every other command exits 1
    db = tmp_path / "missing.duckdb"
    args = ["publish", "--diff", "2024-01-01", "2024-02-01", "--system", "fide", "--db", str(db)]
    res = CliRunner().invoke(app, args)
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    said = f"no database at {db}; run `elopipe ingest --db {db}` first"
    assert res.exit_code == 1 and lines == [f"elopipe publish: error: {said}"]
    assert list(tmp_path.iterdir()) == []


def test_a_refused_list_leaves_no_new_store_behind(tmp_path: Path) -> None:
    # `lists import` creates the store only for a list it stores: a file that is no list left
    # an empty store and its lock file
    junk = tmp_path / "hostname"
    junk.write_text("vm\n")
    db = tmp_path / "none.duckdb"
    res = CliRunner().invoke(app, ["lists", "import", str(junk), "--system", "fide", "--db", str(db)])
    assert res.exit_code == 1 and "not a FIDE list" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostname"]


def test_a_refused_list_never_removes_a_store_that_was_there(tmp_path: Path) -> None:
    from elopipe.store.connect import lock_path, open_writer

    db = tmp_path / "s.duckdb"
    with open_writer(db):
        pass
    junk = tmp_path / "hostname"
    junk.write_text("vm\n")
    res = CliRunner().invoke(app, ["lists", "import", str(junk), "--system", "fide", "--db", str(db)])
    assert res.exit_code == 1 and db.exists() and lock_path(db).exists()


@pytest.mark.parametrize("name", REFUSE)
def test_an_empty_duckdb_file_is_no_store_for_any_of_them(tmp_path: Path, name: str) -> None:
    """An empty DuckDB database (made by `duckdb.connect`) is no store: `players merge`, `players
    split` and `rate` wrote the whole schema into it (and `rate` said it rated), where the readers
    refused it; none of them changes the file now."""
    import duckdb

    (tmp_path / "official.txt").write_text("ID Number Name SRtng\n")
    db = tmp_path / "empty.duckdb"
    duckdb.connect(str(db)).close()
    before = db.read_bytes()
    args = [*name.split(), *(a.format(tmp=tmp_path) for a in REFUSE[name]), "--db", str(db)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code in (1, 2) and "holds no elopipe store yet" in res.output, res.output
    assert db.read_bytes() == before
