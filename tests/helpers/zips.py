"""A zip upload whose last member is itself a zip, and copies of it cut short, as a hostile tester
built them from real TRF files: CPython's zipfile read such a cut copy as the archive inside it."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from tests.helpers.paths import SHARED_DATA

INNER_TRF = SHARED_DATA / "trf" / "irl_las_vegas_sample_utf8_names.trf"  # x.trf inside in.zip
OUTER_TRF = SHARED_DATA / "trf" / "irl_gonzaga_classic_2008_fide_ids.trf"  # g.trf beside it


@dataclass(frozen=True)
class NestedUpload:
    full: bytes  # in.zip (a zip holding x.trf, stored) then g.trf
    cut: bytes  # the last 60 bytes missing: the outer end record and part of its directory
    cut_after_inner: bytes  # cut just after in.zip's bytes: the file ends with the inner end record


def nested_upload() -> NestedUpload:
    """The hostile tester's upload (`up.zip`) and two copies of it cut short."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("x.trf", INNER_TRF.read_bytes())
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w") as zf:
        zf.writestr("in.zip", inner.getvalue())
        zf.write(OUTER_TRF, "g.trf")
    full = outer.getvalue()
    with zipfile.ZipFile(io.BytesIO(full)) as zf:
        entry = zf.getinfo("in.zip")
    inner_end = entry.header_offset + 30 + len(entry.filename) + len(entry.extra) + entry.compress_size
    assert full[inner_end - 22 : inner_end - 18] == b"PK\x05\x06"  # the inner end record ends there
    return NestedUpload(full, full[:-60], full[:inner_end])
