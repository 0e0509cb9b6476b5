"""Archive members that cannot be read (a password-protected member) are rejected one by one,
in words; the other members and files of the ingest land (elopipe.read.sources)."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

from elopipe.ingest.driver import ingest_paths
from tests.helpers.paths import REPO
from tests.helpers.store_rows import db_rows


def _encrypted_member_zip(path: Path, plain: dict[str, bytes], encrypted: dict[str, bytes]) -> None:
    """A zip whose `encrypted` members carry the encryption flag (general purpose bit 0) in their
    local and central headers, as a password-protected archive's do: Python's zipfile writes no
    encrypted member, and refuses to read a flagged one."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in {**plain, **encrypted}.items():
            zf.writestr(name, data)
    data = bytearray(path.read_bytes())
    # (signature, offset of the flags, offset of the name's length, offset of the name)
    for sig, flags, name_len_at, name_at in ((b"PK\x03\x04", 6, 26, 30), (b"PK\x01\x02", 8, 28, 46)):
        pos = data.find(sig)
        while pos >= 0:
            name_len = struct.unpack_from("<H", data, pos + name_len_at)[0]
            if data[pos + name_at : pos + name_at + name_len].decode() in encrypted:
                data[pos + flags] |= 0x1
            pos = data.find(sig, pos + 4)
    path.write_bytes(bytes(data))


def test_an_encrypted_member_is_rejected_and_the_rest_is_loaded(tmp_path: Path) -> None:
    """A password-protected member stopped the whole ingest with an internal error naming
    Python's ZipInfo; the other members and files of the call were not loaded."""
    pgn = (REPO / "sample_pgn" / "wchcand22.pgn").read_bytes()
    archive = tmp_path / "a.zip"
    _encrypted_member_zip(archive, {"open.pgn": pgn}, {"locked.pgn": pgn.replace(b"Madrid", b"Madrid ESP")})
    with zipfile.ZipFile(archive) as zf:  # the flag is what Python refuses
        assert zf.getinfo("locked.pgn").flag_bits & 0x1 and not zf.getinfo("open.pgn").flag_bits & 0x1
    db = tmp_path / "s.duckdb"
    summary = ingest_paths([archive, REPO / "sample_pgn" / "wjun19.pgn"], db)
    status = {f.name.rsplit("/", 1)[-1]: (f.status, f.reason) for f in summary.files}
    assert status["a.zip!open.pgn"][0] == status["wjun19.pgn"][0] == "loaded"
    assert status["a.zip!locked.pgn"] == (
        "rejected",
        "cannot read file: the archive member is encrypted: it cannot be read without its password",
    )
    assert db_rows(db, "SELECT count(*) FROM games") == [(56 + 181,)]


def test_a_member_that_cannot_be_read_is_recorded_with_its_own_size(tmp_path: Path, monkeypatch) -> None:
    """`source_files.bytes` is the size decompressed: a member refused for its size was recorded
    with the whole archive's size. It now has the member's, from the archive's directory."""
    from elopipe.read import sources

    pgn = (REPO / "sample_pgn" / "wchcand22.pgn").read_bytes()
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big.pgn", pgn)
    monkeypatch.setattr(sources, "MAX_BYTES", 1000)
    db = tmp_path / "s.duckdb"
    ingest_paths([archive], db)
    assert db_rows(db, "SELECT member, status, bytes FROM source_files") == [("big.pgn", "rejected", len(pgn))]
    assert archive.stat().st_size != len(pgn)


def test_a_member_with_damaged_compressed_data_is_rejected_and_the_rest_is_loaded(tmp_path: Path) -> None:
    """zlib's error on a member's damaged deflate data stopped the whole ingest as an internal
    error; nothing was loaded, not even the other files of the folder."""
    pgn = (REPO / "sample_pgn" / "wchcand22.pgn").read_bytes()
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "ok.pgn").write_bytes(pgn)
    with zipfile.ZipFile(folder / "bad.zip", "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.pgn", pgn.replace(b"Madrid", b"Madrid ESP"))
    data = bytearray((folder / "bad.zip").read_bytes())
    data[60:80] = b"\xff" * 20  # inside the member's deflate stream
    (folder / "bad.zip").write_bytes(bytes(data))
    db = tmp_path / "s.duckdb"
    summary = ingest_paths([folder], db)
    status = {f.name.rsplit("/", 1)[-1]: (f.status, f.reason) for f in summary.files}
    assert status["ok.pgn"][0] == "loaded"
    assert status["bad.zip!a.pgn"] == (
        "rejected",
        "cannot read file: its compressed data is damaged (it cannot be decompressed)",
    )
