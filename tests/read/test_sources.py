"""Finding sources (`elopipe.read.sources`): every member of a zip is a source of its own, told
apart by its position in the archive (issue 26, item 3)."""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path

import duckdb

from elopipe.ingest.driver import ingest_paths
from elopipe.read.sources import discover
from tests.helpers.small_pgn import event_pgn

ALPHA = event_pgn("Alpha Open", [1, 2], "2022.03.01", "Dublin IRL")
BETA = event_pgn("Beta Open", [1, 2], "2022.04.01", "Cork IRL")


def _zip_with_one_name_twice(path: Path, first: str = ALPHA, second: str = BETA) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name: that is the point
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("games.pgn", first)
            zf.writestr("other.pgn", first)
            zf.writestr("games.pgn", second)
    return path


def test_two_members_of_one_name_are_two_sources_read_by_position(tmp_path: Path) -> None:
    sources = discover([_zip_with_one_name_twice(tmp_path / "dup.zip")]).sources
    assert len(sources) == 3
    games = [s for s in sources if s.member_name == "games.pgn"]
    assert len(games) == 2 and games[0] != games[1]
    assert len({s.display for s in sources}) == 3  # stored apart in the ledger
    assert [s.read_bytes().decode() for s in games] == [ALPHA, BETA]
    assert all(s.suffix == ".pgn" for s in sources)


def test_every_member_of_one_name_is_loaded(tmp_path: Path) -> None:
    db = tmp_path / "z.duckdb"
    archive = _zip_with_one_name_twice(tmp_path / "dup.zip")
    summary = ingest_paths([archive], db)
    # other.pgn holds the first member's bytes: recorded as a duplicate of it, nothing lost
    assert [f.status for f in summary.files].count("loaded") == 2
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = con.execute("SELECT DISTINCT name FROM tournaments ORDER BY 1").fetchall()
        members = con.execute("SELECT member FROM source_files ORDER BY file_id").fetchall()
    finally:
        con.close()
    assert names == [("Alpha Open",), ("Beta Open",)]
    assert len(set(members)) == 3
    # the same archive again: every member is known, nothing loaded twice
    again = ingest_paths([archive], db)
    assert [f.status for f in again.files] == ["skipped"] * 3


def test_an_archive_inside_an_archive_is_rejected_in_plain_words(tmp_path: Path) -> None:
    import gzip
    import io

    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("games.pgn", ALPHA)
    outer = tmp_path / "outer.zip"
    with zipfile.ZipFile(outer, "w") as zf:
        zf.writestr("inner.zip", inner.getvalue())
        zf.writestr("inner.pgn.gz", gzip.compress(ALPHA.encode()))
        zf.writestr("games.pgn", BETA)
    summary = ingest_paths([outer], tmp_path / "s.duckdb")
    reasons = {f.name.rsplit("!", 1)[1]: (f.status, f.reason) for f in summary.files}
    assert reasons["games.pgn"][0] == "loaded"
    for member in ("inner.zip", "inner.pgn.gz"):
        status, reason = reasons[member]
        assert status == "rejected" and "archives inside archives are not read" in (reason or ""), reasons


def test_an_output_folder_of_elopipe_is_never_read_as_input(tmp_path: Path) -> None:
    """`run DIR --out DIR/out` read its own published lists back on the next run (47 of them
    rejected as 'neither PGN nor TRF', and kept in the ledger); a folder holding the publish
    manifest is left out, and said, wherever it is under the folders named."""
    from elopipe.read.sources import OUTPUT_FOLDER, OUTPUT_MARK

    (tmp_path / "games.pgn").write_text('[Event "E"]\n\n1. e4 e5 1-0\n')
    out = tmp_path / "out"
    (out / "lists").mkdir(parents=True)
    (out / OUTPUT_MARK).write_text("{}")
    (out / "lists" / "fide_2024-01-01.txt").write_text("ID Name\n")
    found = discover([tmp_path])
    assert [s.display for s in found.sources] == [str(tmp_path / "games.pgn")]
    assert (str(out.absolute()), OUTPUT_FOLDER) in found.refused
    alone = discover([out])
    assert alone.sources == [] and alone.refused == [(str(out.absolute()), OUTPUT_FOLDER)]


def test_a_member_gone_from_an_archive_rewritten_after_listing_is_rejected_not_raised(tmp_path: Path) -> None:
    """A zip rewritten between listing and reading without a member listed: the KeyError of
    `zipfile` escaped `parse_source` (which never raises) and stopped the ingest; the member is
    now rejected with the reason (found while testing zips cut short in the watch)."""
    from elopipe.read.parse import parse_source

    archive = tmp_path / "games.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("games.pgn", ALPHA)
    (source,) = discover([archive]).sources
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("other.pgn", BETA)
    ps = parse_source(source)
    assert ps.parsed is None and "the archive changed while it was being read" in (ps.rejected_reason or "")
