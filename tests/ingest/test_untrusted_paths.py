"""Paths an attacker or an unlucky officer leaves in a folder: symbolic links to other files of the
machine, FIFOs, and a FIFO given as the store. Nothing is followed or opened that the user did
not name, nothing hangs, and no byte of a non-chess file reaches the store."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.ingest.watcher.outcomes import FileOutcome
from elopipe.jobs.requests import RunRequest
from elopipe.read.parse import parse_source
from elopipe.read.sources import Source, discover
from tests.helpers.paths import REPO
from tests.helpers.store_rows import db_rows

DATA = REPO.parent / "shared" / "data"
PGN = DATA / "pgn" / "wchcand22.pgn"
SECRET = "root:$6$very-secret-hash:19000:0:99999:7:::\n"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    f = tmp_path / "outside" / "shadow"
    f.parent.mkdir()
    f.write_text(SECRET)
    return f


def test_a_symlink_inside_a_folder_is_skipped_and_reported(tmp_path: Path, secret: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "notes.txt").symlink_to(secret)
    (drop / "games.pgn").symlink_to(PGN)
    (drop / "linked_dir").symlink_to(secret.parent, target_is_directory=True)
    shutil.copy(PGN, drop / "real.pgn")
    disc = discover([drop])
    assert [Path(s.path).name for s in disc.sources] == ["real.pgn"]
    skipped = dict(disc.skipped)
    for name in ("notes.txt", "games.pgn", "linked_dir"):
        assert "symbolic link" in skipped[str(drop / name)]


def test_a_symlink_named_on_the_command_line_is_followed(tmp_path: Path) -> None:
    link = tmp_path / "named.pgn"
    link.symlink_to(PGN)
    disc = discover([link])
    assert [s.path for s in disc.sources] == [str(PGN.resolve())] and not disc.skipped


def test_symlinked_secret_never_reaches_the_store_through_the_cli(tmp_path: Path, secret: Path) -> None:
    drop = tmp_path / "d"
    drop.mkdir()
    (drop / "notes.txt").symlink_to(secret)
    db = tmp_path / "s.duckdb"
    res = CliRunner().invoke(app, ["ingest", str(drop), "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "symbolic link" in res.output
    raw = db_rows(db, "SELECT coalesce(string_agg(raw, ''), '') FROM ingest_errors")[0][0]
    assert "secret" not in raw


def test_a_rejected_non_chess_file_keeps_its_reason_but_not_its_bytes(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text(SECRET * 3)
    db = tmp_path / "s.duckdb"
    summary = ingest_paths([f], db)
    assert summary.files[0].status == "rejected"
    rows = db_rows(db, "SELECT message, raw FROM ingest_errors")
    assert rows == [("neither PGN nor TRF content", None)]


@pytest.mark.parametrize("name", ["words.pgn", "shadow.trf", "notes.txt"])
def test_a_rejected_file_keeps_no_byte_whatever_its_name(tmp_path: Path, name: str) -> None:
    # a password file renamed .pgn or .trf is still not chess: its reasons land, its bytes do not
    f = tmp_path / name
    f.write_text(SECRET * 3 + "these are not chess games, only words\n")
    db = tmp_path / "s.duckdb"
    assert ingest_paths([f], db).files[0].status == "rejected"
    assert db_rows(db, "SELECT count(*) FROM ingest_errors WHERE code = 'rejected'") == [(1,)]
    assert db_rows(db, "SELECT count(*) FROM ingest_errors WHERE raw IS NOT NULL") == [(0,)]


def test_a_loaded_file_keeps_the_raw_text_of_its_faults(tmp_path: Path) -> None:
    f = tmp_path / "cut.pgn"
    f.write_bytes(PGN.read_bytes() + b'\n[Event "x"]\n[White "A,\x07 B"]\n[Black "C, D"]\n\n1. e4 e5 1-0\n')
    db = tmp_path / "s.duckdb"
    assert ingest_paths([f], db).files[0].status in ("loaded", "partial")
    assert db_rows(db, "SELECT count(*) > 0 FROM ingest_errors WHERE raw IS NOT NULL") == [(True,)]


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _in_thread(fn, timeout: float = 60.0):
    """Run `fn` in a thread; a hang fails the test instead of blocking the suite."""
    out: dict[str, object] = {}

    def go() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # reported below
            out["error"] = exc

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "hung on a FIFO"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out.get("value")


def test_a_fifo_named_zip_in_a_folder_does_not_hang_discovery(tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    _fifo(drop / "games.zip")
    _fifo(drop / "games.pgn")
    shutil.copy(PGN, drop / "real.pgn")
    disc = _in_thread(lambda: discover([drop]))
    assert [Path(s.path).name for s in disc.sources] == ["real.pgn"]
    skipped = dict(disc.skipped)
    assert "not a regular file" in skipped[str(drop / "games.zip")]


def test_a_fifo_named_on_the_command_line_is_rejected_without_opening(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "games.zip")
    disc = _in_thread(lambda: discover([fifo]))
    ps = _in_thread(lambda: parse_source(disc.sources[0]))
    assert "not a regular file" in ps.rejected_reason
    ps2 = _in_thread(lambda: parse_source(Source(str(_fifo(tmp_path / "g.pgn")))))
    assert "not a regular file" in ps2.rejected_reason


@pytest.mark.parametrize("command", [["ingest", str(PGN)], ["sql", "SELECT 1"], ["rate", "--system", "fide"]])
def test_a_fifo_as_the_store_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    db = _fifo(tmp_path / "s.duckdb")
    res = _in_thread(lambda: CliRunner().invoke(app, [*command, "--db", str(db)]))
    assert res.exit_code == 2, res.output
    assert "not a regular file" in " ".join(res.output.split())


def test_a_folder_swapped_for_a_symlink_during_an_ingest_is_not_followed(tmp_path: Path, secret: Path) -> None:
    drop = tmp_path / "drop"
    (drop / "zz").mkdir(parents=True)
    (drop / "zz" / "x.pgn").write_text("junk\n")
    (secret.parent / "x.pgn").write_text(SECRET)
    (src,) = discover([drop]).sources
    (drop / "zz").rename(drop / "zz.old")  # between discovery and reading, as a race would
    (drop / "zz").symlink_to(secret.parent, target_is_directory=True)
    ps = parse_source(src)
    assert ps.parsed is None and "the path changed while it was read" in ps.rejected_reason


def test_a_file_name_that_is_not_utf8_loads_beside_the_others(tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    shutil.copy(PGN, drop / "ok.pgn")
    odd = os.fsdecode(bytes(drop) + b"/x\xe9.pgn")  # a latin-1 name on a UTF-8 system
    shutil.copy(DATA / "pgn" / "anastasian-lewis.pgn", odd)
    db = tmp_path / "s.duckdb"
    res = CliRunner().invoke(app, ["ingest", str(drop), "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert sorted(db_rows(db, "SELECT path, status FROM source_files")) == [
        (str(drop / "ok.pgn"), "loaded"),
        (str(drop / "x\\xe9.pgn"), "loaded"),
    ]
    from elopipe.ingest.watcher.outcomes import outcomes_by_path

    summary = ingest_paths([odd], db)  # the same bytes again: matched back to the dropped file
    assert outcomes_by_path([Path(odd)], summary.files) == {Path(odd): FileOutcome("skipped", summary.files[0].reason)}


def test_a_store_path_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    db = os.fsdecode(bytes(tmp_path) + b"/a\xff.duckdb")
    res = CliRunner().invoke(app, ["ingest", str(PGN), "--db", db])
    assert res.exit_code == 2 and "not valid UTF-8" in res.output


def test_fifos_beside_the_store_in_the_output_or_as_a_list_never_hang(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    assert ingest_paths([PGN], db).exit_code == 0
    assert CliRunner().invoke(app, ["rate", "--system", "elo", "--db", str(db)]).exit_code == 0
    wal = _fifo(tmp_path / "s.duckdb.wal")
    res = _in_thread(lambda: CliRunner().invoke(app, ["sql", "SELECT 1", "--db", str(db)]))
    assert res.exit_code == 2 and "not a regular file" in " ".join(res.output.split())
    wal.unlink()
    listing = _fifo(tmp_path / "standard_jan24frl.txt")
    res = _in_thread(
        lambda: CliRunner().invoke(app, ["lists", "import", str(listing), "--system", "fide", "--db", str(db)])
    )
    assert res.exit_code == 1 and "is not a regular file" in res.output
    out = tmp_path / "out"
    out.mkdir()
    _fifo(out / ".elopipe-published.json")
    res = _in_thread(
        lambda: CliRunner().invoke(app, ["publish", "--system", "elo", "--db", str(db), "--out", str(out)])
    )
    assert res.exit_code == 1 and "is not a regular file" in res.output


def test_random_bytes_as_an_official_list_are_one_clear_line(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    assert ingest_paths([PGN], db).exit_code == 0
    junk = tmp_path / "ffe_2024-01.csv"
    junk.write_bytes(bytes(range(256)) * 40)
    res = CliRunner().invoke(app, ["lists", "import", str(junk), "--system", "ffe", "--db", str(db)])
    assert (
        res.exit_code == 1
        and f"{junk}: not an FFE list: " in " ".join(res.output.split())
        and "Traceback" not in res.output
    )


@pytest.mark.usefixtures("prefect_harness")
def test_the_pipeline_takes_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    """Prefect sends flow parameters as JSON, which cannot carry such a name as it is."""
    from elopipe.read.sources import path_from_param, path_param
    from flows.pipeline import pipeline

    odd = os.fsdecode(bytes(tmp_path) + b"/x\xe9.pgn")
    shutil.copy(DATA / "pgn" / "anastasian-lewis.pgn", odd)
    assert path_from_param(path_param(odd)) == odd and path_param(str(PGN)) == str(PGN)
    summary = pipeline(
        RunRequest((path_param(odd), path_param(PGN)), str(tmp_path / "s.duckdb"), ("elo",), str(tmp_path / "out"))
    )
    assert sorted(f.status for f in summary.ingest.files) == ["loaded", "loaded"]
    assert str(tmp_path / "x\\xe9.pgn") in [f.name for f in summary.ingest.files]


def test_a_wal_fifo_beside_a_store_not_yet_made_is_refused(tmp_path: Path) -> None:
    _fifo(tmp_path / "s.duckdb.wal")
    res = _in_thread(lambda: CliRunner().invoke(app, ["ingest", str(PGN), "--db", str(tmp_path / "s.duckdb")]))
    assert res.exit_code == 2 and "not a regular file" in " ".join(res.output.split())


def test_a_missing_store_whose_name_is_not_utf8_is_a_usage_error_for_readers(tmp_path: Path) -> None:
    db = os.fsdecode(bytes(tmp_path) + b"/a\xff.duckdb")
    res = CliRunner().invoke(app, ["sql", "SELECT 1", "--db", db])
    assert res.exit_code == 2 and "not valid UTF-8" in res.output


PLAYER_001 = "001    1      Doe, John                         2200 IRL                         0.0    1\n"


@pytest.mark.parametrize(
    "text",
    [
        "012 x\n" + SECRET * 40,  # a tournament name and a password file: no player
        "012 x\n" + SECRET * 40 + PLAYER_001,  # one player row glued to a password file
        "SECRETZ3\n012 \n",
    ],
)
def test_a_file_that_is_mostly_no_trf_is_rejected_and_keeps_no_byte(tmp_path: Path, text: str) -> None:
    f = tmp_path / "a.trf"
    f.write_text(text)
    db = tmp_path / "s.duckdb"
    assert ingest_paths([f], db).files[0].status == "rejected"
    stored = db_rows(
        db,
        "SELECT (SELECT count(*) FROM ingest_errors WHERE raw IS NOT NULL)"
        " + (SELECT count(*) FROM tournaments WHERE extra::VARCHAR LIKE '%SECRET%' OR extra::VARCHAR LIKE '%root%')",
    )
    assert stored == [(0,)]


def test_a_report_with_a_few_unknown_records_still_loads(tmp_path: Path) -> None:
    real = next(iter(sorted((DATA / "trf").glob("*.trf")))).read_text(encoding="utf-8", errors="replace")
    f = tmp_path / "r.trf"
    f.write_text(real + "ZZZ a vendor note\n" * 5)
    assert ingest_paths([f], tmp_path / "s.duckdb").files[0].status in ("loaded", "partial")
