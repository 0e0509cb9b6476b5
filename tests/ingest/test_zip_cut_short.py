"""A zip cut short, or with data after or before the archive, is never read as an archive: a
hostile tester's upload whose last member was a zip, cut short in its last 64 KiB, was recorded
'loaded' with the inner archive's members (CPython's zipfile takes the last end record it finds in
the last 64 KiB, wherever it ends), its real member silently missing, and those games stayed
once the complete file came (elopipe.read.zips)."""

from __future__ import annotations

from pathlib import Path

import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.ingest.parse_pool import _member_sizes
from elopipe.read.parse import parse_source
from elopipe.read.sources import Source, discover
from elopipe.read.zips import CUT
from tests.helpers.store_rows import db_rows
from tests.helpers.zips import nested_upload

_GAMES = "SELECT round, board, result, white_rating_in_file, black_rating_in_file FROM games ORDER BY ALL"


def test_a_nested_zip_cut_short_is_rejected_and_the_complete_one_read_in_full(tmp_path: Path) -> None:
    upload = nested_upload()
    up, db = tmp_path / "up.zip", tmp_path / "store.duckdb"
    up.write_bytes(upload.cut)
    (cut,) = ingest_paths([up], db).files
    assert cut.status == "rejected" and Path(cut.name).name == "up.zip", cut
    assert (cut.reason or "").startswith(f"{CUT}: "), cut.reason
    assert db_rows(db, "SELECT member, status FROM source_files") == [(None, "rejected")]  # kept in the ledger
    assert db_rows(db, "SELECT count(*) FROM games") == [(0,)], "a member of the archive inside was read"

    up.write_bytes(upload.full)  # the complete file arrives under the same name
    got = {Path(f.name).name: f.status for f in ingest_paths([up], db).files}
    assert got == {"up.zip!g.trf": "loaded", "up.zip!in.zip": "rejected"}, got
    fresh = tmp_path / "fresh.duckdb"
    (tmp_path / "fresh").mkdir()
    (tmp_path / "fresh" / "up.zip").write_bytes(upload.full)
    ingest_paths([tmp_path / "fresh" / "up.zip"], fresh)
    assert db_rows(db, _GAMES) == db_rows(fresh, _GAMES) != []
    assert db_rows(db, "SELECT member FROM source_files WHERE member = 'x.trf'") == []


@pytest.mark.parametrize("case", ["cut", "cut after the inner zip", "data after", "data before"])
def test_no_member_is_read_from_a_zip_that_is_not_the_whole_file(tmp_path: Path, case: str) -> None:
    upload = nested_upload()
    data, words = {
        "cut": (upload.cut, CUT),
        "cut after the inner zip": (upload.cut_after_inner, "bytes come before the archive's start"),
        "data after": (upload.full + b"trailing bytes", CUT),
        # a self-extracting archive: docs/commands.md promises .zip archives of PGN/TRF, read as the whole file
        "data before": (b"MZ" + bytes(510) + upload.full, "512 bytes come before the archive's start"),
    }[case]
    up = tmp_path / "up.zip"
    up.write_bytes(data)
    assert discover([up]).sources == [Source(str(up.resolve()))]  # the file, not members
    assert _member_sizes(str(up), len(data), 0) == {}
    ps = parse_source(Source(str(up)))
    assert ps.parsed is None and ps.sha256 and words in (ps.rejected_reason or ""), ps.rejected_reason
    assert "\n" not in (ps.rejected_reason or "")


def test_a_member_of_a_zip_cut_short_after_it_was_listed_is_not_read(tmp_path: Path) -> None:
    """Reading a member opens the archive again, with the same check: the cut copy swapped in
    between listing and reading rejects the member, with the reason."""
    upload = nested_upload()
    up = tmp_path / "up.zip"
    up.write_bytes(upload.full)
    (member,) = [s for s in discover([up]).sources if s.member == "g.trf"]
    up.write_bytes(upload.cut)
    ps = parse_source(member)
    assert ps.parsed is None and CUT in (ps.rejected_reason or ""), ps.rejected_reason
    up.write_bytes(upload.full)
    ps = parse_source(member)
    assert ps.rejected_reason is None and ps.parsed is not None and len(ps.parsed.games) > 0
