"""`elopipe ingest` end to end on real files: archives, bad files, exit codes, idempotence."""

import bz2
import gzip
import shutil
import zipfile
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.paths import REPO

DATA = REPO.parent / "shared" / "data"
TRF = DATA / "trf" / "irl_gonzaga_classic_2008_fide_ids.trf"
PGN = DATA / "pgn" / "wchcand22.pgn"

runner = CliRunner()


def _ingest(*args: str):
    return runner.invoke(app, ["ingest", "--quiet", *args])


def _q(db: Path, sql: str):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_good_files_exit_0_and_second_run_adds_nothing(tmp_path):
    db = tmp_path / "s.duckdb"
    r = _ingest(str(TRF), str(PGN), "--db", str(db))
    assert r.exit_code == 0, r.output
    counts = _q(db, "SELECT (SELECT count(*) FROM games), (SELECT count(*) FROM players)")
    r2 = _ingest(str(TRF), str(PGN), "--db", str(db))
    assert r2.exit_code == 0
    assert "2 already in store" in r2.output
    assert _q(db, "SELECT (SELECT count(*) FROM games), (SELECT count(*) FROM players)") == counts


def test_archives_are_read(tmp_path):
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "a.trf.gz").write_bytes(gzip.compress(TRF.read_bytes()))
    (inbox / "b.pgn.bz2").write_bytes(bz2.compress(PGN.read_bytes()))
    with zipfile.ZipFile(inbox / "c.zip", "w") as zf:
        zf.write(DATA / "trf" / "irl_las_vegas_sample_utf8_names.trf", "event/las_vegas.txt")
    db = tmp_path / "s.duckdb"
    r = _ingest(str(inbox), "--db", str(db))
    assert r.exit_code == 0, r.output
    rows = _q(db, "SELECT format, member, status FROM source_files ORDER BY path")
    assert rows == [("trf", None, "loaded"), ("pgn", None, "loaded"), ("trf", "event/las_vegas.txt", "loaded")]


@pytest.mark.parametrize(
    "name, content, reason",
    [
        ("page.pgn", b"<!DOCTYPE html><html><body>404</body></html>", "not PGN"),
        ("page.txt", b"<!DOCTYPE html><html><body>404</body></html>", "neither"),
        ("blob.trf", bytes(range(256)) * 4, "binary"),
        ("empty.txt", b"", "empty"),
        ("broken.zip", b"PK\x03\x04 not really a zip", "zip"),
        ("broken.pgn.gz", b"\x1f\x8b\x08 truncated", "cannot read"),
    ],
)
def test_bad_files_are_rejected_with_reason_and_exit_1(tmp_path, name, content, reason):
    f = tmp_path / name
    f.write_bytes(content)
    db = tmp_path / "s.duckdb"
    r = _ingest(str(f), str(TRF), "--db", str(db))
    assert r.exit_code == 1, r.output
    rows = _q(db, "SELECT status, reason FROM source_files ORDER BY file_id")
    assert rows[0][0] == "rejected" and reason in rows[0][1]
    assert rows[1][0] == "loaded"  # the good file still landed


def test_missing_path_is_a_usage_error(tmp_path):
    r = _ingest(str(tmp_path / "nope.pgn"), "--db", str(tmp_path / "s.duckdb"))
    assert r.exit_code == 2


def test_corrected_file_replaces_its_rows(tmp_path):
    f = tmp_path / "event.trf"
    shutil.copy(TRF, f)
    db = tmp_path / "s.duckdb"
    assert _ingest(str(f), "--db", str(db)).exit_code == 0
    n = _q(db, "SELECT count(*) FROM games")[0][0]
    text = f.read_text(encoding="utf-8", errors="replace")
    f.write_text(text.replace("Gonzaga", "Gonzaga (corrected)"), encoding="utf-8")
    assert _ingest(str(f), "--db", str(db)).exit_code == 0
    assert _q(db, "SELECT count(*) FROM games")[0][0] == n
    assert _q(db, "SELECT status FROM source_files ORDER BY file_id") == [("replaced",), ("loaded",)]


