"""`elopipe.read.zips`: a zip is read as an archive only when its end record (comment and zip64
records included) ends the file and the archive starts at its first byte."""

from __future__ import annotations

import io
import zipfile

import pytest

from elopipe.read.zips import CUT, NOT_A_ZIP, ZipEndError, open_zip, zip_end_problem
from tests.helpers.zips import nested_upload


def _zip(comment: bytes = b"", zip64: bool = False, monkeypatch: pytest.MonkeyPatch | None = None) -> bytes:
    buf = io.BytesIO()
    if zip64:
        assert monkeypatch is not None
        # zipfile writes the zip64 end records only past 65,535 entries or 4 GiB: made to here
        monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 0)
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a.pgn", '[Event "E"]\n\n1. e4 e5 1-0\n')
        zf.comment = comment
    data = buf.getvalue()
    assert (b"PK\x06\x06" in data) is zip64
    return data


def _problem(data: bytes) -> str | None:
    return zip_end_problem(io.BytesIO(data))


@pytest.mark.parametrize("zip64", [False, True])
@pytest.mark.parametrize("comment", [b"", b"a comment", b"PK\x05\x06 in the comment"])
def test_a_whole_zip_passes_and_its_cut_or_padded_copies_do_not(
    zip64: bool, comment: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _zip(comment, zip64, monkeypatch)
    for cut in (1, 2, len(comment) + 1, 30, 60):
        assert _problem(data[:-cut]) is not None, cut
    assert CUT in (_problem(data + b"\n") or "")
    if b"PK\x05\x06" in comment:  # zipfile cannot read it either: it takes the signature in the comment
        assert CUT in (_problem(data) or "")
        with pytest.raises(zipfile.BadZipFile):
            zipfile.ZipFile(io.BytesIO(data))
        return
    assert _problem(data) is None
    with open_zip(io.BytesIO(data)) as zf:
        assert zf.namelist() == ["a.pgn"]
    assert "5 bytes come before the archive's start" in (_problem(b"#!sh\n" + data) or "")


def test_the_nested_uploads_cut_copies_are_told_apart_from_the_whole() -> None:
    upload = nested_upload()
    assert _problem(upload.full) is None
    assert (_problem(upload.cut) or "").startswith(f"{CUT}: ")
    assert "bytes come before the archive's start" in (_problem(upload.cut_after_inner) or "")
    with pytest.raises(ZipEndError, match="cut short"), open_zip(io.BytesIO(upload.cut)):
        pass
    assert issubclass(ZipEndError, zipfile.BadZipFile)  # every caller already records a BadZipFile


def test_no_end_record_at_all() -> None:
    assert _problem(b"") == NOT_A_ZIP
    assert _problem(b"hello, not a zip archive\n") == NOT_A_ZIP
    assert CUT in (_problem(b"PK\x03\x04" + bytes(100_000)) or "")
    assert CUT in (_problem(_zip()[:-10] + bytes(70_000)) or "")
