"""What a publish left in an output folder, for tests that compare two publishes: every file's
bytes and every file's (inode, modification time), elopipe's own bookkeeping left out."""

from __future__ import annotations

from pathlib import Path

from elopipe.publish.manifest import LOCK, MANIFEST
from elopipe.publish.plan import LEDGER

BOOKKEEPING = {MANIFEST, LEDGER, LOCK}


def published_files(out: Path) -> dict[str, bytes]:
    """{path relative to `out` (POSIX): bytes} of every file but the manifest and the ledger."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name not in BOOKKEEPING
    }


def file_stamps(out: Path) -> dict[str, tuple[int, int]]:
    """(inode, modification time in ns) of every file but the manifest and the ledger: a file
    written again (atomically, under a new inode) differs, whatever the clock says."""
    return {
        p.relative_to(out).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in out.rglob("*")
        if p.is_file() and p.name not in BOOKKEEPING
    }