def test_unrelated_content_under_a_reused_name_is_kept_beside_the_old_file(tmp_path):
    f = tmp_path / "games.pgn"
    shutil.copy(DATA / "pgn" / "wjun19.pgn", f)
    db = tmp_path / "s.duckdb"
    assert _ingest(str(f), "--db", str(db)).exit_code == 0
    n_first = _q(db, "SELECT count(*) FROM games")[0][0]
    shutil.copy(DATA / "pgn" / "dortmund.pgn", f)
    assert _ingest(str(f), "--db", str(db)).exit_code == 0
    assert _q(db, "SELECT status FROM source_files ORDER BY file_id") == [("loaded",), ("loaded",)]
    assert _q(db, "SELECT count(*) FROM games")[0][0] > n_first  # the World Juniors games are still there


def test_same_bytes_under_a_second_name_is_recorded_once_as_duplicate(tmp_path):
    a, b = tmp_path / "a.pgn", tmp_path / "b.pgn"
    shutil.copy(PGN, a)
    shutil.copy(PGN, b)
    db = tmp_path / "s.duckdb"
    r = _ingest(str(a), str(b), "--db", str(db))
    assert r.exit_code == 0
    rows = _q(db, "SELECT path, status, reason FROM source_files ORDER BY file_id")
    assert [(Path(p).name, s) for p, s, _ in rows] == [("a.pgn", "loaded"), ("b.pgn", "duplicate")]
    assert rows[1][2] == "same bytes as file_id 1"
    assert _ingest(str(b), "--db", str(db)).exit_code == 0
    assert len(_q(db, "SELECT * FROM source_files")) == 2
    assert _q(db, "SELECT count(*) FROM games")[0][0] == 56


def test_a_rejected_file_gets_its_own_verdict_whatever_else_holds_its_bytes(tmp_path):
    """A fake `.zip` is rejected alone; beside a file of the same bytes (another fake zip, the same
    text named `.pgn`, or a real PGN file the fake zip copies) it was 'already in store' (a
    'duplicate' row) whenever it came after it, in the batch or in the store. Its verdict is now
    the one it gets alone, in any order; two copies that both load are still one load."""
    from elopipe.ingest.driver import ingest_paths

    fake = b"hello, not a zip archive\n"
    cases = {
        "two fake zips": ({"x.zip": fake, "z.zip": fake}, {"x.zip": "rejected", "z.zip": "rejected"}),
        "a fake zip and the same text as pgn": (
            {"x.zip": fake, "y.pgn": fake},
            {"x.zip": "rejected", "y.pgn": "rejected"},
        ),
        "a pgn and a fake zip of its bytes": (
            {"a.pgn": PGN.read_bytes(), "b.zip": PGN.read_bytes()},
            {"a.pgn": "loaded", "b.zip": "rejected"},
        ),
    }
    for case, (files, want) in cases.items():
        for order in (sorted(files), sorted(files, reverse=True)):
            work = tmp_path / f"{case}-{order[0]}"
            work.mkdir()
            for name in order:
                (work / name).write_bytes(files[name])
            together = ingest_paths([work / n for n in order], work / "s.duckdb")
            got = {Path(r.name).name: r.status for r in together.files}
            assert got == want, (case, order, got)
            zips = [r for r in together.files if r.name.endswith(".zip")]
            assert all(r.reason == "not a readable zip archive" for r in zips), (case, order)
            # and one file at a time, into one store: the later file's verdict is its own too
            one_by_one = [ingest_paths([work / n], work / "t.duckdb").files[0] for n in order]
            assert {Path(r.name).name: r.status for r in one_by_one} == want, (case, order)


def test_copies_of_a_file_follow_the_first_that_loads_not_a_rejected_one(tmp_path):
    """A fake zip first, then two PGN files of its bytes: the first PGN loads, the second is its
    duplicate (the fake zip, rejected, is the original of neither)."""
    from elopipe.ingest.driver import ingest_paths

    names = ["a.zip", "b.pgn", "c.pgn"]
    for name in names:
        (tmp_path / name).write_bytes(PGN.read_bytes())
    done = ingest_paths([tmp_path / n for n in names], tmp_path / "s.duckdb")
    assert [(Path(r.name).name, r.status) for r in done.files] == [
        ("a.zip", "rejected"),
        ("b.pgn", "loaded"),
        ("c.pgn", "skipped"),
    ]
    assert _q(tmp_path / "s.duckdb", "SELECT count(*) FROM games")[0][0] == 56
